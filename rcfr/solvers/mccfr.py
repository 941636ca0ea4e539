"""Monte Carlo CFR solvers: chance sampling, outcome sampling and external sampling.

Every solver takes an optional information-set `abstraction` (`rcfr.abstraction.Abstraction`, the
same object the full-width solvers take through `rcfr.abstraction.abstract_solver`): merged
information sets share one regret vector, into which the kernels sum their sampled regrets (imperfect
recall, Lanctot 2013 ch. 5), with the average strategy kept per full information set
(``average_space="full"``) or per abstract set (``"abstract"``: the merged sets' updates combined).
On a game walked by its rules the abstraction is a `rcfr.sources.abstraction.CodeAbstraction` (its sets are
keyed by abstract code as met, so averages are per abstract set: ``average_space="abstract"``).

They share `CFRSolver`'s surface (iterate, run, current_policy, average_policy, state_dict,
load_state_dict, iteration) so the experiment kit drives them the same way, and add
``nodes_touched``. One iteration is one traversal per player (alternating forms) or one
traversal updating both (simultaneous outcome or chance sampling). The work runs
inside compiled loops (`rcfr.sampling.driver`); Python is entered once per `run` chunk.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..budget import max_histories
from ..errors import RulesPathWarning
from ..options import BASELINES, PUBLIC_CHANCE, MCCFROptions, check_choice, check_float
from ..policy import Policy
from ..policy.rules import CodePolicy
from ..sampling.buffers import PUBLIC, SamplerBuffers
from ..sampling.bundles import Settings, make_settings
from ..sampling.rules_buffers import RulesBuffers
from ..sampling.strategies import regret_weight
from ..sources.abstraction import CodeAbstraction
from ..sources.rules import RulesGame
from ..tree import Game
from ..tree.abstraction import Abstraction
from .base import IterativeSolver, abstraction_identity, by_rules, check_game
from .capabilities import refuse_rules_walk


class MCCFRSolver(IterativeSolver):
    """Base class: a regret table and average-strategy sums filled by a compiled sampler. Every option
    lives in ``self.options`` (`rcfr.options.MCCFROptions`); subclasses check which of them apply.

    Linear and discounted MCCFR (Brown & Sandholm 2019's schedules on sampled regrets): ``alpha`` discounts
    the cumulative regrets by t^alpha / (t^alpha + 1) after iteration t, positive and negative alike, by
    weighting iteration t's sampled regrets by W(t) = prod_{k<t} (1 + k^-alpha) instead (the table stays
    divided by the discounts, which changes no strategy; `rcfr.sampling.strategies.next_regret_weight`);
    ``averaging`` weights the average strategy by t^gamma as before. alpha 1 with linear averaging is linear
    MCCFR; alpha 1.5 with averaging 2 is DCFR's schedule with beta = alpha."""

    sampler = ""
    chunk = 4096  # iterations per compiled call

    def __init__(self, game: Game, *, regret_matching: str = "rm", average_mode: str = "stochastic",
                 averaging: str | float = "uniform", abstraction=None, average_space: str = "full", seed: int = 0,
                 alpha: float | None = None):
        self._setup(game, abstraction, regret_matching=regret_matching, average_mode=average_mode,
                    averaging=averaging, average_space=average_space, seed=seed, alpha=alpha)

    def _setup(self, game: Game, abstraction, **options) -> None:
        """Check `options` (an `MCCFROptions`' fields) and `abstraction`, then allocate the sampler's arrays
        (on the compiled tree, or on the rules for a `RulesGame`: docs/large_games.md). The source is chosen
        here once, with the abstraction it takes and how its buffers are allocated; from then on the buffers
        answer what differs (policies, slots, sized checkpoint fields)."""
        self.game, kind, allocate = ((game, CodeAbstraction, self._rules_buffers) if by_rules(game)
                                     else (check_game(game), Abstraction, self._tree_buffers))
        self.options = o = MCCFROptions(**options)
        self.power = o.power
        self.average_mode, self.average_space, self.seed = o.average_mode, o.average_space, o.seed
        self.updates, self.epsilon, self.baseline_decay = o.updates, o.epsilon, o.baseline_decay
        self.tau, self.beta, self.chance_sampling = o.tau, o.beta, o.chance_sampling
        self._weight = (1, 1.0)  # (t, W(t)): the last regret weight computed (`regret_weight_at`)
        if isinstance(abstraction, CodeAbstraction):
            abstraction = game.as_abstraction(abstraction)  # on a compiled game, the same function as a map of its sets
        if abstraction is not None and not isinstance(abstraction, kind):
            raise TypeError(f"abstraction must be an rcfr.abstraction.{kind.__name__} (make_abstraction(game, "
                            f"...) builds the right one for {game.name}), got {type(abstraction).__name__}")
        if abstraction is None and o.average_space == "abstract":
            raise ValueError("average_space='abstract' needs an abstraction")
        self.abstraction = abstraction
        self.iteration = 0
        self.buffers = allocate(game, abstraction, o)

    def _tree_buffers(self, game: Game, abstraction, o: MCCFROptions) -> SamplerBuffers:
        """The arrays on the compiled tree."""
        return SamplerBuffers(game, self.sampler, o.seed, abstraction, o.average_space, o.chance_sampling)

    def _rules_buffers(self, game: RulesGame, abstraction, o: MCCFROptions) -> RulesBuffers:
        """The arrays on the rules, after refusing what a walk of them cannot do."""
        self._check_rules_path(abstraction, o)
        sets = max(game.initial_sets, game.fast.max_infosets if self.sampler == "chance" else 0)
        return RulesBuffers(game, self.sampler, o.seed, sets, o.chance_sampling, abstraction)

    def _check_rules_path(self, abstraction, o: MCCFROptions) -> None:
        """Refuse what a walk of the rules cannot do (`capabilities`), and the full average space under an abstraction:
        the sets met are the abstract ones."""
        refuse_rules_walk(self.solver_name, self.game, o)
        if abstraction is not None and o.average_space == "full":
            raise ValueError(f"{self.solver_name} on {self.game.name} walked by its rules: average_space cannot be "
                             f"'full' under an abstraction (the sets met are the abstract ones: pass "
                             f"average_space='abstract')")
        if self.sampler == "chance":
            self._warn_whole_walk(o.chance_sampling)

    def _warn_whole_walk(self, chance_sampling: str) -> None:
        """Say so when every iteration of chance-sampled CFR walks the whole game (chance_sampling="all", or
        a game without chance) and the game is beyond the compiled tree: allowed (a full-width iteration on
        the rules needs memory for the information sets only), but at ~1e6 histories per second one
        iteration of Phantom Tic-Tac-Toe takes hours and one of Goofspiel(13) never ends."""
        rules = self.game.rules
        if chance_sampling != "all" and rules.has_chance is not False:
            return
        histories, limit = rules.estimate_histories(), max_histories()
        if histories is not None and histories > limit:
            why = "chance_sampling='all' walks" if chance_sampling == "all" else "the game has no chance events, so"
            warnings.warn(f"{type(self).__name__} on {self.game.name} walked by its rules: {why} every "
                          f"iteration walks all {histories:,} histories (about {histories / 3.6e9:,.1f} hours each "
                          f"at 1e6 histories per second); to sample the players' actions instead use "
                          f"ExternalSamplingMCCFR or OutcomeSamplingMCCFR", RulesPathWarning, stacklevel=3)

    def abstraction_identity(self) -> str:
        return abstraction_identity(self.abstraction)

    # ---- iterations ----------------------------------------------------------------------------
    direct_average = False  # MCCFRb: baselines are direct averages of their estimates instead

    def settings(self) -> Settings:
        """What the compiled driver needs to know about this solver's options."""
        o = self.options
        return make_settings(self.sampler, updates=o.updates, epsilon=o.epsilon, baseline_decay=o.baseline_decay,
                             baseline_update="da" if self.direct_average else "eda", tau=o.tau, beta=o.beta,
                             averaging_power=o.power, average_mode=o.average_mode,
                             regret_matching=o.regret_matching, chance_sampling=o.chance_sampling,
                             public_chance=o.public_chance, regret_discount=o.alpha,
                             regret_weight=self.regret_weight_at(self.iteration + 1))

    def regret_weight_at(self, t: int) -> float:
        """W(t), the weight of iteration t's sampled regrets (1 without ``alpha``), by the driver's own
        multiplications from the last one computed, so a resumed run weighs bit for bit as a straight one."""
        if self.options.alpha is None:
            return 1.0
        first, weight = self._weight if self._weight[0] <= t else (1, 1.0)
        self._weight = (t, regret_weight(weight, first, t, self.options.alpha))
        return self._weight[1]

    @property
    def nodes_touched(self) -> int:
        """Histories visited so far (each visit of a history in a traversal counts once)."""
        return self.buffers.nodes_touched

    def _advance(self, iterations: int) -> None:
        self.buffers.advance(self.settings(), self.iteration, iterations)
        self.iteration += iterations

    # ---- policies ------------------------------------------------------------------------------
    @property
    def sized_fields(self) -> tuple[str, ...]:
        return tuple(f"sampler.{k}" for k in self.buffers.SIZED)

    def current_policy(self) -> Policy | CodePolicy:
        """Regret matching on the cumulative regrets (of each set's abstract set under an abstraction); a
        `CodePolicy` of the sets met on the rules path."""
        return self.buffers.current_policy()

    def average_policy(self) -> Policy | CodePolicy:
        """The normalized average-strategy sums (uniform where an information set has none yet); with
        ``average_space="abstract"`` every merged set plays its abstract set's average; a `CodePolicy` of
        the sets met on the rules path."""
        return self.buffers.average_policy()

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
        """Representation size: one regret per (abstract) sequence (met, on the rules path)."""
        return self.buffers.num_slots


