"""The regressor protocol and the adapter that makes any scikit-learn regressor fit it."""

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


class Regressor:
    """Protocol: fit to weighted examples, predict, and report the representation size.

    Optional: ``state_dict() -> dict[str, np.ndarray]`` and ``load_state_dict(state)`` for regressors
    whose next fit depends on more than its inputs (warm-started weights, optimizer, RNG); regression
    stores save and restore it so checkpoints resume exactly. Regressors without it are refit from
    the saved targets on load.
    """

    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> "Regressor":
        raise NotImplementedError

    def predict(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def complexity(self) -> int:
        raise NotImplementedError


def complexity_of(model) -> int | None:
    """Leaves of a fitted tree (summed over an ensemble), parameters of a linear model or an MLP;
    None when the model's kind is unknown."""
    if callable(getattr(model, "complexity", None)):
        return int(model.complexity())
    if hasattr(model, "tree_"):
        return int(model.tree_.n_leaves)
    if hasattr(model, "booster_"):  # LightGBM's scikit-learn interface
        return sum(t["num_leaves"] for t in model.booster_.dump_model()["tree_info"])
    if hasattr(model, "estimators_"):  # forests and gradient boosting
        parts = np.ravel(np.asarray(model.estimators_, dtype=object))
        sizes = [complexity_of(p) for p in parts]
        return None if any(s is None for s in sizes) else int(sum(sizes))
    if hasattr(model, "coefs_"):  # sklearn MLPRegressor
        return int(sum(w.size for w in model.coefs_) + sum(b.size for b in model.intercepts_))
    if hasattr(model, "coef_"):
        return int(np.size(model.coef_) + np.size(getattr(model, "intercept_", 0.0)))
    return None


class SklearnRegressor(Regressor):
    """Any estimator with fit/predict; sample weights are passed when its fit accepts them."""

    def __init__(self, estimator):
        self.estimator = estimator
        self._weights = "sample_weight" in inspect.signature(estimator.fit).parameters

    def fit(self, X, y, sample_weight=None):
        if sample_weight is not None and self._weights:
            self.estimator.fit(X, y, sample_weight=sample_weight)
        elif sample_weight is not None and np.ptp(sample_weight) > 0:
            raise ValueError(f"{type(self.estimator).__name__}.fit takes no sample_weight; use weights=None")
        else:
            self.estimator.fit(X, y)
        return self

    def predict(self, X):
        return np.asarray(self.estimator.predict(X), dtype=np.float64).ravel()

    def complexity(self) -> int | None:
        return complexity_of(self.estimator)

    def __repr__(self) -> str:
        return f"SklearnRegressor({self.estimator!r})"
