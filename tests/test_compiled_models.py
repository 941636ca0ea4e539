"""Compiled models: every supported regressor, exported to arrays, predicts what its own `predict` does
(float64, to 1e-12), missing values included (LightGBM's three rules, scikit-learn's directions); the
rest is refused by name."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import (
    Lasso,
    LinearRegression,
    PoissonRegressor,
    Ridge,
    SGDRegressor,
)
from sklearn.neighbors import KNeighborsRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

from rcfr.regressors import (
    MLP,
    BestFirstTree,
    ExactTable,
    PartitionTree,
    SklearnTree,
    lightgbm,
    linear,
)
from rcfr.regressors.compiled import NotCompilable, compile_model, predict_row


def _data(seed=0, rows=200, width=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, width))
    X[:, 0] = rng.integers(0, 3, rows)  # ties and exact thresholds, as indicator features have
    y = np.sin(2 * X[:, 1]) + X[:, 2] ** 2 + 2 * X[:, 3] * (X[:, 0] > 0)
    return X, y, rng.uniform(0.1, 2.0, rows)


def _probe(seed=1, rows=300, width=6):
    """New rows, plus rows that sit exactly on the training values (thresholds lie between them)."""
    X, _, _ = _data(seed, rows, width)
    return np.vstack([X, _data(0, 50, width)[0]])


MODELS = {
    "best_first": lambda: BestFirstTree(max_leaves=40),
    "recursive": lambda: PartitionTree(threshold=0.05, max_depth=8),
    "tree": lambda: SklearnTree(max_leaves=30, random_state=0),
    "decision_tree": lambda: DecisionTreeRegressor(max_depth=7, random_state=0),
    "extra_tree": lambda: ExtraTreeRegressor(max_depth=7, random_state=0),
    "random_forest": lambda: RandomForestRegressor(n_estimators=7, max_depth=5, random_state=0),
    "extra_trees": lambda: ExtraTreesRegressor(n_estimators=6, max_depth=5, random_state=0),
    "boosting": lambda: GradientBoostingRegressor(n_estimators=12, max_depth=3, learning_rate=0.3, random_state=0),
    "boosting_zero": lambda: GradientBoostingRegressor(n_estimators=5, init="zero", random_state=0),
    "lightgbm": lambda: lightgbm(n_estimators=15, num_leaves=8, random_state=0),
    "lightgbm_rf": lambda: _lgbm(boosting_type="rf", n_estimators=6, subsample=0.8, subsample_freq=1),
    "mlp": lambda: MLP(hidden=(16, 8), epochs=5, random_state=0),
    "sklearn_mlp_tanh": lambda: MLPRegressor(hidden_layer_sizes=(12, 6), activation="tanh", max_iter=50, random_state=0),
    "sklearn_mlp_logistic": lambda: MLPRegressor(hidden_layer_sizes=(8,), activation="logistic", max_iter=50, random_state=0),
    "linear": lambda: linear(),
    "least_squares": lambda: LinearRegression(),
    "lasso": lambda: Lasso(alpha=0.01),
    "sgd": lambda: SGDRegressor(random_state=0),
}
UNWEIGHTED = {"sklearn_mlp_tanh", "sklearn_mlp_logistic", "recursive_unweighted"}


def _lgbm(**options):
    import lightgbm as lgb
    return lgb.LGBMRegressor(num_leaves=6, min_child_samples=3, verbose=-1, n_jobs=1, random_state=0, **options)


def _fit(name, X, y, w):
    model = MODELS[name]()
    return model.fit(X, y) if name in UNWEIGHTED else model.fit(X, y, sample_weight=w)


def _same(model, compiled, X):
    expected = np.asarray(model.predict(X), np.float64).ravel()
    got = compiled.predict(X)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    return expected


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_predictions_equal_the_regressors_own(name):
    X, y, w = _data()
    model = _fit(name, X, y, w)
    compiled = compile_model(model)
    expected = _same(model, compiled, _probe())
    assert np.ptp(expected) > 0  # a model that learned something, so the test can fail
    row = _probe()[3]  # the walks' entry point, one row at a time
    assert predict_row(compiled, row, compiled.scratch()) == compiled.predict(row[None])[0]
    assert compiled.nbytes > 0


def test_a_wrong_prediction_is_caught():
    """Negative control: a perturbed leaf no longer matches (the comparison can fail)."""
    X, y, w = _data()
    model = BestFirstTree(max_leaves=16).fit(X, y, w)
    compiled = compile_model(model)
    compiled.value[np.flatnonzero(compiled.feature < 0)[0]] += 1e-9
    with pytest.raises(AssertionError):
        _same(model, compiled, X)


def _lightgbm_missing(X, y, **options):
    import lightgbm as lgb
    return lgb.LGBMRegressor(n_estimators=10, num_leaves=6, min_child_samples=3, verbose=-1, n_jobs=1,
                             random_state=0, **options).fit(X, y)


@pytest.mark.parametrize("rule", ["NaN", "None", "Zero"])
def test_lightgbm_missing_values_follow_each_rule(rule):
    """NaN in training (missing_type NaN, default_left learned), none (NaN read as 0), zero_as_missing."""
    X, y, _ = _data(rows=400)
    rng = np.random.default_rng(3)
    if rule == "NaN":
        X[rng.random(X.shape) < 0.15] = np.nan
    if rule == "Zero":
        X[rng.random(X.shape) < 0.2] = 0.0
    model = _lightgbm_missing(X, np.nan_to_num(y, nan=1.0), zero_as_missing=rule == "Zero")
    dump = model.booster_.dump_model()
    seen = set()

    def walk(node):
        if "split_index" in node:
            seen.add((node["missing_type"], node["default_left"]))
            walk(node["left_child"])
            walk(node["right_child"])
    for info in dump["tree_info"]:
        walk(info["tree_structure"])
    assert {m for m, _ in seen} == {rule}
    probe = _probe()
    probe[rng.random(probe.shape) < 0.25] = np.nan
    probe[rng.random(probe.shape) < 0.1] = 0.0
    probe[rng.random(probe.shape) < 0.05] = 1e-40  # "zero" for LightGBM's zero rule, not for the others
    compiled = compile_model(model)
    _same(model, compiled, probe)
    _same(model.booster_, compile_model(model.booster_), probe)
    if rule == "NaN":
        assert {d for _, d in seen} == {True, False}  # both directions exercised


def test_scikit_learn_trees_send_missing_values_their_learned_way():
    X, y, _ = _data(rows=300)
    X[np.random.default_rng(4).random(X.shape) < 0.2] = np.nan
    model = DecisionTreeRegressor(max_depth=6, random_state=0).fit(X, y)
    assert model.tree_.missing_go_to_left.any() and not model.tree_.missing_go_to_left.all()
    probe = _probe()
    probe[np.random.default_rng(5).random(probe.shape) < 0.3] = np.nan
    _same(model, compile_model(model), probe)


@settings(max_examples=25)
@given(seed=st.integers(0, 2 ** 31), rows=st.integers(2, 60), width=st.integers(1, 5),
       levels=st.integers(2, 6), kind=st.sampled_from(["best_first", "tree", "lightgbm", "linear", "boosting"]))
def test_compiled_predictions_equal_on_generated_data(seed, rows, width, levels, kind):
    """Few distinct values (ties, thresholds between neighbours), tiny and degenerate fits."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(rows, width)) / levels + rng.normal(size=(rows, width)) * (seed % 2)
    y = rng.normal(size=rows) * 10.0 ** rng.integers(-3, 4)
    w = rng.uniform(0.0, 1.0, rows) + 1e-3
    model = {"best_first": lambda: BestFirstTree(max_leaves=int(rng.integers(2, 20))),
             "tree": lambda: SklearnTree(max_leaves=8, random_state=0),
             "lightgbm": lambda: lightgbm(n_estimators=4, num_leaves=4, subsample=1.0, random_state=0),
             "linear": lambda: linear(alpha=0.1),
             "boosting": lambda: GradientBoostingRegressor(n_estimators=4, max_depth=2, random_state=0)}[kind]()
    model.fit(X, y, sample_weight=w)
    probe = np.vstack([X, rng.integers(-1, levels + 1, size=(20, width)) / levels])
    _same(model, compile_model(model), probe)