class ChanceSamplingCFR(MCCFRSolver):
    """Chance-sampled CFR: full width over both players' actions; at chance nodes (Lanctot 2013, §7.5),
    ``chance_sampling="single"`` samples one outcome, ``"paired"`` a sampled outcome and its antithetic
    partner (outcome n - 1 - k), ``"common"`` walks every outcome of the updating player's own chance
    nodes and samples the rest with one random number per event (alternating updates only), and ``"all"``
    walks every outcome: vanilla CFR, depth first, the full-width CFR of a game walked by its rules."""

    sampler = "chance"
    solver_name = "cscfr"

    def __init__(self, game: Game, *, updates: str = "simultaneous", chance_sampling: str = "single",
                 regret_matching: str = "rm", average_mode: str = "stochastic", averaging: str | float = "uniform",
                 abstraction=None, average_space: str = "full", seed: int = 0,
                 alpha: float | None = None):
        self._setup(game, abstraction, updates=updates, chance_sampling=chance_sampling,
                    regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                    average_space=average_space, seed=seed, alpha=alpha)



class OutcomeSamplingMCCFR(MCCFRSolver):
    """Outcome-sampling MCCFR: one sampled terminal history per traversal, epsilon-on-policy exploration
    at the updating player's nodes (every node in the simultaneous form)."""

    sampler = "outcome"
    solver_name = "os-mccfr"

    def __init__(self, game: Game, *, epsilon: float = 0.6, updates: str = "alternating",
                 regret_matching: str = "rm", average_mode: str = "stochastic", averaging: str | float = "uniform",
                 abstraction=None, average_space: str = "full", seed: int = 0,
                 alpha: float | None = None):
        self._setup(game, abstraction, epsilon=check_float("epsilon", epsilon, 0.0, 1.0, low_open=True),
                    updates=updates, regret_matching=regret_matching, average_mode=average_mode,
                    averaging=averaging, average_space=average_space, seed=seed, alpha=alpha)



