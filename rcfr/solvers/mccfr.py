"""Monte Carlo CFR solvers: chance sampling, outcome sampling and external sampling.

Every solver takes an optional information-set `abstraction` (`rcfr.abstraction.Abstraction`, the
same object the full-width solvers take through `rcfr.abstraction.abstract_solver`): merged
information sets share one regret vector, into which the kernels sum their sampled regrets (imperfect
recall, Lanctot 2013 ch. 5), with the average strategy kept per full information set
(``average_space="full"``) or per abstract set (``"abstract"``: the merged sets' updates combined).

They share `CFRSolver`'s surface (iterate, run, current_policy, average_policy, state_dict,
load_state_dict, iteration) so the experiment kit drives them the same way, and add
``nodes_touched``. One iteration is one traversal per player (alternating forms) or one
traversal updating both (simultaneous outcome or chance sampling). The work runs
inside compiled loops (`rcfr.sampling.driver`); Python is entered once per `run` chunk.
"""

from __future__ import annotations

import numpy as np

from ..policy import Policy
from ..registry import check_choice
from ..sampling import driver
from ..sampling.bundles import Settings, make_settings
from ..sampling.buffers import AVERAGE_MODES, AVERAGE_SPACES, CHANCE_SAMPLING, PUBLIC, SamplerBuffers
from ..tree import Game
from .base import IterativeSolver
from .cfr import averaging_power

REGRET_MATCHING = ("rm", "rm+")


class MCCFRSolver(IterativeSolver):
    """Base class: a regret table and average-strategy sums filled by a compiled sampler."""

    sampler = ""
    chunk = 4096  # iterations per compiled call

    def __init__(self, game: Game, *, regret_matching: str = "rm", average_mode: str = "stochastic",
                 averaging: str | float = "uniform", abstraction=None, average_space: str = "full", seed: int = 0):
        self.game = game
        self.clip = check_choice("regret_matching", regret_matching, REGRET_MATCHING) == "rm+"
        self.average_mode = check_choice("average_mode", average_mode, list(AVERAGE_MODES))
        self.power = averaging_power(averaging)
        if self.average_mode != "stochastic" and self.power != 0.0:
            raise ValueError(f"averaging weights apply to average_mode='stochastic' only; use averaging='uniform' "
                             f"with average_mode={self.average_mode!r}")
        check_choice("average_space", average_space, list(AVERAGE_SPACES))
        if abstraction is not None:
            from ..abstraction import Abstraction  # the abstraction package builds on the solvers
            if not isinstance(abstraction, Abstraction):
                raise TypeError(f"abstraction must be an rcfr.abstraction.Abstraction, "
                                f"got {type(abstraction).__name__}")
        elif average_space == "abstract":
            raise ValueError("average_space='abstract' needs an abstraction")
        if average_space == "abstract" and self.average_mode == "lazy":
            raise ValueError("average_mode='lazy' needs average_space='full' (it reads the parent sequence's "
                             "average, which merged information sets do not share)")
        self.seed = seed
        self.abstraction, self.average_space = abstraction, average_space
        self.buffers = SamplerBuffers(game, self.sampler, seed, abstraction, average_space, self.chance_sampling)
        self.iteration = 0
        self.views = game.views

    # ---- iterations ----------------------------------------------------------------------------
    updates = "alternating"  # one traversal per player per iteration (the only form of external sampling)
    epsilon = 0.0  # exploration of outcome sampling, floor of average strategy sampling
    baseline_decay = 0.0  # baseline update of VR-MCCFR and MCCFRb: weight of the newest estimate
    direct_average = False  # MCCFRb: baselines are direct averages of their estimates instead
    tau, beta = 1.0, 0.0  # average strategy sampling
    chance_sampling = "single"  # chance sampling's treatment of chance nodes
    public_chance = "sample"  # public chance sampling's treatment of public chance nodes

    def settings(self) -> Settings:
        """What the compiled driver needs to know about this solver's options."""
        return make_settings(self.sampler, updates=self.updates, epsilon=self.epsilon, baseline_decay=self.baseline_decay,
                             baseline_update="da" if self.direct_average else "eda", tau=self.tau, beta=self.beta,
                             averaging_power=self.power, average_mode=self.average_mode,
                             regret_matching="rm+" if self.clip else "rm", chance_sampling=self.chance_sampling,
                             public_chance=self.public_chance)

    @property
    def nodes_touched(self) -> int:
        """Histories visited so far (each visit of a history in a traversal counts once)."""
        return self.buffers.nodes_touched

    def _advance(self, iterations: int) -> None:
        b = self.buffers
        driver.run(b.tree, b.state, b.scratch, self.settings(), self.iteration, iterations)
        self.iteration += iterations

    # ---- policies ------------------------------------------------------------------------------
    def current_policy(self) -> Policy:
        """Regret matching on the cumulative regrets (of each set's abstract set under an abstraction)."""
        regrets = self.buffers.regrets[self.buffers.slots.seq_map]
        return Policy.from_local(self.game, [v.regret_matching(v.localize(regrets)) for v in self.views])

    def average_policy(self) -> Policy:
        """The normalized average-strategy sums (uniform where an information set has none yet); with
        ``average_space="abstract"`` every merged set plays its abstract set's average."""
        avg = self.buffers.avg if self.average_space == "full" else self.buffers.avg[self.buffers.slots.seq_map]
        return Policy.from_local(self.game, [v.normalize(v.localize(avg)) for v in self.views])

    # ---- checkpoints ---------------------------------------------------------------------------
    def _state(self) -> dict[str, np.ndarray]:
        """Everything needed to resume bit for bit: tables, counters and the RNG state."""
        state = {f"sampler.{k}": v for k, v in self.buffers.state_dict().items()}
        state["iteration"] = np.array(self.iteration)
        return state

    def _load_state(self, state: dict[str, np.ndarray]) -> None:
        self.buffers.load_state_dict({k[8:]: v for k, v in state.items() if k.startswith("sampler.")})
        self.iteration = int(state["iteration"])

    def size(self) -> int:
        """Representation size: one regret per (abstract) sequence."""
        return self.buffers.slots.num_slots


