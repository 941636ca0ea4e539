"""RCFR and RCFR+: the CFR loop with a regret store that is a regressor over sequence features.

Each update, a player's targets (stored or bootstrapped average (Q-)regrets, see `targets`) are
fit by a regressor on the feature rows of its sequences; the next strategy is regret matching on
t x prediction. The average policy is kept exactly by the solver loop. With indicator features and
the exact-table regressor this is CFR (or CFR+) exactly.
"""

from __future__ import annotations

import numpy as np

from ..options import (
    REGRET_MATCHING,
    TARGETS,
    RCFROptions,
    check_bool,
    check_choice,
    check_int,
    check_seed,
    options_from,
    options_signature,
)
from ..tree import Game
from .cfr import CFRSolver
from .predictions import checked_prediction
from .stores import RegretStore
from .targets import RegretTargets


class RegressionRegrets(RegretStore):
    """Regret store backed by one regressor per player (or one `shared` by both players).

    * ``regressor``: name, ``{"name": ..., **options}`` or a scikit-learn estimator (cloned per player);
    * ``features``: name (``"auto"``, ``"indicator"``, ``"generic"``, ``"poker"``), dict, `Features` or array;
    * ``regret_matching``: ``"rm"`` (regrets, RCFR) or ``"rm+"`` (Q-regrets clipped at zero, RCFR+);
    * ``targets``: ``"stored"`` or ``"bootstrap"``;
    * ``refit_every``: refit every k iterations (the strategy stays put in between);
    * ``weights``: None, or one non-negative example weight per global sequence;
    * ``seed``: a regressor whose ``random_state`` is None gets ``2 * seed + player`` (see `seeded`).
    """

    def __init__(self, regressor="best_first", features="auto", *, regret_matching: str = "rm",
                 targets: str = "stored", refit_every: int = 1, shared: bool = False, weights=None, seed: int = 0):
        self.regressor_spec, self.features_spec = regressor, features
        self.regret_matching = check_choice("regret_matching", regret_matching, REGRET_MATCHING)
        self.targets = check_choice("targets", targets, TARGETS)
        self.refit_every, self.shared = check_int("refit_every", refit_every, 1), check_bool("shared", shared)
        self.weights_spec, self.seed = weights, check_seed("seed", seed)

    # ---- setup ---------------------------------------------------------------------------------
    def bind(self, game: Game) -> None:
        from rcfr.features import make_features

        from ..regressors import make_regressor, seeded
        self.game, self.views = game, game.views
        self.features = make_features(game, self.features_spec)
        self.rows = [self.features.player_rows(game, p) for p in (0, 1)]
        self.weights = self._weights(game)
        self.regressors = [seeded(make_regressor(self.regressor_spec), 2 * self.seed + p)
                           for p in range(1 if self.shared else 2)]
        self.blocks = [self._new_targets(p, v.num_sequences - 1) for p, v in enumerate(self.views)]
        self._estimates = [np.zeros(v.num_sequences) for v in self.views]  # local, entry 0 unused
        self._strategies = [self._match(p) for p in (0, 1)]

    def _new_targets(self, player: int, size: int) -> RegretTargets:
        """The target block of one player (subclasses plug in other target schemes here)."""
        return RegretTargets(size, self.regret_matching, self.targets)

    def _weights(self, game: Game):
        if self.weights_spec is None:
            return [None, None]
        w = np.asarray(self.weights_spec, dtype=np.float64)
        if w.shape != (game.num_sequences,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"weights must be None or {game.num_sequences} finite non-negative numbers "
                             f"(one per sequence), got shape {w.shape}")
        return [w[v.offset:v.offset + v.num_sequences - 1] for v in self.views]

    def _match(self, player: int, out: np.ndarray | None = None) -> np.ndarray:
        return self.views[player].regret_matching(self._estimates[player], out)

    # ---- the store protocol --------------------------------------------------------------------
    def strategy(self, player: int) -> np.ndarray:
        return self._strategies[player]

    def update(self, player: int, regrets: np.ndarray, iteration: int, visited: np.ndarray | None = None) -> None:
        """Take iteration `iteration`'s regrets (local array); `visited` (local mask) marks the sequences a
        sampler visited, for targets that keep examples of visited sequences only."""
        block = self.blocks[player]
        block.add(regrets[1:], iteration, None if visited is None else visited[1:])
        if iteration % self.refit_every == 0:
            block.targets(iteration)
            self._fit([player] if not self.shared else [0, 1])

    def _fit(self, players: list[int]) -> None:
        """Fit the regressor(s) on the latest targets and refresh the strategies of `players`."""
        from ..regressors import base as regressors
        if self.shared:
            model = self.regressors[0]
            weights = [self._example_weights(p) for p in (0, 1)]
            if any(w is not None for w in weights):
                weights = np.concatenate([np.ones(len(r)) if w is None else w for w, r in zip(weights, self.rows)])
            else:
                weights = None
            regressors.fit(model, self.features.matrix, np.concatenate([b.value for b in self.blocks]), weights)
            prediction = regressors.predict(model, self.features.matrix)
            split = len(self.rows[0])
            prediction = checked_prediction(model, prediction, self.features.matrix.shape[0],
                                            f"both players at iteration {self.blocks[0].t}")
            predictions = {0: prediction[:split], 1: prediction[split:]}
        else:
            (p,) = players
            model = self.regressors[p]
            regressors.fit(model, self.rows[p], self.blocks[p].value, self._example_weights(p))
            predictions = {p: regressors.predict(model, self.rows[p])}
        for p, prediction in predictions.items():
            prediction = checked_prediction(model, prediction, self.rows[p].shape[0],
                                            f"player {p} at iteration {self.blocks[p].t}")
            self._estimates[p][1:] = self.blocks[p].predicted(prediction)
            self._match(p, self._strategies[p])

    def _example_weights(self, player: int) -> np.ndarray | None:
        """The user's per-sequence weights times the target block's (either may be None)."""
        fixed, block = self.weights[player], self.blocks[player].weights
        if block is None:
            return fixed
        return block if fixed is None else fixed * block

    def estimates(self, player: int) -> np.ndarray:
        """The regressor's cumulative regret estimates t x prediction (local array, entry 0 unused)."""
        return self._estimates[player]

    def size(self) -> int | None:
        """Representation size: the regressors' summed sizes (None if one is unknown)."""
        from ..regressors import size
        sizes = [size(r) for r in self.regressors]
        return None if any(s is None for s in sizes) else int(sum(sizes))

    def state_dict(self) -> dict[str, np.ndarray]:
        """Targets and estimates, plus the state of regressors that carry one (`stateful`)."""
        from ..regressors import stateful
        state = {}
        for p, block in enumerate(self.blocks):
            state.update(block.state_dict(f"player{p}."))
        for i, model in enumerate(self.regressors):
            if stateful(model):
                state.update({f"regressor{i}.{k}": v for k, v in model.state_dict().items()})
        return state

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Stateful regressors get their saved state back and the saved estimates are used as they
        are (exact resume); the others are refit from the targets, a deterministic function of them."""
        from ..regressors import stateful
        for p, block in enumerate(self.blocks):
            block.load_state_dict(state, f"player{p}.")
        stateless = []
        for i, model in enumerate(self.regressors):
            players = [0, 1] if self.shared else [i]
            if stateful(model):
                prefix = f"regressor{i}."
                model.load_state_dict({k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)})
                self._use_saved_estimates(players)
            elif any(self.blocks[p].t > 0 for p in players):
                stateless.append(players)
            else:  # nothing fit yet: the saved estimates are zero
                self._use_saved_estimates(players)
        for group in stateless:
            self._fit(group)

    def _use_saved_estimates(self, players: list[int]) -> None:
        for p in players:
            self._estimates[p][1:] = self.blocks[p].estimate
            self._match(p, self._strategies[p])


class RCFR(CFRSolver):
    """Regression CFR (Waugh et al. 2015): regret matching on a regressor's average-regret estimates.
    Its keywords are the fields of `rcfr.options.RCFROptions` but `regret_matching`, which the class fixes."""

    solver_name = "rcfr"
    #: the options this class fixes, and the defaults it changes
    fixed: dict = {"regret_matching": "rm"}
    defaults: dict = {}

    def __init__(self, game: Game, **options):
        o = options_from(RCFROptions, type(self).__signature__, options, type(self).__name__, self.fixed)
        store = RegressionRegrets(o.regressor, o.features, regret_matching=o.regret_matching, targets=o.targets,
                                  refit_every=o.refit_every, shared=o.shared, weights=o.weights, seed=o.seed)
        super().__init__(game, store, options=o)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.__signature__ = options_signature(RCFROptions, cls.defaults, exclude=("regret_matching",))

    @property
    def regret_matching(self) -> str:
        return self.options.regret_matching


RCFR.__signature__ = options_signature(RCFROptions, exclude=("regret_matching",))


class RCFRPlus(RCFR):
    """RCFR+ (Morrill 2016): regressors fit average Q-regrets Q_t / t (clipped at zero), linear averaging."""

    solver_name = "rcfr+"
    fixed = {"regret_matching": "rm+"}
    defaults = {"averaging": "linear"}
