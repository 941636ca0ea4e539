"""Regressors for learned regret estimation: one protocol, a registry by name.

Protocol: ``fit(X, y, sample_weight=None) -> self``, ``predict(X) -> array``, ``complexity() -> int``
(the representation size: leaves for trees, total leaves for boosting, parameters for linear models
and networks). Any scikit-learn regressor works too: `make_regressor` wraps it and infers its
complexity where it can. Regressors with state beyond their inputs (the MLP) also implement
``state_dict()``/``load_state_dict(state)`` (see `Regressor`).
"""

from __future__ import annotations

import copy
from typing import Any

from ..registry import build, keyword_names
from .base import Regressor, SklearnRegressor, complexity_of
from .boosting import LightGBM
from .fasttree import FastTree
from .mlp import MLP
from .simple import ExactTable, Linear
from .trees import BestFirstTree, PartitionTree

REGRESSORS: dict[str, type] = {
    "tree": BestFirstTree,
    "best_first": FastTree,
    "recursive": PartitionTree,
    "lightgbm": LightGBM,
    "mlp": MLP,
    "linear": Linear,
    "table": ExactTable,
}


def register_regressor(name: str, factory) -> None:
    """Make `make_regressor(name)` / ``{"name": name, ...}`` build ``factory(**options)``."""
    if not callable(factory):
        raise TypeError(f"a regressor factory must be callable, got {factory!r}")
    REGRESSORS[name] = factory


def with_seed(spec: Any, seed: int) -> Any:
    """`spec` with its random seed set to `seed`, so that a run's seed reaches every random regressor:
    a name or dict whose factory takes a ``seed`` gets one unless it sets its own; an estimator whose
    ``random_state`` is None (unseeded) comes back as a clone (`sklearn.base.clone`) with
    ``random_state=seed``. Anything else (an explicit random_state included) is returned as it is."""
    if isinstance(spec, (str, dict)):
        named = {"name": spec} if isinstance(spec, str) else spec
        if "seed" in named or named.get("name") not in REGRESSORS:
            return spec
        return {**named, "seed": seed} if "seed" in keyword_names(REGRESSORS[named["name"]]) else spec
    get_params = getattr(spec, "get_params", None)
    if callable(get_params) and get_params(deep=False).get("random_state", 0) is None:
        from sklearn.base import clone
        return clone(spec).set_params(random_state=seed)
    return spec


def make_regressor(spec: Any = "best_first", **options):
    """A fresh regressor from a name and options (``make_regressor("best_first", max_leaves=64)``),
    a dict (``{"name": "best_first", "max_leaves": 64}``), or an object with ``fit``/``predict``
    (copied, so each caller gets its own; wrapped to give ``complexity()`` when it lacks one)."""
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
                         f"or an object with fit/predict; got {spec!r}")
    model = copy.deepcopy(spec)
    return model if callable(getattr(model, "complexity", None)) else SklearnRegressor(model)


__all__ = ["BestFirstTree", "ExactTable", "FastTree", "LightGBM", "Linear", "MLP", "PartitionTree", "REGRESSORS",
           "Regressor", "SklearnRegressor", "complexity_of", "make_regressor", "register_regressor",
           "with_seed"]