class ExternalSamplingMCCFR(MCCFRSolver):
    """External-sampling MCCFR: all of the traverser's actions, one sampled action per opponent information
    set and per chance node; alternating updates."""

    sampler = "external"
    solver_name = "es-mccfr"


class VarianceReducedMCCFR(OutcomeSamplingMCCFR):
    """Variance-reduced outcome sampling (VR-MCCFR, Schmid et al. 2019): outcome sampling whose sampled
    values are corrected with learned action baselines b(h, a), an exponentially decaying average of
    past value estimates of history h a (``baseline_decay`` is the weight of the newest estimate)."""

    sampler = "baseline"
    solver_name = "vr-mccfr"

    def __init__(self, game: Game, *, epsilon: float = 0.6, baseline_decay: float = 0.5,
                 updates: str = "alternating", regret_matching: str = "rm", average_mode: str = "stochastic",
                 averaging: str | float = "uniform", abstraction=None, average_space: str = "full", seed: int = 0,
                 alpha: float | None = None):
        self._setup(game, abstraction, epsilon=check_float("epsilon", epsilon, 0.0, 1.0, low_open=True),
                    baseline_decay=check_float("baseline_decay", baseline_decay, 0.0, 1.0), updates=updates,
                    regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                    average_space=average_space, seed=seed, alpha=alpha)



