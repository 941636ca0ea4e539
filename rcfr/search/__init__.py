"""Search in stochastic perfect-information games (Lanctot's thesis, chapters 6 and 7).

A second system beside the CFR solvers, with its own small game protocol (`base.SearchGame`:
tuple states searched online, never compiled): Pig, EinStein Wuerfelt Nicht!, Can't Stop and solitaire Dominion;
exact Pig values; Expectimax, Star1, Star2 and their sparse-sampling (MCMS) forms; MCTS with double
progressive widening and chapter 7's variance reduction. See docs/search.md.
"""

from __future__ import annotations

from functools import partial

from ..registry import build
from .base import SearchGame
from .cantstop import CantStop, CantStopSolitaire
from .dominion_compiled import DominionSolitaire
from .einstein import EinStein
from .mcts import MCTS
from .minimax import StarSearch
from .pig import Pig, PigSolitaire

SEARCH_GAMES = {"pig": Pig, "pig_solitaire": PigSolitaire, "einstein": EinStein, "cantstop": CantStop,
                "cantstop_solitaire": CantStopSolitaire, "dominion_solitaire": DominionSolitaire}


def _star(pruning, game, *, width=None, depth=None, seconds=None, nodes=None, seed=0):
    return StarSearch(game, pruning=pruning, width=width, depth=depth, seconds=seconds, nodes=nodes, seed=seed)


def _sparse(pruning, game, *, width, depth=None, seconds=None, nodes=None, seed=0):
    return StarSearch(game, pruning=pruning, width=width, depth=depth, seconds=seconds, nodes=nodes, seed=seed)


def _mcts(game, *, c=50.0, simulations=None, seconds=None, leaf="evaluate", widening=None,
          control_variates=False, common_random_numbers=False, antithetic=False, cv_online=50,
          recommend="visits", seed=0):
    return MCTS(game, c=c, simulations=simulations, seconds=seconds, leaf=leaf, widening=widening,
                control_variates=control_variates, common_random_numbers=common_random_numbers,
                antithetic=antithetic, cv_online=cv_online, recommend=recommend, seed=seed)


def _dpw(game, *, widening, c=50.0, simulations=None, seconds=None, leaf="evaluate", seed=0):
    return MCTS(game, c=c, simulations=simulations, seconds=seconds, leaf=leaf, widening=widening, seed=seed)


SEARCHERS = {
    "exp": partial(_star, None), "star1": partial(_star, "star1"), "star2": partial(_star, "star2"),
    "expss": partial(_sparse, None), "star1ss": partial(_sparse, "star1"), "star2ss": partial(_sparse, "star2"),
    "mcts": _mcts, "mcts-dpw": _dpw,
}


def load_search_game(name: str, **params) -> SearchGame:
    """A search game by name (pig, pig_solitaire, einstein, cantstop, cantstop_solitaire,
    dominion_solitaire) with its parameters."""
    return build("search game", SEARCH_GAMES, name, **params)


def make_searcher(name: str, game: SearchGame, **options):
    """A searcher by name; every searcher has ``decide(state) -> (action, value, effort)``."""
    return build("searcher", SEARCHERS, name, game, **options)


__all__ = ["SearchGame", "Pig", "PigSolitaire", "EinStein", "CantStop", "CantStopSolitaire", "DominionSolitaire",
           "StarSearch", "MCTS",
           "SEARCH_GAMES", "SEARCHERS", "load_search_game", "make_searcher"]
