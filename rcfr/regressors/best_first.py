"""A best-first regression tree compiled with numba, for refitting on the same rows every iteration.

RCFR refits on one fixed feature matrix with new targets each iteration, so what the growth needs of the
matrix is computed once and kept. Each node owns a contiguous segment of the rows. The encoders' columns take
few values (the poker and dice encoders at most 13), so each column is ranked into bins once and a node's best
split comes from per-bin sums: one pass over its rows and a scan of the bins, and a split partitions one row
list (`_grow_binned`). A column of more than `BINS` values keeps the general form instead: a sort order per
column, each node a segment of every order, a split stably partitioning them all (`_grow`). Both consider the
same cuts (midway between two values present in the node) and break equal gains alike; their sums differ only
in the order of the additions. The leaf with the largest squared-error reduction is split next (a heap) until
`max_leaves` (scikit-learn's best-first growth under ``max_leaf_nodes``).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .base import cache_key, fit_inputs, predict_input

#: Columns with at most this many distinct values (every non-constant one) are ranked into uint8 bins and split
#: from per-bin sums (`_grow_binned`: the same candidate cuts, 2.5-7x faster on the poker and dice encoders' rows,
#: `benchmarks/speed/tree_fit.py`); wider columns use the per-column sort orders (`_grow`).
BINS = 256


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
def _above(gain, node, a, b):
    """Whether heap entry a comes before b: the larger gain, then the earlier node (the first of equal gains)."""
    return gain[a] > gain[b] or (gain[a] == gain[b] and node[a] < node[b])


@njit(cache=True)
def _push(gain, node, size, g, k):
    """Add leaf k of split gain g to the heap of `size` entries; returns the new size."""
    gain[size], node[size] = g, k
    j = size
    while j > 0 and _above(gain, node, j, (j - 1) // 2):
        up = (j - 1) // 2
        gain[j], gain[up], node[j], node[up] = gain[up], gain[j], node[up], node[j]
        j = up
    return size + 1


@njit(cache=True)
def _queue(heap_gain, heap_node, size, gain, split_f, k):
    """`_push` node k if it has a split that gains; returns the new size."""
    if split_f[k] >= 0 and gain[k] > 0.0:
        return _push(heap_gain, heap_node, size, gain[k], k)
    return size


@njit(cache=True)
def _pop(gain, node, size):
    """(the leaf of the largest gain, the new size): the leaf best-first growth splits next."""
    top = node[0]
    size -= 1
    gain[0], node[0] = gain[size], node[size]
    j = 0
    while True:
        a, b, best = 2 * j + 1, 2 * j + 2, j
        if a < size and _above(gain, node, a, best):
            best = a
        if b < size and _above(gain, node, b, best):
            best = b
        if best == j:
            return top, size
        gain[j], gain[best], node[j], node[best] = gain[best], gain[j], node[best], node[j]
        j = best


@njit(cache=True)
def _nodes(cap, n):
    """A growth's per-node arrays for `cap` nodes, node 0 (the root, a leaf) holding the n rows."""
    seg_start, seg_end, is_leaf = np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64), np.zeros(cap, np.bool_)
    seg_end[0], is_leaf[0] = n, True
    return (np.full(cap, -1, dtype=np.int64), np.zeros(cap), np.full(cap, -1, dtype=np.int64),
            np.full(cap, -1, dtype=np.int64), np.zeros(cap), seg_start, seg_end, np.zeros(cap),
            np.full(cap, -1, dtype=np.int64), np.zeros(cap), is_leaf)


@njit(cache=True)
def _leaf_of(is_leaf, seg_start, seg_end, rows):
    """Each row's leaf: the leaf whose segment of `rows` holds it."""
    leaf_of = np.empty(len(rows), dtype=np.int64)
    for k in range(len(is_leaf)):
        if is_leaf[k]:
            for j in range(seg_start[k], seg_end[k]):
                leaf_of[rows[j]] = k
    return leaf_of


