"""Sampled RCFR with features on demand: memory for the model and its training buffer, not a feature matrix.

`LeanSampledRCFR` (what `SampledRCFR(..., features_on_demand=True)` and `SampledRCFRPlus(...)` build) runs
the same algorithm as the dense `DenseSampledRCFR` with ``targets="reservoir"`` or ``"stored"`` (same
sampler kernels, same random stream, same reservoir or sums, same targets) but never builds a
(sequences x features) matrix:

* each iteration, the sampler's traversals write sampled regrets of the information sets they visit;
  those sequences (and their mean sampled regret) go straight into the player's bounded reservoir, or
  are added to its stored (Q-)regret sums (`targets.StoredSums`: one float per sequence, the size of the
  profile, plus the iteration of the latest write);
* at a refit, the feature rows of the training set (the *distinct sequences in the reservoir*, or at most
  ``capacity`` of the sequences with a stored target, chosen by ``selection``) are computed in compiled
  code by the encoder (`rcfr.features.encoders.sequence_rows`) and the regressor is fit on them with their
  targets and weights (`targets.reservoir_targets`, `targets.StoredSums.targets`);
* the current strategies the sampler reads are a profile (one float per sequence, the array the kernels
  already read): with ``profile="cache"`` it is refreshed after each refit by predicting every sequence
  in chunks of ``chunk`` sequences; with ``profile="visited"`` a refit marks the player's sets stale and
  only the sets each traversal reads are predicted, in batches (`rcfr.solvers.visited`); with
  ``profile="model"`` no profile is read: the walks evaluate the players' compiled models where they meet a set
  (`rcfr.solvers.model_strategies`, the compiled tree replaying each history's state); same results;
  "visited" is the default (faster in 13 of 14 large-game configurations measured, docs/large_rcfr.md),
  except under probing, whose sampling the discovery walk does not mirror: there the cache;
* the average-strategy sums stay exact per sequence (exact exploitability needs them), unless
  ``average="mixture"`` (``profile="model"``): then the models played are kept with their weights and the
  average is their exact mixture (`rcfr.solvers.snapshots`);
* with ``targets="rows"`` (``profile="model"``, external sampling) the walk writes the traverser's feature rows
  into a bounded reservoir where it meets the set (`model_strategies.RowReservoir`) and the fits read them.

Bootstrapped targets are refused: each is the previous model's prediction plus the sampled regrets since,
for every sequence, so a fit on a bounded subset would need a prediction pass over the game per refit
to make them, and they lost to stored targets in every pairing measured (docs/large_rcfr.md).

So the learner holds the model, its buffer (24 bytes a reservoir example, or 12 bytes a sequence of
stored sums) and one chunk of rows; what stays
per sequence or per history is what every sampled solver on a compiled game holds (the game, the
sampler's scratch, the profile and the average). docs/large_rcfr.md measures each part.
"""

from __future__ import annotations

import numpy as np

from ..options import PROFILES, SampledRCFROptions, check_int  # noqa: F401  (PROFILES: re-exported)
from ..policy import Policy
from ..sampling import driver
from ..sampling.buffers import SamplerBuffers
from ..sampling.bundles import make_settings, make_tally
from ..sampling.reservoir import Reservoir
from ..tree import Game
from .on_demand_checkpoint import LeanCheckpoint
from .predictions import checked_prediction, match_predictions
from .sampled_regression import SampledRCFRSolver
from .targets import StoredSums, collect_sampled, reservoir_targets, row_targets

CHUNK = 16_384  # sequences per prediction chunk when refreshing the profile


