"""Fitted regressors as flat arrays, predicted by one numba function (so compiled walks can call it).

A *compiled model* (`CompiledModel`) is a sum of two parts, either of which may be empty:

* **trees**: ``bias + sum_t weights[t] * value[leaf_t(x)]``, then divided by ``divisor`` (forests
  average as scikit-learn does: sum in order, then divide; boosting adds ``learning_rate x tree`` to
  its initial value in order, so the arithmetic, and the float64 result, are the library's own);
* **dense layers**: standardize x (``(x - shift) / scale``), apply each layer ``act(W h + b)``, times
  ``out_scale``: the project's MLP, scikit-learn's MLPRegressor and linear models (one identity layer).

Each tree node has a feature (-1 at leaves), a threshold (left when ``x <= threshold``), children, a
value, and what a missing value (NaN) does there: ``MISSING_DEFAULT`` sends it the node's default way
(scikit-learn's ``missing_go_to_left``, LightGBM's ``missing_type="NaN"``), ``MISSING_AS_ZERO`` reads it
as 0 (LightGBM's ``"None"``), ``ZERO_DEFAULT`` reads it as 0 and sends any |x| <= 1e-35 the default way
(LightGBM's ``"Zero"``). scikit-learn's trees compare float32 inputs (``round32``).

`compile_model` refuses (`NotCompilable`, naming the type) what it cannot reproduce exactly: other
estimators, multi-output models, LightGBM categorical splits or linear trees, links that are not the
identity. A caller can then fall back to the regressor's own batched ``predict``, the slow path.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

MISSING_DEFAULT, MISSING_AS_ZERO, ZERO_DEFAULT = 0, 1, 2
IDENTITY, RELU, TANH, LOGISTIC = 0, 1, 2, 3
_ACTIVATIONS = {"identity": IDENTITY, "relu": RELU, "tanh": TANH, "logistic": LOGISTIC}
_ZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold, a float widened to double
_IDENTITY_OBJECTIVES = ("regression", "regression_l1", "huber", "fair", "quantile", "mape")
SUPPORTED = ("BestFirstTree", "PartitionTree", "SklearnTree", "DecisionTreeRegressor", "ExtraTreeRegressor",
             "RandomForestRegressor", "ExtraTreesRegressor", "GradientBoostingRegressor",
             "LGBMRegressor / lightgbm.Booster", "MLP", "MLPRegressor", "linear models (Ridge, ...)")


class NotCompilable(TypeError):
    """A regressor that `compile_model` cannot turn into arrays; its own ``predict`` still works."""


class CompiledModel(NamedTuple):
    """A fitted regressor's prediction as arrays (see the module docstring); `predict` evaluates it."""

    width: int  # features per row
    roots: np.ndarray  # int64[trees]: each tree's root node
    weights: np.ndarray  # float64[trees]
    feature: np.ndarray  # int64[nodes]: -1 at a leaf
    threshold: np.ndarray  # float64[nodes]
    left: np.ndarray  # int64[nodes]
    right: np.ndarray  # int64[nodes]
    value: np.ndarray  # float64[nodes]
    missing: np.ndarray  # int8[nodes]: MISSING_DEFAULT, MISSING_AS_ZERO or ZERO_DEFAULT
    default_left: np.ndarray  # bool[nodes]
    bias: float
    divisor: float
    round32: bool  # compare inputs as float32 (scikit-learn's trees)
    shift: np.ndarray  # float64[width] or empty (no standardization)
    scale: np.ndarray  # float64[width] or empty
    layers: np.ndarray  # int64[layers, 4]: inputs, outputs, offset of W (outputs x inputs, then b) in params, activation
    params: np.ndarray  # float64
    out_scale: float

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays (what a model costs to keep)."""
        return int(sum(getattr(self, f).nbytes for f in self._fields if isinstance(getattr(self, f), np.ndarray)))

    def scratch(self) -> np.ndarray:
        """The work rows `predict_row` needs: (2, widest layer)."""
        widest = max([self.width, 1] + [int(n) for n in self.layers[:, 1]])
        return np.empty((2, widest))

    def predict(self, X) -> np.ndarray:
        """Predictions for the rows of X (float64), checked: X's width must be the model's, and a non-finite
        prediction is an error."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.width:
            raise ValueError(f"X must have shape (rows, {self.width}) for this compiled model, got {X.shape}")
        out = predict_rows(self, X, np.empty(len(X)), self.scratch())
        if not np.isfinite(out).all():
            raise ValueError(f"compiled model predicted a non-finite value for row {int(np.flatnonzero(~np.isfinite(out))[0])}")
        return out