@njit(cache=True)
def _grow(XT, sorted_order, y, w, max_leaves, min_leaf):
    d, n = XT.shape
    order = sorted_order.copy()
    scratch = np.empty(n, dtype=order.dtype)
    goes_left = np.zeros(n, dtype=np.bool_)
    cap = 2 * max_leaves
    feature, cut, left_child, right_child, value, seg_start, seg_end, gain, split_f, split_cut, is_leaf = _nodes(cap, n)
    split_left = np.zeros(cap, dtype=np.int64)
    nodes = 1
    leaves = 1
    tw = 0.0
    twy = 0.0
    for i in range(n):
        tw += w[i]
        twy += w[i] * y[i]
    value[0] = twy / tw if tw > 0 else 0.0
    gain[0], split_f[0], split_cut[0], split_left[0] = _best_split(XT, y, w, order, np.int64(0), n, min_leaf)
    heap_gain, heap_node = np.empty(cap), np.empty(cap, dtype=np.int64)
    queued = _queue(heap_gain, heap_node, np.int64(0), gain, split_f, np.int64(0))
    while leaves < max_leaves and queued:
        best, queued = _pop(heap_gain, heap_node, queued)
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
            queued = _queue(heap_gain, heap_node, queued, gain, split_f, child)
        left_child[best], right_child[best] = nodes, nodes + 1
        nodes += 2
        leaves += 1
    return (feature[:nodes], cut[:nodes], left_child[:nodes], right_child[:nodes], value[:nodes],
            _leaf_of(is_leaf[:nodes], seg_start, seg_end, order[0]))


@njit(cache=True)
def _node_split(bins, values, nbins, y, w, rows, start, end, min_leaf, hw, hwy, hn):
    """(sum of w, sum of w * y, gain, feature, threshold) of the best split of the rows ``rows[start:end]``, from
    per-bin sums: a cut between two values present in the node, as `_best_split` scans them."""
    d = bins.shape[1]
    hw[:] = 0.0
    hwy[:] = 0.0
    hn[:] = 0
    tw = 0.0
    twy = 0.0
    for k in range(start, end):
        i = rows[k]
        wi = w[i]
        wyi = wi * y[i]
        tw += wi
        twy += wyi
        for f in range(d):
            b = bins[i, f]
            hw[f, b] += wi
            hwy[f, b] += wyi
            hn[f, b] += 1
    best_gain, best_f, best_cut = 0.0, -1, 0.0
    if tw <= 0.0:
        return tw, twy, best_gain, best_f, best_cut
    base = twy * twy / tw
    size = end - start
    for f in range(d):
        cw = 0.0
        cwy = 0.0
        left = 0
        last = -1
        for b in range(nbins[f]):
            if hn[f, b] == 0:
                continue
            if last >= 0 and left >= min_leaf and size - left >= min_leaf:
                rw = tw - cw
                if cw > 0.0 and rw > 0.0:
                    gain = cwy * cwy / cw + (twy - cwy) * (twy - cwy) / rw - base
                    if gain > best_gain * (1.0 + 1e-12) + 1e-300:
                        best_gain, best_f, best_cut = gain, f, _midpoint(values[f, last], values[f, b])
            cw += hw[f, b]
            cwy += hwy[f, b]
            left += hn[f, b]
            last = b
    return tw, twy, best_gain, best_f, best_cut


@njit(cache=True)
def _grow_binned(bins, values, nbins, y, w, max_leaves, min_leaf):
    """`_grow` over columns of few values (``bins[i, f]`` indexes ``values[f]``, each column's sorted values):
    a node's splits come from per-bin sums, so a split partitions one row list instead of every column's order."""
    n, d = bins.shape
    width = values.shape[1]
    rows = np.arange(n)
    scratch = np.empty(n, dtype=np.int64)
    hw = np.empty((d, width))
    hwy = np.empty((d, width))
    hn = np.empty((d, width), dtype=np.int64)
    cap = 2 * max_leaves
    feature, cut, left_child, right_child, value, seg_start, seg_end, gain, split_f, split_cut, is_leaf = _nodes(cap, n)
    nodes = 1
    tw, twy, gain[0], split_f[0], split_cut[0] = _node_split(bins, values, nbins, y, w, rows, np.int64(0), n, min_leaf,
                                                             hw, hwy, hn)
    value[0] = twy / tw if tw > 0 else 0.0
    leaves = 1
    heap_gain, heap_node = np.empty(cap), np.empty(cap, dtype=np.int64)
    queued = _queue(heap_gain, heap_node, np.int64(0), gain, split_f, np.int64(0))
    while leaves < max_leaves and queued:
        best, queued = _pop(heap_gain, heap_node, queued)
        s, e, f, c = seg_start[best], seg_end[best], split_f[best], split_cut[best]
        lo, hi = s, 0
        for k in range(s, e):  # stable: each child's rows stay in increasing order
            i = rows[k]
            if values[f, bins[i, f]] <= c:
                rows[lo] = i
                lo += 1
            else:
                scratch[hi] = i
                hi += 1
        for k in range(hi):
            rows[lo + k] = scratch[k]
        feature[best], cut[best], is_leaf[best] = f, c, False
        for side in range(2):
            child = nodes + side
            cs = s if side == 0 else lo
            ce = lo if side == 0 else e
            seg_start[child], seg_end[child], is_leaf[child] = cs, ce, True
            cw, cwy, gain[child], split_f[child], split_cut[child] = _node_split(
                bins, values, nbins, y, w, rows, cs, ce, min_leaf, hw, hwy, hn)
            value[child] = cwy / cw if cw > 0 else 0.0
            queued = _queue(heap_gain, heap_node, queued, gain, split_f, child)
        left_child[best], right_child[best] = nodes, nodes + 1
        nodes += 2
        leaves += 1
    return (feature[:nodes], cut[:nodes], left_child[:nodes], right_child[:nodes], value[:nodes],
            _leaf_of(is_leaf[:nodes], seg_start, seg_end, rows))


