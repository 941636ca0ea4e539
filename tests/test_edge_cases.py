"""Edge cases: exact MLP resume, tree split thresholds, stale caches on writable
inputs, indicator features' size limit, regression stores under card abstractions."""

import re

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from rcfr.regressors import MLP, make_regressor
from rcfr.solvers import make_solver

MLP_SPEC = {"name": "mlp", "hidden": [8], "epochs": 3, "batch_size": 4, "random_state": 3}


def _state_copy(solver):
    return {k: np.array(v, copy=True) for k, v in solver.state_dict().items()}


@pytest.mark.parametrize("name,options", [
    ("rcfr", {}),
    ("rcfr+", {"targets": "bootstrap"}),
    ("rcfr", {"shared": True}),
    ("rcfr+", {"refit_every": 3}),
    ("sampled-rcfr", {"seed": 4}),
    ("sampled-rcfr", {"seed": 4, "targets": "reservoir"}),
])
def test_mlp_resume_is_bit_exact(kuhn, name, options):
    """Stopped at iteration 8 and resumed in a fresh solver == an uninterrupted run, bit for bit."""
    options = dict(options, regressor=MLP_SPEC, features="generic")
    straight = make_solver(name, kuhn, **options).run(14)
    first = make_solver(name, kuhn, **options).run(8)
    state = _state_copy(first)
    resumed = make_solver(name, kuhn, **options)
    resumed.load_state_dict(state)
    resumed.run(6)
    assert np.array_equal(resumed.current_policy().probs, straight.current_policy().probs)
    assert np.array_equal(resumed.average_policy().probs, straight.average_policy().probs)


def test_mlp_state_round_trips_weights_optimizer_and_rng():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    a = MLP(hidden=(5,), epochs=2, batch_size=6, random_state=0).fit(X, y)
    b = MLP(hidden=(5,), epochs=2, batch_size=6)
    b.load_state_dict({k: v.copy() for k, v in a.state_dict().items()})
    assert np.array_equal(a.predict(X), b.predict(X))
    a.fit(X, y + 1)
    b.fit(X, y + 1)
    assert np.array_equal(a.predict(X), b.predict(X))
    # a test that can fail: without the state, a fresh regressor's second fit differs
    c = MLP(hidden=(5,), epochs=2, batch_size=6, random_state=0).fit(X, y + 1)
    assert not np.array_equal(a.predict(X), c.predict(X))
    # an unfitted regressor's state restores an unfitted regressor
    d = MLP(hidden=(5,), random_state=0).fit(X, y)
    d.load_state_dict(MLP(hidden=(5,)).state_dict())
    with pytest.raises(NotFittedError):
        d.predict(X)


# ---- split thresholds between adjacent floats ------------------------------------------------------
EPS = np.finfo(float).eps
ADJACENT_X = np.array([[1 + EPS], [1 + 2 * EPS], [1 + 2 * EPS], [5.0]])
ADJACENT_Y = np.array([0.0, 1.0, 1.0, 3.0])


def _read_only(X):
    X = np.array(X, dtype=np.float64)
    X.setflags(write=False)
    return X


@pytest.mark.parametrize("spec", [{"name": "best_first", "max_leaves": 3},
                                  {"name": "recursive", "threshold": 0.0}])
def test_adjacent_float_split_separates_the_values(spec):
    """The midpoint of adjacent floats rounds up to the larger one; the cut must stay below it."""
    model = make_regressor(spec).fit(_read_only(ADJACENT_X), ADJACENT_Y)
    assert np.array_equal(model.predict(ADJACENT_X.copy()), ADJACENT_Y)
    assert np.array_equal(model.predict(_read_only(ADJACENT_X)), ADJACENT_Y)


def test_best_first_cached_leaves_agree_with_predict():
    X = _read_only(ADJACENT_X)
    model = make_regressor({"name": "best_first", "max_leaves": 3}).fit(X, ADJACENT_Y)
    assert np.array_equal(model.predict(X), model.predict(X.copy()))


def test_best_first_on_constant_inputs_is_one_leaf():
    """No non-constant column used to index past the kernels' empty sort orders (a crash)."""
    for X in (_read_only(np.ones((4, 2))), np.ones((4, 2))):
        model = make_regressor("best_first", max_leaves=4).fit(X, np.arange(4.0))
        assert np.array_equal(model.predict(X), np.full(4, 1.5)) and model.size() == 1
    with pytest.raises(ValueError, match="0 feature"):  # no columns at all: scikit-learn's input check
        make_regressor("best_first").fit(np.ones((4, 0)), np.arange(4.0))


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None

