"""Lean sampled RCFR(+) on a game walked by its rules: memory for the information sets met, no compiled tree.

`RulesLeanSampledRCFR` is `LeanSampledRCFR` (same options, sampler walks, targets, fits and visited profile) on
`rcfr.sampling.rules_buffers.RulesBuffers`. What differs is where the per-set facts come from:

* sets and sequences are numbered as the walks meet them (sequence = the set's slot of the regret layout), so
  the training data, the profile, the average sums and one iteration's tally grow with the sets met;
* the feature rows of a sequence come from the state of the first history met in its set, which the buffers
  keep per set with its player (``set_states``): the encoder reads that state directly, no replay;
* the current strategy is the visited profile (`rcfr.solvers.visited`): the discovery walk, which on
  this path also numbers the sets a traversal will meet, predicts a set the first time it is met and after
  each refit of its player, so the sampled traversal never reads a strategy that is not the model's; or, with
  ``profile="model"``, the walk makes it from the player's compiled model where it meets the set
  (`rcfr.solvers.model_strategies.WalkModel`): no profile, no discovery walk, no regret table kept;
* policies are `rcfr.policy.rules.CodePolicy` objects keyed by information-set code;
* with ``targets="rows"`` no state is kept per set (the walk writes the fits' rows), and with
  ``average="mixture"`` no average sum is written: their policies are made at every set of the game, found by
  one walk of the rules (`rcfr.solvers.snapshots.rules_sets`);
* with both, no set is numbered at all (`rcfr.sampling.rules_source.SetFreeRules`, unless ``set_index=True``): the
  opponent's action is drawn at each visit instead of kept per set, and the buffers hold the sink set alone.

A batch can be walked elsewhere and added here (`walk_spec`, `traverse_batch`, `absorb`: the seam
`rcfr.solvers.distributed_sampled.distribute` shards through, with the visited profile or in the bounded form,
``profile="model"`` with nothing numbered; docs/distributed.md).

Refused here: ``profile="cache"`` (it refreshes every set of the game) and probing (the discovery walk does not
mirror it), and information-set abstractions (the encoders describe full sets).
"""

from __future__ import annotations

import numpy as np

from ..policy.rules import CodePolicy
from ..sampling import driver
from ..sampling.bundles import C_NODES, C_TRAVERSAL, make_tally
from ..sampling.reservoir import Reservoir
from ..sampling.rules_buffers import RulesBuffers
from ..sources.rules import RulesGame
from .base import require
from .capabilities import refuse_rules_walk
from .on_demand import LeanSampledRCFR
from .predictions import match_predictions
from .targets import StoredSums, collect_sampled

PLAYER = -1  # the column of `set_states` that holds the set's player


