"""rcfr: counterfactual regret minimization with learned regret estimators.

`import rcfr` is cheap: the public names below load their module (and numba, scikit-learn, ...) on
first use, through the module `__getattr__` (PEP 562), so ``rcfr.load_game``, ``rcfr.make_solver``,
``from rcfr import make_regressor`` and ``rcfr.solvers.CFRPlus`` work as if imported eagerly.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings

from . import numba_cache
from .errors import RulesPathWarning, TooLarge

__version__ = "0.2.0.dev0"
numba_cache.install()  # before any cached function loads: keys the cache by every file it compiles in

# public name -> the submodule that defines it
_HOMES = {
    "evaluation.approx": ("ApproxExploitability", "HeadToHead", "approx_exploitability", "match_policies"),
    "evaluation": ("Evaluation", "best_response", "evaluate", "expected_value", "exploitability", "nash_conv"),
    "games": ("GAMES", "GameRules", "make_rules", "register_game"),
    "solvers.state_sampling": ("StateMCCFR", "solve_openspiel"),
    "policy.state": ("StatePolicy",),
    "policy": ("Policy", "PolicyError"),
    "regrets": ("counterfactual_regrets", "realization_plan"),
    "solvers": ("CFR", "RCFR", "RRM", "SOLVERS", "CFRPlus", "CFRSolver", "ChanceSamplingCFR", "DiscountedCFR",
                "ExternalSamplingMCCFR", "LinearCFR", "MCCFRSolver", "OutcomeSamplingMCCFR", "RCFRPlus",
                "RegressionRegrets", "RegretStore", "RegretTable", "SampledRCFR", "SampledRCFRPlus",
                "VarianceReducedMCCFR", "make_solver", "solve_matrix_game"),
    "tree": ("Game", "compile_game", "load_compiled"),
    "regressors": ("REGRESSORS", "make_regressor"),
}
_LAZY = {name: module for module, names in _HOMES.items() for name in names}
# Names whose users expect every built-in game registered: `rcfr.abstraction` registers "nlocp_wagers".
_NEED_ALL_GAMES = {"GAMES", "make_rules", "register_game"}


def _registered() -> None:
    """Import the modules whose import registers games (once; later calls are a dict lookup)."""
    importlib.import_module(f"{__name__}.solvers")  # before `abstraction`, which imports from it
    importlib.import_module(f"{__name__}.abstraction")


def load_game(name: str, /, *, cache: bool = True, compiled: bool | None = None, **params):
    """Game `name` with rule parameters `params`: compiled (or loaded from the on-disk cache), or walked by
    its rules (`rcfr.sources.rules.RulesGame`: no history arrays, memory follows the information sets met).

    ``compiled=None`` compiles a game within the compile limit and walks a larger one by its rules, saying
    so (`rcfr.errors.RulesPathWarning`); ``True`` compiles or refuses; ``False`` walks the rules.

    >>> load_game("leduc").num_infosets
    936
    """
    if compiled not in (None, True, False):
        raise ValueError(f"compiled must be None (compile what fits), True or False, got {compiled!r}")
    _registered()
    from .games import make_rules
    from .tree import load_compiled
    rules = make_rules(name, **params)
    if compiled is False:
        return _rules_game(rules)
    try:
        return load_compiled(rules, cache=cache)
    except TooLarge as why:
        if compiled or rules.walk_bounds() is None:
            raise  # walking needs declared bounds: counting them would stop at the same limit
        game = _rules_game(rules)
        warnings.warn(f"{why}. Walking it by its rules instead (load_game(..., compiled=False)): sampling "
                      "solvers and rcfr.evaluation.rules run on it", RulesPathWarning, stacklevel=2)
        return game


def _rules_game(rules):
    from .sources.rules import RulesGame
    return RulesGame(rules)


def __getattr__(name: str):
    # importlib, never `from . import x`: that form calls this hook again and recursed.
    if name in _LAZY:
        module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        if name in _NEED_ALL_GAMES:
            _registered()
        value = getattr(module, name)
        globals()[name] = value  # the next lookup is an ordinary attribute
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # a submodule: rcfr.solvers, rcfr.search, ...
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = sorted(set(_LAZY) - {"load_compiled"} | {"load_game"})
