"""The CFR solver loop, shared by every tabular, abstracted and regression variant.

One iteration, for each player p (in turn for alternating updates, together for simultaneous):
the opponent's realization plan, one sparse product for the values of p's sequences, one bottom-up
pass for counterfactual regrets, then the regret store turns the regrets into p's next strategy.
The average policy is kept exactly, as a weighted sum of realization plans (weight t^power).

``nodes_touched`` counts what a tree-walking CFR with pruning would visit (Lanctot 2013, section 2.2.2):
each player's update is one walk from the root that stops below a history the opponent reaches with
probability zero (the history itself is touched; chance never prunes, its outcomes all have positive
probability). The count costs one dot product over the opponent's sequences per walk.
"""

from __future__ import annotations

from typing import Protocol, cast

import numpy as np

from .. import kernels
from ..distributed import check_sharding
from ..evaluation import terminal_values
from ..options import AVERAGING, CFROptions, Options, check_float, check_int, check_power  # noqa: F401  (AVERAGING: re-exported)
from ..policy import Policy
from ..tree import Game
from ..tree.model import _history_sequences
from .base import IterativeSolver, abstraction_identity, check_game
from .stores import DiscountedTable, Linear, RegretStore, RegretTable


class LoopOptions(Protocol):
    """What the loop reads of an options object (`CFROptions`, `RCFROptions`): the update schedule and the
    average's power."""

    @property
    def updates(self) -> str: ...

    @property
    def power(self) -> float | Linear: ...

    def description(self) -> dict: ...


def averaging_power(averaging: str | float | Linear) -> float | Linear:
    """Iteration t's weight in the average policy is t ** power; a `Linear` schedule of powers gamma_s
    instead scales the sum by ((t-1)/t) ** gamma_{t-1} before adding iteration t (so a constant
    gamma gives weights proportional to t ** gamma again). See `rcfr.options.check_power`."""
    return check_power("averaging", averaging)


