"""The fast path (`rcfr.games.fast.FastGame`) of Phantom Tic-Tac-Toe.

State words: squares 0-8 (0 empty, 1 X, 2 O), then ``[known_X, known_O, player, winner, filled,
code_X, code_O]``. ``known_p`` is the bit mask of squares player p may no longer try (the opening, its
marks, its failed tries). ``code_p`` spells p's tries in base 19, digit ``2 * square + 1`` for a failed
try and ``2 * square + 2`` for a placed one; a player never tries a square twice, so at most 8 digits
precede a decision, and the information-set code ``2 * code + player`` is below ``2 * 19**8`` < 2**36.
"""

from __future__ import annotations

import numpy as np

from .base import TERMINAL
from .fast import FastGame, fast_function

KNOWN, PLAYER, WINNER, FILLED, CODE = 9, 11, 12, 13, 14
WIDTH = 16
BASE = 19
LINES = np.array([(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)], np.int64)


def phantom_fast(rules) -> FastGame:
    start = rules.initial_state()
    initial = np.zeros(WIDTH, np.int64)
    initial[:9] = start.board
    known = sum(1 << q for q in rules.opening)
    initial[KNOWN:KNOWN + 2] = known
    initial[PLAYER] = start.player
    initial[WINNER] = -1
    initial[FILLED] = len(rules.opening)
    empty = 9 - len(rules.opening)
    ints = np.concatenate([LINES.ravel(), initial])
    # each player tries each open square at most once and keeps at least one untried at a decision
    return FastGame(width=WIDTH, data=(ints, np.zeros(0)), code_space=2 * BASE ** (empty - 1),
                    initial=_initial, player=_player, num_children=_num_children, child=_child,
                    utility=_utility, infoset_code=_infoset_code)


@fast_function("initial")
def _initial(data, out):
    out[:] = data[0][24:24 + WIDTH]


@fast_function("player")
def _player(data, s):
    if s[WINNER] >= 0 or s[FILLED] == 9:
        return TERMINAL
    return s[PLAYER]


@fast_function("num_children")
def _num_children(data, s):
    if s[WINNER] >= 0 or s[FILLED] == 9:
        return 0
    known = s[KNOWN + s[PLAYER]]
    n = 9
    for q in range(9):
        n -= (known >> q) & 1
    return n


@fast_function("child")
def _child(data, s, k, out):
    lines = data[0]
    out[:] = s
    p = s[PLAYER]
    known = s[KNOWN + p]
    seen = -1
    square = -1
    while seen < k:
        square += 1
        if not (known >> square) & 1:
            seen += 1
    out[KNOWN + p] = known | (1 << square)
    if s[square] != 0:  # the opponent's mark: the try fails and p tries again
        out[CODE + p] = s[CODE + p] * BASE + 2 * square + 1
        return 1.0
    out[CODE + p] = s[CODE + p] * BASE + 2 * square + 2
    out[square] = p + 1
    out[FILLED] = s[FILLED] + 1
    out[PLAYER] = 1 - p
    for line in range(8):
        if (out[lines[3 * line]] == p + 1 and out[lines[3 * line + 1]] == p + 1
                and out[lines[3 * line + 2]] == p + 1):
            out[WINNER] = p
    return 1.0


@fast_function("utility")
def _utility(data, s):
    if s[WINNER] < 0:
        return 0.0
    return 1.0 if s[WINNER] == 0 else -1.0


@fast_function("infoset_code")
def _infoset_code(data, s):
    p = s[PLAYER]
    return 2 * s[CODE + p] + p
