"""Solvers by name: `make_solver("cfr+", game)`."""

from __future__ import annotations

from ..registry import build
from ..tree import Game
from .cfr import CFR, CFRPlus, CFRSolver, DiscountedCFR, LinearCFR
from .mccfr import (ChanceSamplingCFR, ExternalSamplingMCCFR, MCCFRSolver, OutcomeSamplingMCCFR,
                    VarianceReducedMCCFR)
from .regression import RCFR, RCFRPlus, RegressionRegrets
from .rrm import RRM, solve_matrix_game
from .stores import RegretStore, RegretTable

SOLVERS = {
    "cfr": CFR,
    "cfr+": CFRPlus,
    "lcfr": LinearCFR,
    "dcfr": DiscountedCFR,
    "cscfr": ChanceSamplingCFR,
    "os-mccfr": OutcomeSamplingMCCFR,
    "es-mccfr": ExternalSamplingMCCFR,
    "vr-mccfr": VarianceReducedMCCFR,
    "rcfr": RCFR,
    "rcfr+": RCFRPlus,
}


def make_solver(name: str, game: Game, **options) -> CFRSolver | MCCFRSolver:
    """Build solver `name` for `game`; unknown names or options fail with the allowed ones."""
    return build("solver", SOLVERS, name, game, **options)


__all__ = ["CFR", "CFRPlus", "CFRSolver", "ChanceSamplingCFR", "DiscountedCFR", "ExternalSamplingMCCFR",
           "LinearCFR", "MCCFRSolver", "OutcomeSamplingMCCFR", "RCFR", "RCFRPlus", "RRM", "RegressionRegrets",
           "RegretStore", "RegretTable", "SOLVERS", "VarianceReducedMCCFR", "make_solver", "solve_matrix_game"]