if given is not None:
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.floats(-5, 5)), min_size=2, max_size=25),
           st.integers(2, 8))
    def test_tree_leaves_are_the_means_of_the_rows_predict_routes_there(rows, leaves):
        """On near-adjacent floats: cached predictions equal fresh ones, and each predicted value is
        the mean target of the rows predicted with it (the partition and the leaf values agree)."""
        base = np.array([1.0, 1 + EPS, 1 + 2 * EPS, 1 + 3 * EPS])
        X = _read_only([[base[a], base[b] * 3] for a, b, _ in rows])
        y = np.array([v for _, _, v in rows])
        for model in (make_regressor("best_first", max_leaves=leaves), make_regressor("recursive", threshold=0.0)):
            model.fit(X, y)
            cached, fresh = model.predict(X), model.predict(X.copy())
            assert np.array_equal(cached, fresh)
            for value in np.unique(fresh):
                assert np.isclose(y[fresh == value].mean(), value, rtol=1e-9, atol=1e-9)


# ---- caches keyed by array identity ------------------------------------------------------------------
@pytest.mark.parametrize("spec", [{"name": "tree", "max_leaves": 4}, {"name": "best_first", "max_leaves": 4},
                                  {"name": "mlp", "hidden": [4], "epochs": 2}, {"name": "table"},
                                  {"name": "recursive"}, {"name": "linear"}])
def test_writable_input_changed_in_place_is_not_served_from_a_cache(spec):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(12, 3)), rng.normal(size=12)
    model = make_regressor(spec).fit(X, y)
    model.predict(X)
    X[:] = rng.normal(size=X.shape) * 10
    assert np.array_equal(model.predict(X), model.predict(X.copy()))


@pytest.mark.parametrize("spec", [{"name": "tree", "max_leaves": 4}, {"name": "best_first", "max_leaves": 4},
                                  {"name": "mlp", "hidden": [4], "epochs": 2}])
def test_a_read_only_view_of_a_writable_array_is_not_served_from_a_cache(spec):
    """Read-only inputs key caches by identity; a read-only view changes with its writable base."""
    rng = np.random.default_rng(1)
    base = rng.normal(size=(12, 3))
    X = base.view()
    X.setflags(write=False)
    model = make_regressor(spec).fit(X, rng.normal(size=12))
    model.predict(X)
    base[:] = rng.normal(size=base.shape) * 10
    assert np.array_equal(model.predict(X), model.predict(X.copy()))


def test_only_arrays_nothing_writable_shares_key_caches(kuhn):
    from rcfr.features import feature_matrix
    from rcfr.regressors.base import cache_key
    owned = _read_only(np.ones((3, 2)))
    assert cache_key(owned) is owned and cache_key(owned[1:]) is not None
    assert cache_key(np.ones(3)) is None and cache_key(np.ones(3).view()) is None
    view = np.ones((3, 2)).view()
    view.setflags(write=False)
    assert cache_key(view) is None
    # the solvers' feature rows stay cacheable
    for name in ("poker", "generic", "indicator"):
        rows = feature_matrix(kuhn, name).player_rows(kuhn, 1)
        assert cache_key(rows) is rows, name


# ---- indicator features' size ------------------------------------------------------------------------
def test_indicator_features_refuse_a_huge_dense_matrix_before_allocating():
    from types import SimpleNamespace

    from rcfr.features import indicator
    liars_dice = SimpleNamespace(name="liars_dice", num_sequences=49_140)  # 19 GB dense
    with pytest.raises(ValueError, match=r"49140 x 49140 .*18\.0 GiB.*'generic'"):
        indicator.extract(liars_dice)


def test_indicator_features_still_build_for_small_games(kuhn):
    from rcfr.features import feature_matrix
    assert np.array_equal(feature_matrix(kuhn, "indicator").matrix, np.eye(kuhn.num_sequences))


# ---- card abstractions with regression solvers, and on non-poker games ------------------------------
@pytest.mark.parametrize("name", ["rcfr", "rcfr+", "sampled-rcfr"])
def test_card_abstractions_reject_solvers_without_a_tabular_store(leduc, name):
    from rcfr.abstraction import abstract_solver, make_abstraction
    with pytest.raises(ValueError, match=rf"'{re.escape(name)}' cannot run on a card abstraction; solvers that can: "
                                         r"cfr, cfr\+, lcfr, dcfr"):
        abstract_solver(name, leduc, make_abstraction(leduc, "J.QK"))
    assert abstract_solver("cfr+", leduc, make_abstraction(leduc, "J.QK")).run(2).iteration == 2


def test_card_abstraction_on_a_non_poker_game_says_it_needs_poker():
    import rcfr
    from rcfr.abstraction import make_abstraction
    dice = rcfr.load_game("dieroll")
    with pytest.raises(ValueError, match=r"'JQ\.K': card abstractions need a poker game.*'dieroll'"):
        make_abstraction(dice, "JQ.K")
    assert make_abstraction(dice, "identity").num_sequences > 0
