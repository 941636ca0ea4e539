"""The row reservoir's merge of equal feature rows (`rcfr.solvers.targets.row_targets`): the compiled grouping gives
exactly numpy's `np.unique(rows, axis=0, return_inverse=True)` (the rows in lexicographic order, each example's
group), so a fit sees the same training rows in the same order; property-tested on rows with many duplicates and
long shared prefixes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rcfr.solvers.targets import _distinct_rows, row_targets

# few distinct values, so rows repeat and share prefixes; -0.0 and 0.0 are one value, as numpy compares them
VALUES = st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, 1e-300])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.integers(1, 6).flatmap(
    lambda w: arrays(np.float64, (n, w), elements=VALUES))))
def test_the_compiled_grouping_is_numpys(rows):
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    first, groups = _distinct_rows(rows)
    assert np.array_equal(rows[first], distinct)
    assert np.array_equal(groups, inverse.ravel())


def test_the_targets_are_iteration_weighted_means_of_equal_rows():
    rows = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.5]])
    regret, iteration = np.array([2.0, -1.0, 4.0, 3.0]), np.array([1, 2, 3, 4])
    x, y, w = row_targets(rows, regret, iteration, 1.0)
    assert x.tolist() == [[0.0, 0.5], [0.0, 1.0], [1.0, 0.0]]
    assert y.tolist() == [3.0, -1.0, (1 * 2.0 + 3 * 4.0) / 4]
    assert np.allclose(w, np.array([4.0, 2.0, 4.0]) * 3 / 10)
    # control: unequal rows are never merged
    assert len(row_targets(rows + np.arange(4)[:, None], regret, iteration, 1.0)[0]) == 4


def _bootstrapped(selection=None, **options):
    import rcfr
    from rcfr.solvers import SampledRCFRPlus
    game = rcfr.load_game("leduc", compiled=False)
    return SampledRCFRPlus(game, features_on_demand=True, features="poker", profile="model", targets="bootstrap",
                           average="mixture", snapshots=2, capacity=60, refit_every=4, seed=3,
                           regressor={"name": "best_first", "max_leaves": 4}, selection=selection, **options)


def test_the_default_selection_follows_the_targets():
    """Bootstrapped rows (each carrying the model's history) keep the freshest; Deep CFR's sampled regrets
    (targets="rows") a uniform sample of all, whose mean is the average regret; stored sums the freshest."""
    from rcfr.options import SampledRCFROptions
    assert _bootstrapped().selection == "recent"
    assert SampledRCFROptions(targets="rows", features_on_demand=True, profile="model").selection == "uniform"
    assert SampledRCFROptions(features_on_demand=True).selection == "recent"


@pytest.mark.slow  # compiles the rules-path walk with models (as tests/test_model_state.py's runs, also slow)
def test_a_window_keeps_the_last_rows_written_and_a_reservoir_a_sample_of_all():
    window, reservoir = _bootstrapped("recent"), _bootstrapped("uniform")
    for solver in (window, reservoir):
        solver.run(30)
    for p in (0, 1):
        kept = window.kept[p].kept
        seen, capacity = int(kept.seen[0]), len(kept.value)
        assert seen > 3 * capacity  # the window has turned over
        order = (np.arange(capacity) + seen) % capacity  # oldest slot first
        assert np.all(np.diff(kept.t[order]) >= 0) and kept.t.max() == 30
        assert kept.t.min() >= 20  # the last few iterations' rows, nothing older
        # control: the reservoir still holds rows of the first iterations
        assert reservoir.kept[p].kept.t.min() < 10


@pytest.mark.slow
def test_a_checkpoint_without_the_window_flag_is_refused():
    """Bootstrapped rows were a uniform sample before windows: such a checkpoint must not resume as a window."""
    solver = _bootstrapped()
    solver.run(8)
    state = {k: v for k, v in solver.state_dict().items() if not k.endswith("recent")}
    with pytest.raises(ValueError, match="recent"):
        _bootstrapped().load_state_dict(state)
    other = _bootstrapped()
    other.load_state_dict(solver.state_dict())
    assert other.iteration == 8


# ---- rows walked elsewhere, merged in (`RowTargets.absorb`: the sharded bounded form) -------------------------
def _kept(capacity, recent, seed=0):
    from rcfr.solvers.model_strategies import row_reservoir
    from rcfr.solvers.targets import RowTargets
    return RowTargets(row_reservoir(capacity, 1, seed, 1, recent=recent))


def _offer(targets, ids, rng):
    """One process's writes (`model_strategies._keep_rows`): a window's ring, or Algorithm R; the row is the id."""
    k = targets.kept
    capacity = len(k.value)
    for i in ids:
        seen = int(k.seen[0])
        j = seen % capacity if k.recent[0] else seen if seen < capacity else int(rng.integers(seen + 1))
        k.seen[0] = seen + 1
        if j < capacity:
            k.rows[j, 0], k.value[j], k.t[j] = i, -i, i // 7


def _merged(capacity, recent, before, parts, seed):
    """`before` ids offered here, then each part's ids walked by a shard of its own and absorbed."""
    rng = np.random.default_rng(seed)
    learner = _kept(capacity, recent)
    _offer(learner, np.arange(before), rng)
    held, start = [], before
    for n in parts:
        shard = _kept(capacity, recent)
        _offer(shard, np.arange(start, start + n), rng)
        held.append(shard.held())
        start += n
    learner.absorb(held, rng)
    return learner


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 12), st.integers(0, 30), st.lists(st.integers(0, 30), max_size=4))
def test_a_window_absorbs_shards_as_if_their_rows_were_written_here(capacity, before, parts):
    merged = _merged(capacity, True, before, parts, 0)
    straight = _kept(capacity, True)
    _offer(straight, np.arange(before + sum(parts)), None)
    for name in ("rows", "value", "t", "seen"):
        assert np.array_equal(getattr(merged.kept, name), getattr(straight.kept, name)), name


