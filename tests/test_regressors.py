"""Regressors: the protocol, the registry, exactness of the table, and the partition tree's threshold."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import Lasso
from sklearn.neighbors import KNeighborsRegressor

from rcfr.regressors import REGRESSORS, ExactTable, PartitionTree, SklearnRegressor, make_regressor


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    return X, y


@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_every_regressor_fits_predicts_and_reports_its_size(name, data):
    X, y = data
    model = make_regressor({"name": name, "epochs": 200} if name == "mlp" else name)
    assert model.fit(X, y, sample_weight=np.ones(len(y))) is model
    prediction = model.predict(X)
    assert prediction.shape == y.shape and np.all(np.isfinite(prediction))
    assert np.mean((prediction - y) ** 2) < 0.9 * np.var(y) or name == "linear"
    assert isinstance(model.complexity(), int) and model.complexity() > 0


def test_sizes_are_leaves_or_parameters(data):
    X, y = data
    assert make_regressor({"name": "tree", "max_leaves": 7}).fit(X, y).complexity() == 7
    assert make_regressor("linear").fit(X, y).complexity() == X.shape[1] + 1
    mlp = make_regressor({"name": "mlp", "hidden": [4, 3]}).fit(X, y)
    assert mlp.complexity() == (5 * 4 + 4) + (4 * 3 + 3) + (3 + 1)
    gbm = make_regressor({"name": "lightgbm", "n_estimators": 5, "num_leaves": 4}).fit(X, y)
    assert 5 < gbm.complexity() <= 20


def test_any_sklearn_regressor_works_with_inferred_complexity(data):
    X, y = data
    boost = make_regressor(GradientBoostingRegressor(n_estimators=3, max_leaf_nodes=4))
    assert isinstance(boost, SklearnRegressor) and boost.fit(X, y).complexity() == 12
    assert make_regressor(Lasso(alpha=0.1)).fit(X, y).complexity() == 6
    knn = make_regressor(KNeighborsRegressor())
    assert knn.fit(X, y).complexity() is None  # unknown kind: no guess
    with pytest.raises(ValueError, match="takes no sample_weight"):
        knn.fit(X, y, sample_weight=np.arange(len(y), dtype=float))


def test_registry_errors_name_the_allowed_values():
    with pytest.raises(ValueError, match="unknown regressor 'forest'; allowed: best_first, lightgbm, linear, mlp"):
        make_regressor("forest")
    with pytest.raises(ValueError, match="unknown option.*'leaves'.*allowed: max_leaves, criterion, seed"):
        make_regressor({"name": "tree", "leaves": 3})
    with pytest.raises(ValueError, match="criterion"):
        make_regressor({"name": "tree", "criterion": "huber"})
    with pytest.raises(ValueError, match="needs a 'name'"):
        make_regressor({"max_leaves": 3})
    with pytest.raises(ValueError, match="max_leaves"):
        make_regressor({"name": "tree", "max_leaves": 1})


def test_exact_table_is_the_weighted_mean_per_distinct_row():
    X = np.array([[0, 1], [0, 1], [1, 0], [-0.0, 2]])
    y = np.array([1.0, 3.0, 5.0, 7.0])
    table = ExactTable().fit(X, y, sample_weight=np.array([1.0, 3.0, 1.0, 1.0]))
    assert table.complexity() == 3
    assert np.array_equal(table.predict(X), [2.5, 2.5, 5.0, 7.0])
    assert np.array_equal(table.predict(np.array([[0.0, 2.0], [9.0, 9.0]])), [7.0, 0.0])


def test_best_first_tree_with_absolute_error(data):
    X, y = data
    model = make_regressor({"name": "tree", "max_leaves": 30, "criterion": "absolute_error"}).fit(X, y)
    assert model.complexity() == 30


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 1.0), st.integers(1, 4))
def test_partition_tree_meets_its_average_error_threshold(seed, threshold, min_leaf):
    """Every leaf's mean absolute deviation is within the threshold, unless it could not be split."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    y = rng.normal(size=60) + 3 * (X[:, 0] > 0)
    tree = PartitionTree(threshold=threshold, min_samples_leaf=min_leaf).fit(X, y)
    leaves = np.flatnonzero(tree.feature < 0)
    prediction = tree.predict(X)
    assert tree.complexity() == len(leaves) <= 60
    for value in np.unique(prediction):
        members = y[prediction == value]
        assert abs(members.mean() - value) < 1e-9
        error = np.mean(np.abs(members - value))
        assert error <= threshold + 1e-12 or len(members) < 2 * min_leaf
    if min_leaf == 1 and threshold == 0.0:
        assert np.allclose(prediction, y)


