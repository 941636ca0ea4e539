"""Regression trees: best-first with a leaf budget, and recursive partitioning to an error threshold."""

from __future__ import annotations

import numpy as np
from sklearn.tree import DecisionTreeRegressor

from ..registry import check_choice
from .base import Regressor, cache_key


class BestFirstTree(Regressor):
    """A tree grown best-first (largest impurity decrease next) until it has `max_leaves` leaves.

    scikit-learn grows best-first whenever ``max_leaf_nodes`` is set; inputs are passed as float32
    without re-validation, which is most of the cost at RCFR's sizes.
    """

    def __init__(self, max_leaves: int = 64, criterion: str = "squared_error", seed: int = 0):
        if isinstance(max_leaves, bool) or not isinstance(max_leaves, (int, np.integer)) or max_leaves < 2:
            raise ValueError(f"max_leaves must be an integer >= 2, got {max_leaves!r}")
        check_choice("criterion", criterion, ["squared_error", "absolute_error"])
        self.max_leaves = int(max_leaves)
        self.model = DecisionTreeRegressor(max_leaf_nodes=self.max_leaves, criterion=criterion,
                                           random_state=seed)
        self._cast = (None, None)

    def _float32(self, X):
        """X as float32, remembered for a read-only X only (`cache_key`)."""
        if self._cast[0] is not X or X is None:
            self._cast = (cache_key(X), np.ascontiguousarray(X, dtype=np.float32))
        return self._cast[1]

    def fit(self, X, y, sample_weight=None):
        y = np.ascontiguousarray(y, dtype=np.float64)
        if sample_weight is not None:
            sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        self.model.fit(self._float32(X), y, sample_weight=sample_weight, check_input=False)
        return self

    def predict(self, X):
        return self.model.predict(self._float32(X), check_input=False)

    def complexity(self) -> int:
        return int(self.model.tree_.n_leaves)


class PartitionTree(Regressor):
    """Recursive partitioning: split a node (on the split that most reduces squared error) while its
    average error — the weighted mean absolute deviation from its mean — exceeds `threshold`.

    The split search is vectorized over all features of a node at once.
    """

    def __init__(self, threshold: float = 0.01, min_samples_leaf: int = 1, max_depth: int = 32):
        if not threshold >= 0:
            raise ValueError(f"threshold must be >= 0, got {threshold!r}")
        if min_samples_leaf < 1 or max_depth < 0:
            raise ValueError(f"min_samples_leaf must be >= 1 and max_depth >= 0, got "
                             f"{min_samples_leaf}, {max_depth}")
        self.threshold, self.min_samples_leaf, self.max_depth = float(threshold), int(min_samples_leaf), int(max_depth)
        self.feature = self.cut = self.value = self.right = np.zeros(0)

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
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
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
        self.feature, self.cut, self.value = np.array(feature), np.array(cut), np.array(value)
        self.right = self._right_children()
        return self

    def _right_children(self) -> np.ndarray:
        """Depth-first ids: a node's right child follows its whole left subtree."""
        n = len(self.value)
        size = np.ones(n, dtype=np.int64)
        for node in range(n - 1, -1, -1):
            if self.feature[node] >= 0:
                size[node] = 1 + size[node + 1] + size[node + 1 + size[node + 1]]
        return np.where(self.feature >= 0, np.arange(n) + 1 + size[np.minimum(np.arange(n) + 1, n - 1)], -1)

    def predict(self, X):
        X = np.asarray(X, dtype=np.float64)
        node = np.zeros(len(X), dtype=np.int64)
        rows = np.arange(len(X))
        while True:
            inner = self.feature[node] >= 0
            if not inner.any():
                return self.value[node]
            r, n = rows[inner], node[inner]
            node[inner] = np.where(X[r, self.feature[n]] <= self.cut[n], n + 1, self.right[n])

    def complexity(self) -> int:
        return int(np.count_nonzero(self.feature < 0))