@njit(cache=True, inline="always", error_model="numpy")
def _leaf(model, x, node):
    """The leaf that row x reaches from `node`. A number is compared first; a NaN fails both comparisons
    and then follows its rule (this order measured 2x faster than testing NaN first)."""
    while True:
        f = model.feature[node]
        if f < 0:
            return node
        v = x[f]
        if model.round32:
            v = np.float64(np.float32(v))
        t = model.threshold[node]
        rule = model.missing[node]
        if rule == ZERO_DEFAULT and -_ZERO <= v <= _ZERO:
            node = model.left[node] if model.default_left[node] else model.right[node]
        elif v <= t:
            node = model.left[node]
        elif v > t:
            node = model.right[node]
        elif rule == MISSING_AS_ZERO:  # NaN read as 0
            node = model.left[node] if 0.0 <= t else model.right[node]
        else:  # NaN under MISSING_DEFAULT, or read as 0 and so "zero" under ZERO_DEFAULT
            node = model.left[node] if model.default_left[node] else model.right[node]


@njit(cache=True, inline="always", error_model="numpy")
def _dense(model, x, scratch):
    """The dense layers' single output for row x; the layers alternate between scratch's two rows."""
    for j in range(model.width):
        scratch[0, j] = (x[j] - model.shift[j]) / model.scale[j] if model.shift.size else x[j]
    c = 0
    for k in range(model.layers.shape[0]):
        n_in, n_out, offset, act = model.layers[k, 0], model.layers[k, 1], model.layers[k, 2], model.layers[k, 3]
        for o in range(n_out):
            s = 0.0
            row = offset + o * n_in
            for j in range(n_in):
                s += model.params[row + j] * scratch[c, j]
            s += model.params[offset + n_out * n_in + o]
            if act == RELU:
                s = max(s, 0.0)
            elif act == TANH:
                s = np.tanh(s)
            elif act == LOGISTIC:
                s = 1.0 / (1.0 + np.exp(-s))
            scratch[1 - c, o] = s
        c = 1 - c
    return scratch[c, 0]


@njit(cache=True, inline="always", error_model="numpy")
def predict_row(model, x, scratch):
    """The model's prediction for one feature row x (what a compiled walk calls at an information set). x must
    have ``model.width`` entries (not checked here: `CompiledModel.predict` and `model_strategies` check it)."""
    total = model.bias
    for t in range(model.roots.size):
        total += model.weights[t] * model.value[_leaf(model, x, model.roots[t])]
    total /= model.divisor
    if model.layers.shape[0]:
        total += model.out_scale * _dense(model, x, scratch)
    return total


@njit(cache=True, error_model="numpy")
def predict_rows(model, X, out, scratch):
    """`predict_row` for every row of X into `out`."""
    for i in range(X.shape[0]):
        out[i] = predict_row(model, X[i], scratch)
    return out


