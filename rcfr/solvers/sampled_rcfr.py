"""`SampledRCFR` and `SampledRCFRPlus`: one factory each that checks the options and picks the form.

The dense form (`DenseSampledRCFR`, a feature matrix of every sequence) and the lean one
(`LeanSampledRCFR`, ``features_on_demand=True``) are two classes sharing `SampledRCFROptions`; the
``+`` variant differs by its defaults only (regret-matching+, linear averaging)."""

from __future__ import annotations

from ..options import SampledRCFROptions, options_from, options_signature
from ..tree import Game
from .base import by_rules, check_game
from .capabilities import refuse_rules_walk
from .lean_rules import RulesLeanSampledRCFR
from .on_demand import LeanSampledRCFR
from .sampled_regression import DenseSampledRCFR, SampledRCFRSolver


def _factory(solver_name: str, fixed: dict, defaults: dict, doc: str):
    signature = options_signature(SampledRCFROptions, defaults, exclude=("regret_matching",))

    def make(game: Game, **options) -> SampledRCFRSolver:
        if by_rules(game):  # the rules have one form, the lean one
            o = options_from(SampledRCFROptions, signature, options, solver_name, fixed)
            refuse_rules_walk(solver_name, game, o)
            return RulesLeanSampledRCFR(game, o, solver_name)
        check_game(game)
        o = options_from(SampledRCFROptions, signature, options, solver_name, fixed)
        return (LeanSampledRCFR if o.features_on_demand else DenseSampledRCFR)(game, o, solver_name)

    make.__signature__ = signature
    make.__doc__ = doc
    return make


SampledRCFR = _factory("sampled-rcfr", {"regret_matching": "rm"}, {},
                       "Sampled RCFR (`rcfr.solvers.sampled_regression` describes the options): the dense form, "
                       "or the lean one with features_on_demand=True.")
SampledRCFR.__name__ = SampledRCFR.__qualname__ = "SampledRCFR"
SampledRCFRPlus = _factory("sampled-rcfr+", {"regret_matching": "rm+"}, {"averaging": "linear"},
                           "Sampled RCFR+: stored targets are sampled Q-regrets clipped at zero; linear averaging "
                           "by default.")
SampledRCFRPlus.__name__ = SampledRCFRPlus.__qualname__ = "SampledRCFRPlus"