class ChanceSamplingCFR(MCCFRSolver):
    """Chance-sampled CFR: full width over both players' actions; at chance nodes (Lanctot 2013, §7.5),
    ``chance_sampling="single"`` samples one outcome, ``"paired"`` a sampled outcome and its antithetic
    partner (outcome n - 1 - k), and ``"common"`` walks every outcome of the updating player's own chance
    nodes and samples the rest with one random number per event (alternating updates only)."""

    sampler = "chance"

    def __init__(self, game: Game, *, updates: str = "simultaneous", chance_sampling: str = "single",
                 regret_matching: str = "rm", average_mode: str = "stochastic", averaging: str | float = "uniform",
                 abstraction=None, average_space: str = "full", seed: int = 0):
        self.updates = check_choice("updates", updates, ["alternating", "simultaneous"])
        self.chance_sampling = check_choice("chance_sampling", chance_sampling, list(CHANCE_SAMPLING))
        if self.chance_sampling == "common" and self.updates != "alternating":
            raise ValueError("chance_sampling='common' walks the updating player's chance outcomes, so it needs "
                             "updates='alternating'")
        super().__init__(game, regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                         abstraction=abstraction, average_space=average_space, seed=seed)



class OutcomeSamplingMCCFR(MCCFRSolver):
    """Outcome-sampling MCCFR: one sampled terminal history per traversal, epsilon-on-policy exploration
    at the updating player's nodes (every node in the simultaneous form)."""

    sampler = "outcome"

    def __init__(self, game: Game, *, epsilon: float = 0.6, updates: str = "alternating",
                 regret_matching: str = "rm", average_mode: str = "stochastic", averaging: str | float = "uniform",
                 abstraction=None, average_space: str = "full", seed: int = 0):
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be a number in (0, 1], got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.updates = check_choice("updates", updates, ["alternating", "simultaneous"])
        super().__init__(game, regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                         abstraction=abstraction, average_space=average_space, seed=seed)



class ExternalSamplingMCCFR(MCCFRSolver):
    """External-sampling MCCFR: all of the traverser's actions, one sampled action per opponent information
    set and per chance node; alternating updates."""

    sampler = "external"


class VarianceReducedMCCFR(OutcomeSamplingMCCFR):
    """Variance-reduced outcome sampling (VR-MCCFR, Schmid et al. 2019): outcome sampling whose sampled
    values are corrected with learned action baselines b(h, a), an exponentially decaying average of
    past value estimates of history h a (``baseline_decay`` is the weight of the newest estimate)."""

    sampler = "baseline"

    def __init__(self, game: Game, *, epsilon: float = 0.6, baseline_decay: float = 0.5,
                 updates: str = "alternating", regret_matching: str = "rm", average_mode: str = "stochastic",
                 averaging: str | float = "uniform", abstraction=None, average_space: str = "full", seed: int = 0):
        if (isinstance(baseline_decay, bool) or not isinstance(baseline_decay, (int, float))
                or not 0.0 <= baseline_decay <= 1.0):
            raise ValueError(f"baseline_decay must be a number in [0, 1], got {baseline_decay!r}")
        self.baseline_decay = float(baseline_decay)
        super().__init__(game, epsilon=epsilon, updates=updates, regret_matching=regret_matching,
                         average_mode=average_mode, averaging=averaging, abstraction=abstraction,
                         average_space=average_space, seed=seed)



