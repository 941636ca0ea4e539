"""The exact table (the tabular sanity check: with indicator features, RCFR is CFR)."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .base import cache_key, fit_inputs, predict_input


def _row_keys(X: np.ndarray) -> list[bytes]:
    rows = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0)  # + 0.0 turns -0.0 into 0.0
    return [r.tobytes() for r in rows]


class ExactTable(RegressorMixin, BaseEstimator):
    """The weighted mean target of each distinct feature row; unseen rows (and rows whose weights
    sum to zero) predict `default`. With indicator features this is exactly a regret table."""

    _parameter_constraints = {"default": [Interval(Real, None, None, closed="neither")]}

    def __init__(self, default: float = 0.0):
        self.default = default

    def _rows(self, X) -> np.ndarray:
        """Row ids of X in the fitted index (-1: unseen); kept from fit for a read-only X."""
        last = getattr(self, "_last", None)
        if last is not None and last[0] is X:
            return last[1]
        return np.array([self.index_.get(k, -1) for k in _row_keys(X)], dtype=np.int64)

    def fit(self, X, y, sample_weight=None):
        X, y, w = fit_inputs(self, X, y, sample_weight)
        index: dict[bytes, int] = {}
        ids = np.array([index.setdefault(k, len(index)) for k in _row_keys(X)], dtype=np.int64)
        totals = np.bincount(ids, w, minlength=len(index))
        sums = np.bincount(ids, w * y, minlength=len(index))
        self.index_ = index
        self.values_ = np.divide(sums, totals, out=np.full(len(totals), float(self.default)), where=totals > 0)
        self._last = (X, ids) if cache_key(X) is not None else None
        return self

    def predict(self, X):
        ids = self._rows(predict_input(self, X))
        return np.where(ids >= 0, self.values_[np.maximum(ids, 0)], float(self.default))

    def size(self) -> int:
        """Distinct rows (table entries)."""
        check_is_fitted(self)
        return len(self.values_)
