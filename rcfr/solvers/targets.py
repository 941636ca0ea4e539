"""Regression targets for learned regret estimation (Morrill 2016, Algorithms 1 and 2).

* ``stored``: keep the exact cumulative regrets R_t (``regret_matching="rm"``, RCFR) or Q-regrets
  Q_t = max(Q_{t-1} + r_t, 0) (``"rm+"``, RCFR+) and train on R_t / t;
* ``bootstrap``: keep nothing but the regressor; train on (R~_{t-1} + r_t) / t, where
  R~_{t-1} = (t-1) x the previous prediction, clipped at zero under ``"rm+"``.

With refits every k iterations, the bootstrapped sum holds the regrets since the last fit.

`ReservoirTargets` (sampled RCFR): a reservoir of (sequence, sampled regret, iteration) examples
(Deep CFR); the targets are each sequence's iteration-weighted mean sampled regret, with the summed
iteration weights as example weights.

`StoredSums` (on-demand sampled RCFR): stored targets whose fit sees a bounded training set.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..options import REGRET_MATCHING, SELECTIONS, TARGETS, check_choice
from ..sampling.reservoir import Reservoir


class RegretTargets:
    """Targets for one block of examples (one player's sequences, or one learner's actions)."""

    def __init__(self, size: int, regret_matching: str, targets: str):
        self.regret_matching = check_choice("regret_matching", regret_matching, REGRET_MATCHING)
        self.kind = check_choice("targets", targets, TARGETS)  # the `targets` option (the method is `targets`)
        self.total = np.zeros(size)  # stored: R_t or Q_t; bootstrap: regrets since the last fit
        self.estimate = np.zeros(size)  # the regressor's cumulative estimate (t of its targets x prediction)
        self.value = np.zeros(size)  # the latest targets
        self.t = 0  # iteration of the latest targets
        self.weights = None  # example weights of the latest targets (None: all equal)

    def add(self, regrets: np.ndarray, t: int = 0, visited: np.ndarray | None = None) -> None:
        """Add iteration `t`'s (sampled) regrets; unvisited sequences count as zero samples here."""
        self.total += regrets
        if self.regret_matching == "rm+" and self.kind == "stored":
            np.maximum(self.total, 0.0, out=self.total)

    def targets(self, t: int) -> np.ndarray:
        if self.kind == "stored":
            np.divide(self.total, t, out=self.value)
        else:
            np.add(self.estimate, self.total, out=self.value)
            self.value /= t
            if self.regret_matching == "rm+":
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


class ReservoirTargets(RegretTargets):
    """Targets from a reservoir of sampled regrets of visited sequences (no "rm+" variant: Q-regrets need
    per-sequence sums). Example (s, r, t) has weight t ** power (1: linear, as in Deep CFR); the
    targets are the weighted mean r per sequence and the example weights their summed weights
    (normalized to mean 1 over sequences with examples, zero elsewhere). For a squared-error regressor
    fitting these is the same as fitting the examples themselves."""

    def __init__(self, size: int, capacity: int, seed: int, power: float):
        super().__init__(size, "rm", "stored")
        self.kind, self.power = "reservoir", float(power)
        self.buffer = Reservoir(capacity, seed)
        self.weights = np.zeros(size)

    def add(self, regrets: np.ndarray, t: int = 0, visited: np.ndarray | None = None) -> None:
        items = np.arange(len(regrets)) if visited is None else np.flatnonzero(visited)
        self.buffer.add(items, regrets[items], t)

    def targets(self, t: int) -> np.ndarray:
        sequence, value, weight = reservoir_targets(*self.buffer.examples(), self.power)
        self.value[:], self.weights[:] = 0.0, 0.0
        self.value[sequence], self.weights[sequence] = value, weight
        self.t = t
        return self.value

    def state_dict(self, prefix: str) -> dict[str, np.ndarray]:
        state = super().state_dict(prefix)
        state[f"{prefix}weights"] = self.weights.copy()
        state.update(self.buffer.state_dict(f"{prefix}buffer."))
        return state

    def load_state_dict(self, state: dict[str, np.ndarray], prefix: str) -> None:
        super().load_state_dict(state, prefix)
        self.weights[:] = state[f"{prefix}weights"]
        self.buffer.load_state_dict(state, f"{prefix}buffer.")