class MCCFRb(OutcomeSamplingMCCFR):
    """Outcome sampling with information-set baselines (MCCFRb, Kuchar 2020): the sampled values are
    corrected with one baseline b_i(I, a) per traverser i, information set I and action a, learned
    from the corrected value estimates of the sampled action, as a direct average (``baseline="da"``,
    the thesis's method), an exponentially decaying average with weight ``baseline_decay`` on the
    newest estimate (``"eda"``, default 0.5), or not at all (``"none"``: plain outcome sampling, the
    `os-mccfr` kernel itself). Baselines are kept per full-game information set, also under an
    abstraction (docs/mccfr.md derives the estimator)."""

    BASELINES = ("da", "eda", "none")

    def __init__(self, game: Game, *, baseline: str = "da", baseline_decay: float | None = None,
                 epsilon: float = 0.6, updates: str = "alternating", regret_matching: str = "rm",
                 average_mode: str = "stochastic", averaging: str | float = "uniform", abstraction=None,
                 average_space: str = "full", seed: int = 0):
        self.baseline = check_choice("baseline", baseline, self.BASELINES)
        if baseline_decay is not None and baseline != "eda":
            raise ValueError(f"baseline_decay applies to baseline='eda' only, got baseline_decay={baseline_decay!r} "
                             f"with baseline={baseline!r}")
        if baseline == "eda":
            baseline_decay = 0.5 if baseline_decay is None else baseline_decay
            if (isinstance(baseline_decay, bool) or not isinstance(baseline_decay, (int, float))
                    or not 0.0 < baseline_decay <= 1.0):
                raise ValueError(f"baseline_decay must be a number in (0, 1], got {baseline_decay!r}")
            self.baseline_decay = float(baseline_decay)
        self.direct_average = baseline == "da"
        self.sampler = "outcome" if baseline == "none" else "infoset_baseline"
        super().__init__(game, epsilon=epsilon, updates=updates, regret_matching=regret_matching,
                         average_mode=average_mode, averaging=averaging, abstraction=abstraction,
                         average_space=average_space, seed=seed)


class PureCFR(ExternalSamplingMCCFR):
    """Pure CFR (Lanctot 2013, §8.1): external sampling in which the traverser, too, plays a sampled pure
    strategy: every action's regret is measured against the value of the traverser's sampled action
    rather than against the expectation under sigma."""

    sampler = "pure"


class AverageStrategySampling(ExternalSamplingMCCFR):
    """Average strategy sampling (Gibson et al. 2012; Lanctot 2013, §4.8.4): external sampling whose
    traverser explores action a only with probability max(epsilon, (beta + tau s[a]) / (beta + sum s)),
    s its average-strategy sums, correcting the sampled values by importance weights."""

    sampler = "average"

    def __init__(self, game: Game, *, epsilon: float = 0.05, tau: float = 1000.0, beta: float = 1e6,
                 regret_matching: str = "rm", average_mode: str = "stochastic", averaging: str | float = "uniform",
                 abstraction=None, average_space: str = "full", seed: int = 0):
        for name, value, low, high in (("epsilon", epsilon, 0.0, 1.0), ("tau", tau, 1.0, np.inf),
                                       ("beta", beta, 0.0, np.inf)):
            if (isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high
                    or (name == "epsilon" and value == 0.0) or not np.isfinite(value)):
                bounds = {"epsilon": "(0, 1]", "tau": "[1, inf)", "beta": "[0, inf)"}[name]
                raise ValueError(f"{name} must be a finite number in {bounds}, got {value!r}")
        self.epsilon, self.tau, self.beta = float(epsilon), float(tau), float(beta)
        super().__init__(game, regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                         abstraction=abstraction, average_space=average_space, seed=seed)


class ProbingMCCFR(AverageStrategySampling):
    """Generalized MCCFR with probing (Gibson et al. 2012; Lanctot 2013, §4.8.3): the traverser's actions
    are sampled as in average strategy sampling, and each unsampled action is valued by one on-policy
    probe trajectory instead of zero."""

    sampler = "probing"


class PublicChanceSamplingCFR(MCCFRSolver):
    """Public chance sampling (Johanson et al. 2012; Lanctot 2013, §4.8.2): one walk of the public tree per
    player, one sampled outcome per public chance state (``public_chance="sample"``) or all of them
    (``"enumerate"``: vanilla CFR, vectorised), carrying reaches and values per private chance outcome, so
    that a walk updates every information set consistent with the public outcomes drawn.

    The public tree is derived from the compiled game's information sets (`rcfr.sampling.public`) once, in
    ``build_seconds``; games with hidden actions are refused. Averages are each player's own, recorded in
    its walk before its regret update (vanilla CFR's convention)."""

    sampler = PUBLIC
    PUBLIC_CHANCE = ("sample", "enumerate")

    def __init__(self, game: Game, *, public_chance: str = "sample", updates: str = "alternating",
                 regret_matching: str = "rm", average_mode: str = "stochastic", averaging: str | float = "uniform",
                 abstraction=None, average_space: str = "full", seed: int = 0):
        self.public_chance = check_choice("public_chance", public_chance, list(self.PUBLIC_CHANCE))
        self.updates = check_choice("updates", updates, ["alternating", "simultaneous"])
        if average_mode == "lazy":
            raise ValueError("average_mode='lazy' is not available for pcs-cfr (its walk has no per-sequence "
                             "parent mass to push down); allowed: 'stochastic', 'optimistic'")
        super().__init__(game, regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                         abstraction=abstraction, average_space=average_space, seed=seed)
        self.public, self.build_seconds = self.buffers.tree.public, self.buffers.public_seconds
