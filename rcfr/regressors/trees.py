"""Regression trees: scikit-learn's best-first with a leaf budget, and recursive partitioning to an error threshold."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .base import cache_key, fit_inputs, predict_input


class SklearnTree(RegressorMixin, BaseEstimator):
    """scikit-learn's tree grown best-first (largest impurity decrease next) to `max_leaves` leaves.

    scikit-learn grows best-first whenever ``max_leaf_nodes`` is set. X is validated once and cast to
    float32 once per read-only X; the tree then skips its own re-validation, which is most of the
    cost at RCFR's sizes."""

    _parameter_constraints = {"max_leaves": [Interval(Integral, 2, None, closed="left")],
                              "criterion": [StrOptions({"squared_error", "absolute_error"})],
                              "random_state": ["random_state"]}

    def __init__(self, max_leaves: int = 64, criterion: str = "squared_error", random_state=None):
        self.max_leaves = max_leaves
        self.criterion = criterion
        self.random_state = random_state

    def _float32(self, X):
        """X as float32; the cast of a read-only X seen by fit is kept (`cache_key`) and reused."""
        cached = getattr(self, "_cast", None)
        if cached is not None and cached[0] is X and X is not None:
            return cached[1]
        return np.ascontiguousarray(X, dtype=np.float32)

    def fit(self, X, y, sample_weight=None):
        X, y, w = fit_inputs(self, X, y, sample_weight)
        X32 = self._float32(X)
        self._cast = (cache_key(X), X32)
        self.model_ = DecisionTreeRegressor(max_leaf_nodes=self.max_leaves, criterion=self.criterion,
                                            random_state=self.random_state)
        self.model_.fit(X32, np.ascontiguousarray(y), sample_weight=w, check_input=False)
        return self

    def predict(self, X):
        X = predict_input(self, X)
        return self.model_.predict(self._float32(X), check_input=False)

    def size(self) -> int:
        """Leaves."""
        check_is_fitted(self)
        return int(self.model_.tree_.n_leaves)


class PartitionTree(RegressorMixin, BaseEstimator):
    """Recursive partitioning: split a node (on the split that most reduces squared error) while its
    average error — the weighted mean absolute deviation from its mean — exceeds `threshold`.

    The split search is vectorized over all features of a node at once.
    """

    _parameter_constraints = {"threshold": [Interval(Real, 0, None, closed="left")],
                              "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
                              "max_depth": [Interval(Integral, 0, None, closed="left")]}

    def __init__(self, threshold: float = 0.01, min_samples_leaf: int = 1, max_depth: int = 32):
        self.threshold = threshold
        self.min_samples_leaf = min_samples_leaf
        self.max_depth = max_depth

    def _best_split(self, X, y, w):
        """(feature, cut) minimizing the children's weighted squared error, or None."""
        order = np.argsort(X, axis=0, kind="stable")
        xs = np.take_along_axis(X, order, axis=0)
        ws, wys = w[order], (w * y)[order]
        cw, cwy = np.cumsum(ws, axis=0)[:-1], np.cumsum(wys, axis=0)[:-1]
        tw, twy = w.sum(), (w * y).sum()
        rw = tw - cw
        with np.errstate(divide="ignore", invalid="ignore"):
            # total SSE = sum(w y^2) - cwy^2/cw - (twy-cwy)^2/rw; the first term is split-independent
            gain = cwy ** 2 / cw + (twy - cwy) ** 2 / rw
        m = self.min_samples_leaf
        valid = (xs[1:] > xs[:-1]) & (cw > 0) & (rw > 0)
        rank = np.arange(1, len(y))[:, None]
        valid &= (rank >= m) & (len(y) - rank >= m)
        if not valid.any():
            return None
        gain = np.where(valid, gain, -np.inf)
        k, f = np.unravel_index(np.argmax(gain), gain.shape)
        a, b = xs[k, f], xs[k + 1, f]
        cut = a + (b - a) / 2  # (a + b) / 2 can round up to b for adjacent floats; then cut at a
        return f, (a if cut >= b else cut)

    def fit(self, X, y, sample_weight=None):
        X, y, w = fit_inputs(self, X, y, sample_weight)
        feature, cut, value = [], [], []
        stack = [(np.arange(len(y)), 0)]
        while stack:
            rows, depth = stack.pop()
            tw = w[rows].sum()
            mean = float(w[rows] @ y[rows] / tw) if tw > 0 else 0.0
            error = float(w[rows] @ np.abs(y[rows] - mean) / tw) if tw > 0 else 0.0
            split = None
            if error > self.threshold and depth < self.max_depth and len(rows) >= 2 * self.min_samples_leaf:
                split = self._best_split(X[rows], y[rows], w[rows])
            feature.append(-1 if split is None else int(split[0]))
            cut.append(0.0 if split is None else float(split[1]))
            value.append(mean)
            if split is not None:
                goes_left = X[rows, split[0]] <= split[1]
                # children are pushed right first so the left child gets id node + 1
                stack.append((rows[~goes_left], depth + 1))
                stack.append((rows[goes_left], depth + 1))
        self.feature_, self.threshold_ = np.array(feature, dtype=np.int64), np.array(cut)
        self.value_ = np.array(value)
        self.right_ = self._right_children()
        return self

    def _right_children(self) -> np.ndarray:
        """Depth-first ids: a node's right child follows its whole left subtree."""
        n = len(self.value_)
        size = np.ones(n, dtype=np.int64)
        for node in range(n - 1, -1, -1):
            if self.feature_[node] >= 0:
                size[node] = 1 + size[node + 1] + size[node + 1 + size[node + 1]]
        return np.where(self.feature_ >= 0, np.arange(n) + 1 + size[np.minimum(np.arange(n) + 1, n - 1)], -1)

    def predict(self, X):
        X = predict_input(self, X)
        node = np.zeros(len(X), dtype=np.int64)
        rows = np.arange(len(X))
        while True:
            inner = self.feature_[node] >= 0
            if not inner.any():
                return self.value_[node]
            r, n = rows[inner], node[inner]
            node[inner] = np.where(X[r, self.feature_[n]] <= self.threshold_[n], n + 1, self.right_[n])

    def size(self) -> int:
        """Leaves."""
        check_is_fitted(self)
        return int(np.count_nonzero(self.feature_ < 0))