class RulesLeanSampledRCFR(LeanSampledRCFR):
    """Lean sampled RCFR(+) on a `RulesGame` (see the module docstring); `SampledRCFR(rules_game,
    features_on_demand=True, ...)` builds it."""

    @staticmethod
    def _check_game(game):
        require(game, "rules", "RulesLeanSampledRCFR")
        return game

    def _allocate(self, bound_rows) -> None:
        o = self.options
        refuse_rules_walk(self.solver_name, self.game, o)
        from rcfr.features.encoders import bound_encode_rows
        self.profile = "model" if o.profile == "model" else "visited"
        if self.profile == "model":
            self._check_compilable()
        self._encode = bound_encode_rows(self.encoder)
        rows = self._walk_rows  # the fits read the rows the walk wrote: no state kept per set
        # nothing kept per set (the walk's rows, the models' mixture): no set numbered unless set_index=True asks
        kept_per_set = not rows or o.average != "mixture"
        self.numbered = kept_per_set or o.set_index is True
        self.buffers = RulesBuffers(self.game, self.sampler, o.seed, RulesGame.initial_sets, keep_states=not rows,
                                    keep_table=self.profile != "model", numbered=self.numbered)
        if self.profile == "model":
            from .model_strategies import walk_model
            self._walk_model = walk_model(self.encoder, self.game.depth + 3, self.game.widest)
            self._most_new = 0  # the most sets one player's traversals of an iteration met for the first time
        self._strategy_rows = self.rows
        self.offsets = [0, 0]  # sequences are the buffers' slots, both players' in one numbering
        if self.targets == "reservoir":
            self.reservoirs = [Reservoir(self.capacity, 2 * o.seed + 1 + p) for p in (0, 1)]
        elif rows:
            self._row_targets()
        else:
            self.stored = [StoredSums(0, o.regret_matching, self.capacity, self.selection, 2 * o.seed + 1 + p)
                           for p in (0, 1)]
        self._tally = make_tally(0, 0, squares=False)
        self._fit_sizes()

    # ---- the models evaluated in the walk (profile="model") --------------------------------------------
    def _traverse(self, player: int, weight: float) -> None:
        """profile="model": the traversals evaluate the models where they meet a set (`State.model`). No discovery
        walk numbers the sets first and a walk cannot grow the arrays, so the arrays grow beforehand to leave 4x
        the most new sets one call has met; where that is not sure (the first call, or room under 8x), the call
        can be undone (`RulesBuffers._snapshot`, with the tally) and is walked again on arrays 4x larger after an
        overflow. A call that overflowed where it could not be undone raises."""
        if self.profile != "model":
            return super()._traverse(player, weight)
        if not self.numbered:  # no set numbered: the arrays never grow, one call walks every traversal
            walk = self._walk_for(player)
            tree, state, scratch, settings, _ = self._walk(player)
            args = (tree, state._replace(model=walk), scratch, settings, 0, self.traversals, player, weight,
                    self._tally)
            self._drive = self._drive or driver.bound(driver.drive, *args)
            self._drive(*args)
            self._check_walk(player)
            self._check_rows(player)
            return
        from ..sampling.rules_source import OVERFLOW
        b, widest, most = self.buffers, self.game.widest, self._most_new
        free = lambda: (int(b.meta[2]) - b.num_sets, int(b.meta[3]) - b.num_slots)  # noqa: E731
        while True:
            if not b.has_room:
                b.grow()  # whichever is half used, as every driver call on the rules
            elif free()[0] < 4 * most or free()[1] < 4 * most * widest:
                b.grow(2, both=True)
            else:
                break
        sets, slots = free()
        careful = most == 0 or sets < 8 * most or slots < 8 * most * widest
        done = 0
        walk = self._walk_for(player)
        while done < self.traversals:
            tree, state, scratch, settings, _ = self._walk(player)  # grows when half full, then sizes the tally
            tally, before = self._tally, b.num_sets
            saved = (b._snapshot(), [a.copy() for a in tally], _kept_copy(walk.kept)) if careful else None
            args = (tree, state._replace(model=walk), scratch, settings, done, self.traversals - done,
                    player, weight, tally)
            self._drive = self._drive or driver.bound(driver.drive, *args)
            ran = self._drive(*args)
            if b.meta[OVERFLOW]:
                if saved is None:
                    raise RuntimeError(f"{self.solver_name}: player {player}'s traversals at iteration {self.iteration} "
                                       f"met more than {sets:,} new information sets (4x the most before); the "
                                       f"arrays overflowed and the call cannot be undone")
                b._restore(saved[0])
                for array, kept in zip(tally, saved[1]):
                    array[:] = kept
                for array, kept in zip(walk.kept, saved[2]):
                    array[:len(kept)] = kept
                b.grow(4, both=True)
                continue
            self._most_new = max(self._most_new, b.num_sets - before)
            done += ran
        self._check_walk(player)
        self._check_rows(player)

    # ---- the batch seam: a batch's traversals walked elsewhere, added here (`distributed_sampled`) --------------
    def walk_spec(self, player: int, weight: float | None = None) -> dict:
        """Everything a batch of `player`'s traversals reads, picklable and nothing per history or set: the solver's
        kind, the game's rules (its parameters; a worker builds the `RulesGame` once), the options, each player's regressor and the t of
        its latest fit (what the visited profile predicts a set met with), the iteration and the averaging weight
        (default: this iteration's, as `_advance` credits it)."""
        if weight is None:
            weight = float(self.iteration) ** self.power / self.traversals
        spec = {"kind": type(self), "rules": self.game.rules, "options": self.options, "solver_name": self.solver_name,
                "chunk": self.chunk, "regressors": list(self.regressors),
                "fitted": [int(self.fits[p]["count"][1]) for p in (0, 1)], "iteration": int(self.iteration),
                "player": int(player), "weight": float(weight)}
        if self.profile == "model":  # the walks' compiled models and their t (a few arrays each), not the regressors
            walk = self._walk_model
            spec["regressors"] = None
            spec["models"] = [(walk.model0, float(walk.t[0])), (walk.model1, float(walk.t[1]))]
        return spec

    @staticmethod
    def traverse_batch(spec: dict, traversals: int, seed: int) -> dict:
        """`traverse_batch` (the module function): run in a worker."""
        return traverse_batch(spec, traversals, seed)

    def absorb(self, player: int, batches: list[dict], seed: int = 0) -> None:
        """Add `player`'s batches (`traverse_batch`'s results) in the order given as the one batch `_batch` would have
        left: the sets new here numbered by code in order of first meeting, their states kept; the sampled regret
        sums and visits into the tally (each set written listed once), the weighted average-strategy increments
        into the average sums, the traversals and nodes into the counters. `_advance` then collects the tally into
        the reservoir or stored sums and fits, as after a batch walked here. With nothing numbered (profile="model",
        the walks' rows as targets) a batch holds the feature rows its walks kept instead, merged into the player's
        rows (`RowTargets.absorb`, a uniform reservoir's draws from `seed`)."""
        b = self.buffers
        if not self.numbered:
            self._check_rows(player, sum(batch["rows"][3] for batch in batches))
            self.kept[player].absorb([batch["rows"] for batch in batches], np.random.default_rng(seed))
            for batch in batches:
                b.counters[C_TRAVERSAL] += batch["traversals"]
                b.counters[C_NODES] += batch["nodes"]
            return
        for batch in batches:
            sizes = batch["num_actions"]
            ids = b.number(batch["codes"], sizes, batch["signatures"], batch["set_states"])
            if len(ids) and ids.min() < 0:  # `number` grows first: a bug if it did not
                raise RuntimeError(f"{self.solver_name}: a shard's sets did not fit the arrays")
            self._fit_sizes()
            tally, first = self._tally, b.tree.first_seq[ids]
            local = np.cumsum(sizes) - sizes
            of = np.repeat(np.arange(len(sizes)), sizes)
            slots = first[of] + np.arange(len(of)) - local[of]
            written = batch["visits"][local] > 0 if len(of) else np.zeros(0, bool)
            new = ids[written & (tally.visits[first] == 0)]
            count = int(tally.count[0])
            tally.listed[count:count + len(new)] = new
            tally.count[0] = count + len(new)
            tally.sums[slots] += batch["sums"]
            tally.visits[slots] += batch["visits"]
            b.state.avg[slots] += batch["avg"]
            b.counters[C_TRAVERSAL] += batch["traversals"]
            b.counters[C_NODES] += batch["nodes"]
        if self.visited is not None:  # the sets numbered here are stale: predicted where a walk here meets them
            self.visited.sync()

    # ---- growing with the sets met ---------------------------------------------------------------
    def _fit_sizes(self) -> None:
        """Size the tally and the stored sums to the buffers' slots and sets (after they grew), keeping them."""
        slots, sets = self.buffers.state.avg.shape[0], self.buffers.tree.first_seq.shape[0]
        tally = self._tally
        if tally.sums.shape[0] != slots or tally.listed.shape[0] != sets:
            new = make_tally(slots, sets, squares=False)
            for name in ("sums", "visits", "listed"):
                old = getattr(tally, name)
                getattr(new, name)[:len(old)] = old
            new.count[:] = tally.count
            self._tally = new
        if self.targets == "stored" and self.stored[0].total.shape[0] != slots:
            for data in self.stored:
                data.resize(slots)

    def _walk(self, player: int) -> tuple:
        """Room for the traversal's sets first (the discovery walk numbered them; the driver returns without
        walking when the arrays are half full)."""
        b = self.buffers
        if not b.has_room:
            b.grow()
        self._fit_sizes()
        return super()._walk(player)

    # ---- features, predictions and policies ------------------------------------------------------------
    def _sets_of(self, sequences: np.ndarray) -> np.ndarray:
        tree = self.buffers.tree
        return np.searchsorted(tree.first_seq[:self.buffers.num_sets], sequences, side="right") - 1

    def rows(self, sequences: np.ndarray) -> np.ndarray:
        """Feature rows of these sequences (slots), from the state kept for each one's set."""
        sequences = np.ascontiguousarray(sequences, np.int64)
        tree = self.buffers.tree
        sets = self._sets_of(sequences)
        return self._encode(tree.set_states[sets, :PLAYER], sequences - tree.first_seq[sets])

    def _player_sets(self, player: int) -> np.ndarray:
        tree = self.buffers.tree
        return np.flatnonzero(tree.set_states[:self.buffers.num_sets, PLAYER] == player)

    def _refresh_all(self, player: int, sigma: np.ndarray | None = None) -> None:
        """Regret matching on t x the player's predictions into the profile (or `sigma`, one entry a slot), for every
        set met so far (uniform before its first fit)."""
        tree = self.buffers.tree
        sigma = self.buffers.state.sigma if sigma is None else sigma
        t = int(self.fits[player]["count"][1])
        sets = self._player_sets(player)
        step = max(self.chunk // self.game.widest, 1)  # sets per prediction: at most `chunk` sequences
        for start in range(0, len(sets), step):
            chunk = sets[start:start + step]
            firsts, sizes = tree.first_seq[chunk], tree.num_actions[chunk]
            at = np.cumsum(sizes) - sizes
            if t == 0:
                match_predictions(np.zeros(0), 0.0, firsts, sizes, firsts, sigma)
            else:
                sequences = np.repeat(firsts - at, sizes) + np.arange(int(sizes.sum()))
                prediction, _ = self._predict(player, sequences)
                match_predictions(prediction, float(t), firsts, sizes, at, sigma)
        if self.visited is not None:
            self.visited.sync()
            self.visited.fresh[sets] = self.visited.version
            self.visited.all_fresh(player, fitted=t > 0)

    def current_policy(self) -> CodePolicy:
        """The model's current strategy at every set met (refreshed), as a `CodePolicy`. With profile="model" no
        profile is kept: the strategies are predicted in batches into a new array for the policy; with
        targets="rows" no state per set either: the compiled models' strategies at every set of the game (one walk
        of the rules finds them, `rcfr.solvers.snapshots.rules_sets`)."""
        if self._walk_rows:
            return self._code_policy(self._played(self._rules_sets()))
        sigma = np.zeros(len(self.buffers.state.avg)) if self.profile == "model" else self.buffers.state.sigma
        for p in (0, 1):
            self._refresh_all(p, sigma)
        return self.buffers.policy(sigma, positive=False)

    def average_policy(self, walk: str = "auto") -> CodePolicy:
        """The normalized average-strategy sums of the sets met (uniform where none yet), as a `CodePolicy`; with
        average="mixture", the snapshots' mixture at every set of the game, so that no set met need be kept for it:
        on Liar's Dice / Bluff (``walk="auto"``) made on the public bid tree as a whole policy
        (`rcfr.solvers.public_tree.mixture.public_mixture`: float64, or float32 past `FLOAT64_ACTIONS` actions, as on
        Bluff(2,2)), elsewhere (or ``walk="general"``) at the sets of one walk of the rules
        (`rcfr.solvers.snapshots.rules_sets`)."""
        from ..evaluation import WALKS, bluff
        from ..options import check_choice
        check_choice("walk", walk, WALKS)
        if self.options.average != "mixture":
            return self.buffers.average_policy()
        if walk == "auto" and bluff.walks(self.game.rules):
            from .public_tree.mixture import public_mixture
            return public_mixture(self.game.rules, self._kept_snapshots(), self.encoder)
        return self._code_policy(self._mixture(self._rules_sets()))

    def _rules_sets(self):
        """Every set of the game, found by one walk of the rules at the first policy asked (`rules_sets`)."""
        from .snapshots import rules_sets
        self._sets = self._sets or rules_sets(self.game.rules)
        return self._sets

    def _code_policy(self, plan: np.ndarray) -> CodePolicy:
        """The `CodePolicy` of a sequence-form vector over `_rules_sets()` (slot 0 the empty sequence)."""
        sets = self._sets
        order = np.argsort(sets.codes, kind="stable")
        sizes = sets.size[order]
        first = np.zeros(len(order) + 1, np.int64)
        np.cumsum(sizes, out=first[1:])
        gather = np.repeat(sets.first[order] - first[:-1], sizes) + np.arange(first[-1])
        return CodePolicy(self.game.rules, sets.codes[order], first, plan[gather], default="uniform")

    # ---- checkpoints -----------------------------------------------------------------------------
    @property
    def sized_fields(self) -> tuple[str, ...]:
        """Checkpoint fields as long as what was met (the sets, their slots, the stored sums)."""
        stored = [f"player{p}.buffer.{name}" for p in (0, 1) for name in ("total", "written")]
        return (*(f"sampler.{k}" for k in self.buffers.SIZED), *(stored if self.targets == "stored" else ()))

    def _state(self) -> dict[str, np.ndarray]:
        state = super()._state()
        if self.targets == "stored":  # only the slots met (their arrays are as long as the buffers' capacity)
            for p in (0, 1):
                for name in ("total", "written"):
                    key = f"player{p}.buffer.{name}"
                    state[key] = state[key][:self.buffers.num_slots].copy()
        return state

    def _load_buffers(self, sampler: dict[str, np.ndarray]) -> None:
        """The buffers' sets met, values and RNG; every set is stale then (predicted again as met)."""
        sampler["regrets"] = np.zeros(len(sampler["avg"]))  # unused by sampled RCFR, not checkpointed
        self.buffers.load_state_dict(sampler)
        self._fit_sizes()
        if self.visited is not None:
            self.visited.fresh = np.zeros(0, np.int64)  # every set never met, then as `_load_state` refits
            self.visited.sync()

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        if self.targets == "stored":  # the checkpoint holds the slots met; the arrays are as long as the buffers'
            sets = {k[8:]: v for k, v in state.items() if k.startswith("sampler.")}
            slots = int(np.sum(sets["num_actions"]))
            capacity = int(sets["capacity"][1]) + self.game.widest
            state = dict(state)
            for p in (0, 1):
                for name in ("total", "written"):
                    key = f"player{p}.buffer.{name}"
                    if len(state[key]) != slots:
                        raise ValueError(f"checkpoint field {key!r} has {len(state[key])} entries for {slots} slots")
                    padded = np.zeros(capacity, np.asarray(state[key]).dtype)
                    padded[:slots] = state[key]
                    state[key] = padded
        super()._load_state(state)


_GAMES: dict[str, RulesGame] = {}  # the games a worker process walked, by the rules' identity


def _rules_game(rules) -> RulesGame:
    """The `RulesGame` of `rules`, built once per process (its fast data writable, as the walks need: arrays that
    arrive through Ray's object store are read-only)."""
    from ..sources.rules import rules_identity
    key = rules_identity(rules)
    if key not in _GAMES:
        _GAMES.clear()  # one game at a time is what the shards of a run walk
        _GAMES[key] = RulesGame(rules)
    return _GAMES[key]


_WALKERS: dict = {}  # the bounded form's walker of the run a worker process serves, kept between calls


def _walker(spec: dict):
    """A solver of the spec's kind to walk a shard: a new one for the visited profile (its sets are numbered as met,
    so each call starts empty); in the bounded form (nothing numbered) one per process and run, kept between
    calls, since building it (the row buffers, the compile check) and binding its driver cost more than a
    shard's few traversals (each call then resets what it reads: stream, rows offered, counters' start)."""
    from ..sources.rules import rules_identity
    key = (spec["kind"], rules_identity(spec["rules"]), repr(spec["options"]), spec["solver_name"], spec["chunk"])
    walker = _WALKERS.get(key)
    if walker is None:
        walker = spec["kind"](_rules_game(spec["rules"]), spec["options"], spec["solver_name"], chunk=spec["chunk"])
        if not walker.numbered:
            _WALKERS.clear()  # one run at a time
            _WALKERS[key] = walker
    return walker


def traverse_batch(spec: dict, traversals: int, seed: int) -> dict:
    """`traversals` walks of ``spec["player"]`` (`RulesLeanSampledRCFR.walk_spec`) from the stream of `seed`, on a
    solver of the spec's kind of its own (`_walker`: the spec's regressors, each player's sets stale once fit, or
    its compiled models), so nothing of the learner's is written. Returns per set met, in the order met: its code,
    actions, signature and state row (with its player), and per slot of those sets the sampled regret sums and
    visits and the weighted average-strategy increments; in the bounded form the rows its walks kept instead
    (`RowTargets.held`); with the traversals and nodes walked."""
    from ..sampling.buffers import seed_state
    from .model_strategies import with_model
    walker = _walker(spec)
    walker.traversals, walker.iteration = int(traversals), spec["iteration"]
    for p in (0, 1):
        walker.fits[p]["count"][1] = spec["fitted"][p]
        if "models" in spec:
            walker._walk_model = with_model(walker._walk_model, p, *spec["models"][p])
        else:
            walker.regressors[p] = spec["regressors"][p]
            if spec["fitted"][p] > 0:
                walker.visited.stale(p)
    b = walker.buffers
    b.rng[:] = seed_state(int(seed))
    before = int(b.counters[C_TRAVERSAL]), int(b.counters[C_NODES])
    if not walker.numbered:  # no rows yet; those a uniform reservoir keeps are drawn from the shard's stream too
        kept = walker.kept[spec["player"]].kept
        kept.seen[0], kept.rng[:] = 0, seed_state(int(seed) + 1)
    walker._batch(spec["player"], spec["weight"])
    done = {"traversals": int(b.counters[C_TRAVERSAL]) - before[0], "nodes": int(b.counters[C_NODES]) - before[1]}
    if not walker.numbered:
        tree = b.tree
        collect_sampled(tree.first_seq, tree.num_actions, walker._tally, walker.traversals)  # cleared for the next call
        return {"rows": walker.kept[spec["player"]].held(), **done}
    sets, slots = b.num_sets, b.num_slots
    index, tally = b.index, walker._tally
    return {"codes": index["codes"][:sets].copy(), "num_actions": index["num_actions"][:sets].copy(),
            "signatures": index["signatures"][:sets].copy(), "set_states": b.tree.set_states[:sets].copy(),
            "sums": tally.sums[:slots].copy(), "visits": tally.visits[:slots].copy(), "avg": b.state.avg[:slots].copy(),
            **done}


def _kept_copy(kept) -> tuple[np.ndarray, ...]:
    """What a driver call may change of a `RowReservoir` (rows up to those offered), to undo the call."""
    held = min(int(kept.seen[0]), len(kept.value))
    per_row = ("rows", "value", "t")  # slots past `held` are written only after them: `seen` undoes those
    return tuple(getattr(kept, name)[:held].copy() if name in per_row else getattr(kept, name).copy()
                 for name in kept._fields)