def reservoir_targets(sequence: np.ndarray, regret: np.ndarray, iteration: np.ndarray,
                      power: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sequences, targets, weights) of a reservoir's examples (s, r, t) of weight t ** power: each distinct
    sequence with a positive summed weight, its weighted mean r, and its summed weight normalized to mean 1.
    Sized by the buffer, never by the game (on-demand sampled RCFR fits these rows only)."""
    w = iteration.astype(np.float64) ** power
    sequences, inverse = np.unique(sequence, return_inverse=True)
    totals = np.bincount(inverse, w, minlength=len(sequences))
    sums = np.bincount(inverse, w * regret, minlength=len(sequences))
    present = totals > 0
    sequences, totals, sums = sequences[present], totals[present], sums[present]
    weights = totals * (len(totals) / totals.sum()) if len(totals) else totals
    return sequences, sums / totals, weights


def row_targets(rows: np.ndarray, regret: np.ndarray, iteration: np.ndarray,
                power: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, targets, weights) of a reservoir of feature-row examples (x, r, t) of weight t ** power:
    `reservoir_targets` keyed by the row itself instead of a sequence id (equal rows are one training row)."""
    if len(rows) == 0:
        return rows, regret, regret
    first, inverse = _distinct_rows(np.ascontiguousarray(rows, np.float64))
    distinct = rows[first]
    w = iteration.astype(np.float64) ** power
    totals = np.bincount(inverse, w, minlength=len(distinct))
    sums = np.bincount(inverse, w * regret, minlength=len(distinct))
    present = totals > 0
    distinct, totals, sums = distinct[present], totals[present], sums[present]
    weights = totals * (len(totals) / totals.sum()) if len(totals) else totals
    return np.ascontiguousarray(distinct), sums / totals, weights


@njit(cache=True)
def _compare_rows(rows, i, j):
    """-1, 0 or 1 as row i is before, equal to or after row j in lexicographic order (by value: -0.0 == 0.0)."""
    for c in range(rows.shape[1]):
        a, b = rows[i, c], rows[j, c]
        if a < b:
            return -1
        if a > b:
            return 1
    return 0


@njit(cache=True)
def _distinct_rows(rows):
    """(first, inverse): the index of one row of each distinct row, in lexicographic order, and each row's group,
    what ``np.unique(rows, axis=0, return_inverse=True)`` gives. A merge sort of row indices comparing rows in
    place, because np.unique sorts each row as one structured value, which was half of a refit (docs/large_rcfr.md,
    "The cost of a bounded iteration")."""
    n = rows.shape[0]
    order = np.arange(n)
    spare = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                if i < mid and (j >= hi or _compare_rows(rows, order[j], order[i]) >= 0):
                    spare[k] = order[i]
                    i += 1
                else:
                    spare[k] = order[j]
                    j += 1
        order, spare = spare, order
        width *= 2
    first = np.empty(n, np.int64)
    inverse = np.empty(n, np.int64)
    groups = 0
    for k in range(n):
        if k == 0 or _compare_rows(rows, order[k - 1], order[k]) != 0:
            first[groups] = order[k]
            groups += 1
        inverse[order[k]] = groups - 1
    return first[:groups], inverse


