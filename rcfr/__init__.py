"""rcfr: counterfactual regret minimization with learned regret estimators."""

from __future__ import annotations

from .evaluation import Evaluation, best_response, evaluate, expected_value, exploitability, nash_conv
from .games import GAMES, GameRules, make_rules, register_game
from .policy import Policy, PolicyError
from .regrets import counterfactual_regrets, realization_plan
from .solvers import (CFR, RCFR, RRM, SOLVERS, CFRPlus, CFRSolver, ChanceSamplingCFR, DiscountedCFR,
                      ExternalSamplingMCCFR, LinearCFR, MCCFRSolver, OutcomeSamplingMCCFR, RCFRPlus,
                      RegressionRegrets, RegretStore, RegretTable, SampledRCFR, SampledRCFRPlus,
                      VarianceReducedMCCFR, make_solver, solve_matrix_game)
from .tree import Game, compile_game, load_compiled


def load_game(name: str, /, *, cache: bool = True, **params) -> Game:
    """Compile (or load from the on-disk cache) game `name` with rule parameters `params`.

    >>> load_game("leduc").num_infosets
    936
    """
    return load_compiled(make_rules(name, **params), cache=cache)


def __getattr__(name: str):
    """The regressor registry loads scikit-learn, so it is imported on first use, not by `import rcfr`."""
    if name in ("REGRESSORS", "make_regressor", "regressors"):
        from . import regressors
        return regressors if name == "regressors" else getattr(regressors, name)
    raise AttributeError(f"module 'rcfr' has no attribute {name!r}")


__all__ = ["CFRSolver", "Evaluation", "GAMES", "Game", "GameRules", "Policy", "PolicyError", "SOLVERS",
           "best_response", "compile_game", "evaluate", "expected_value", "exploitability", "load_game",
           "make_rules", "make_solver", "nash_conv", "register_game",
           "RCFR", "RCFRPlus", "REGRESSORS", "RRM", "RegressionRegrets", "SampledRCFR",
           "SampledRCFRPlus", "make_regressor", "solve_matrix_game",
           "CFR", "CFRPlus", "ChanceSamplingCFR", "DiscountedCFR", "ExternalSamplingMCCFR", "LinearCFR",
           "MCCFRSolver", "OutcomeSamplingMCCFR", "RegretStore", "RegretTable", "VarianceReducedMCCFR",
           "counterfactual_regrets", "realization_plan"]
