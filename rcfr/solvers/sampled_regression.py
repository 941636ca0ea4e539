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

and the regressor of p is refit every `refit_every` iterations. Two forms share one validated options
object (`rcfr.options.SampledRCFROptions`): `DenseSampledRCFR` here, and, with ``features_on_demand=True``
(reservoir or stored targets, features named by an encoder), `LeanSampledRCFR`, which builds no feature
matrix and fits at most `capacity` sequences (for stored targets, chosen by `selection`): see
`rcfr.solvers.on_demand`; `SampledRCFR(game, ...)` (`rcfr.solvers.sampled_rcfr`) picks the form. There
``profile="cache"|"visited"`` (None: "visited", or "cache" under probing) picks whether a refit refreshes
every current strategy or only those the traversals read (`rcfr.solvers.visited`).
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

from ..options import SAMPLED_TARGETS, SampledRCFROptions, check_choice, check_int, check_power
from ..policy import Policy
from ..sampling import RegretSampler
from ..tree import Game
from .base import IterativeSolver, check_game
from .regression import RegressionRegrets
from .targets import RegretTargets, ReservoirTargets


class SampledRegressionRegrets(RegressionRegrets):
    """`RegressionRegrets` whose targets may also come from a reservoir of sampled regrets."""

    def __init__(self, regressor="best_first", features="auto", *, regret_matching: str = "rm",
                 targets: str = "stored", capacity: int = 100_000, buffer_weighting: str | float = "linear",
                 seed: int = 0, refit_every: int = 1, shared: bool = False, weights=None):
        self.sampled_targets = check_choice("targets", targets, SAMPLED_TARGETS)
        if targets == "reservoir" and regret_matching == "rm+":
            raise ValueError("targets='reservoir' has no regret_matching='rm+' variant (Q-regrets need "
                             "per-sequence sums); use targets 'stored' or 'bootstrap' with 'rm+'")
        self.capacity = check_int("capacity", capacity, 1)
        self.buffer_power = check_power("buffer_weighting", buffer_weighting)
        super().__init__(regressor, features, regret_matching=regret_matching,
                         targets="bootstrap" if targets == "bootstrap" else "stored",
                         refit_every=refit_every, shared=shared, weights=weights, seed=seed)

    def _new_targets(self, player: int, size: int) -> RegretTargets:
        if self.sampled_targets == "reservoir":  # seeds 2s+1, 2s+2: distinct per player and run
            return ReservoirTargets(size, self.capacity, 2 * self.seed + 1 + player, self.buffer_power)
        return super()._new_targets(player, size)


class SampledRCFRSolver(IterativeSolver):
    """What the dense and the lean form of sampled RCFR(+) share: the game, the validated options
    (`SampledRCFROptions`), the registry name ("sampled-rcfr" or "sampled-rcfr+") and the iteration."""

    def __init__(self, game: Game, options: SampledRCFROptions, solver_name: str = "sampled-rcfr"):
        self.game = self._check_game(game)
        if not isinstance(options, SampledRCFROptions):
            raise TypeError(f"options must be an rcfr.options.SampledRCFROptions, got {type(options).__name__}")
        self.options, self.solver_name = options, solver_name
        self.iteration = 0

    @staticmethod
    def _check_game(game):
        return check_game(game)

    @property
    def regret_matching(self) -> str:
        return self.options.regret_matching


class DenseSampledRCFR(SampledRCFRSolver):
    """Sampled RCFR(+) on a feature matrix of every sequence (``features_on_demand=False``): external
    sampling, outcome sampling or probing feed `SampledRegressionRegrets` (see the module docstring)."""

    def __init__(self, game: Game, options: SampledRCFROptions, solver_name: str = "sampled-rcfr"):
        super().__init__(game, options, solver_name)
        o = self.options
        if o.features_on_demand:
            raise ValueError("DenseSampledRCFR is the features_on_demand=False form; use LeanSampledRCFR "
                             "(or SampledRCFR(game, features_on_demand=True), which picks it)")
        self.views = game.views
        self.sampler_name = o.sampler
        self.traversals = o.traversals
        self.power = o.power
        tau, beta = o.probing
        self._store = SampledRegressionRegrets(o.regressor, o.features, regret_matching=o.regret_matching,
                                               targets=o.targets, capacity=o.capacity,
                                               buffer_weighting=o.buffer_weighting, seed=o.seed,
                                               refit_every=o.refit_every, shared=o.shared, weights=o.weights)
        self.sampler = RegretSampler(game, o.sampler, seed=o.seed, epsilon=o.epsilon, tau=tau, beta=beta)
        self.store.bind(game)
        self.average = np.zeros(game.num_sequences)  # average-strategy sums, global sequence ids
        self._sigma = np.zeros(game.num_sequences)  # the current strategy profile the sampler reads

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
        local = [np.zeros(v.num_sequences) for v in self.views]
        visited = [np.zeros(v.num_sequences, bool) for v in self.views]
        for _ in range(iterations):
            t = self.iteration = self.iteration + 1
            weight = float(t) ** self.power
            for p in (0, 1):
                for q in (0, 1):
                    self._sigma[self._slice(q)] = self.store.strategy(q)[1:]
                if self.sampler_name == "probing":  # steered by the average-strategy sums so far
                    self.sampler.sampling_average[:] = self.average
                batch = self.sampler.sample(self._sigma, p, self.traversals)
                self.average += weight * batch.average_increment
                local[p][1:] = batch.mean[self._slice(p)]
                visited[p][1:] = batch.visits[self._slice(p)] > 0
                self.store.update(p, local[p], t, visited[p])

    @property
    def nodes_touched(self) -> int:
        """Histories visited by the sampler so far."""
        return self.sampler.buffers.nodes_touched

    # ---- policies ------------------------------------------------------------------------------
    def current_policy(self) -> Policy:
        return Policy.from_local(self.game, [self.store.strategy(p) for p in (0, 1)])

    def average_policy(self) -> Policy:
        """The normalized average-strategy sums (uniform where an information set has none yet)."""
        return Policy.from_local(self.game, [v.normalize(v.localize(self.average)) for v in self.views])

    # ---- size and checkpoints ------------------------------------------------------------------
    def size(self) -> int | None:
        """Representation size: the regressors' summed sizes (see `CFRSolver.size`)."""
        return self.store.size()

    def _state(self) -> dict[str, np.ndarray]:
        """Iteration, average sums, sampler state (RNG included) and the store's targets; resuming is exact
        (regressors with warm starts or RNGs save their own state through the store)."""
        state = {f"store.{k}": v for k, v in self.store.state_dict().items()}
        state.update({f"sampler.{k}": v for k, v in self.sampler.buffers.state_dict().items()})
        state["average"] = self.average.copy()
        state["iteration"] = np.array(self.iteration)
        return state

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        self.sampler.buffers.load_state_dict({k[8:]: v for k, v in state.items() if k.startswith("sampler.")})
        self.store.load_state_dict({k[6:]: v for k, v in state.items() if k.startswith("store.")})
        self.average[:] = state["average"]
        self.iteration = int(state["iteration"])