class RowTargets:
    """targets="rows": a player's `RowReservoir` (`rcfr.solvers.model_strategies`), which the walk fills with the
    traverser's feature rows and sampled regrets; no state or sum per set. Checkpoints hold its arrays."""

    # (scale, now, bootstrap, player: set from the options and run; ``recent`` too, but saved so that a checkpoint
    # from before windows existed, whose bootstrapped rows were a uniform sample, is refused rather than resumed)
    FIELDS = ("rows", "value", "t", "seen", "rng", "recent")

    def __init__(self, kept):
        self.kept = kept

    def add(self, sequences: np.ndarray, regrets: np.ndarray, t: int) -> None:
        """Nothing: the walk wrote this iteration's examples already."""

    def examples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The examples held: (rows, sampled regrets, iterations)."""
        n = min(int(self.kept.seen[0]), len(self.kept.value))
        return self.kept.rows[:n], self.kept.value[:n], self.kept.t[:n]

    def held(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """(rows, sampled regrets, iterations, examples offered in all): what a shard's walks left (the examples held,
        oldest first in a window)."""
        k = self.kept
        seen, capacity = int(k.seen[0]), len(k.value)
        order = (seen + np.arange(capacity)) % capacity if k.recent[0] and seen > capacity else np.arange(min(seen, capacity))
        return k.rows[order], k.value[order], k.t[order], seen

    def absorb(self, parts: list[tuple], rng: np.random.Generator) -> None:
        """Add the examples that walks elsewhere offered (each part a shard's `held`, in shard order) as if they were
        offered here after those already offered. A window puts each part's rows in the slots its last rows would
        have taken. A uniform reservoir becomes a uniform sample of every example offered, here and in the parts
        (each part's rows are a uniform sample of its own): how many come from each is one multivariate
        hypergeometric draw from `rng`, then a uniform choice within each."""
        k = self.kept
        capacity = len(k.value)
        if capacity == 0:
            return
        if k.recent[0]:
            for rows, value, t, offered in parts:
                slots = (int(k.seen[0]) + offered - len(value) + np.arange(len(value))) % capacity
                k.rows[slots], k.value[slots], k.t[slots] = rows, value, t
                k.seen[0] += offered
            return
        here = self.held()
        groups = [here, *parts]
        total = sum(int(offered) for *_, offered in groups)
        if total <= capacity:  # every example fits: kept in the order offered, as Algorithm R fills its slots
            picks = [np.arange(len(value)) for _, value, _, _ in groups]
        else:
            counts = rng.multivariate_hypergeometric([int(offered) for *_, offered in groups], capacity)
            picks = [np.sort(rng.choice(len(value), int(m), replace=False)) for (_, value, _, _), m in zip(groups, counts)]
        rows = np.concatenate([g[0][p] for g, p in zip(groups, picks)])
        value = np.concatenate([g[1][p] for g, p in zip(groups, picks)])
        t = np.concatenate([g[2][p] for g, p in zip(groups, picks)])
        n = len(value)
        k.rows[:n], k.value[:n], k.t[:n] = rows, value, t
        k.seen[0] = total

    def state_dict(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}{name}": getattr(self.kept, name).copy() for name in self.FIELDS}

    def load_state_dict(self, state: dict[str, np.ndarray], prefix: str) -> None:
        for name in self.FIELDS:
            value, target = np.asarray(state[f"{prefix}{name}"]), getattr(self.kept, name)
            if value.shape != target.shape:
                raise ValueError(f"checkpoint field {prefix}{name!r} has shape {value.shape}, expected {target.shape}")
            target[...] = value


class StoredSums:
    """Stored targets of one player's sequences for a fit of at most `capacity` examples.

    Per sequence: the sum of its sampled regrets (under "rm+", the Q-regret sum clipped at zero, as
    `RegretTargets`' stored targets) and the iteration that last wrote it (0: never, so it has no target),
    12 bytes a sequence. A fit trains on sum / t of the sequences with a target, all of them when they
    are at most `capacity`, else a choice by `selection`: ``"recent"`` (the most recently written, ties
    drawn uniformly: the sequences the current profile reaches, whose targets are freshest) or ``"uniform"``
    (a uniform sample without replacement; much worse on Goofspiel(5), docs/large_rcfr.md). The draws come
    from (seed, t) alone, so they need no saved state and a resumed run draws the same."""

    def __init__(self, size: int, regret_matching: str, capacity: int, selection: str, seed: int):
        self.regret_matching = check_choice("regret_matching", regret_matching, REGRET_MATCHING)
        self.capacity, self.seed = int(capacity), int(seed)
        self.selection = check_choice("selection", selection, SELECTIONS)
        self.total = np.zeros(size)  # R_t or Q_t of the sequences written so far
        self.written = np.zeros(size, np.int32)  # iteration of the latest write, 0 for never

    def add(self, sequences: np.ndarray, regrets: np.ndarray, t: int) -> None:
        """Iteration t's sampled regrets of the sequences a traversal wrote (sorted, distinct)."""
        total = self.total[sequences] + regrets
        self.total[sequences] = np.maximum(total, 0.0) if self.regret_matching == "rm+" else total
        self.written[sequences] = t

    def resize(self, size: int) -> None:
        """Room for `size` sequences (a game walked by its rules numbers them as met); what is held stays."""
        for name in ("total", "written"):
            old = getattr(self, name)
            new = np.zeros(size, old.dtype)
            new[:min(size, len(old))] = old[:size]
            setattr(self, name, new)

    def targets(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sequences, targets, weights) of iteration t's fit: sorted sequences, sum / t, ones."""
        have = np.flatnonzero(self.written)
        if len(have) > self.capacity:
            rng = np.random.default_rng([self.seed, t])
            if self.selection == "uniform":
                have = rng.choice(have, self.capacity, replace=False)
            else:
                when = self.written[have]
                cut = np.partition(when, len(when) - self.capacity)[len(when) - self.capacity]
                newer, tied = have[when > cut], have[when == cut]
                have = np.concatenate([newer, rng.choice(tied, self.capacity - len(newer), replace=False)])
            have.sort()
        return have, self.total[have] / t, np.ones(len(have))

    def state_dict(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}total": self.total.copy(), f"{prefix}written": self.written.copy()}

    def load_state_dict(self, state: dict[str, np.ndarray], prefix: str) -> None:
        for name in ("total", "written"):
            value, target = np.asarray(state[f"{prefix}{name}"]), getattr(self, name)
            if value.shape != target.shape:
                raise ValueError(f"checkpoint field {prefix}{name!r} has shape {value.shape}, expected {target.shape}")
            target[:] = value


@njit(cache=True)
def collect_sampled(first_seq, num_actions, tally, traversals):
    """The sorted sequences of the sets listed in `tally` and their mean sampled regrets over `traversals`;
    clears the tally."""
    sums, _, visits, listed, count = tally
    sets = np.sort(listed[:count[0]])
    total = 0
    for J in sets:
        total += num_actions[J]
    sequences = np.empty(total, np.int64)
    values = np.empty(total)
    i = 0
    for J in sets:
        for s in range(first_seq[J], first_seq[J] + num_actions[J]):
            sequences[i] = s
            values[i] = sums[s] / traversals
            sums[s] = 0.0
            visits[s] = 0
            i += 1
    count[0] = 0
    return sequences, values