class CFRSolver(IterativeSolver):
    """Counterfactual regret minimization over a compiled game with a pluggable regret store. `options`
    (a `CFROptions`, or any options object with `updates` and `averaging`) replaces the two keywords."""

    solver_name = "CFRSolver"

    def __init__(self, game: Game, store: RegretStore, *, updates: str = "alternating",
                 averaging: str | float | Linear = "uniform", options: LoopOptions | None = None):
        self.game, self.store = check_game(game), store
        loop: LoopOptions = CFROptions(updates=updates, averaging=averaging) if options is None else options
        self.options = cast(Options, loop)  # every options object is one (`rcfr.options`)
        self.updates, self.power = loop.updates, loop.power
        self.iteration = 0
        store.bind(game)
        self.views = game.views
        sizes = [v.num_sequences for v in self.views]
        self.average_plans = [np.zeros(n) for n in sizes]
        self._plans = [np.empty(n) for n in sizes]
        self._values = [np.empty(n) for n in sizes]
        self._regrets = [np.zeros(n) for n in sizes]
        # last_values[p]: player p's expected value in the profile p's regrets were computed against in
        # the last iteration. Simultaneous updates: (sigma0^t, sigma1^t) for both players. Alternating
        # updates: player 0's is (sigma0^t, sigma1^t) but player 1's is (sigma0^{t+1}, sigma1^t), after
        # player 0's update, so the two need not sum to zero.
        self.last_values = [0.0, 0.0]
        self.nodes_touched = 0
        self._children_below = _children_below(game)
        self.sharding: dict | None = None

    def distribute(self, workers: int = 1, shards: int | None = None, ray_address: str | None = None) -> CFRSolver:
        """Split each iteration's terminal values (the sparse products) into `shards` blocks of rows computed
        on `workers` Ray workers (`rcfr.evaluation.terminal_values`): the same iterates bit for bit, for any
        count. A setting of the run, not an option: checkpoints resume on any number of workers. Returns self."""
        self.sharding = check_sharding(workers, shards, ray_address)
        return self

    def _touched(self, player: int, opponent_plan: np.ndarray) -> int:
        """Histories one pruned walk updating `player` visits: the root and each history whose parent
        the opponent reaches with positive probability."""
        return 1 + int(self._children_below[player] @ (opponent_plan > 0))

    # ---- iterations ----------------------------------------------------------------------------
    def _plan(self, player: int) -> np.ndarray:
        return self.views[player].plan(self.store.strategy(player), self._plans[player])

    def _regrets_of(self, player: int, opponent_plan: np.ndarray) -> np.ndarray:
        self.nodes_touched += self._touched(player, opponent_plan)
        view = self.views[player]
        if self.sharding is None or self.sharding["shards"] == 1:
            values = view.terminal_values(opponent_plan, self._values[player])
        else:
            values = terminal_values(self.game, {player: opponent_plan}, **self.sharding)[player]
        self.last_values[player] = kernels.counterfactual_regrets(
            values, self.store.strategy(player), view.infoset_first, view.infoset_size,
            view.infoset_parent, self._regrets[player])
        return self._regrets[player]

    def _advance(self, iterations: int) -> None:
        for _ in range(iterations):
            self._iterate_once()

    def _average(self, player: int, plan: np.ndarray, t: int) -> None:
        if isinstance(self.power, Linear):  # a schedule: discount the sum, then add with weight 1
            self.average_plans[player] *= ((t - 1) / t) ** self.power(t - 1)
            self.average_plans[player] += plan
        else:
            self.average_plans[player] += float(t) ** self.power * plan

    def _iterate_once(self) -> None:
        t = self.iteration = self.iteration + 1
        if self.updates == "alternating":
            for p in (0, 1):
                self._average(p, self._plan(p), t)
                self.store.update(p, self._regrets_of(p, self._plan(1 - p)), t)
        else:
            plans = [self._plan(p) for p in (0, 1)]
            regrets = [self._regrets_of(p, plans[1 - p]) for p in (0, 1)]
            for p in (0, 1):
                self._average(p, plans[p], t)
                self.store.update(p, regrets[p], t)

    # ---- checkpoints ---------------------------------------------------------------------------
    def _state(self) -> dict[str, np.ndarray]:
        """Iteration, average plans and the store's state."""
        state = {f"store.{k}": v for k, v in self.store.state_dict().items()}
        state.update({f"average_plan{p}": self.average_plans[p].copy() for p in (0, 1)})
        state["iteration"] = np.array(self.iteration)
        state["nodes_touched"] = np.array(self.nodes_touched)
        return state

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        self.store.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("store.")})
        self.nodes_touched = int(state["nodes_touched"])
        for p in (0, 1):
            self.average_plans[p][:] = state[f"average_plan{p}"]
        self.iteration = int(state["iteration"])

    def abstraction_identity(self) -> str:
        """The abstraction of an `AbstractRegrets` store (`rcfr.abstraction.abstract_solver`), else none."""
        return abstraction_identity(getattr(self.store, "abstraction", None))

    def size(self) -> int | None:
        """Representation size: the values the regret store keeps (table entries, abstract sequences,
        the regressors' sizes); None for a regressor of unknown size. Compare with
        ``game.num_sequences``, the size of a full regret table."""
        return self.store.size()

    # ---- policies ------------------------------------------------------------------------------
    def current_policy(self) -> Policy:
        return Policy.from_local(self.game, [self.store.strategy(p) for p in (0, 1)])

    def average_policy(self) -> Policy:
        """The weighted average of all current policies so far (uniform before any iteration)."""
        return Policy.from_local(self.game, [v.normalize(plan) for v, plan in zip(self.views, self.average_plans)])