def _model(width, trees=None, dense=None, **scalars) -> CompiledModel:
    """A CompiledModel from a list of tree node tables and/or a dense part, checked finite."""
    nodes = _concatenate(trees or [])
    layers, params, shift, scale = dense or (np.zeros((0, 4), np.int64), np.zeros(0), np.zeros(0), np.zeros(0))
    model = CompiledModel(width=int(width), **nodes, layers=np.asarray(layers, np.int64).reshape(-1, 4),
                          params=np.asarray(params, np.float64), shift=np.asarray(shift, np.float64),
                          scale=np.asarray(scale, np.float64), bias=float(scalars.get("bias", 0.0)),
                          divisor=float(scalars.get("divisor", 1.0)), round32=bool(scalars.get("round32", False)),
                          out_scale=float(scalars.get("out_scale", 1.0)))
    for name in ("weights", "value", "params", "shift", "scale"):
        if not np.isfinite(getattr(model, name)).all():
            raise ValueError(f"cannot compile a model with non-finite {name}")
    if np.isnan(model.threshold).any():  # an infinite one is a split of missing values from the rest
        raise ValueError("cannot compile a model with a NaN threshold")
    if not all(np.isfinite([model.bias, model.divisor, model.out_scale])):
        raise ValueError("cannot compile a model with a non-finite bias, divisor or output scale")
    return model


def _tree(feature, threshold, left, right, value, weight=1.0, missing=MISSING_DEFAULT, default_left=False) -> dict:
    """One tree's node table (children as ids within the tree, -1 at leaves)."""
    feature = np.asarray(feature, np.int64)
    n = len(feature)
    return {"feature": np.where(feature >= 0, feature, -1), "threshold": np.asarray(threshold, np.float64),
            "left": np.asarray(left, np.int64), "right": np.asarray(right, np.int64),
            "value": np.asarray(value, np.float64).reshape(n), "weight": float(weight),
            "missing": np.broadcast_to(np.asarray(missing, np.int8), n),
            "default_left": np.broadcast_to(np.asarray(default_left, np.bool_), n)}


def _concatenate(trees: list[dict]) -> dict:
    """Node tables of several trees as one, children and roots shifted to global node ids."""
    starts = np.cumsum([0] + [len(t["feature"]) for t in trees])[:-1].astype(np.int64)
    def joined(key, dtype):
        return np.concatenate([np.asarray(t[key], dtype) for t in trees]) if trees else np.zeros(0, dtype)
    def shifted(key):
        return np.concatenate([np.where(t[key] >= 0, t[key] + s, -1) for t, s in zip(trees, starts)]) \
            if trees else np.zeros(0, np.int64)
    return {"roots": starts, "weights": np.array([t["weight"] for t in trees], np.float64),
            "feature": joined("feature", np.int64), "threshold": joined("threshold", np.float64),
            "left": shifted("left"), "right": shifted("right"), "value": joined("value", np.float64),
            "missing": joined("missing", np.int8), "default_left": joined("default_left", np.bool_)}


def _sklearn_tree(estimator, weight=1.0) -> dict:
    """A fitted scikit-learn tree (``tree_``) as a node table, its missing-value directions included."""
    tree = estimator.tree_
    if tree.n_outputs != 1:
        raise NotCompilable(f"cannot compile {type(estimator).__name__} with {tree.n_outputs} outputs (one only)")
    go_left = getattr(tree, "missing_go_to_left", np.zeros(tree.node_count, np.bool_))
    return _tree(tree.feature, tree.threshold, tree.children_left, tree.children_right, tree.value[:, 0, 0],
                 weight, MISSING_DEFAULT, np.asarray(go_left, np.bool_))


def _lightgbm(booster) -> CompiledModel:
    """A LightGBM booster from its dumped trees (numerical splits with their missing-value rules)."""
    dump = booster.dump_model()
    objective = str(dump.get("objective", "")).split(" ")[0]
    if objective not in _IDENTITY_OBJECTIVES:
        raise NotCompilable(f"cannot compile a LightGBM booster with objective {objective!r}: its predictions go "
                            f"through a link; allowed: {', '.join(_IDENTITY_OBJECTIVES)}")
    if dump.get("num_tree_per_iteration", 1) != 1:
        raise NotCompilable("cannot compile a LightGBM booster with more than one tree per iteration")
    trees = [_lightgbm_tree(info["tree_structure"], info.get("tree_index")) for info in dump["tree_info"]]
    divisor = len(trees) if dump.get("average_output") and trees else 1.0  # boosting="rf" averages
    return _model(dump["max_feature_idx"] + 1, trees, divisor=divisor)


