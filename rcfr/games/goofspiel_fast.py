"""The fast path (`rcfr.games.fast.FastGame`) of imperfect-information Goofspiel.

State words: ``[turn, hand_0, hand_1, bid_0, index_0, diff, code_0, code_1]``: the turn, each hand as a
bit mask (bit c - 1 for card c), player 0's hidden bid this turn and its action index (0 when none),
player 0's points minus player 1's, and each player's code of its own bids and results so far: per
finished turn t, ``code * 3 (N - t) + 3 * action index + result`` (result 0 tie, 1 won, 2 lost).
Codes of i turns lie in ``[offset_i, offset_{i+1})``, so the information-set code
``2 * (offset_i + code) + player`` names one key.
"""

from __future__ import annotations

from math import prod

import numpy as np

from .base import TERMINAL
from .fast import FastGame, fast_function

TURN, HAND0, HAND1, BID0, INDEX0, DIFF, CODE0, CODE1 = range(8)
# the int64 data: cards, returns points (1) or win/loss (0), the points per turn, the code offsets
CARDS, POINTS_RETURNS, HEADER = range(3)


def code_offsets(n: int) -> list[int]:
    """Where the codes of i finished turns begin, i = 0..n (Python integers: exact past int64)."""
    offsets = [0]
    for i in range(n):
        offsets.append(offsets[-1] + prod(3 * (n - t) for t in range(i)))
    return offsets


def goofspiel_code_space(n: int) -> int:
    """Information-set codes of Goofspiel(n): within int64 up to n = 14."""
    return 2 * code_offsets(n)[-1]


def goofspiel_fast(rules) -> FastGame:
    n = rules.cards
    offsets = code_offsets(n)
    ints = np.array([n, 1 if rules.returns == "points" else 0, *rules.points, *offsets], np.int64)
    return FastGame(width=8, data=(ints, np.zeros(0)), code_space=goofspiel_code_space(n), initial=_initial,
                    player=_player, num_children=_num_children, child=_child, utility=_utility,
                    infoset_code=_infoset_code)


@fast_function("initial")
def _initial(data, out):
    n = data[0][CARDS]
    out[:] = 0
    out[HAND0] = (1 << n) - 1
    out[HAND1] = (1 << n) - 1


@fast_function("player")
def _player(data, s):
    if s[TURN] == data[0][CARDS]:
        return TERMINAL
    return 0 if s[BID0] == 0 else 1


@fast_function("num_children")
def _num_children(data, s):
    n = data[0][CARDS]
    return 0 if s[TURN] == n else n - s[TURN]


@fast_function("child")
def _child(data, s, k, out):
    ints = data[0]
    n = ints[CARDS]
    out[:] = s
    p = 0 if s[BID0] == 0 else 1
    hand = s[HAND0 + p]
    card = 0
    seen = -1
    while seen < k:  # the k-th card still in hand, ascending
        card += 1
        if hand & (1 << (card - 1)):
            seen += 1
    out[HAND0 + p] = hand & ~(1 << (card - 1))
    if p == 0:
        out[BID0] = card
        out[INDEX0] = k
        return 1.0
    turn = s[TURN]
    a, b = s[BID0], card
    result0 = 0 if a == b else (1 if a > b else 2)
    result1 = 0 if a == b else (2 if a > b else 1)
    if a > b:
        out[DIFF] = s[DIFF] + ints[HEADER + turn]
    elif a < b:
        out[DIFF] = s[DIFF] - ints[HEADER + turn]
    radix = 3 * (n - turn)
    out[CODE0] = s[CODE0] * radix + 3 * s[INDEX0] + result0
    out[CODE1] = s[CODE1] * radix + 3 * k + result1
    out[BID0] = 0
    out[INDEX0] = 0
    out[TURN] = turn + 1
    return 1.0


@fast_function("utility")
def _utility(data, s):
    diff = s[DIFF]
    if data[0][POINTS_RETURNS]:
        return float(diff)
    return float((diff > 0) - (diff < 0))


@fast_function("infoset_code")
def _infoset_code(data, s):
    ints = data[0]
    p = 0 if s[BID0] == 0 else 1
    return 2 * (ints[HEADER + ints[CARDS] + s[TURN]] + s[CODE0 + p]) + p