def _inclusion(merge, capacity=10, before=25, parts=(40, 15), runs=3000):
    """How often each of the ids offered ends up held, over `runs` merges with their own draws."""
    total = before + sum(parts)
    counts = np.zeros(total)
    for seed in range(runs):
        held = merge(capacity, False, before, list(parts), seed)
        assert int(held.kept.seen[0]) == total and len(np.unique(held.kept.rows[:, 0])) == capacity
        counts[held.kept.rows[:, 0].astype(int)] += 1
        assert np.array_equal(held.kept.value, -held.kept.rows[:, 0])  # the row's target came with it
    return counts / runs


def test_a_reservoir_absorbs_shards_into_a_uniform_sample_of_every_row_offered():
    """Unbiasedness of the merge: each id is held with probability capacity / offered (Algorithm R's in one
    process), within 5 binomial standard errors; negative control: a merge that keeps its own rows first and
    fills up with the shards' in order (what appending to a full reservoir would do) is far from uniform."""
    p = 10 / 80
    bound = lambda runs: 5 * np.sqrt(p * (1 - p) / runs)  # noqa: E731
    assert np.abs(_inclusion(_merged) - p).max() < bound(3000)

    def first_come(capacity, recent, before, parts, seed):
        merged = _merged(capacity, recent, before, parts, seed)
        learner = _kept(capacity, recent)
        _offer(learner, np.arange(before), np.random.default_rng(seed))
        learner.kept.seen[0] = merged.kept.seen[0]
        return learner

    assert np.abs(_inclusion(first_come, runs=300) - p).max() > bound(300)  # fails the check the merge passes


def test_a_reservoir_that_is_not_full_keeps_every_row_in_the_order_offered():
    merged = _merged(50, False, 7, [5, 0, 9], 1)
    assert int(merged.kept.seen[0]) == 21 and merged.kept.rows[:21, 0].tolist() == list(range(21))
    assert not merged.kept.rows[21:].any()
