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
