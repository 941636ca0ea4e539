"""Regressors: scikit-learn estimators (clone, checks, errors), the registry, sizes, exactness of the table,
the partition tree's threshold, the numba tree against scikit-learn's, and the MLP's weighted loss."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import Lasso
from sklearn.neighbors import KNeighborsRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

import rcfr
from rcfr.regressors import (
    MLP,
    REGRESSORS,
    BestFirstTree,
    ExactTable,
    PartitionTree,
    SklearnTree,
    best_first,
    make_regressor,
    size,
)
from rcfr.regressors.base import fit, predict

FAST = {"mlp": {"epochs": 200}}  # enough epochs for a from-scratch fit


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 2 * X[:, 2]  # a linear part, so every regressor can fit some
    return X, y


@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_every_regressor_fits_predicts_and_reports_its_size(name, data):
    X, y = data
    model = make_regressor(name, **FAST.get(name, {}))
    assert fit(model, X, y, np.ones(len(y))) is model
    prediction = predict(model, X)
    assert prediction.shape == y.shape and np.all(np.isfinite(prediction))
    assert np.mean((prediction - y) ** 2) < 0.5 * np.var(y), name  # linear: ~0.25 of the variance
    assert isinstance(size(model), int) and size(model) > 0


@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_every_regressor_is_a_scikit_learn_estimator(name, data):
    """clone gives an unfitted copy with equal parameters; predict before fit is NotFittedError."""
    X, y = data
    model = make_regressor(name)
    copy = clone(model)
    assert copy is not model and copy.get_params() == model.get_params()
    with pytest.raises(NotFittedError):
        copy.predict(X)
    fitted = clone(model).fit(X, y)
    assert size(clone(fitted)) == 0 < size(fitted)  # a clone of a fitted model is unfitted


#: checks that do not apply, and why (also in docs/rcfr.md)
EXPECTED_FAILED_CHECKS = {
    "MLP": {
        "check_supervised_y_2d": "warm_start=True (the default, for RCFR's refits on slowly changing "
                                 "targets) continues the second fit from the first",
        "check_sample_weight_equivalence_on_dense_data":
            "inputs are standardized over all rows predicted (weighted or not), so a duplicated row "
            "shifts the statistics while weight 2 does not",
    },
    "BestFirstTree": {
        "check_sample_weight_equivalence_on_dense_data":
            "rows of weight zero still place cuts (midpoints between neighbouring values), as in "
            "scikit-learn's own trees",
    },
    "PartitionTree": {
        "check_sample_weight_equivalence_on_dense_data":
            "rows of weight zero still place cuts (midpoints between neighbouring values), as in "
            "scikit-learn's own trees",
    },
}


@parametrize_with_checks([BestFirstTree(), SklearnTree(random_state=0), PartitionTree(), ExactTable(),
                          MLP(hidden=[8], random_state=0)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS.get(type(est).__name__, {}))
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("name,params,field", [
    ("lightgbm", {"n_estimators": "abc"}, "n_estimators"),
    ("lightgbm", {"num_leaves": 1}, "num_leaves"),
    ("linear", {"alpha": -1.0}, "alpha"),
    ("linear", {"alpha": "x"}, "alpha"),
])
def test_factory_arguments_fail_before_any_work_naming_the_field(name, params, field):
    with pytest.raises(ValueError, match=f"'{field}' parameter of {name} must be"):
        make_regressor(name, **params)


@pytest.mark.parametrize("name,params,field", [
    ("best_first", {"max_leaves": "abc"}, "max_leaves"),
    ("best_first", {"max_leaves": 1}, "max_leaves"),
    ("best_first", {"min_samples_leaf": "2"}, "min_samples_leaf"),
    ("tree", {"max_leaves": 1.5}, "max_leaves"),
    ("tree", {"criterion": "huber"}, "criterion"),
    ("recursive", {"threshold": "abc"}, "threshold"),
    ("recursive", {"threshold": -0.1}, "threshold"),
    ("recursive", {"min_samples_leaf": 0}, "min_samples_leaf"),
    ("mlp", {"epochs": "abc"}, "epochs"),
    ("mlp", {"hidden": "abc"}, "hidden"),
    ("mlp", {"hidden": [8, 0]}, "hidden"),
    ("mlp", {"learning_rate": 0}, "learning_rate"),
    ("mlp", {"batch_size": 0}, "batch_size"),
    ("mlp", {"device": "tpu"}, "device"),
    ("mlp", {"validation_fraction": 0.0}, "validation_fraction"),
    ("mlp", {"validation_fraction": 1.0}, "validation_fraction"),
    ("mlp", {"n_iter_no_change": 0}, "n_iter_no_change"),
    ("mlp", {"tol": -1e-3}, "tol"),
    ("mlp", {"threads": 0}, "threads"),
    ("mlp", {"early_stopping": "yes"}, "early_stopping"),
    ("table", {"default": "x"}, "default"),
])
def test_bad_parameters_fail_naming_the_field_and_range(name, params, field, data):
    X, y = data
    message = f"'{field}' parameter of [A-Za-z]+ (must be|is)"
    model = REGRESSORS[name](**params)  # scikit-learn convention: __init__ stores, fit validates
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)
    with pytest.raises(ValueError, match=message):  # the registry checks before any work
        make_regressor(name, **params)


def test_sizes_are_leaves_or_parameters(data):
    X, y = data
    assert make_regressor("tree", max_leaves=7).fit(X, y).size() == 7
    assert size(make_regressor("linear").fit(X, y)) == X.shape[1] + 1
    mlp = make_regressor("mlp", hidden=[4, 3]).fit(X, y)
    assert mlp.size() == (5 * 4 + 4) + (4 * 3 + 3) + (3 + 1)
    gbm = make_regressor("lightgbm", n_estimators=5, num_leaves=4).fit(X, y)
    assert 5 < size(gbm) <= 20


def test_any_sklearn_regressor_works_with_inferred_size(data):
    X, y = data
    boost = make_regressor(GradientBoostingRegressor(n_estimators=3, max_leaf_nodes=4))
    assert size(fit(boost, X, y)) == 12
    assert size(make_regressor(Lasso(alpha=0.1)).fit(X, y)) == 6
    knn = make_regressor(KNeighborsRegressor())
    assert size(knn.fit(X, y)) is None  # unknown kind: no guess
    with pytest.raises(ValueError, match="takes no sample_weight"):
        fit(knn, X, y, np.arange(len(y), dtype=float))


def test_registry_errors_name_the_allowed_values():
    with pytest.raises(ValueError, match="unknown regressor 'forest'; allowed: best_first, lightgbm, linear, mlp"):
        make_regressor("forest")
    with pytest.raises(ValueError, match="unknown option.*'leaves'.*allowed: max_leaves, criterion, random_state"):
        make_regressor({"name": "tree", "leaves": 3})
    with pytest.raises(ValueError, match="needs a 'name'"):
        make_regressor({"max_leaves": 3})
    with pytest.raises(ValueError, match="go with a regressor name"):
        make_regressor(Lasso(), alpha=2)


def test_the_registry_names_the_two_best_first_trees():
    assert REGRESSORS["best_first"] is BestFirstTree and REGRESSORS["tree"] is SklearnTree


def test_exact_table_is_the_weighted_mean_per_distinct_row():
    X = np.array([[0, 1], [0, 1], [1, 0], [-0.0, 2]])
    y = np.array([1.0, 3.0, 5.0, 7.0])
    table = ExactTable().fit(X, y, sample_weight=np.array([1.0, 3.0, 1.0, 1.0]))
    assert table.size() == 3
    assert np.array_equal(table.predict(X), [2.5, 2.5, 5.0, 7.0])
    assert np.array_equal(table.predict(np.array([[0.0, 2.0], [9.0, 9.0]])), [7.0, 0.0])


def test_sklearn_tree_with_absolute_error(data):
    X, y = data
    model = make_regressor("tree", max_leaves=30, criterion="absolute_error").fit(X, y)
    assert model.size() == 30


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0), st.integers(1, 4))
def test_partition_tree_meets_its_average_error_threshold(seed, threshold, min_leaf):
    """Every leaf's mean absolute deviation is within the threshold, unless it could not be split."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    y = rng.normal(size=60) + 3 * (X[:, 0] > 0)
    tree = PartitionTree(threshold=threshold, min_samples_leaf=min_leaf).fit(X, y)
    leaves = np.flatnonzero(tree.feature_ < 0)
    prediction = tree.predict(X)
    assert tree.size() == len(leaves) <= 60
    for value in np.unique(prediction):
        members = y[prediction == value]
        assert abs(members.mean() - value) < 1e-9
        error = np.mean(np.abs(members - value))
        assert error <= threshold + 1e-12 or len(members) < 2 * min_leaf
    if min_leaf == 1 and threshold == 0.0:
        assert np.allclose(prediction, y)


