"""Phantom Tic-Tac-Toe (Lanctot 2013, section 3.1.7)."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from .base import TERMINAL, GameRules
from .phantom_fast import phantom_fast
from .tictactoe import WIN_MASKS, has_line, opening_board


class PhantomState(NamedTuple):
    board: tuple[int, ...]  # 9 squares: 0 empty, 1 X (player 0), 2 O (player 1)
    tries: tuple[tuple[tuple[int, bool], ...], tuple[tuple[int, bool], ...]]  # each player's (square, placed)
    player: int  # the player to move
    winner: int  # -1 none yet, else the player who completed a line


class PhantomTicTacToe(GameRules):
    """Phantom Tic-Tac-Toe: tic-tac-toe on squares 0-8 (row by row) where neither player sees the other's
    marks. On a turn the player tries a square it does not know to be taken (not its own, not one where
    an earlier try failed). If the opponent holds it the try fails, the player learns so and tries again;
    otherwise its mark goes there and the turn passes. Nobody learns how many tries the other made.
    X (player 0) moves first. A line wins at once (+1, the other -1); a full board without one is a draw.
    A decision with a single square left to try is forced, so the compiled game collapses it.

    ``opening``: squares taken alternately by X and O before the game starts, known to both; the empty
    opening is the thesis's game (1.6e10 histories once forced moves are collapsed, too large to compile), a longer one gives the
    small instances that tests compile. Keys read ``O:4+ 0- 8+``: the player to move, then its own tries
    in order, ``+`` placed and ``-`` failed (the square was the opponent's).
    """

    name = "phantom_ttt"
    has_chance = False

    def __init__(self, opening: tuple = ()):
        self.opening, board = opening_board(opening)
        self._start = PhantomState(board, ((), ()), len(self.opening) % 2, -1)

    def initial_state(self):
        return self._start

    def player(self, s: PhantomState) -> int:
        if s.winner >= 0 or 0 not in s.board:
            return TERMINAL
        return s.player

    def _open(self, s: PhantomState) -> list[int]:
        """The squares the player to move may try: neither in the opening nor tried by it before."""
        tried = {q for q, _ in s.tries[s.player]}
        return [q for q in range(9) if q not in tried and q not in self.opening]

    def actions(self, s: PhantomState):
        return [str(q) for q in self._open(s)]

    def next_state(self, s: PhantomState, action: int):
        p = s.player
        square = self._open(s)[action]
        placed = s.board[square] == 0
        tries = list(s.tries)
        tries[p] = tries[p] + ((square, placed),)
        if not placed:  # the opponent holds it: same player, one square fewer to try
            return PhantomState(s.board, tuple(tries), p, -1)
        board = s.board[:square] + (1 + p,) + s.board[square + 1:]
        return PhantomState(board, tuple(tries), 1 - p, p if has_line(board, 1 + p) else -1)

    def utility(self, s: PhantomState) -> float:
        return 0.0 if s.winner < 0 else (1.0 if s.winner == 0 else -1.0)

    def infoset_key(self, s: PhantomState) -> str:
        p = s.player
        tries = " ".join(f"{q}{'+' if ok else '-'}" for q, ok in s.tries[p])
        return f"{'XO'[p]}:{tries}"

    def fast(self):
        return phantom_fast(self)

    def walk_bounds(self) -> tuple[int, int]:
        # every move places a mark or reveals one of the opponent's (an attempt that fails), so a path has at
        # most `empty` placements plus as many failures; a node offers at most the empty squares
        empty = 9 - len(self.opening)
        return 2 * empty, empty

    def estimate_histories(self) -> int:
        """Exact: the subtree below a state depends only on the board, the player to move and the squares
        each player knows to be taken, so a memoized count over those is quick (~1e5 states at most)."""
        return phantom_counts(self.opening)[0]



@lru_cache(maxsize=64)
def phantom_counts(opening: tuple, collapse: bool = True) -> tuple[int, int]:
    """(histories, terminals) of Phantom Tic-Tac-Toe after `opening`, forced decisions (one square left
    to try) not counted as histories when `collapse`. Squares are bit masks: the marks of the player to
    move and of the other, and the squares each of them may no longer try."""
    marks = [0, 0]
    for i, q in enumerate(opening):
        marks[i % 2] |= 1 << q
    closed = sum(1 << q for q in opening)
    masks = WIN_MASKS.tolist()  # Python ints: the count runs in Python

    @lru_cache(maxsize=None)
    def count(mine: int, theirs: int, known: int, their_known: int) -> tuple[int, int]:
        total = 0 if collapse and (known ^ 511).bit_count() == 1 else 1
        ends = 0
        for q in range(9):
            bit = 1 << q
            if known & bit:
                continue
            if theirs & bit:  # the try fails; the same player tries again, knowing one more square
                h, z = count(mine, theirs, known | bit, their_known)
            else:
                placed = mine | bit
                if any(placed & w == w for w in masks) or (placed | theirs) == 511:
                    h, z = 1, 1
                else:
                    h, z = count(theirs, placed, their_known, known | bit)
            total, ends = total + h, ends + z
        return total, ends

    p = len(opening) % 2
    return count(marks[p], marks[1 - p], closed, closed)