def _children_below(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """For each updating player p, the number of non-root histories whose parent lies below each of the
    opponent's local sequences (the opponent's last sequence on the way to the parent)."""
    parents = game.parent[1:]
    table = game.__dict__.get("history_sequences")  # not cached here: 8 bytes per history
    table = _history_sequences(game) if table is None else table
    counts = []
    for p in (0, 1):
        view = game.views[1 - p]
        seq = table[parents, 1 - p]
        local = np.where(seq < 0, 0, seq - view.offset + 1)
        counts.append(np.bincount(local, minlength=view.num_sequences).astype(np.float64))
    return counts[0], counts[1]


def _table(options: CFROptions) -> RegretTable:
    return RegretTable(options.regret_matching, alpha=options.alpha, beta=options.beta)


class CFR(CFRSolver):
    """Vanilla CFR: regret matching on cumulative regrets, uniform averaging. ``store`` replaces the
    regret table by any `RegretStore` (your own, or `RegressionRegrets` with your regressor)."""

    solver_name = "cfr"

    def __init__(self, game: Game, *, updates: str = "alternating", averaging: str | float = "uniform",
                 store: RegretStore | None = None):
        if store is not None and not all(callable(getattr(store, m, None)) for m in ("bind", "strategy", "update")):
            raise ValueError(f"store must be a RegretStore (bind, strategy, update, size), got {store!r}")
        options = CFROptions(updates=updates, averaging=averaging)
        super().__init__(game, _table(options) if store is None else store, options=options)


class CFRPlus(CFRSolver):
    """CFR+: regret-matching+ (clipped regrets), alternating updates, linear averaging by default."""

    solver_name = "cfr+"

    def __init__(self, game: Game, *, averaging: str | float = "linear"):
        options = CFROptions(regret_matching="rm+", averaging=averaging)
        super().__init__(game, _table(options), options=options)


class LinearCFR(CFRSolver):
    """Linear CFR: iteration t's regrets weighted by t, and its average-policy contribution by
    t ** power of `averaging` (linear by default, as in the paper)."""

    solver_name = "lcfr"

    def __init__(self, game: Game, *, updates: str = "alternating", averaging: str | float = "linear"):
        options = CFROptions(updates=updates, averaging=averaging, alpha=1.0, beta=1.0)
        super().__init__(game, _table(options), options=options)


class DiscountedCFR(CFRSolver):
    """Discounted CFR (Brown & Sandholm 2019) with parameters alpha, beta and gamma; the paper's gamma
    (iteration t's average-policy weight t ** gamma) is `averaging`, as in every solver."""

    solver_name = "dcfr"

    def __init__(self, game: Game, *, alpha: float = 1.5, beta: float = 0.0, averaging: str | float = 2.0,
                 updates: str = "alternating"):
        options = CFROptions(updates=updates, averaging=averaging, alpha=alpha, beta=beta)
        super().__init__(game, _table(options), options=options)


def _check_horizon(horizon) -> int:
    return check_int("horizon (the planned number of iterations the schedules span)", horizon, 1)


def _check_gamma_start(gamma_start) -> float:
    return check_float("gamma_start (the schedule ends at gamma_start - 5)", gamma_start, 5.0, 100.0)


class PredictiveCFRPlus(CFRSolver):
    """PCFR+ (Farina et al. 2021): regret-matching+ on the cumulative regrets plus the last
    instantaneous regrets (the prediction), alternating updates, quadratic averaging by default."""

    solver_name = "pcfr+"

    def __init__(self, game: Game, *, averaging: str | float = "quadratic"):
        options = CFROptions(regret_matching="rm+", averaging=averaging)
        super().__init__(game, DiscountedTable(predictive=True), options=options)


class DiscountedCFRPlus(CFRSolver):
    """DCFR+ (Xu et al. 2024): R^t = [R^{t-1} (t-1)^alpha / ((t-1)^alpha + 1) + r^t]^+, alternating
    updates, average weights t ** 4 by default."""

    solver_name = "dcfr+"

    def __init__(self, game: Game, *, alpha: float = 1.5, averaging: str | float = 4.0):
        options = CFROptions(regret_matching="rm+", averaging=averaging, alpha=alpha)
        super().__init__(game, DiscountedTable(alpha=options.alpha), options=options)


class PredictiveDiscountedCFRPlus(CFRSolver):
    """PDCFR+ (Xu et al. 2024): DCFR+'s discounted, clipped regrets, and regret matching on the
    prediction R^t t^alpha / (t^alpha + 1) + r^t; alpha 2.3 and average weights t ** 5 by default."""

    solver_name = "pdcfr+"

    def __init__(self, game: Game, *, alpha: float = 2.3, averaging: str | float = 5.0):
        options = CFROptions(regret_matching="rm+", averaging=averaging, alpha=alpha)
        super().__init__(game, DiscountedTable(alpha=options.alpha, predictive=True), options=options)


class HSDiscountedCFR(CFRSolver):
    """HS-DCFR (Zhang et al. 2024): DCFR's regret discounts with powers scheduled over a planned
    `horizon` T, alpha 1 -> 4, beta -1 -> -3, and average-policy power gamma_start -> gamma_start - 5,
    linear in s / T (held at the end past T). Regrets are discounted before each addition, as in the
    paper's equations: R^t = R^{t-1} * d(t-1) + r^t. The schedules (all fixed by `horizon` and
    `gamma_start`) are the options a checkpoint records, through the averaging schedule."""

    solver_name = "hs-dcfr"

    def __init__(self, game: Game, *, horizon: int = 1000, gamma_start: float = 30.0,
                 updates: str = "alternating"):
        horizon, gamma_start = _check_horizon(horizon), _check_gamma_start(gamma_start)
        options = CFROptions(updates=updates, averaging=Linear(gamma_start, gamma_start - 5.0, horizon))
        store = DiscountedTable(alpha=Linear(1.0, 4.0, horizon), beta=Linear(-1.0, -3.0, horizon), plus=False)
        super().__init__(game, store, options=options)


class HSPredictiveCFRPlus(CFRSolver):
    """HS-PCFR+ (Zhang et al. 2024): PCFR+ with the average-policy power scheduled over a planned
    `horizon` T, gamma_start -> gamma_start - 5, linear in s / T (held at the end past T)."""

    solver_name = "hs-pcfr+"

    def __init__(self, game: Game, *, horizon: int = 1000, gamma_start: float = 30.0):
        horizon, gamma_start = _check_horizon(horizon), _check_gamma_start(gamma_start)
        options = CFROptions(regret_matching="rm+", averaging=Linear(gamma_start, gamma_start - 5.0, horizon))
        super().__init__(game, DiscountedTable(predictive=True), options=options)


class SimpleAsymmetricPCFRPlus(CFRSolver):
    """SAPCFR+ (Meng et al., AAAI 2026): PCFR+ whose prediction takes the step 1 / (1 + asymmetry) while the
    stored regrets take step 1 (their one-line change to PCFR+); asymmetry 2 and quadratic averaging."""

    solver_name = "sapcfr+"

    def __init__(self, game: Game, *, asymmetry: float = 2.0, averaging: str | float = "quadratic"):
        if isinstance(asymmetry, str) or asymmetry is None:
            raise ValueError(f"asymmetry of sapcfr+ must be a finite number in [0, 5] (for the adaptive one use "
                             f"apcfr+, for none pcfr+), got {asymmetry!r}")
        options = CFROptions(regret_matching="rm+", averaging=averaging, asymmetry=asymmetry)
        super().__init__(game, DiscountedTable(predictive=True, asymmetry=options.asymmetry), options=options)


class AsymmetricPCFRPlus(CFRSolver):
    """APCFR+ (Meng et al., AAAI 2026): PCFR+ whose prediction takes the step 1 / (1 + a_I), a_I learned per
    information set from how wrong the predictions were against how far the stored regrets moved
    (`DiscountedTable`, ``asymmetry="adaptive"``); quadratic averaging."""

    solver_name = "apcfr+"

    def __init__(self, game: Game, *, averaging: str | float = "quadratic"):
        options = CFROptions(regret_matching="rm+", averaging=averaging, asymmetry="adaptive")
        super().__init__(game, DiscountedTable(predictive=True, asymmetry="adaptive"), options=options)


class AsymmetricPDCFRPlus(CFRSolver):
    """APDCFR+ (Meng et al., AAAI 2026): PDCFR+ (discounted, clipped regrets; alpha 2.3, average weights
    t ** 5) with APCFR+'s adaptive asymmetry on the prediction."""

    solver_name = "apdcfr+"

    def __init__(self, game: Game, *, alpha: float = 2.3, averaging: str | float = 5.0):
        options = CFROptions(regret_matching="rm+", averaging=averaging, alpha=alpha, asymmetry="adaptive")
        super().__init__(game, DiscountedTable(alpha=options.alpha, predictive=True, asymmetry="adaptive"),
                         options=options)