def test_partition_tree_threshold_trades_size_for_error(data):
    X, y = data
    sizes = [PartitionTree(threshold=t).fit(X, y).size() for t in (0.5, 0.2, 0.05, 0.0)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1] == len(y)


def test_mlp_warm_starts_from_its_previous_weights(data):
    X, y = data
    warm = make_regressor("mlp", epochs=30, random_state=0)
    losses = [np.mean((warm.fit(X, y).predict(X) - y) ** 2) for _ in range(3)]
    assert losses[2] < losses[0]
    cold = make_regressor("mlp", epochs=30, warm_start=False, random_state=0)
    again = [np.mean((cold.fit(X, y).predict(X) - y) ** 2) for _ in range(2)]
    assert again[0] == pytest.approx(again[1]) and again[1] > losses[2]


@pytest.mark.parametrize("batch_size", [None, 2])
def test_mlp_rows_of_weight_zero_change_nothing(batch_size):
    """Rows of weight zero add nothing to the loss, even when a whole minibatch has weight zero (that
    used to be 0/0 = NaN): whatever targets they hold, the fit is the same, and it still learns."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    y = X @ [1.0, -2.0, 0.5]
    w = np.zeros(20)
    w[[3, 11]] = 1.0  # with batches of 2, nine of ten batches have weight zero
    fits = [MLP(hidden=[8], epochs=100, batch_size=batch_size, random_state=0).fit(X, t, sample_weight=w)
            for t in (y, np.where(w > 0, y, 1e6))]
    first, second = (f.predict(X) for f in fits)
    assert np.all(np.isfinite(first)) and np.array_equal(first, second)
    untrained = MLP(hidden=[8], epochs=1, batch_size=batch_size, random_state=0).fit(X, y, sample_weight=w)
    seen = w > 0
    assert np.mean((first - y)[seen] ** 2) < 0.1 * np.mean((untrained.predict(X) - y)[seen] ** 2)
    with pytest.raises(ValueError, match="at least one non-zero"):  # scikit-learn's convention
        MLP(hidden=[8], random_state=0).fit(X, y, sample_weight=np.zeros(20))


def _smooth(n: int = 600, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=n)


def _r2(model, X, y) -> float:
    return 1.0 - np.mean((model.predict(X) - y) ** 2) / np.var(y)


def test_mlp_stops_when_its_held_out_rows_stop_improving_and_keeps_their_best_weights():
    X, y = _smooth(200)
    model = MLP(hidden=(16, 16), random_state=0).fit(X, y)
    assert model.n_epochs_ < model.epochs  # it stopped on its own
    scores = model.validation_scores_
    assert len(scores) == model.n_epochs_ and model.best_validation_score_ == max(scores)
    assert max(scores) > scores[-1] or np.argmax(scores) == len(scores) - 1
    # the weights kept are those of the best epoch: refitting for exactly that many epochs, without
    # stopping, gives the same network
    best = int(np.argmax(scores)) + 1
    fixed = MLP(hidden=(16, 16), random_state=0, epochs=best, n_iter_no_change=10 ** 6).fit(X, y)
    assert np.array_equal(fixed.predict(X), model.predict(X))
    # a negative control: without early stopping and a patience beyond the budget, every epoch runs
    assert MLP(hidden=(16, 16), random_state=0, epochs=50, early_stopping=False,
               n_iter_no_change=10 ** 6).fit(X, y).n_epochs_ == 50


def test_mlp_defaults_explain_most_of_the_variance_where_a_fixed_handful_of_epochs_did_not():
    """The old defaults (20 epochs at 1e-3 in minibatches of 256) left Deep CFR's networks explaining a third
    of their targets' variance (docs/neural.md); the stopping rule trains until the held-out rows stop
    improving."""
    X, y = _smooth()
    assert _r2(MLP(random_state=0).fit(X, y), X, y) > 0.9
    old = MLP(random_state=0, epochs=20, learning_rate=1e-3, batch_size=256, early_stopping=False,
              n_iter_no_change=10 ** 6)
    assert _r2(old.fit(X, y), X, y) < 0.8


def test_mlp_fits_on_its_own_threads_and_gives_torch_its_threads_back():
    import torch
    X, y = _smooth(100)
    before = torch.get_num_threads()
    seen = []
    model = MLP(random_state=0, epochs=3, threads=before + 1)  # not what torch has now, so the test can fail
    model._train = lambda *args: seen.append(torch.get_num_threads())  # inside the fit
    model.fit(X, y)
    assert seen == [before + 1] and torch.get_num_threads() == before


def test_a_seeded_cold_fit_repeats_itself():
    X, y = _smooth(200)
    model = MLP(random_state=3, epochs=40, warm_start=False)
    first = model.fit(X, y).predict(X)
    assert np.array_equal(model.fit(X, y).predict(X), first)  # the held-out slice is drawn again, the same


def test_sampled_rcfr_with_an_mlp_on_reservoir_targets_learns(leduc_ranks):
    """Reservoir targets give unvisited sequences weight zero; minibatches of such rows made the MLP
    predict NaN, so the solver played uniform forever."""
    spec = {"name": "mlp", "hidden": [16], "epochs": 2, "learning_rate": 0.01, "batch_size": 8}
    solver = rcfr.make_solver("sampled-rcfr", leduc_ranks, regressor=spec, features="poker", targets="reservoir",
                              traversals=2, seed=0).run(10)
    for p in (0, 1):
        assert np.all(np.isfinite(solver.store.estimates(p)))
    uniform = rcfr.Policy.uniform(leduc_ranks).probs
    assert not np.allclose(solver.current_policy().probs, uniform)  # on main: NaN estimates, uniform play


@pytest.mark.parametrize("name", ["mlp", "lightgbm", "tree"])
def test_random_state_reaches_random_regressors(name, data):
    X, y = data
    fits = [predict(fit(make_regressor(name, random_state=s), X, y), X) for s in (0, 0, 1)]
    assert np.array_equal(fits[0], fits[1])
    if name != "tree":  # scikit-learn's tree only permutes features: equal-gain ties are rare here
        assert not np.array_equal(fits[0], fits[2])


def test_best_first_sizes_its_buffers_by_rows_not_by_the_budget(data):
    """A tree has at most one leaf per row: a huge budget must not allocate per budgeted leaf
    (10**12 leaves would be terabytes)."""
    X, y = data
    model = BestFirstTree(max_leaves=10 ** 12).fit(X, y)
    assert model.size() == len(np.unique(X, axis=0)) == len(y)
    assert np.allclose(model.predict(X), y)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 80), st.booleans(), st.sampled_from([best_first.BINS, 0]))
def test_best_first_grows_the_same_tree_as_scikit_learn(seed, leaves, weighted, bins):
    """On float32-exact inputs without ties, the numba tree and scikit-learn's best-first tree agree, grown from
    per-bin sums (60 values a column) or, with no column narrow enough (``BINS = 0``), from the sort orders."""
    patch = mock.patch.object(best_first, "BINS", bins)
    patch.start()
    try:
        _same_tree_as_scikit_learn(seed, leaves, weighted)
    finally:
        patch.stop()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 300), st.integers(1, 4), st.integers(2, 12))
def test_binned_and_sorted_growth_grow_the_same_tree(seed, leaves, min_leaf, values):
    """Per-bin sums and sort orders consider the same cuts and break ties alike: the same tree, leaf values to
    1e-12, on rows with repeated values, equal targets and zero weights (ties everywhere)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, values, size=(200, 6)) / 3.0
    y, w = rng.integers(-3, 4, size=200) / 2.0, rng.integers(0, 3, size=200).astype(float)
    trees = []
    for bins in (best_first.BINS, 0):
        with mock.patch.object(best_first, "BINS", bins):
            trees.append(BestFirstTree(leaves, min_samples_leaf=min_leaf).fit(X, y, sample_weight=w))
    binned, ordered = trees
    for name in ("feature_", "threshold_", "left_", "right_"):
        assert np.array_equal(getattr(binned, name), getattr(ordered, name)), name
    assert np.allclose(binned.value_, ordered.value_, rtol=0, atol=1e-12)