class LeanSampledRCFR(LeanCheckpoint, SampledRCFRSolver):
    """Sampled RCFR(+) with features on demand (see the module docstring); `SampledRCFR` builds it when
    ``features_on_demand=True``. Every option is checked (`SampledRCFROptions`) before anything per sequence
    is allocated."""

    def __init__(self, game: Game, options: SampledRCFROptions, solver_name: str = "sampled-rcfr", *,
                 chunk: int = CHUNK):
        from rcfr.features.encoders import ENCODERS, bound_rows, make_encoder

        from ..regressors import make_regressor, seeded
        super().__init__(game, options, solver_name)
        o = self.options
        if not o.features_on_demand:
            raise ValueError("LeanSampledRCFR is the features_on_demand=True form; use DenseSampledRCFR "
                             "(or SampledRCFR(game), which picks it)")
        features = o.features
        name, params = (features, {}) if isinstance(features, str) else (None, None)
        if isinstance(features, dict) and isinstance(features.get("name"), str):
            params = dict(features)
            name = params.pop("name")
        if name not in ENCODERS:
            raise ValueError(f"features_on_demand=True needs features named by an encoder; allowed: "
                             f"{', '.join(sorted(ENCODERS))} (or a dict with one as 'name'), got {features!r}")
        if game.rules.fast() is None:
            raise ValueError(f"features_on_demand=True needs a game with a fast path (GameRules.fast); "
                             f"{game.name} has none")
        self.sampler, self.targets, self.selection = o.sampler, o.targets, o.selection
        self._walk_rows = o.targets in ("rows", "bootstrap")  # the walk writes the fits' rows (profile="model")
        self.profile = o.visited_set  # the profile option resolved: "cache", "visited" or "model"
        self.traversals, self.refit_every, self.capacity = o.traversals, o.refit_every, o.capacity
        self.chunk = check_int("chunk", chunk, 1)
        self.buffer_power, self.power = o.buffer_power, o.power
        tau, beta = o.probing
        seed = o.seed
        self.encoder = make_encoder(game, name, **params)
        self.regressors = [seeded(make_regressor(o.regressor), 2 * seed + p) for p in (0, 1)]
        self.settings = make_settings(self.sampler, epsilon=o.epsilon, tau=float(tau), beta=float(beta))
        if self.options.average == "mixture":  # the walks credit no average sums: the models played are kept instead
            from ..sampling.bundles import AVG_NONE
            from .snapshots import Snapshots
            self.settings = self.settings._replace(average_mode=AVG_NONE)
            self.snapshots = [Snapshots(o.snapshots, seed, p) for p in (0, 1)]
            self._credit = np.zeros(2)  # each player's current model's weight so far (the average it credits)
        self._sets = None  # the sets a mixture or the models' policy is made at (found when first asked)
        self._allocate(bound_rows)
        # the latest training set of each player (kept for resuming): sequences, targets, weights, [rows, t]
        listed = 0 if self._walk_rows else self.capacity  # the walk's rows: the reservoir is the training set
        self.fits = [{"sequence": np.zeros(listed, np.int64), "value": np.zeros(listed),
                      "weight": np.zeros(listed), "count": np.zeros(2, np.int64)} for _ in (0, 1)]
        self.visited = None
        self._drive = None  # `driver.drive` bound to the bundles' types at the first single traversal
        self.shards = None  # the batches' shards (`rcfr.solvers.distributed_sampled.distribute`); None: here
        if self.profile == "visited":
            from .visited import VisitedProfile
            self.visited = VisitedProfile(self.buffers, self.sampler, o.epsilon, self._predict)
        if self.profile != "model":  # (a model's walks start uniform: t = 0)
            for p in (0, 1):
                self._refresh_all(p)

    def _allocate(self, bound_rows) -> None:
        """The arrays per set and sequence of the compiled game: sampler buffers, each player's (first, size)
        of its sets, its training data (seeded as the dense path's: `ReservoirTargets`; `StoredSums` draws from
        2s+1+p) and one iteration's tally."""
        game, o, seed = self.game, self.options, self.options.seed
        if o.set_index is False:
            raise ValueError(f"{self.solver_name} on compiled {game.name}: set_index=False applies to games walked "
                             f"by their rules (the compiled tree's sets are the game's); leave it None")
        if o.profile == "model":  # the walks replay each decision's state from the root (`TreeWalkModel`)
            from .model_strategies import tree_walk_model, walk_model
            self._check_compilable()
            widest = int(np.max(game.infoset_num_actions, initial=1))
            self._walk_model = walk_model(self.encoder, int(np.max(game.depth)) + 3, widest)
            self._tree_model = tree_walk_model(game, self._walk_model)
        self._strategy_rows = bound_rows(game, self.encoder)  # the rows of the sequences whose strategy is predicted
        self.buffers = SamplerBuffers(game, self.sampler, seed)
        if o.profile == "model":  # the walks read neither a regret table nor a profile
            b = self.buffers
            b.state = b.state._replace(regrets=np.zeros(0), sigma=np.zeros(0))
            b.regrets, b.sigma = b.state.regrets, b.state.sigma
        self.first_seq = np.ascontiguousarray(game.infoset_first_seq, np.int64)
        self.num_actions = np.ascontiguousarray(game.infoset_num_actions, np.int64)
        players = np.asarray(game.infoset_player)
        mine = [np.flatnonzero(players == p) for p in (0, 1)]
        self.sets = [(self.first_seq[m], self.num_actions[m]) for m in mine]  # each player's (first, size)
        self.offsets = [0, int(self.num_actions[mine[0]].sum())]  # player p's first global sequence
        if self.targets == "reservoir":
            self.reservoirs = [Reservoir(self.capacity, 2 * seed + 1 + p) for p in (0, 1)]
        elif self._walk_rows:
            self._row_targets()
        else:
            sizes = (self.offsets[1], game.num_sequences - self.offsets[1])
            self.stored = [StoredSums(sizes[p], o.regret_matching, self.capacity, self.selection,
                                      2 * seed + 1 + p) for p in (0, 1)]
        # one iteration's summed regrets and the sets written (empty between iterations)
        self._tally = make_tally(game.num_sequences, len(self.buffers.tree.num_actions), squares=False)

    def _row_targets(self) -> None:
        """targets="rows" or "bootstrap": each player's `RowReservoir`, which the walks fill (refused if it cannot
        hold one set's rows of each traversal of an iteration)."""
        from .model_strategies import BOOTSTRAPPED, CLIPPED, row_reservoir
        from .targets import RowTargets
        least = self.traversals * self._walk_model.widest
        if self.capacity < least:
            raise ValueError(f"{self.solver_name}: targets='rows' needs capacity >= traversals x widest set "
                             f"({self.traversals} x {self._walk_model.widest} = {least}), got capacity={self.capacity}")
        width, seed = self.encoder.num_features, self.options.seed
        bootstrap = 0 if self.targets == "rows" else CLIPPED if self.options.regret_matching == "rm+" else BOOTSTRAPPED
        recent = self.selection == "recent"
        self.kept = [RowTargets(row_reservoir(self.capacity, width, 2 * seed + 1 + p, self.traversals, bootstrap,
                                              recent)) for p in (0, 1)]

    def _walk_for(self, player: int):
        """The `WalkModel` of `player`'s traversals at this iteration: with targets="rows", writing its rows."""
        if not self._walk_rows:
            return self._walk_model
        kept = self.kept[player].kept
        kept.now[0], kept.player[0] = self.iteration, player
        self._offered = int(kept.seen[0])
        return self._walk_model._replace(kept=kept)

    def _check_rows(self, player: int, offered: int | None = None) -> None:
        """targets="rows": refuse an iteration whose traversals offered more rows than the reservoir holds (its
        examples would replace each other before any fit saw them); `offered` (default: counted since `_walk_for`)
        is given when shards walked them."""
        if not self._walk_rows:
            return
        if offered is None:
            offered = int(self.kept[player].kept.seen[0]) - self._offered
        if offered > self.capacity:
            raise ValueError(f"{self.solver_name}: player {player}'s traversals at iteration {self.iteration} wrote "
                             f"{offered:,} feature rows, more than capacity={self.capacity:,}: raise capacity (or "
                             f"lower traversals)")

    def _walk(self, player: int) -> tuple:
        """The bundles a traversal of `player` walks (the rules path makes room first)."""
        b = self.buffers
        return b.tree, b.state, b.scratch, self.settings, player

    # ---- iterations ----------------------------------------------------------------------------
    def _advance(self, iterations: int) -> None:
        for _ in range(iterations):
            t = self.iteration = self.iteration + 1
            weight = float(t) ** self.power / self.traversals
            for p in (0, 1):
                if self.options.average == "mixture":  # p's traversals credit the opponent's average
                    self._credit[1 - p] += float(t) ** self.power
                if self.shards is None:
                    self._batch(p, weight)
                else:  # the batch run as shards elsewhere, added into the tally here (`distributed_sampled`)
                    self.shards.run(self, p, weight)
                tree = self.buffers.tree
                sequences, values = collect_sampled(tree.first_seq, tree.num_actions, self._tally, self.traversals)
                self._data(p).add(sequences - self.offsets[p], values, t)
                if t % self.refit_every == 0:
                    self._fit(p, t)

    def _batch(self, player: int, weight: float) -> None:
        """The iteration's ``traversals`` walks of `player` into the tally at the current strategies: predicting what each one reads
        first (visited profile), else `_traverse`. A sharded run's workers call it on solvers of their own
        (`rcfr.solvers.lean_rules.traverse_batch`)."""
        if self.visited is None:
            self._traverse(player, weight)
            return
        for k in range(self.traversals):
            self.visited.prepare(player, self.buffers.state.rng)
            tree, state, scratch, settings, _ = self._walk(player)
            args = (tree, state, scratch, settings, k, 1, player, weight, self._tally)
            self._drive = self._drive or driver.bound(driver.drive, *args)
            self._drive(*args)

    def _traverse(self, player: int, weight: float) -> None:
        """The iteration's traversals of `player` at the profile as it stands (no visited-set discovery), their
        sampled regrets added to the tally; with profile="model", the walks evaluating the models."""
        if self.profile != "model":
            driver.estimate(*self._walk(player), self.traversals, self._tally, 0, weight)
            return
        tree, state, scratch, settings, _ = self._walk(player)
        model = self._tree_model._replace(walk=self._walk_for(player))
        args = (tree, state._replace(model=model), scratch, settings, 0, self.traversals, player, weight, self._tally)
        self._drive = self._drive or driver.bound(driver.drive, *args)  # numba's dispatch types every array anew
        self._drive(*args)
        self._check_walk(player)
        self._check_rows(player)

    def _check_walk(self, player: int) -> None:
        """Raise if a compiled model predicted a non-finite value in the traversals just made (`WalkModel.bad`)."""
        if self._walk_model.bad[0]:
            self._walk_model.bad[0] = 0
            raise ValueError(f"{self.solver_name}: a compiled model predicted a non-finite value inside the walk of "
                             f"player {player} at iteration {self.iteration}")

    def _check_compilable(self) -> None:
        """Refuse, before any work, a regressor `compile_model` cannot compile: a copy is fit on a few rows of the
        encoder's width and compiled."""
        import copy

        from ..regressors import base as regressors
        from ..regressors.compiled import NotCompilable, compile_model
        probe = copy.deepcopy(self.regressors[0])
        rng = np.random.default_rng(0)
        width = self.encoder.num_features
        rows = rng.integers(0, 3, (16, width)).astype(np.float64)
        regressors.fit(probe, rows, rng.normal(size=16), np.ones(16))
        try:
            compile_model(probe)
        except NotCompilable as error:
            raise ValueError(f"{self.solver_name}: profile='model' evaluates the regressor inside the walks, and "
                             f"regressor={self.options.regressor!r} cannot be compiled ({error}). Use "
                             f"profile='visited': its batched predictions are the slow path that works for any "
                             f"regressor") from None

    def _data(self, player: int):
        """The player's training data: its reservoir, its stored sums or its feature rows."""
        if self._walk_rows:
            return self.kept[player]
        return (self.reservoirs if self.targets == "reservoir" else self.stored)[player]

    def _fit(self, player: int, t: int) -> None:
        """The training set at iteration t (the reservoir's distinct sequences, or a bounded choice of those
        with stored targets); train on it."""
        if self._walk_rows:
            return self._fit_rows(player, t)
        if self.targets == "reservoir":
            local, value, weight = reservoir_targets(*self.reservoirs[player].examples(), self.buffer_power)
        else:
            local, value, weight = self.stored[player].targets(t)
        if len(local) == 0:  # nothing sampled yet: the estimates stay as they are
            return
        fit, n = self.fits[player], len(local)
        fit["sequence"][:n], fit["value"][:n], fit["weight"][:n], fit["count"][:] = local, value, weight, (n, t)
        played = self._snapshot(player)
        self._train(player)
        self._keep(player, played)

    def _fit_rows(self, player: int, t: int) -> None:
        """targets="rows" or "bootstrap": fit on the reservoir's rows (equal rows merged, `targets.row_targets`)."""
        from ..regressors import base as regressors
        rows, value, weight = row_targets(*self.kept[player].examples(), self.buffer_power)
        if len(rows) == 0:
            return
        self.fits[player]["count"][:] = (len(rows), t)
        played = self._snapshot(player)
        regressors.fit(self.regressors[player], rows, value, weight)
        self._refresh(player)
        self._keep(player, played)

    def _snapshot(self, player: int, force: bool = False):
        """The model `player`'s walks played since its last refit, as a `Snapshot` (None without snapshots unless
        `force`)."""
        if self.options.average != "mixture" and not force:
            return None
        from .snapshots import Snapshot
        model = self._walk_model.model0 if player == 0 else self._walk_model.model1
        weight = float(self._credit[player]) if self.options.average == "mixture" else 1.0
        return Snapshot(model, float(self._walk_model.t[player]), weight)

    def _keep(self, player: int, played) -> None:
        """After a refit: keep the model played before it (if it credited anything) and start the new one's weight."""
        if played is not None and played.weight > 0.0:
            self.snapshots[player].add(played)
            self._credit[player] = 0.0

    def _train(self, player: int) -> None:
        """Fit the regressor on the player's latest training set and refresh its strategies."""
        from ..regressors import base as regressors
        fit = self.fits[player]
        n = int(fit["count"][0])
        rows = self.rows(fit["sequence"][:n] + self.offsets[player])
        regressors.fit(self.regressors[player], rows, fit["value"][:n], fit["weight"][:n])
        self._refresh(player)

    def rows(self, sequences: np.ndarray) -> np.ndarray:
        """Feature rows of global sequence ids, computed by the encoder (writable, so that no regressor keeps
        work derived from them after the fit: see `rcfr.regressors.base.cache_key`)."""
        from rcfr.features.encoders import sequence_rows
        return sequence_rows(self.game, self.encoder, sequences)

    def _refresh(self, player: int) -> None:
        """After a refit of `player`: refresh its profile (cache), mark its sets stale (visited), or give the walks
        its new compiled model (model)."""
        if self.profile == "model":
            from ..regressors.compiled import compile_model
            from .model_strategies import with_model, zero_model
            t = int(self.fits[player]["count"][1])
            model = compile_model(self.regressors[player]) if t > 0 else zero_model(self.encoder.num_features)
            self._walk_model = with_model(self._walk_model, player, model, t)
        elif self.visited is not None and self.fits[player]["count"][1] > 0:
            self.visited.stale(player)
        else:
            self._refresh_all(player)

    def _predict(self, player: int, sequences: np.ndarray) -> tuple[np.ndarray, int]:
        """The player's checked predictions for these global sequence ids, and the t they are matched with."""
        from ..regressors import base as regressors
        model, t = self.regressors[player], int(self.fits[player]["count"][1])
        if t == 0:  # nothing fit yet (a set the rules path meets first): estimates zero, strategy uniform
            return np.zeros(len(sequences)), 0
        prediction = regressors.predict(model, self._strategy_rows(sequences))
        return checked_prediction(model, prediction, len(sequences), f"player {player} at iteration {t}"), t

    def _refresh_all(self, player: int, sigma: np.ndarray | None = None) -> None:
        """Regret matching on t x the player's predictions into the profile (or `sigma`, one entry a sequence),
        whole information sets at a time, about `chunk` sequences per prediction."""
        sigma = self.buffers.sigma if sigma is None else sigma
        t = int(self.fits[player]["count"][1])
        firsts, sizes = self.sets[player]
        if self.visited is not None:
            self.visited.all_fresh(player)
        if t == 0:  # nothing fit yet: the estimates are zero, the strategy uniform
            match_predictions(np.zeros(0), 0.0, firsts, sizes, firsts, sigma)
            return
        start = 0
        while start < len(firsts):
            stop = max(start + 1, int(np.searchsorted(firsts, firsts[start] + self.chunk)))
            first, end = firsts[start], firsts[stop - 1] + sizes[stop - 1]
            prediction, _ = self._predict(player, np.arange(first, end))
            match_predictions(prediction, float(t), firsts[start:stop], sizes[start:stop], firsts[start:stop] - first,
                              sigma)
            start = stop

    # ---- policies and size ---------------------------------------------------------------------
    def _played(self, sets) -> np.ndarray:
        """The strategies the walks play now (each player's compiled model) at `sets`, a sequence-form vector."""
        from .snapshots import snapshot_strategies
        out = np.zeros(int(sets.first[-1] + sets.size[-1]) if len(sets.first) else 1)
        for p in (0, 1):
            mine = np.flatnonzero(sets.player == p)
            out += snapshot_strategies(sets, mine, self._snapshot(p, force=True), self.encoder)
        return out

    def current_policy(self) -> Policy:
        if self._walk_rows:  # the compiled models are the strategies (no regressor refit on resuming)
            from .snapshots import game_sets
            self._sets = self._sets or game_sets(self.game)
            return Policy(self.game, self._played(self._sets)[1:].copy(), copy=False)
        if self.profile == "model":  # no profile kept: every set predicted in batches, into an array of its own
            sigma = np.zeros(self.game.num_sequences)
            for p in (0, 1):
                self._refresh_all(p, sigma)
            return Policy(self.game, sigma, copy=False)
        if self.visited is not None:  # every set's strategy, not only the visited ones'
            for p in (0, 1):
                if self.visited.updated[p]:
                    self._refresh_all(p)
        return Policy(self.game, self.buffers.sigma.copy(), copy=False)

    def _mixture(self, sets) -> np.ndarray:
        """average="mixture": the mixture of each player's kept snapshots and its current model (weighted by
        what it has credited so far) at `sets` (`snapshots.mixture`)."""
        from .snapshots import mixture
        return mixture(sets, self._kept_snapshots(), self.encoder)

    def _kept_snapshots(self) -> list[list]:
        """average="mixture": each player's kept snapshots, then its current model (weighted by what it has
        credited so far)."""
        return [[*self.snapshots[p].kept, self._snapshot(p)] for p in (0, 1)]

    def average_policy(self) -> Policy:
        """The normalized average-strategy sums (uniform where an information set has none yet); with
        average="mixture", the snapshots' mixture at every set (`rcfr.solvers.snapshots`)."""
        from .. import kernels as full
        if self.options.average == "mixture":
            from .snapshots import game_sets
            self._sets = self._sets or game_sets(self.game)
            return Policy(self.game, self._mixture(self._sets)[1:].copy(), copy=False)  # slot s + 1: sequence s
        plan = np.concatenate(([0.0], self.buffers.avg))  # slot 0 is the kernel's empty sequence
        out = full.normalize_plan(plan, self.first_seq + 1, self.num_actions, np.empty_like(plan))
        return Policy(self.game, out[1:], copy=False)

    def size(self) -> int | None:
        from ..regressors import size
        sizes = [size(r) for r in self.regressors]
        return None if any(s is None for s in sizes) else int(sum(sizes))

    @property
    def nodes_touched(self) -> int:
        return self.buffers.nodes_touched


#: the lean form's earlier name (an object inside `SampledRCFR`); kept for old imports
OnDemandSampling = LeanSampledRCFR
