"""Latent Tic-Tac-Toe (Lanctot 2013, section 3.1.6)."""

from __future__ import annotations

from typing import NamedTuple

from .base import TERMINAL, GameRules
from .latent_fast import latent_fast
from .tictactoe import has_line, opening_board


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
        self.opening, board = opening_board(opening)
        self._start = LatentState(board, (), -1)
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
