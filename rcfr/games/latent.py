"""Latent Tic-Tac-Toe (Lanctot 2013, section 3.1.6)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .base import TERMINAL, GameRules
from .latent_fast import latent_fast

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def has_line(board: tuple[int, ...], mark: int) -> bool:
    return any(board[a] == board[b] == board[c] == mark for a, b, c in LINES)


class LatentState(NamedTuple):
    board: tuple[int, ...]  # 9 squares: 0 empty, 1 X (player 0), 2 O (player 1); revealed moves only
    moves: tuple[int, ...]  # every move written down so far, in order (the opening excluded)
    winner: int  # -1 none yet, else the player who completed a line


class LatentTicTacToe(GameRules):
    """Latent Tic-Tac-Toe: tic-tac-toe on squares 0-8 (row by row) where each move is written down in
    secret and revealed only at the start of its player's next turn. It takes effect then if its square
    is still empty; otherwise it is lost. X (player 0) moves first. On a turn, the player's own pending
    move is revealed (to both players, lost or not), then the player writes down a new move: any square
    that is empty on the revealed board (the opponent's pending move is unknown). A player who completes
    a line on a reveal wins (+1, the other -1); a revealed board with no empty square is a draw (0).

    ``opening``: squares already taken (revealed), alternately by X and O, before the game starts; the
    empty opening is the thesis's game, a longer one gives the small instances the tests compile.
    Keys read ``O:4 0 8``: the player to move, then every move so far but the opponent's pending one.
    """

    name = "latent_ttt"

    def __init__(self, opening: tuple = ()):
        if isinstance(opening, Sequence) and not isinstance(opening, (str, bytes)):
            opening = tuple(opening)
        ok = (isinstance(opening, tuple) and len(set(opening)) == len(opening)
              and all(isinstance(q, int) and not isinstance(q, bool) and 0 <= q < 9 for q in opening))
        if not ok:
            raise ValueError(f"game parameter 'opening' must be a sequence of distinct squares 0-8, got {opening!r}")
        board = [0] * 9
        for i, q in enumerate(opening):
            board[q] = 1 + i % 2
        if has_line(tuple(board), 1) or has_line(tuple(board), 2) or 0 not in board:
            raise ValueError(f"game parameter 'opening' must leave the game undecided, got {opening!r}")
        self.opening = tuple(opening)
        self._start = LatentState(tuple(board), (), -1)
        self._first = len(self.opening) % 2

    def initial_state(self):
        return self._start

    def player(self, s: LatentState) -> int:
        if s.winner >= 0 or 0 not in s.board:
            return TERMINAL
        return (self._first + len(s.moves)) % 2

    def actions(self, s: LatentState):
        return [str(q) for q in range(9) if s.board[q] == 0]

    def next_state(self, s: LatentState, action: int):
        square = [q for q in range(9) if s.board[q] == 0][action]
        moves = s.moves + (square,)
        board, winner = s.board, -1
        if len(moves) >= 2:  # the next player's pending move is revealed at the start of its turn
            nxt = (self._first + len(moves)) % 2
            pending = moves[-2]
            if board[pending] == 0:
                board = board[:pending] + (1 + nxt,) + board[pending + 1:]
                winner = nxt if has_line(board, 1 + nxt) else -1
        return LatentState(board, moves, winner)

    def utility(self, s: LatentState) -> float:
        return 0.0 if s.winner < 0 else (1.0 if s.winner == 0 else -1.0)

    def fast(self):
        return latent_fast(self)

    def infoset_key(self, s: LatentState) -> str:
        p = self.player(s)
        return f"{'XO'[p]}:{' '.join(map(str, s.moves[:-1]))}"