def test_partition_tree_threshold_trades_size_for_error(data):
    X, y = data
    sizes = [PartitionTree(threshold=t).fit(X, y).complexity() for t in (0.5, 0.2, 0.05, 0.0)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1] == len(y)


def test_mlp_warm_starts_from_its_previous_weights(data):
    X, y = data
    warm = make_regressor({"name": "mlp", "epochs": 30})
    losses = [np.mean((warm.fit(X, y).predict(X) - y) ** 2) for _ in range(3)]
    assert losses[2] < losses[0]
    cold = make_regressor({"name": "mlp", "epochs": 30, "warm_start": False})
    again = [np.mean((cold.fit(X, y).predict(X) - y) ** 2) for _ in range(2)]
    assert again[0] == pytest.approx(again[1]) and again[1] > losses[2]
    with pytest.raises(ValueError, match="device"):
        make_regressor({"name": "mlp", "device": "tpu"})


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 80), st.booleans())
def test_best_first_grows_the_same_tree_as_scikit_learn(seed, leaves, weighted):
    """On float32-exact inputs without ties, the numba tree and scikit-learn's best-first tree agree."""
    from sklearn.tree import DecisionTreeRegressor
    from rcfr.regressors import FastTree
    rng = np.random.default_rng(seed)
    X = rng.permuted(np.tile(np.arange(60.0) / 4, (4, 1)), axis=1).T  # distinct values per column
    X[:, 3] = 1.0  # a constant column is skipped
    X.setflags(write=False)
    y = rng.normal(size=60) + (X[:, 0] > 7)
    w = rng.uniform(0.5, 2.0, size=60) if weighted else None
    ours = FastTree(leaves).fit(X, y, sample_weight=w)
    ref = DecisionTreeRegressor(max_leaf_nodes=leaves).fit(X.astype(np.float32), y, sample_weight=w)
    assert ours.complexity() == ref.tree_.n_leaves
    assert np.allclose(ours.predict(X), ref.predict(X.astype(np.float32)), atol=1e-9)
    # the traversal (new rows) agrees with the cached leaf of each training row
    assert np.array_equal(ours.predict(X.copy()), ours.predict(X))
    # (on new rows the trees may differ: equal-gain splits on different features break ties differently)
    fresh = rng.uniform(-1, 16, size=(30, 4))
    assert np.isin(ours.predict(fresh), ours.value[ours.feature < 0]).all()


def test_best_first_respects_min_samples_leaf(data):
    from rcfr.regressors import FastTree
    X, y = data
    model = FastTree(max_leaves=50, min_samples_leaf=5).fit(X, y)
    assert np.bincount(model._leaf_of).max() > 0
    assert min(c for c in np.bincount(model._leaf_of) if c) >= 5


def test_name_and_options_form_and_minibatches(data):
    X, y = data
    assert make_regressor("best_first", max_leaves=3).fit(X, y).complexity() == 3
    with pytest.raises(ValueError, match="go with a regressor name"):
        make_regressor(Lasso(), alpha=2)
    mlp = make_regressor("mlp", hidden=[8], epochs=5, batch_size=32).fit(X, y)
    assert np.mean((mlp.predict(X) - y) ** 2) < np.var(y)
    with pytest.raises(ValueError, match="batch_size"):
        make_regressor("mlp", batch_size=0)
