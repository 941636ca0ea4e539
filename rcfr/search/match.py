"""Matches between searchers: seat-swapped pairs of games that share one seed (thesis §6.4)."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..stats import ci95
from .base import SearchGame

MakePlayer = Callable[[SearchGame, int], object]   # (game, seed) -> searcher with decide()


def play(game: SearchGame, players, seed: int, max_moves: int = 10_000) -> float:
    """Player 0's utility in one game; chance is driven by `seed`. A game still running after
    `max_moves` decisions is a draw (the midpoint of the utility range)."""
    rng = np.random.default_rng(seed)
    state = game.initial(rng)
    for _ in range(max_moves):
        if game.is_terminal(state):
            return game.utility(state)
        action = players[game.player(state)].decide(state)[0]
        state = game.step(state, action, rng)
    return (game.vmin + game.vmax) / 2


def match(game: SearchGame, first: MakePlayer, second: MakePlayer, pairs: int, seed: int = 0) -> dict:
    """`pairs` matches of two games with seats swapped and one chance seed per match. Returns the
    first player's win percentage with a 95% confidence interval over matches (a draw is half a
    win)."""
    scores = []
    for m in range(pairs):
        s = int(np.random.SeedSequence([seed, m]).generate_state(1)[0])
        a = play(game, [first(game, 2 * s), second(game, 2 * s + 1)], s)
        b = play(game, [second(game, 2 * s + 1), first(game, 2 * s)], s)
        scores.append((_win(game, a) + 1 - _win(game, b)) / 2)
    scores = np.array(scores)
    half = ci95(scores)
    half = math.nan if half is None else half
    return {"win_percent": 100 * scores.mean(), "ci95": 100 * half, "matches": len(scores), "games": 2 * len(scores)}


def _win(game, utility):
    """Player 0's share of a game with this utility: 1 win, 0 loss, 0.5 draw."""
    return (utility - game.vmin) / (game.vmax - game.vmin)