class MCCFRb(OutcomeSamplingMCCFR):
    """Outcome sampling with information-set baselines (MCCFRb, Kuchar 2020): the sampled values are
    corrected with one baseline b_i(I, a) per traverser i, information set I and action a, learned
    from the corrected value estimates of the sampled action, as a direct average (``baseline="da"``,
    the thesis's method), an exponentially decaying average with weight ``baseline_decay`` on the
    newest estimate (``"eda"``, default 0.5), or not at all (``"none"``: plain outcome sampling, the
    `os-mccfr` kernel itself). Baselines are kept per full-game information set, also under an
    abstraction (docs/mccfr.md derives the estimator)."""

    BASELINES = BASELINES
    solver_name = "mccfrb"

    def __init__(self, game: Game, *, baseline: str = "da", baseline_decay: float | None = None,
                 epsilon: float = 0.6, updates: str = "alternating", regret_matching: str = "rm",
                 average_mode: str = "stochastic", averaging: str | float = "uniform", abstraction=None,
                 average_space: str = "full", seed: int = 0,
                 alpha: float | None = None):
        self.baseline = check_choice("baseline", baseline, BASELINES)
        if baseline_decay is not None and baseline != "eda":
            raise ValueError(f"baseline_decay applies to baseline='eda' only, got baseline_decay={baseline_decay!r} "
                             f"with baseline={baseline!r}")
        decay = 0.0
        if baseline == "eda":
            decay = check_float("baseline_decay", 0.5 if baseline_decay is None else baseline_decay, 0.0, 1.0,
                                low_open=True)
        self.direct_average = baseline == "da"
        self.sampler = "outcome" if baseline == "none" else "infoset_baseline"
        self._setup(game, abstraction, baseline=baseline, baseline_decay=decay,
                    epsilon=check_float("epsilon", epsilon, 0.0, 1.0, low_open=True), updates=updates,
                    regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                    average_space=average_space, seed=seed, alpha=alpha)


class PureCFR(ExternalSamplingMCCFR):
    """Pure CFR (Lanctot 2013, §8.1): external sampling in which the traverser, too, plays a sampled pure
    strategy: every action's regret is measured against the value of the traverser's sampled action
    rather than against the expectation under sigma."""

    sampler = "pure"
    solver_name = "pure-cfr"


class AverageStrategySampling(ExternalSamplingMCCFR):
    """Average strategy sampling (Gibson et al. 2012; Lanctot 2013, §4.8.4): external sampling whose
    traverser explores action a only with probability max(epsilon, (beta + tau s[a]) / (beta + sum s)),
    s its average-strategy sums, correcting the sampled values by importance weights."""

    sampler = "average"
    solver_name = "as-mccfr"

    def __init__(self, game: Game, *, epsilon: float = 0.05, tau: float = 1000.0, beta: float = 1e6,
                 regret_matching: str = "rm", average_mode: str = "stochastic", averaging: str | float = "uniform",
                 abstraction=None, average_space: str = "full", seed: int = 0,
                 alpha: float | None = None):
        self._setup(game, abstraction, epsilon=check_float("epsilon", epsilon, 0.0, 1.0, low_open=True), tau=tau,
                    beta=beta, regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                    average_space=average_space, seed=seed, alpha=alpha)


class ProbingMCCFR(AverageStrategySampling):
    """Generalized MCCFR with probing (Gibson et al. 2012; Lanctot 2013, §4.8.3): the traverser's actions
    are sampled as in average strategy sampling, and each unsampled action is valued by one on-policy
    probe trajectory instead of zero."""

    sampler = "probing"
    solver_name = "probing-mccfr"


class PublicChanceSamplingCFR(MCCFRSolver):
    """Public chance sampling (Johanson et al. 2012; Lanctot 2013, §4.8.2): one walk of the public tree per
    player, one sampled outcome per public chance state (``public_chance="sample"``) or all of them
    (``"enumerate"``: vanilla CFR, vectorised), carrying reaches and values per private chance outcome, so
    that a walk updates every information set consistent with the public outcomes drawn.

    The public tree is derived from the compiled game's information sets (`rcfr.sampling.public`) once, in
    ``build_seconds``; games with hidden actions are refused. Averages are each player's own, recorded in
    its walk before its regret update (vanilla CFR's convention)."""

    sampler = PUBLIC
    solver_name = "pcs-cfr"
    PUBLIC_CHANCE = PUBLIC_CHANCE

    def __init__(self, game: Game, *, public_chance: str = "sample", updates: str = "alternating",
                 regret_matching: str = "rm", average_mode: str = "stochastic", averaging: str | float = "uniform",
                 abstraction=None, average_space: str = "full", seed: int = 0,
                 alpha: float | None = None):
        if average_mode == "lazy":
            raise ValueError("average_mode='lazy' is not available for pcs-cfr (its walk has no per-sequence "
                             "parent mass to push down); allowed: 'stochastic', 'optimistic'")
        self._setup(game, abstraction, public_chance=public_chance, updates=updates,
                    regret_matching=regret_matching, average_mode=average_mode, averaging=averaging,
                    average_space=average_space, seed=seed, alpha=alpha)
        self.public_chance = self.options.public_chance
        self.public, self.build_seconds = self.buffers.tree.public, self.buffers.public_seconds
