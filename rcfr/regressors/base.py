"""What the regret stores need from any scikit-learn regressor: weighted fits, flat predictions, size.

A regressor is a scikit-learn estimator (``fit(X, y, sample_weight)``, ``predict(X)``,
``get_params``/``set_params``, so `sklearn.base.clone` copies it). Regressors whose next fit depends
on more than their inputs (the warm-started MLP) also implement ``state_dict() -> dict[str, array]``
and ``load_state_dict(state)``; regression stores save and restore it so checkpoints resume exactly.
"""

from __future__ import annotations

import inspect

import numpy as np


def cache_key(X):
    """X itself when it may key a cache of work derived from it, else None: only an array that no
    writable array shares memory with cannot change between fit and predict (a read-only view of a
    writable array changes with it)."""
    memory = X
    while isinstance(memory, np.ndarray):
        if memory.flags.writeable:
            return None
        memory = memory.base
    return X if memory is None or isinstance(memory, bytes) else None


def fit(model, X, y, sample_weight=None):
    """``model.fit`` with `sample_weight` when its fit takes one; equal weights may be dropped, unequal
    ones never are (an estimator without weights then fails, naming itself)."""
    if sample_weight is not None and "sample_weight" in inspect.signature(model.fit).parameters:
        return model.fit(X, y, sample_weight=sample_weight)
    if sample_weight is not None and np.ptp(sample_weight) > 0:
        raise ValueError(f"{type(model).__name__}.fit takes no sample_weight; use weights=None")
    return model.fit(X, y)


def predict(model, X) -> np.ndarray:
    """``model.predict(X)`` as a flat float64 array."""
    return np.asarray(model.predict(X), dtype=np.float64).ravel()


def size(model) -> int | None:
    """Representation size of a fitted regressor: its own ``size()``, else leaves of a tree (summed over
    an ensemble) or parameters of a linear model or an MLP; 0 before the first fit; None when the kind
    is unknown."""
    from sklearn.base import BaseEstimator
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted
    if isinstance(model, BaseEstimator):
        try:
            check_is_fitted(model)
        except NotFittedError:
            return 0
    if callable(getattr(model, "size", None)):
        return model.size()
    if hasattr(model, "tree_"):
        return int(model.tree_.n_leaves)
    if hasattr(model, "booster_"):  # LightGBM's scikit-learn interface
        return sum(t["num_leaves"] for t in model.booster_.dump_model()["tree_info"])
    if hasattr(model, "estimators_"):  # forests and gradient boosting
        parts = np.ravel(np.asarray(model.estimators_, dtype=object))
        sizes = [size(p) for p in parts]
        known = [s for s in sizes if s is not None]
        return int(sum(known)) if len(known) == len(sizes) else None
    if hasattr(model, "coefs_"):  # sklearn MLPRegressor
        return int(sum(w.size for w in model.coefs_) + sum(b.size for b in model.intercepts_))
    if hasattr(model, "coef_"):
        return int(np.size(model.coef_) + np.size(getattr(model, "intercept_", 0.0)))
    return None


def stateful(model) -> bool:
    """Whether a regressor follows the optional state protocol (``state_dict``/``load_state_dict``)."""
    return callable(getattr(model, "state_dict", None)) and callable(getattr(model, "load_state_dict", None))


def seeded(model, seed: int):
    """`model` with ``random_state=seed`` when it has that parameter and leaves it None (unseeded), so a
    solver's seed reaches every random regressor; an explicit random_state is kept."""
    params = model.get_params(deep=False) if hasattr(model, "get_params") else {}
    if "random_state" in params and params["random_state"] is None:
        model.set_params(random_state=int(seed))
    return model


def fit_inputs(estimator, X, y, sample_weight):
    """Validated (X, y, sample_weight) for ``estimator.fit``: its parameters against their constraints
    (errors name the field and the allowed range), then finite 2-D X, 1-D numeric y, non-negative
    weights (ones when None). Sets ``n_features_in_``. X comes back as the same object when it is
    already a float64 array, so identity caches keep working.

    RCFR refits on one read-only feature matrix every iteration: once validated, it is remembered and
    not checked again (nor are unchanged parameters); y and the weights get a quick check, and the
    full one only when the quick one fails (so errors read as scikit-learn's)."""
    from sklearn.utils.validation import _check_sample_weight, validate_data
    params = estimator.get_params(deep=False)
    known_X, known_params = getattr(estimator, "_checked", (None, None))
    if not _same(params, known_params):
        estimator._validate_params()
    if X is not None and X is known_X:
        quick = _quick_targets(y, sample_weight, len(X))
        if quick is not None:
            estimator._checked = (X, params)
            return (X, *_kernel_ready(*quick))
    X, y = validate_data(estimator, X, y, y_numeric=True, dtype=np.float64)
    w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    estimator._checked = (cache_key(X), params)
    return (X, *_kernel_ready(y, w))


def _kernel_ready(y, w):
    """y and the weights as writable, contiguous float64: the compiled fits see one type whatever the caller passed
    (integer targets, a read-only or strided array would each compile the growth again)."""
    return np.require(y, np.float64, ("C", "W")), np.require(w, np.float64, ("C", "W"))


def predict_input(estimator, X):
    """X validated for ``estimator.predict``: `NotFittedError` before fit, then the fitted width
    (the read-only matrix of the last fit is known to be valid)."""
    from sklearn.utils.validation import check_is_fitted, validate_data
    if X is not None and X is getattr(estimator, "_checked", (None,))[0]:
        return X
    check_is_fitted(estimator)
    if (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2 and len(X) > 0
            and X.shape[1] == getattr(estimator, "n_features_in_", None)
            and not hasattr(estimator, "feature_names_in_") and np.isfinite(X).all()):
        return X  # what validate_data returns, without its per-call cost (small batches: `rcfr.solvers.visited`)
    return validate_data(estimator, X, reset=False, dtype=np.float64)


def _same(params: dict, known) -> bool:
    try:
        return known is not None and bool(params == known)
    except ValueError:  # parameters that do not compare (arrays): check them again
        return False


def _quick_targets(y, sample_weight, rows: int):
    """(y, weights) as float64 when they plainly fit `rows` rows (finite y; finite non-negative weights
    with a positive sum), else None."""
    y = np.asarray(y, dtype=np.float64) if isinstance(y, np.ndarray) else None
    if y is None or y.shape != (rows,) or not np.isfinite(y).all():
        return None
    if sample_weight is None:
        return y, np.ones(rows)
    w = np.asarray(sample_weight, dtype=np.float64) if isinstance(sample_weight, np.ndarray) else None
    if w is None or w.shape != (rows,) or not np.isfinite(w).all() or w.min() < 0 or not w.sum() > 0:
        return None
    return y, w
