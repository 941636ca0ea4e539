"""Regression regret matching (RRM, RRM+) for normal-form games (Morrill 2016, Algorithms 1 and 2).

`RRM` is an online learner over a fixed set of actions described by feature rows: it plays regret
matching on t x a regressor's estimate of its average (Q-)regrets and learns from the value of each
action. `solve_matrix_game` runs two learners against each other on a payoff matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..options import UPDATES, check_choice, check_int
from .predictions import checked_prediction
from .targets import RegretTargets


def _regret_matching(regrets: np.ndarray) -> np.ndarray:
    positive = np.maximum(regrets, 0.0)
    total = positive.sum()
    return positive / total if total > 0 else np.full(len(regrets), 1.0 / len(regrets))


class RRM:
    """Online regression regret matching over the actions whose feature rows are `features`
    (an int n means n indicator features). ``regret_matching="rm+"`` clips targets at zero (RRM+)."""

    def __init__(self, features, regressor="table", *, regret_matching: str = "rm", targets: str = "stored",
                 weights=None):
        X = np.eye(features) if isinstance(features, (int, np.integer)) else np.asarray(features, dtype=np.float64)
        if X.ndim != 2 or len(X) < 1:
            raise ValueError(f"features must be an action count or an (actions x d) matrix, got shape {X.shape}")
        X.setflags(write=False)
        from ..regressors import make_regressor  # scikit-learn loads on first use, not on `import rcfr`
        self.features, self.regressor = X, make_regressor(regressor)
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.targets = RegretTargets(len(X), regret_matching, targets)
        self.t = 0
        self._strategy = np.full(len(X), 1.0 / len(X))
        self.true_regret = np.zeros(len(X))  # exact cumulative regret of the strategies played

    def strategy(self) -> np.ndarray:
        return self._strategy

    def observe(self, values: np.ndarray) -> None:
        """Learn from the value of every action against what the opponent just played."""
        values = np.asarray(values, dtype=np.float64)
        regrets = values - self._strategy @ values
        self.true_regret += regrets
        self.t += 1
        self.targets.add(regrets)
        from ..regressors import base as regressors
        regressors.fit(self.regressor, self.features, self.targets.targets(self.t), self.weights)
        prediction = checked_prediction(self.regressor, self.regressor.predict(self.features), len(self.features),
                                        f"round {self.t}")
        estimate = self.targets.predicted(prediction)
        self._strategy = _regret_matching(estimate)

    def average_regret(self) -> float:
        """max_a (cumulative regret of a) / t: the learner's external regret per round."""
        return float(max(self.true_regret.max(), 0.0) / max(self.t, 1))


@dataclass(frozen=True)
class MatrixResult:
    row_strategy: np.ndarray  # average strategies
    column_strategy: np.ndarray
    exploitability: float  # (best row payoff vs column avg - best column payoff vs row avg) / 2
    average_regrets: tuple[float, float]


def solve_matrix_game(payoff, row: RRM, column: RRM, iterations: int,
                      updates: str = "alternating") -> MatrixResult:
    """Self-play of two learners on the zero-sum game where the row player receives `payoff`; with
    ``updates="alternating"`` the column player answers the row player's new strategy."""
    check_choice("updates", updates, UPDATES)
    check_int("iterations", iterations, 1)
    A = np.asarray(payoff, dtype=np.float64)
    if A.ndim != 2 or A.shape != (len(row.features), len(column.features)):
        raise ValueError(f"payoff must be a {len(row.features)} x {len(column.features)} matrix, got {A.shape}")
    sums = [np.zeros(A.shape[0]), np.zeros(A.shape[1])]
    for _ in range(iterations):
        x, y = row.strategy(), column.strategy()
        sums[0] += x
        row.observe(A @ y)
        if updates == "alternating":
            x = row.strategy()
        sums[1] += y
        column.observe(-(x @ A))
    x, y = sums[0] / iterations, sums[1] / iterations
    gap = (float((A @ y).max()) - float((x @ A).min())) / 2
    return MatrixResult(x, y, gap, (row.average_regret(), column.average_regret()))
