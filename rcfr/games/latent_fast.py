"""The fast path (`rcfr.games.fast.FastGame`) of Latent Tic-Tac-Toe.

State words: squares 0-8 (0 empty, 1 X, 2 O; revealed moves only), then ``[pending_X, pending_O,
moves, winner, code, previous code]``. ``code`` spells every move written so far in base 10 (digit
square + 1) and ``previous code`` the same without the last move: the opponent's pending move is the
last one, so the information-set code is ``2 * previous code + player``.
"""

from __future__ import annotations

import numpy as np

from .base import TERMINAL
from .fast import FastGame, fast_function
from .tictactoe import LINES as SQUARE_LINES
from .tictactoe import winner_utility

PENDING, MOVES, WINNER, CODE, PREVIOUS = 9, 11, 12, 13, 14
WIDTH = 15
LINES = np.array(SQUARE_LINES, np.int64)


def latent_fast(rules) -> FastGame:
    start = rules.initial_state()
    initial = np.zeros(WIDTH, np.int64)
    initial[:9] = start.board
    initial[PENDING:PENDING + 2] = -1
    initial[WINNER] = -1
    empty = start.board.count(0)
    ints = np.concatenate([np.array([len(rules.opening) % 2], np.int64), LINES.ravel(), initial])
    # the longest information-set code: every move but the last, one digit each; empties bound the moves
    # by 2 * empty (a move is lost only when the opponent took its square meanwhile)
    return FastGame(width=WIDTH, data=(ints, np.zeros(0)), code_space=2 * 10 ** min(2 * empty - 1, 18),
                    initial=_initial, player=_player, num_children=_num_children, child=_child,
                    utility=_utility, infoset_code=_infoset_code)


@fast_function("initial")
def _initial(data, out):
    ints = data[0]
    out[:] = ints[1 + 24:1 + 24 + WIDTH]


@fast_function("player")
def _player(data, s):
    if s[WINNER] >= 0:
        return TERMINAL
    for q in range(9):
        if s[q] == 0:
            return (data[0][0] + s[MOVES]) % 2
    return TERMINAL


@fast_function("num_children")
def _num_children(data, s):
    if s[WINNER] >= 0:
        return 0
    empty = 0
    for q in range(9):
        if s[q] == 0:
            empty += 1
    return empty


@fast_function("child")
def _child(data, s, k, out):
    ints = data[0]
    out[:] = s
    p = (ints[0] + s[MOVES]) % 2
    seen = -1
    square = -1
    while seen < k:
        square += 1
        if s[square] == 0:
            seen += 1
    out[PENDING + p] = square
    out[MOVES] = s[MOVES] + 1
    out[PREVIOUS] = s[CODE]
    out[CODE] = s[CODE] * 10 + square + 1
    nxt = 1 - p
    pending = s[PENDING + nxt]
    if pending >= 0 and out[pending] == 0:  # the next player's move is revealed and takes effect
        out[pending] = nxt + 1
        for line in range(8):
            if (out[ints[1 + 3 * line]] == nxt + 1 and out[ints[2 + 3 * line]] == nxt + 1
                    and out[ints[3 + 3 * line]] == nxt + 1):
                out[WINNER] = nxt
    return 1.0


_utility = winner_utility(WINNER)


@fast_function("infoset_code")
def _infoset_code(data, s):
    return 2 * s[PREVIOUS] + (data[0][0] + s[MOVES]) % 2
