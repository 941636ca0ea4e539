"""Solvers by name: `make_solver("cfr+", game)`."""

from __future__ import annotations

from ..registry import build
from ..tree import Game
from .cfr import CFR, CFRPlus, CFRSolver, DiscountedCFR, LinearCFR
from .mccfr import (ChanceSamplingCFR, ExternalSamplingMCCFR, MCCFRSolver, OutcomeSamplingMCCFR,
                    VarianceReducedMCCFR)
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
}


def make_solver(name: str, game: Game, **options) -> CFRSolver | MCCFRSolver:
    """Build solver `name` for `game`; unknown names or options fail with the allowed ones."""
    return build("solver", SOLVERS, name, game, **options)


__all__ = ["CFR", "CFRPlus", "CFRSolver", "ChanceSamplingCFR", "DiscountedCFR", "ExternalSamplingMCCFR",
           "LinearCFR", "MCCFRSolver", "OutcomeSamplingMCCFR", "RegretStore", "RegretTable", "SOLVERS",
           "VarianceReducedMCCFR", "make_solver"]
