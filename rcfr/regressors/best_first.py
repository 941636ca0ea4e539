"""A best-first regression tree compiled with numba, for refitting on the same rows every iteration.

RCFR refits on one fixed feature matrix with new targets each iteration, so the per-feature sort
orders are computed once and kept. Each node owns a contiguous segment of every feature's sorted
index array; a split stably partitions the segments, so finding the best splits of both children
costs O(node size x features) with no sorting. The leaf with the largest squared-error reduction
is split next until `max_leaves` (scikit-learn's best-first growth under ``max_leaf_nodes``).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .base import cache_key, fit_inputs, predict_input


@njit(cache=True)
def _midpoint(a, b):
    """A cut with a <= cut < b: (a + b) / 2 can round up to b for adjacent floats (then use a)."""
    c = a + (b - a) / 2.0
    return a if c >= b else c


@njit(cache=True)
def _segment_sums(y, w, order, start, end):
    """(sum of w, sum of w * y) over segment [start, end) of the sorted order."""
    tw = 0.0
    twy = 0.0
    for k in range(start, end):
        i = order[0, k]
        tw += w[i]
        twy += w[i] * y[i]
    return tw, twy


@njit(cache=True)
def _best_split(XT, y, w, order, start, end, min_leaf):
    """(gain, feature, threshold, left count) of the best split of segment [start, end)."""
    d = order.shape[0]
    tw, twy = _segment_sums(y, w, order, start, end)
    best_gain, best_f, best_cut, best_left = 0.0, -1, 0.0, 0
    if tw <= 0.0:
        return best_gain, best_f, best_cut, best_left
    base = twy * twy / tw
    for f in range(d):
        cw = 0.0
        cwy = 0.0
        for k in range(start, end - 1):
            i = order[f, k]
            cw += w[i]
            cwy += w[i] * y[i]
            left = k + 1 - start
            if left < min_leaf or end - start - left < min_leaf:
                continue
            a, b = XT[f, i], XT[f, order[f, k + 1]]
            if b <= a:
                continue
            rw = tw - cw
            if cw <= 0.0 or rw <= 0.0:
                continue
            gain = cwy * cwy / cw + (twy - cwy) * (twy - cwy) / rw - base
            if gain > best_gain * (1.0 + 1e-12) + 1e-300:
                best_gain, best_f, best_cut, best_left = gain, f, _midpoint(a, b), left
    return best_gain, best_f, best_cut, best_left


@njit(cache=True)
def _grow(XT, y, w, sorted_order, max_leaves, min_leaf):
    d, n = XT.shape
    order = sorted_order.copy()
    scratch = np.empty(n, dtype=order.dtype)
    goes_left = np.zeros(n, dtype=np.bool_)
    cap = 2 * max_leaves
    feature = np.full(cap, -1, dtype=np.int64)
    cut = np.zeros(cap)
    left_child = np.full(cap, -1, dtype=np.int64)
    right_child = np.full(cap, -1, dtype=np.int64)
    value = np.zeros(cap)
    seg_start = np.zeros(cap, dtype=np.int64)
    seg_end = np.zeros(cap, dtype=np.int64)
    gain = np.zeros(cap)
    split_f = np.full(cap, -1, dtype=np.int64)
    split_cut = np.zeros(cap)
    split_left = np.zeros(cap, dtype=np.int64)
    is_leaf = np.zeros(cap, dtype=np.bool_)
    nodes = 1
    seg_start[0], seg_end[0], is_leaf[0] = 0, n, True
    leaves = 1
    tw = 0.0
    twy = 0.0
    for i in range(n):
        tw += w[i]
        twy += w[i] * y[i]
    value[0] = twy / tw if tw > 0 else 0.0
    gain[0], split_f[0], split_cut[0], split_left[0] = _best_split(XT, y, w, order, 0, n, min_leaf)
    while leaves < max_leaves:
        best, best_gain = -1, 0.0
        for k in range(nodes):
            if is_leaf[k] and split_f[k] >= 0 and gain[k] > best_gain:
                best, best_gain = k, gain[k]
        if best < 0:
            break
        s, e, f, c = seg_start[best], seg_end[best], split_f[best], split_cut[best]
        mid = s  # the left child's size is what the cut sends left, as predict routes rows
        for k in range(s, e):
            i = order[0, k]
            goes_left[i] = XT[f, i] <= c
            mid += goes_left[i]
        for g in range(d):  # stable partition of every feature's segment
            lo, hi = s, 0
            for k in range(s, e):
                i = order[g, k]
                if goes_left[i]:
                    order[g, lo] = i
                    lo += 1
                else:
                    scratch[hi] = i
                    hi += 1
            for k in range(hi):
                order[g, lo + k] = scratch[k]
        feature[best], cut[best], is_leaf[best] = f, c, False
        for side in range(2):
            child = nodes + side
            cs = s if side == 0 else mid
            ce = mid if side == 0 else e
            seg_start[child], seg_end[child], is_leaf[child] = cs, ce, True
            cw, cwy = _segment_sums(y, w, order, cs, ce)
            value[child] = cwy / cw if cw > 0 else 0.0
            gain[child], split_f[child], split_cut[child], split_left[child] = _best_split(
                XT, y, w, order, cs, ce, min_leaf)
        left_child[best], right_child[best] = nodes, nodes + 1
        nodes += 2
        leaves += 1
    leaf_of = np.empty(n, dtype=np.int64)
    for k in range(nodes):
        if is_leaf[k]:
            for j in range(seg_start[k], seg_end[k]):
                leaf_of[order[0, j]] = k
    return feature[:nodes], cut[:nodes], left_child[:nodes], right_child[:nodes], value[:nodes], leaf_of


@njit(cache=True)
def _predict(X, feature, cut, left, right, value, out):
    for i in range(X.shape[0]):
        k = 0
        while feature[k] >= 0:
            k = left[k] if X[i, feature[k]] <= cut[k] else right[k]
        out[i] = value[k]
    return out


class BestFirstTree(RegressorMixin, BaseEstimator):
    """Best-first regression tree (squared error) with a leaf budget; sort orders cached per X.

    ``max_leaves`` may exceed the rows: a tree never has more leaves than rows, so buffers are sized
    by ``min(max_leaves, rows)``."""

    _parameter_constraints = {"max_leaves": [Interval(Integral, 2, None, closed="left")],
                              "min_samples_leaf": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, max_leaves: int = 64, min_samples_leaf: int = 1):
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf

    def _prepare(self, X):
        """Non-constant columns, transposed, with their sort orders (remembered for read-only X only: for
        any other X, keeping them would hold twice X's memory for nothing)."""
        cached = getattr(self, "_sorted", None)
        if cached is None or cached[0] is not X or X is None:
            columns = np.flatnonzero(np.ptp(X, axis=0) > 0) if len(X) else np.zeros(0, np.int64)
            # with no non-constant column, one constant row keeps the kernels' order[0] in bounds
            XT = np.ascontiguousarray(X[:, columns].T) if len(columns) else np.zeros((1, len(X)))
            order = np.ascontiguousarray(np.argsort(XT, axis=1, kind="stable"))
            cached = (cache_key(X), XT, order, columns)
            self._sorted = cached if cached[0] is not None else None
        return cached[1], cached[2], cached[3]

    def fit(self, X, y, sample_weight=None):
        X, y, w = fit_inputs(self, X, y, sample_weight)
        XT, order, columns = self._prepare(X)
        budget = min(int(self.max_leaves), max(len(y), 1))  # a tree has at most one leaf per row
        feature, self.threshold_, self.left_, self.right_, self.value_, self._leaf_of = _grow(
            XT, np.ascontiguousarray(y), np.ascontiguousarray(w), order, budget, int(self.min_samples_leaf))
        self.feature_ = np.where(feature >= 0, columns[np.maximum(feature, 0)] if len(columns) else -1, -1)
        self._fitted_on = cache_key(X)
        if self._fitted_on is None:
            self._leaf_of = None
        return self

    def predict(self, X):
        X = predict_input(self, X)
        if X is self._fitted_on and X is not None:
            return self.value_[self._leaf_of]
        X64 = np.ascontiguousarray(X)
        return _predict(X64, self.feature_, self.threshold_, self.left_, self.right_, self.value_,
                        np.empty(len(X64)))

    def size(self) -> int:
        """Leaves."""
        check_is_fitted(self)
        return int(np.count_nonzero(self.feature_ < 0))
