"""Latent Tic-Tac-Toe features: the board as the mover knows it, as an on-demand encoder
(`rcfr.features.encoders`).

The mover knows every move but the opponent's last, which is still pending: the revealed board, the
order of the known moves (lost ones included) and that the pending move lies on a square that was
empty when the opponent wrote it (an empty square now, or the square the mover's own last move just
took). Columns (values in [0, 1]): the mover (one-hot), the known moves and whether a move is pending;
per square: empty / own mark / opponent's mark (one-hot), when the mover and the opponent wrote a
move there (move number over the longest game; 0 for none), and whether the pending move may be there.
Then the action: its square (one-hot), whether it would complete one of the mover's lines, whether it
blocks a line of two opponent marks, and the lines through it not yet blocked by the opponent (/ 4).
Every legal action is an empty square of the revealed board, so no action is known to be occupied;
it may still be lost to the pending move (the `pending{q}` column of its square).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rcfr.games.latent import LatentTicTacToe
from rcfr.games.latent_fast import MOVES, PREVIOUS

from .encoders import FeatureEncoder

SQUARE_FIELDS = ("empty", "own", "opponent", "own_time", "opponent_time", "pending")
ACTION_FIELDS = ("completes_line", "blocks_line", "open_lines")


def serves(rules) -> bool:
    return isinstance(rules, LatentTicTacToe)


def make(game) -> FeatureEncoder:
    rules = game.rules
    if not serves(rules):
        raise ValueError(f"features 'latent_ttt' need latent_ttt rules, not {rules.name!r}")
    names = (["player0", "player1", "moves_known", "pending"] + [f"{f}{q}" for f in SQUARE_FIELDS for q in range(9)]
             + [f"move={q}" for q in range(9)] + list(ACTION_FIELDS))
    return FeatureEncoder(tuple(names), rules.fast().data, _encode)


@njit(cache=True)
def _encode(data, s, action, out):
    ints = data[0]
    first = ints[0]
    lines = ints[1:25]
    empty_at_start = 0
    for q in range(9):
        if ints[25 + q] == 0:
            empty_at_start += 1
    longest = 2 * empty_at_start  # bounds the moves of a game (see latent_fast)
    moves = s[MOVES]
    p = (first + moves) % 2
    own, other = p + 1, 2 - p
    out[p] = 1.0
    out[2] = max(moves - 1, 0) / longest
    out[3] = 1.0 if moves > 0 else 0.0
    # the known moves, decoded from the code of every move but the last (one digit each, square + 1)
    code = s[PREVIOUS]
    known = max(moves - 1, 0)
    squares = np.empty(max(known, 1), np.int64)
    for j in range(known - 1, -1, -1):
        squares[j] = code % 10 - 1
        code //= 10
    own_last = -1
    for j in range(known):
        mover = (first + j) % 2
        field = 3 if mover == p else 4
        out[4 + 9 * field + squares[j]] = (j + 1) / longest
        if mover == p:
            own_last = squares[j]
    for q in range(9):
        out[4 + 9 * (0 if s[q] == 0 else (1 if s[q] == own else 2)) + q] = 1.0
        # the opponent wrote its pending move on a square empty on the board it saw: the mover's last
        # move was revealed after that
        if moves > 0 and (s[q] == 0 or (q == own_last and s[q] == own)):
            out[4 + 9 * 5 + q] = 1.0
    seen = -1
    square = -1
    while seen < action:  # the action-th empty square
        square += 1
        if s[square] == 0:
            seen += 1
    col = 4 + 9 * 6  # after the square fields
    out[col + square] = 1.0
    col += 9
    open_lines = 0
    for line in range(8):
        a, b, c = lines[3 * line], lines[3 * line + 1], lines[3 * line + 2]
        if a != square and b != square and c != square:
            continue
        mine, theirs = 0, 0
        for q in (a, b, c):
            if q != square:
                mine += s[q] == own
                theirs += s[q] == other
        if mine == 2:
            out[col] = 1.0
        if theirs == 2:
            out[col + 1] = 1.0
        if theirs == 0:
            open_lines += 1
    out[col + 2] = open_lines / 4
