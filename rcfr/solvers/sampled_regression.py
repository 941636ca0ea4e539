"""Sampled RCFR and RCFR+: regret estimation trained on Monte Carlo CFR samples.

Each iteration, for each player p in turn: regret matching on the regressors' predictions gives the
current profile; `traversals` external-sampling, outcome-sampling or probing traversals (compiled
kernels, `rcfr.sampling.RegretSampler`) at that profile give p's mean sampled regrets; these become
training data, either

* ``targets="stored"``: per-sequence sums of the sampled regrets (or, under ``regret_matching="rm+"``,
  Q-regrets clipped at zero), trained on sum / t, as full-width RCFR's stored targets;
* ``targets="bootstrap"``: as full-width RCFR's bootstrapped targets, on sampled regrets;
* ``targets="reservoir"``: a reservoir buffer of (sequence, sampled regret, iteration) examples of the
  visited sequences with iteration weights (Deep CFR);

and the regressor of p is refit every `refit_every` iterations. With ``features_on_demand=True`` (reservoir
or stored targets, features named by an encoder) no feature matrix is built and a fit sees at most
`capacity` sequences (for stored targets, chosen by `selection`): see `rcfr.solvers.on_demand`.
Probing (``sampler="probing"``, Gibson et al. 2012) samples each of the traverser's actions with
probability max(epsilon, (beta + tau s[a]) / (beta + sum s)), s the average-strategy sums so far, and
values the others by one on-policy probe; tau = 1 and beta = 0 by default, so that the rule does not
depend on the scale of the averaging weights. The average policy sums the sampler's
stochastically weighted average-strategy increments (weight t^power). All target, fit and regret
matching logic is `RegressionRegrets`'; with indicator features, the `table` regressor, stored
targets and one traversal per iteration this is tabular MCCFR with the same sampler and seed.
"""

from __future__ import annotations

import numpy as np

from ..policy import Policy
from ..registry import check_choice
from ..sampling import RegretSampler
from ..tree import Game
from .base import IterativeSolver, _check_count
from .cfr import averaging_power
from .regression import RegressionRegrets
from .targets import SELECTIONS, RegretTargets, ReservoirTargets

SAMPLERS = ("external", "outcome", "probing")
TARGETS = ("stored", "bootstrap", "reservoir")