def _lightgbm_tree(root: dict, index) -> dict:
    """One dumped LightGBM tree (nested dicts) as a node table, nodes numbered depth-first."""
    rows = []  # [feature, threshold, left, right, value, missing, default_left]
    stack = [(root, -1, False)]
    while stack:
        node, parent, is_right = stack.pop()
        k = len(rows)
        if parent >= 0:
            rows[parent][3 if is_right else 2] = k
        if "leaf_value" in node:
            if "leaf_coeff" in node:
                raise NotCompilable(f"cannot compile a LightGBM linear tree (tree {index}): leaves must be constants")
            rows.append([-1, 0.0, -1, -1, node["leaf_value"], MISSING_DEFAULT, False])
            continue
        if node.get("decision_type") != "<=":
            raise NotCompilable(f"cannot compile a LightGBM categorical split (tree {index}, decision_type "
                                f"{node.get('decision_type')!r}): numerical splits ('<=') only")
        rule = {"NaN": MISSING_DEFAULT, "None": MISSING_AS_ZERO, "Zero": ZERO_DEFAULT}[node["missing_type"]]
        rows.append([node["split_feature"], node["threshold"], -1, -1, 0.0, rule, bool(node["default_left"])])
        stack.append((node["right_child"], k, True))
        stack.append((node["left_child"], k, False))
    f, c, lo, hi, v, m, d = zip(*rows)
    return _tree(f, c, lo, hi, v, 1.0, m, d)


def _layers(matrices, biases, activations) -> tuple:
    """Dense layers (W as outputs x inputs) as (layers table, params)."""
    table, params, offset = [], [], 0
    for W, b, act in zip(matrices, biases, activations):
        W, b = np.asarray(W, np.float64), np.asarray(b, np.float64).ravel()
        table.append([W.shape[1], W.shape[0], offset, act])
        params += [W.ravel(), b]
        offset += W.size + b.size
    return np.array(table, np.int64), np.concatenate(params)


def _torch_mlp(model) -> CompiledModel:
    """The project's MLP: standardized inputs, Linear layers with ReLU between them, times the target scale."""
    import torch
    matrices, biases, acts = [], [], []
    for module in model.net_:
        if isinstance(module, torch.nn.Linear):
            matrices.append(module.weight.detach().cpu().numpy())
            biases.append(module.bias.detach().cpu().numpy())
            acts.append(IDENTITY)
        elif isinstance(module, torch.nn.ReLU) and acts:
            acts[-1] = RELU
        else:
            raise NotCompilable(f"cannot compile an MLP layer of type {type(module).__name__} (Linear and ReLU only)")
    layers, params = _layers(matrices, biases, acts)
    return _model(model.n_features_in_, dense=(layers, params, model.mean_, model.scale_), out_scale=model.y_scale_)


def _sklearn_mlp(model) -> CompiledModel:
    if model.activation not in _ACTIVATIONS or model.out_activation_ != "identity" or model.n_outputs_ != 1:
        raise NotCompilable(f"cannot compile MLPRegressor with activation {model.activation!r}, output "
                            f"{model.out_activation_!r}, {model.n_outputs_} outputs (one identity output only)")
    hidden = _ACTIVATIONS[model.activation]
    acts = [hidden] * (len(model.coefs_) - 1) + [IDENTITY]
    layers, params = _layers([W.T for W in model.coefs_], model.intercepts_, acts)
    return _model(model.n_features_in_, dense=(layers, params, np.zeros(0), np.zeros(0)))


