"""Solvers by name: `make_solver("cfr+", game)`."""

from __future__ import annotations

from ..games.base import GameRules
from ..registry import build
from ..tree import Game
from .base import by_rules
from .capabilities import NEEDS_ARRAYS, refuse_rules_walk
from .cfr import (
    CFR,
    AsymmetricPCFRPlus,
    AsymmetricPDCFRPlus,
    CFRPlus,
    CFRSolver,
    DiscountedCFR,
    DiscountedCFRPlus,
    HSDiscountedCFR,
    HSPredictiveCFRPlus,
    LinearCFR,
    PredictiveCFRPlus,
    PredictiveDiscountedCFRPlus,
    SimpleAsymmetricPCFRPlus,
)
from .ddcfr import DDCFR, ConstantPolicy, DiscountPolicy
from .mccfr import (
    AverageStrategySampling,
    ChanceSamplingCFR,
    ExternalSamplingMCCFR,
    MCCFRb,
    MCCFRSolver,
    OutcomeSamplingMCCFR,
    ProbingMCCFR,
    PublicChanceSamplingCFR,
    PureCFR,
    VarianceReducedMCCFR,
)
from .neural.family import DREAM, ESCHER, DeepCFR, SingleDeepCFR  # noqa: E402  (the Deep CFR family)
from .on_demand import LeanSampledRCFR
from .public_tree import BluffPublicCFR, bluff_solver
from .regression import RCFR, RCFRPlus, RegressionRegrets
from .rrm import RRM, solve_matrix_game
from .sampled_rcfr import SampledRCFR, SampledRCFRPlus
from .sampled_regression import DenseSampledRCFR, SampledRCFRSolver, SampledRegressionRegrets
from .stores import RegretStore, RegretTable

SOLVERS = {
    "cfr": CFR,
    "cfr+": CFRPlus,
    "lcfr": LinearCFR,
    "dcfr": DiscountedCFR,
    "pcfr+": PredictiveCFRPlus,
    "dcfr+": DiscountedCFRPlus,
    "pdcfr+": PredictiveDiscountedCFRPlus,
    "hs-dcfr": HSDiscountedCFR,
    "hs-pcfr+": HSPredictiveCFRPlus,
    "sapcfr+": SimpleAsymmetricPCFRPlus,
    "apcfr+": AsymmetricPCFRPlus,
    "apdcfr+": AsymmetricPDCFRPlus,
    "ddcfr": DDCFR,
    "cscfr": ChanceSamplingCFR,
    "os-mccfr": OutcomeSamplingMCCFR,
    "es-mccfr": ExternalSamplingMCCFR,
    "vr-mccfr": VarianceReducedMCCFR,
    "mccfrb": MCCFRb,
    "pure-cfr": PureCFR,
    "as-mccfr": AverageStrategySampling,
    "probing-mccfr": ProbingMCCFR,
    "pcs-cfr": PublicChanceSamplingCFR,
    "rcfr": RCFR,
    "rcfr+": RCFRPlus,
    "sampled-rcfr": SampledRCFR,
    "sampled-rcfr+": SampledRCFRPlus,
    "deep-cfr": DeepCFR,
    "sd-cfr": SingleDeepCFR,
    "dream": DREAM,
    "escher": ESCHER,
}


def make_solver(name: str, game: Game, **options) -> CFRSolver | MCCFRSolver | SampledRCFRSolver:
    """Build solver `name` for `game`; unknown names or options fail with the allowed ones. ``walk`` ("auto",
    "public", "general") chooses, for "cfr" and "cscfr" on Liar's Dice, between the public-tree walk
    (`BluffPublicCFR`: taken by "auto" on a Bluff walked by its rules) and the general solver. On a game walked
    by its rules (a `RulesGame`, or the `GameRules` of `rcfr.make_rules`), "cfr", "cfr+", "lcfr" and "dcfr" are
    full-width CFR over the rules (`rcfr.solvers.rules_cfr`), which `.distribute(...)` shards."""
    from .rules_cfr import RULES_SOLVERS  # here: it builds on this package's base and cfr modules

    if isinstance(game, GameRules) and name in RULES_SOLVERS:
        from ..sources.rules import RulesGame
        game = RulesGame(game)
    solver = bluff_solver(name, game, options.pop("walk", "auto"), options)
    if solver is None and by_rules(game):
        if name in RULES_SOLVERS:
            return build("solver", RULES_SOLVERS, name, game, **options)
        if name in NEEDS_ARRAYS:
            refuse_rules_walk(name, game, None)
    return solver if solver is not None else build("solver", SOLVERS, name, game, **options)


__all__ = ["AverageStrategySampling", "BluffPublicCFR", "CFR", "CFRPlus", "CFRSolver", "ChanceSamplingCFR", "ConstantPolicy",
           "DDCFR", "DenseSampledRCFR", "DiscountPolicy",
           "DiscountedCFR", "LeanSampledRCFR", "SampledRCFRSolver",
           "ExternalSamplingMCCFR", "LinearCFR", "MCCFRb", "MCCFRSolver", "OutcomeSamplingMCCFR", "ProbingMCCFR",
           "PublicChanceSamplingCFR", "PureCFR", "RCFR", "RCFRPlus", "RRM", "RegressionRegrets", "RegretStore",
           "RegretTable", "SOLVERS",
           "SampledRCFR", "SampledRCFRPlus", "SampledRegressionRegrets", "VarianceReducedMCCFR",
           "make_solver", "solve_matrix_game"]
