"""The tic-tac-toe board that Latent and Phantom Tic-Tac-Toe share: its lines, the opening check, and the
fast paths' utility (one word of the state holds the winner)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .fast import fast_function

#: squares 0-8 row by row; the eight lines that win
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
#: each line as a bit mask of its squares (for marks kept as masks)
WIN_MASKS = np.array([sum(1 << q for q in line) for line in LINES], np.int64)


def has_line(board: tuple[int, ...], mark: int) -> bool:
    return any(board[a] == board[b] == board[c] == mark for a, b, c in LINES)


def opening_board(opening) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(opening, board) for the game parameter ``opening``: distinct squares 0-8 taken alternately by X (1)
    and O (2) before the game starts, leaving it undecided."""
    if isinstance(opening, Sequence) and not isinstance(opening, (str, bytes)):
        opening = tuple(opening)
    ok = (isinstance(opening, tuple) and len(set(opening)) == len(opening)
          and all(isinstance(q, int) and not isinstance(q, bool) and 0 <= q < 9 for q in opening))
    if not ok:
        raise ValueError(f"game parameter 'opening' must be a sequence of distinct squares 0-8, got {opening!r}")
    board = [0] * 9
    for i, q in enumerate(opening):
        board[q] = 1 + i % 2
    board = tuple(board)
    if has_line(board, 1) or has_line(board, 2) or 0 not in board:
        raise ValueError(f"game parameter 'opening' must leave the game undecided, got {opening!r}")
    return opening, board


def winner_utility(winner: int):
    """The fast path's utility for states whose word `winner` is -1 (a draw so far) or the winning player."""

    @fast_function("utility")
    def utility(data, s):
        if s[winner] < 0:
            return 0.0
        return 1.0 if s[winner] == 0 else -1.0

    return utility
