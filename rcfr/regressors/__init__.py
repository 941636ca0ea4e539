"""Regressors for learned regret estimation: scikit-learn estimators, and a registry by name.

Every built-in regressor is a scikit-learn estimator (``fit(X, y, sample_weight)``, ``predict``,
``get_params``; `sklearn.base.clone` copies it; `NotFittedError` before fit) with a ``size()``: the
representation size (leaves for trees, total leaves for boosting, parameters for linear models and
networks). Any other scikit-learn regressor works as it is: the regret stores read its size with
`size` where they can. Regressors with state beyond their inputs (the MLP) also implement
``state_dict()``/``load_state_dict(state)`` (see `rcfr.regressors.base`). `compile_model` turns a fitted
tree, forest, booster, MLP or linear model into flat arrays that compiled code predicts from
(`rcfr.regressors.compiled`).
"""

from __future__ import annotations

import copy
from typing import Any

from ..registry import build
from .base import seeded, size, stateful
from .best_first import BestFirstTree
from .compiled import CompiledModel, NotCompilable, compile_model
from .library import lightgbm, linear
from .mlp import MLP
from .table import ExactTable
from .trees import PartitionTree, SklearnTree

REGRESSORS: dict[str, Any] = {
    "best_first": BestFirstTree,
    "tree": SklearnTree,
    "recursive": PartitionTree,
    "lightgbm": lightgbm,
    "mlp": MLP,
    "linear": linear,
    "table": ExactTable,
}


def register_regressor(name: str, factory) -> None:
    """Make `make_regressor(name)` / ``{"name": name, ...}`` build ``factory(**options)``."""
    if not callable(factory):
        raise TypeError(f"a regressor factory must be callable, got {factory!r}")
    REGRESSORS[name] = factory


def make_regressor(spec: Any = "best_first", **options):
    """A fresh, unfitted regressor from a name and options (``make_regressor("best_first", max_leaves=64)``),
    a dict (``{"name": "best_first", "max_leaves": 64}``), or an estimator: a scikit-learn one is cloned
    (`sklearn.base.clone`, unfitted), any other object with fit/predict deep-copied; each caller gets its own."""
    model = _make(spec, **options)
    if getattr(type(model), "_parameter_constraints", None):  # a scikit-learn estimator checks them in
        model._validate_params()  # fit; here they fail before any work, naming the field and range
    return model


def _make(spec: Any, **options):
    """`make_regressor` before the parameter check."""
    if isinstance(spec, str):
        return build("regressor", REGRESSORS, spec, **options)
    if options:
        raise ValueError(f"regressor options {sorted(options)} go with a regressor name, not with {spec!r}")
    if isinstance(spec, dict):
        options = dict(spec)
        if "name" not in options:
            raise ValueError(f"a regressor dict needs a 'name'; allowed: {', '.join(sorted(REGRESSORS))}")
        return build("regressor", REGRESSORS, options.pop("name"), **options)
    if not (hasattr(spec, "fit") and hasattr(spec, "predict")):
        raise ValueError(f"regressor must be a name ({', '.join(sorted(REGRESSORS))}), a dict with 'name', "
                         f"or an estimator with fit/predict; got {spec!r}")
    if hasattr(spec, "get_params"):
        from sklearn.base import clone
        return clone(spec)
    return copy.deepcopy(spec)


__all__ = ["MLP", "REGRESSORS", "BestFirstTree", "CompiledModel", "ExactTable", "NotCompilable", "PartitionTree",
           "SklearnTree", "compile_model", "lightgbm", "linear", "make_regressor", "register_regressor", "seeded",
           "size", "stateful"]
