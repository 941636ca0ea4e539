"""EinStein Wuerfelt Nicht! (thesis §3.2.2) on the 5x5 board.

Player 0 (red) starts with dice 1..6 on the six squares of the top-left corner triangle and moves
right, down or diagonally down-right; player 1 (blue) mirrors from the bottom-right corner. A die
roll before each move names the piece to move; if it is gone, the player moves the next higher or
the next lower piece still on the board. Moving onto any piece captures it. A player wins by
reaching the opposite corner or by capturing every opposing piece. The starting arrangement,
chosen by the players in the real game and not described in the thesis, is drawn uniformly at
random from the seed.

State ``(board, player, roll)``: `board` a 25-tuple (0 empty, 1..6 red, 7..12 blue), `player` to
move, `roll` the die (1..6) already thrown for that move. Actions ``25 * from + to``; the raw chance
outcome after a move is the next player's die, 0..5.
"""

from __future__ import annotations

import numpy as np

from .base import SearchGame

SIZE = 5
RED_START = (0, 1, 2, 5, 6, 10)
BLUE_START = (24, 23, 22, 19, 18, 14)
GOAL = (24, 0)
STEPS = (((0, 1), (1, 0), (1, 1)), ((0, -1), (-1, 0), (-1, -1)))


def _targets(player: int) -> list[tuple[int, ...]]:
    out = []
    for sq in range(SIZE * SIZE):
        r, c = divmod(sq, SIZE)
        moves = [(r + dr) * SIZE + c + dc for dr, dc in STEPS[player]
                 if 0 <= r + dr < SIZE and 0 <= c + dc < SIZE]
        # the diagonal (towards the goal) first: Star2 probes it
        out.append(tuple(reversed(moves)))
    return out


TARGETS = (_targets(0), _targets(1))
#: Squares' distance to each player's goal corner (king moves).
DISTANCE = tuple(tuple(max(abs(sq // SIZE - g // SIZE), abs(sq % SIZE - g % SIZE)) for sq in range(25))
                 for g in GOAL)


def _owner(piece: int) -> int:
    return 0 if piece <= 6 else 1


class EinStein(SearchGame):
    """EinStein Wuerfelt Nicht!; utilities +-100."""

    name = "einstein"
    num_raw_outcomes = 6

    def initial(self, rng):
        board = [0] * 25
        for sq, n in zip(RED_START, rng.permutation(6) + 1):
            board[sq] = int(n)
        for sq, n in zip(BLUE_START, rng.permutation(6) + 7):
            board[sq] = int(n)
        return (tuple(board), 0, int(rng.integers(6)) + 1)

    def winner(self, state) -> int:
        board = state[0]
        if board[GOAL[0]] and _owner(board[GOAL[0]]) == 0:
            return 0
        if board[GOAL[1]] and _owner(board[GOAL[1]]) == 1:
            return 1
        red = any(0 < x <= 6 for x in board)
        blue = any(x > 6 for x in board)
        return -1 if red and blue else (0 if red else 1)

    def is_terminal(self, state):
        return self.winner(state) >= 0

    def player(self, state):
        return state[1]

    def movable(self, state) -> list[int]:
        """Squares of the pieces the roll allows to move."""
        board, p, roll = state
        offset = 6 * p
        where = {board[sq] - offset: sq for sq in range(25) if board[sq] and _owner(board[sq]) == p}
        if roll in where:
            return [where[roll]]
        up = [n for n in where if n > roll]
        down = [n for n in where if n < roll]
        return [where[n] for n in ((min(up),) if up else ()) + ((max(down),) if down else ())]

    def actions(self, state):
        p = state[1]
        return [25 * sq + to for sq in self.movable(state) for to in TARGETS[p][sq]]

    def chance(self, state, action):
        return range(6), (1 / 6,) * 6

    def apply(self, state, action, outcome):
        board, p, _ = state
        frm, to = divmod(action, 25)
        new = list(board)
        new[to], new[frm] = new[frm], 0
        return (tuple(new), 1 - p, int(outcome) + 1)

    def default_policy(self, state, rng):
        actions = self.actions(state)
        return actions[int(rng.integers(len(actions)))]

    def utility(self, state):
        return self.vmax if self.winner(state) == 0 else self.vmin

    def evaluate(self, state):
        """Race heuristic: each side's best (closest) piece and material, the mover a step ahead."""
        board, p, _ = state
        best = [9.0, 9.0]
        count = [0, 0]
        for sq, x in enumerate(board):
            if x:
                o = _owner(x)
                count[o] += 1
                best[o] = min(best[o], DISTANCE[o][sq])
        best[p] -= 0.5
        score = 12.0 * (best[1] - best[0]) + 3.0 * (count[0] - count[1])
        return float(np.clip(score, -95.0, 95.0))