def _same_tree_as_scikit_learn(seed, leaves, weighted):
    from sklearn.tree import DecisionTreeRegressor
    rng = np.random.default_rng(seed)
    X = rng.permuted(np.tile(np.arange(60.0) / 4, (4, 1)), axis=1).T  # distinct values per column
    X[:, 3] = 1.0  # a constant column is skipped
    X.setflags(write=False)
    y = rng.normal(size=60) + (X[:, 0] > 7)
    w = rng.uniform(0.5, 2.0, size=60) if weighted else None
    ours = BestFirstTree(leaves).fit(X, y, sample_weight=w)
    ref = DecisionTreeRegressor(max_leaf_nodes=leaves).fit(X.astype(np.float32), y, sample_weight=w)
    assert ours.size() == ref.tree_.n_leaves
    assert np.allclose(ours.predict(X), ref.predict(X.astype(np.float32)), atol=1e-9)
    # the traversal (new rows) agrees with the cached leaf of each training row
    assert np.array_equal(ours.predict(X.copy()), ours.predict(X))
    # (on new rows the trees may differ: equal-gain splits on different features break ties differently)
    fresh = rng.uniform(-1, 16, size=(30, 4))
    assert np.isin(ours.predict(fresh), ours.value_[ours.feature_ < 0]).all()


