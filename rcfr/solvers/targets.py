"""Regression targets for learned regret estimation (Morrill 2016, Algorithms 1 and 2).

* ``stored``: keep the exact cumulative regrets R_t (RCFR) or Q-regrets Q_t = max(Q_{t-1} + r_t, 0)
  (RCFR+) and train on R_t / t;
* ``bootstrap``: keep nothing but the regressor; train on (R~_{t-1} + r_t) / t, where
  R~_{t-1} = (t-1) x the previous prediction, clipped at zero for the "+" variants.

With refits every k iterations, the bootstrapped sum holds the regrets since the last fit.
"""

from __future__ import annotations

import numpy as np

from ..registry import check_choice

TARGETS = ("stored", "bootstrap")


class RegretTargets:
    """Targets for one block of examples (one player's sequences, or one learner's actions)."""

    def __init__(self, size: int, plus: bool, mode: str):
        self.plus, self.mode = bool(plus), check_choice("targets", mode, TARGETS)
        self.total = np.zeros(size)  # stored: R_t or Q_t; bootstrap: regrets since the last fit
        self.estimate = np.zeros(size)  # the regressor's cumulative estimate (t of its targets x prediction)
        self.value = np.zeros(size)  # the latest targets
        self.t = 0  # iteration of the latest targets

    def add(self, regrets: np.ndarray) -> None:
        self.total += regrets
        if self.plus and self.mode == "stored":
            np.maximum(self.total, 0.0, out=self.total)

    def targets(self, t: int) -> np.ndarray:
        if self.mode == "stored":
            np.divide(self.total, t, out=self.value)
        else:
            np.add(self.estimate, self.total, out=self.value)
            self.value /= t
            if self.plus:
                np.maximum(self.value, 0.0, out=self.value)
            self.total[:] = 0.0
        self.t = t
        return self.value

    def predicted(self, prediction: np.ndarray) -> np.ndarray:
        """Record the regressor's prediction of the latest targets; returns the cumulative estimate."""
        np.multiply(prediction, self.t, out=self.estimate)
        return self.estimate

    def state_dict(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}total": self.total.copy(), f"{prefix}estimate": self.estimate.copy(),
                f"{prefix}value": self.value.copy(), f"{prefix}t": np.array(self.t)}

    def load_state_dict(self, state: dict[str, np.ndarray], prefix: str) -> None:
        self.total[:], self.estimate[:] = state[f"{prefix}total"], state[f"{prefix}estimate"]
        self.value[:], self.t = state[f"{prefix}value"], int(state[f"{prefix}t"])