@pytest.mark.parametrize("model", [KNeighborsRegressor(2), ExactTable(), HistGradientBoostingRegressor(max_iter=3),
                                   PoissonRegressor(), DummyRegressor()], ids=lambda m: type(m).__name__)
def test_what_cannot_be_compiled_is_refused_by_type(model):
    X, y, _ = _data()
    model.fit(X, np.abs(y))
    with pytest.raises(NotCompilable, match=type(model).__name__) as caught:
        compile_model(model)
    assert "slow path" in str(caught.value)


def test_lightgbm_categorical_splits_and_links_are_refused():
    import lightgbm as lgb
    X, y, _ = _data(rows=300)
    model = lgb.LGBMRegressor(n_estimators=3, num_leaves=4, min_child_samples=3, min_data_per_group=3,
                              cat_smooth=1, verbose=-1, n_jobs=1).fit(X, y, categorical_feature=[0])
    with pytest.raises(NotCompilable, match="categorical"):
        compile_model(model)
    poisson = lgb.LGBMRegressor(objective="poisson", n_estimators=3, verbose=-1, n_jobs=1).fit(X, np.abs(y))
    with pytest.raises(NotCompilable, match="poisson"):
        compile_model(poisson)
    linear_tree = lgb.LGBMRegressor(linear_tree=True, n_estimators=3, verbose=-1, n_jobs=1).fit(X, y)
    with pytest.raises(NotCompilable, match="linear tree"):
        compile_model(linear_tree)


def test_unfitted_models_and_wrong_widths_are_errors():
    with pytest.raises(NotFittedError):
        compile_model(BestFirstTree())
    X, y, _ = _data()
    compiled = compile_model(BestFirstTree().fit(X, y))
    with pytest.raises(ValueError, match=r"shape \(rows, 6\)"):
        compiled.predict(X[:, :5])


def test_non_finite_models_are_refused():
    X, y, _ = _data()
    model = Ridge().fit(X, y)
    model.coef_[0] = np.inf
    with pytest.raises(ValueError, match="non-finite params"):
        compile_model(model)