@njit(cache=True)
def _predict(X, feature, cut, left, right, value, out):
    for i in range(X.shape[0]):
        k = 0
        while feature[k] >= 0:
            k = left[k] if X[i, feature[k]] <= cut[k] else right[k]
        out[i] = value[k]
    return out


@njit(cache=True)
def _rank(XT, most):
    """(bins, values, counts) of each column's values ranked (``values[f, :counts[f]]`` sorted, ``bins[i, f]``
    row i's rank in column f), or an empty ``bins`` as soon as a column has more than `most` distinct values."""
    d, n = XT.shape
    values = np.empty((d, most))
    counts = np.zeros(d, dtype=np.int64)
    for f in range(d):
        m = 0
        for i in range(n):
            x = XT[f, i]
            at = np.searchsorted(values[f, :m], x)
            if at < m and values[f, at] == x:
                continue
            if m == most:
                return np.empty((0, 0), dtype=np.uint8), values, counts
            values[f, at + 1:m + 1] = values[f, at:m].copy()
            values[f, at] = x
            m += 1
        counts[f] = m
    bins = np.empty((n, d), dtype=np.uint8)
    for f in range(d):
        bins[:, f] = np.searchsorted(values[f, :counts[f]], XT[f])
    return bins, np.ascontiguousarray(values[:, :max(counts.max(), 1)]), counts


class BestFirstTree(RegressorMixin, BaseEstimator):
    """Best-first regression tree (squared error) with a leaf budget; column ranks (or sort orders) cached per X.

    ``max_leaves`` may exceed the rows: a tree never has more leaves than rows, so buffers are sized
    by ``min(max_leaves, rows)``."""

    _parameter_constraints = {"max_leaves": [Interval(Integral, 2, None, closed="left")],
                              "min_samples_leaf": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, max_leaves: int = 64, min_samples_leaf: int = 1):
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf

    def _prepare(self, X):
        """The growth's inputs for X's non-constant columns, remembered for read-only X only (for any other X,
        keeping them would hold more than X's memory for nothing): each column's values ranked (`BINS` or fewer
        distinct values in every column: `_grow_binned`), else the columns transposed with their sort orders."""
        cached = getattr(self, "_sorted", None)
        if cached is None or cached[0] is not X or X is None:
            columns = np.flatnonzero(np.ptp(X, axis=0) > 0) if len(X) else np.zeros(0, np.int64)
            # with no non-constant column, one constant row keeps the kernels' order[0] in bounds
            XT = np.ascontiguousarray(X[:, columns].T) if len(columns) else np.zeros((1, len(X)))
            bins, values, counts = _rank(XT, BINS)
            if bins.size:
                inputs = ("binned", bins, values, counts)
            else:
                inputs = ("sorted", XT, np.ascontiguousarray(np.argsort(XT, axis=1, kind="stable")))
            cached = (cache_key(X), inputs, columns)
            self._sorted = cached if cached[0] is not None else None
        return cached[1], cached[2]

    def fit(self, X, y, sample_weight=None):
        X, y, w = fit_inputs(self, X, y, sample_weight)
        (kind, *inputs), columns = self._prepare(X)
        budget = min(int(self.max_leaves), max(len(y), 1))  # a tree has at most one leaf per row
        grow = _grow_binned if kind == "binned" else _grow
        feature, self.threshold_, self.left_, self.right_, self.value_, self._leaf_of = grow(
            *inputs, np.ascontiguousarray(y), np.ascontiguousarray(w), budget, int(self.min_samples_leaf))
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