def test_best_first_respects_min_samples_leaf(data):
    X, y = data
    loose = BestFirstTree(max_leaves=50).fit(X, y)
    model = BestFirstTree(max_leaves=50, min_samples_leaf=5).fit(X, y)
    counts = np.unique(model.predict(X), return_counts=True)[1]
    assert counts.sum() == len(y) and counts.min() >= 5
    assert np.unique(loose.predict(X), return_counts=True)[1].min() < 5  # the bound binds here


def test_minibatches_fit(data):
    X, y = data
    mlp = make_regressor("mlp", hidden=[8], epochs=5, batch_size=32, random_state=0).fit(X, y)
    assert np.mean((mlp.predict(X) - y) ** 2) < np.var(y)


def test_a_known_feature_matrix_skips_its_checks_but_not_new_parameters_or_targets(data):
    """RCFR refits on one read-only matrix: it is checked once, parameters and targets every time."""
    X, y = data[0].copy(), data[1]
    X.setflags(write=False)
    model = BestFirstTree(max_leaves=8).fit(X, y)
    model.set_params(max_leaves="abc")
    with pytest.raises(ValueError, match="'max_leaves' parameter of BestFirstTree"):
        model.fit(X, y)
    model.set_params(max_leaves=8)
    with pytest.raises(ValueError, match="Input y contains NaN"):
        model.fit(X, np.full(len(y), np.nan))
    with pytest.raises(ValueError, match="Negative values in data passed to .sample_weight"):
        model.fit(X, y, sample_weight=-np.ones(len(y)))
    assert np.array_equal(model.fit(X, y).predict(X), BestFirstTree(max_leaves=8).fit(X.copy(), y).predict(X))


def test_lightgbm_tree_learner_failure_names_the_remedy(monkeypatch):
    """LightGBM's 'left_count > 0' check failure (its issue #4739) carries a note on what to change; other
    LightGBM errors pass through untouched."""
    import lightgbm

    X, y = np.arange(20.0).reshape(10, 2), np.arange(10.0)
    for message, noted in (("Check failed: (best_split_info.left_count) > (0)", True), ("other failure", False)):
        def fail(self, *args, message=message, **kwargs):
            raise lightgbm.basic.LightGBMError(message)

        monkeypatch.setattr(lightgbm.LGBMRegressor, "fit", fail)
        with pytest.raises(lightgbm.basic.LightGBMError) as caught:
            make_regressor("lightgbm").fit(X, y)
        assert ("min_child_samples" in "".join(getattr(caught.value, "__notes__", []))) == noted
