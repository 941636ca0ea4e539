"""Zero-sum matrix games played in turns: the smallest games with hidden information.

Player 0 picks a row, then player 1 a column without seeing it; the payoff is player 0's. The CFR rules'
independent checks use random ones, and DDCFR's training set holds one (benchmarks/studies/ddcfr_train.py).
"""

from __future__ import annotations

import numpy as np

from .base import TERMINAL, GameRules


class MatrixGame(GameRules):
    """A matrix game with payoff matrix `payoff` (rows: player 0's actions, columns: player 1's)."""

    name = "matrix_game"

    def __init__(self, payoff):
        table = np.asarray(payoff, dtype=np.float64)
        if table.ndim != 2 or 0 in table.shape or not np.isfinite(table).all():
            raise ValueError(f"payoff must be a non-empty 2-D matrix of finite numbers, got {payoff!r:.80}")
        self.payoff = tuple(tuple(float(v) for v in row) for row in table)  # hashable: it names the game
        self._table = table

    @classmethod
    def random(cls, seed: int = 0, rows: int = 3, cols: int = 4) -> "MatrixGame":
        """Payoffs drawn uniformly from [-2, 2], rounded to 3 decimals."""
        return cls(np.round(np.random.default_rng(seed).uniform(-2, 2, (rows, cols)), 3))

    def initial_state(self):
        return ()

    def player(self, state) -> int:
        return TERMINAL if len(state) == 2 else len(state)

    def actions(self, state):
        return [f"a{i}" for i in range(self._table.shape[len(state)])]

    def chance_outcomes(self, state):
        raise AssertionError("a matrix game has no chance")

    def next_state(self, state, action: int):
        return state + (action,)

    def utility(self, state) -> float:
        return float(self._table[state])

    def infoset_key(self, state) -> str:
        return f"P{len(state)}"