def _linear(model) -> CompiledModel:
    coef = np.asarray(model.coef_, np.float64)
    if coef.ndim != 1 and coef.shape[0] != 1:
        raise NotCompilable(f"cannot compile {type(model).__name__} with {coef.shape[0]} outputs (one only)")
    coef = coef.reshape(1, -1)
    layers, params = _layers([coef], [np.atleast_1d(np.asarray(model.intercept_, np.float64))], [IDENTITY])
    return _model(coef.shape[1], dense=(layers, params, np.zeros(0), np.zeros(0)))


def _boosting(model) -> CompiledModel:
    """scikit-learn's gradient boosting: the initial constant, then learning_rate x each tree, in order."""
    from sklearn.dummy import DummyRegressor
    init = model.init_
    if isinstance(init, str) and init == "zero":
        bias = 0.0
    elif isinstance(init, DummyRegressor) and np.size(init.constant_) == 1:
        bias = float(np.ravel(init.constant_)[0])
    else:
        raise NotCompilable(f"cannot compile GradientBoostingRegressor with init {type(init).__name__} "
                            "(the default DummyRegressor or 'zero' only)")
    trees = [_sklearn_tree(e, model.learning_rate) for e in np.ravel(model.estimators_)]
    return _model(model.n_features_in_, trees, bias=bias, round32=True)


def compile_model(model) -> CompiledModel:
    """A fitted regressor as a `CompiledModel` whose predictions equal ``model.predict`` (float64, to
    rounding); `NotCompilable` names a type it cannot reproduce; scikit-learn's `NotFittedError` before fit."""
    from sklearn.base import BaseEstimator
    from sklearn.utils.validation import check_is_fitted

    from . import best_first, mlp, trees
    if isinstance(model, BaseEstimator):
        check_is_fitted(model)
    if isinstance(model, best_first.BestFirstTree):
        t = _tree(model.feature_, model.threshold_, model.left_, model.right_, model.value_)
        return _model(model.n_features_in_, [t])
    if isinstance(model, trees.PartitionTree):
        n = len(model.feature_)
        t = _tree(model.feature_, model.threshold_, np.where(model.feature_ >= 0, np.arange(n) + 1, -1),
                  model.right_, model.value_)
        return _model(model.n_features_in_, [t])
    if isinstance(model, trees.SklearnTree):
        return _model(model.n_features_in_, [_sklearn_tree(model.model_)], round32=True)
    if isinstance(model, mlp.MLP):
        return _torch_mlp(model)
    return _library(model)


def _library(model) -> CompiledModel:
    """`compile_model` for the libraries' own estimators."""
    from sklearn import ensemble, linear_model, neural_network, tree
    if isinstance(model, tree.BaseDecisionTree) and not hasattr(model, "classes_"):
        return _model(model.n_features_in_, [_sklearn_tree(model)], round32=True)
    if isinstance(model, (ensemble.RandomForestRegressor, ensemble.ExtraTreesRegressor)):
        trees = [_sklearn_tree(e) for e in model.estimators_]
        return _model(model.n_features_in_, trees, divisor=len(trees), round32=True)
    if isinstance(model, ensemble.GradientBoostingRegressor):
        return _boosting(model)
    if isinstance(model, neural_network.MLPRegressor):
        return _sklearn_mlp(model)
    if isinstance(model, (linear_model._base.LinearModel, linear_model.SGDRegressor)) and not hasattr(model, "classes_"):
        return _linear(model)
    booster = _booster(model)
    if booster is not None:
        return _lightgbm(booster)
    raise NotCompilable(f"cannot compile a regressor of type {type(model).__name__}; compilable: "
                        f"{', '.join(SUPPORTED)}. Its own predict still works, in batches (the slow path).")


def _booster(model):
    """The LightGBM booster of an LGBMRegressor or a Booster, else None (LightGBM is imported only if loaded)."""
    import sys
    lightgbm = sys.modules.get("lightgbm")
    if lightgbm is None:
        return None
    if isinstance(model, lightgbm.Booster):
        return model
    if isinstance(model, lightgbm.LGBMRegressor):
        return model.booster_
    return None
