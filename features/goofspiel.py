"""Goofspiel features: what a bidder knows, as an on-demand encoder (`rcfr.features.encoders`).

Columns (values scaled to [-1, 1]): the acting player (one-hot), the turn, the point card at stake, the
points still to play, the actor's score lead; the actor's hand (one bit per card); the bid (its card,
one-hot and scaled, and the bid minus the point card); and for each finished turn the actor's own bid
and its result (won / tied / lost). The opponent's bids are never seen, so they never appear.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rcfr.games.goofspiel import Goofspiel
from rcfr.games.goofspiel_fast import BID0, DIFF, HAND0, HEADER, TURN
from rcfr.games.goofspiel_history import kth_card, own_history

from .encoders import FeatureEncoder


def serves(rules) -> bool:
    return isinstance(rules, Goofspiel)


def make(game) -> FeatureEncoder:
    rules = game.rules
    if not serves(rules):
        raise ValueError(f"features 'goofspiel' need goofspiel rules, not {rules.name!r}")
    n = rules.cards
    names = (["player0", "player1", "turn", "point_card", "points_left", "lead"] + [f"hand{c}" for c in range(1, n + 1)]
             + [f"bid={c}" for c in range(1, n + 1)] + ["bid", "bid_minus_point"]
             + [f"turn{t}.{f}" for t in range(n - 1) for f in ("bid", "won", "tied", "lost")])
    data = rules.fast().data
    return FeatureEncoder(tuple(names), data, _encode)


@njit(cache=True)
def _encode(data, s, action, out):
    ints = data[0]
    n = ints[0]
    turn = s[TURN]
    p = 0 if s[BID0] == 0 else 1
    total = 0
    left = 0
    for t in range(n):
        total += ints[HEADER + t]
        if t >= turn:
            left += ints[HEADER + t]
    point = ints[HEADER + turn]
    hand = s[HAND0 + p]
    out[p] = 1.0
    out[2] = turn / n
    out[3] = point / n
    out[4] = left / total
    out[5] = (s[DIFF] if p == 0 else -s[DIFF]) / total
    for c in range(1, n + 1):
        if hand & (1 << (c - 1)):
            out[5 + c] = 1.0
    bid = kth_card(hand, action)
    out[5 + n + bid] = 1.0
    out[6 + 2 * n] = bid / n
    out[7 + 2 * n] = (bid - point) / n
    # the actor's own past bids and results (most recent turn last)
    cards = np.empty(n, np.int64)
    results = np.empty(n, np.int64)
    own_history(data, s, p, turn, cards, results)
    for t in range(turn):
        base = 8 + 2 * n + 4 * t
        out[base] = cards[t] / n
        out[base + (2 if results[t] == 0 else (1 if results[t] == 1 else 3))] = 1.0