def probing_options(sampler: str, tau, beta) -> tuple[float, float]:
    """(tau, beta) of probing, checked: 1 and 0 unless given; the other samplers take neither."""
    if sampler != "probing":
        if tau is not None or beta is not None:
            raise ValueError(f"tau and beta apply to sampler='probing' only, got sampler={sampler!r}")
        return 1.0, 0.0
    tau, beta = 1.0 if tau is None else tau, 0.0 if beta is None else beta
    for name, value, low in (("tau", tau, 1.0), ("beta", beta, 0.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value < np.inf:
            raise ValueError(f"{name} must be a finite number in [{low:g}, inf), got {value!r}")
    return float(tau), float(beta)


class SampledRegressionRegrets(RegressionRegrets):
    """`RegressionRegrets` whose targets may also come from a reservoir of sampled regrets."""

    def __init__(self, regressor="best_first", features="auto", *, regret_matching: str = "rm",
                 targets: str = "stored", capacity: int = 100_000, buffer_weighting: str | float = "linear",
                 seed: int = 0, refit_every: int = 1, shared: bool = False, weights=None):
        self.sampled_targets = check_choice("targets", targets, TARGETS)
        if targets == "reservoir" and regret_matching == "rm+":
            raise ValueError("targets='reservoir' has no regret_matching='rm+' variant (Q-regrets need "
                             "per-sequence sums); use targets 'stored' or 'bootstrap' with 'rm+'")
        _check_count("capacity", capacity, 1)
        self.capacity, self.buffer_power = int(capacity), averaging_power(buffer_weighting)
        super().__init__(regressor, features, regret_matching=regret_matching,
                         targets="bootstrap" if targets == "bootstrap" else "stored",
                         refit_every=refit_every, shared=shared, weights=weights, seed=seed)

    def _new_targets(self, player: int, size: int) -> RegretTargets:
        if self.sampled_targets == "reservoir":  # seeds 2s+1, 2s+2: distinct per player and run
            return ReservoirTargets(size, self.capacity, 2 * self.seed + 1 + player, self.buffer_power)
        return super()._new_targets(player, size)


class SampledRCFR(IterativeSolver):
    """RCFR fed by external sampling, outcome sampling or probing (see the module docstring for the options)."""

    regret_matching = "rm"

    def __init__(self, game: Game, *, sampler: str = "external", regressor="best_first", features="auto",
                 targets: str = "stored", traversals: int = 1, refit_every: int = 1, capacity: int = 100_000,
                 buffer_weighting: str | float = "linear", averaging: str | float = "uniform",
                 epsilon: float = 0.6, shared: bool = False, weights=None, features_on_demand: bool = False,
                 selection: str = "recent", tau: float | None = None, beta: float | None = None, seed: int = 0):
        if not isinstance(features_on_demand, bool):
            raise ValueError(f"features_on_demand must be True or False, got {features_on_demand!r}")
        check_choice("sampler", sampler, SAMPLERS)
        tau, beta = probing_options(sampler, tau, beta)
        self.game, self.on_demand, self._store = game, None, None
        if features_on_demand:
            from .on_demand import OnDemandSampling
            self.on_demand = OnDemandSampling(
                game, sampler=sampler, regressor=regressor, features=features, targets=targets,
                traversals=traversals, refit_every=refit_every, capacity=capacity, buffer_weighting=buffer_weighting,
                averaging=averaging, epsilon=epsilon, shared=shared, weights=weights, seed=seed,
                regret_matching=self.regret_matching, selection=selection, tau=tau, beta=beta)
            self.iteration = 0
            return
        check_choice("selection", selection, SELECTIONS)  # used by the on-demand path only
        self.views = game.views
        self.sampler_name = sampler
        self.traversals = _check_count("traversals", traversals, 1)
        self.power = averaging_power(averaging)
        self._store = SampledRegressionRegrets(regressor, features, regret_matching=self.regret_matching, targets=targets,
                                              capacity=capacity, buffer_weighting=buffer_weighting, seed=seed,
                                              refit_every=refit_every, shared=shared, weights=weights)
        self.sampler = RegretSampler(game, sampler, seed=seed, epsilon=epsilon, tau=tau, beta=beta)
        self.store.bind(game)
        self.iteration = 0
        self.average = np.zeros(game.num_sequences)  # average-strategy sums, global sequence ids
        self._profile = np.zeros(game.num_sequences)

    @property
    def store(self) -> SampledRegressionRegrets:
        """The regression store (read-only: it needs the sampler's visit masks, so a wrapping store such
        as a card abstraction's cannot replace it; action abstractions work, they change the game)."""
        return self._store

    @store.setter
    def store(self, value) -> None:
        raise ValueError("sampled RCFR's regret store cannot be replaced (card abstractions are not "
                         "supported; action abstractions are)")

    # ---- iterations ----------------------------------------------------------------------------
    def _slice(self, player: int) -> slice:
        view = self.views[player]
        return slice(view.offset, view.offset + view.num_sequences - 1)

    def _advance(self, iterations: int) -> None:
        if self.on_demand is not None:
            self.on_demand.advance(iterations)
            self.iteration = self.on_demand.iteration
            return
        local = [np.zeros(v.num_sequences) for v in self.views]
        visited = [np.zeros(v.num_sequences, bool) for v in self.views]
        for _ in range(iterations):
            t = self.iteration = self.iteration + 1
            weight = float(t) ** self.power
            for p in (0, 1):
                for q in (0, 1):
                    self._profile[self._slice(q)] = self.store.strategy(q)[1:]
                if self.sampler_name == "probing":  # steered by the average-strategy sums so far
                    self.sampler.sampling_average[:] = self.average
                batch = self.sampler.sample(self._profile, p, self.traversals)
                self.average += weight * batch.average_increment
                local[p][1:] = batch.mean[self._slice(p)]
                visited[p][1:] = batch.visits[self._slice(p)] > 0
                self.store.update(p, local[p], t, visited[p])

    @property
    def nodes_touched(self) -> int:
        """Histories visited by the sampler so far."""
        return (self.on_demand or self.sampler.buffers).nodes_touched

    # ---- policies ------------------------------------------------------------------------------
    def current_policy(self) -> Policy:
        if self.on_demand is not None:
            return self.on_demand.current_policy()
        return Policy.from_local(self.game, [self.store.strategy(p) for p in (0, 1)])

    def average_policy(self) -> Policy:
        """The normalized average-strategy sums (uniform where an information set has none yet)."""
        if self.on_demand is not None:
            return self.on_demand.average_policy()
        return Policy.from_local(self.game, [v.normalize(v.localize(self.average)) for v in self.views])

    # ---- size and checkpoints ------------------------------------------------------------------
    def size(self) -> int | None:
        """Representation size: the regressors' summed sizes (see `CFRSolver.size`)."""
        return (self.on_demand or self.store).size()

    def _state(self) -> dict[str, np.ndarray]:
        """Iteration, average sums, sampler state (RNG included) and the store's targets; resuming is exact
        (regressors with warm starts or RNGs save their own state through the store)."""
        if self.on_demand is not None:
            return self.on_demand.state_dict()
        state = {f"store.{k}": v for k, v in self.store.state_dict().items()}
        state.update({f"sampler.{k}": v for k, v in self.sampler.buffers.state_dict().items()})
        state["average"] = self.average.copy()
        state["iteration"] = np.array(self.iteration)
        return state

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        if self.on_demand is not None:
            self.on_demand.load_state_dict(state)
            self.iteration = self.on_demand.iteration
            return
        self.sampler.buffers.load_state_dict({k[8:]: v for k, v in state.items() if k.startswith("sampler.")})
        self.store.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("store.")})
        self.average[:] = state["average"]
        self.iteration = int(state["iteration"])


class SampledRCFRPlus(SampledRCFR):
    """Sampled RCFR+: stored targets are sampled Q-regrets clipped at zero; linear averaging by default."""

    regret_matching = "rm+"

    def __init__(self, game: Game, *, sampler: str = "external", regressor="best_first", features="auto",
                 targets: str = "stored", traversals: int = 1, refit_every: int = 1, capacity: int = 100_000,
                 buffer_weighting: str | float = "linear", averaging: str | float = "linear",
                 epsilon: float = 0.6, shared: bool = False, weights=None, features_on_demand: bool = False,
                 selection: str = "recent", tau: float | None = None, beta: float | None = None, seed: int = 0):
        super().__init__(game, sampler=sampler, regressor=regressor, features=features, targets=targets,
                         traversals=traversals, refit_every=refit_every, capacity=capacity,
                         buffer_weighting=buffer_weighting, averaging=averaging, epsilon=epsilon, shared=shared,
                         weights=weights, features_on_demand=features_on_demand, selection=selection, tau=tau,
                         beta=beta, seed=seed)
