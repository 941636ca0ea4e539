"""Library estimators with the defaults RCFR wants: ridge regression and LightGBM.

These are factories, not wrappers: each returns the library's own scikit-learn estimator, so
`sklearn.base.clone`, ``get_params`` and the library's documentation apply as they are, and the
regret stores read their size (coefficients, or total leaves) with `rcfr.regressors.size`.
Arguments are checked here, before any work, with errors naming the field and its range.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, validate_params

_LIGHTGBM = None  # the LightGBMRegressor class, made on first use (LightGBM loads then, not on import)


def check_sample_weight(sample_weight, rows: int):
    """`sample_weight` as `rows` finite non-negative float64 numbers with a positive sum, else a ValueError
    (what the other regressors refuse; LightGBM itself predicts -inf, or a constant, from such weights)."""
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (rows,) or not np.isfinite(w).all() or (w.size and w.min() < 0) or not w.sum() > 0:
        raise ValueError(f"sample_weight must be {rows} finite non-negative numbers with a positive sum, got "
                         f"shape {w.shape}, min {w.min() if w.size else None}, sum {w.sum()}")
    return w


def _lightgbm_class():
    global _LIGHTGBM
    if _LIGHTGBM is None:
        import lightgbm

        class LightGBMRegressor(lightgbm.LGBMRegressor):
            """`lightgbm.LGBMRegressor` that refuses negative, non-finite or all-zero sample weights."""

            def fit(self, X, y, sample_weight=None, **kwargs):
                if sample_weight is not None:
                    sample_weight = check_sample_weight(sample_weight, np.shape(X)[0])
                try:
                    return super().fit(X, y, sample_weight=sample_weight, **kwargs)
                except lightgbm.basic.LightGBMError as err:
                    if "left_count" in str(err):  # seen on Leduc with min_child_samples=1 (docs/neural.md)
                        err.add_note("A known LightGBM failure with leaves of very few rows (LightGBM issue #4739): "
                                     "raise min_child_samples (5 avoided it on Leduc).")
                    raise

        LightGBMRegressor.__module__ = __name__  # pickles as rcfr.regressors.library.LightGBMRegressor
        _LIGHTGBM = LightGBMRegressor
    return _LIGHTGBM


def __getattr__(name: str):
    if name == "LightGBMRegressor":
        return _lightgbm_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@validate_params({"alpha": [Interval(Real, 0, None, closed="left")], "random_state": ["random_state"]},
                 prefer_skip_nested_validation=True)
def linear(alpha: float = 1e-3, random_state=None):
    """`sklearn.linear_model.Ridge`; size = coefficients + intercept."""
    from sklearn.linear_model import Ridge
    return Ridge(alpha=alpha, random_state=random_state)


@validate_params({"n_estimators": [Interval(Integral, 1, None, closed="left")],
                  "num_leaves": [Interval(Integral, 2, None, closed="left")],
                  "learning_rate": [Interval(Real, 0, None, closed="neither")],
                  "min_child_samples": [Interval(Integral, 1, None, closed="left")],
                  "subsample": [Interval(Real, 0, 1, closed="right")],
                  "random_state": [None, Interval(Integral, 0, None, closed="left")]},
                 prefer_skip_nested_validation=True)
def lightgbm(n_estimators: int = 20, num_leaves: int = 8, learning_rate: float = 1.0, min_child_samples: int = 1,
             subsample: float = 0.95, random_state: int | None = None):
    """`lightgbm.LGBMRegressor` (a subclass that refuses negative or all-zero sample weights, as every other
    regressor does), single-threaded and deterministic for a given `random_state`; size = total leaves
    over all trees.

    The default learning rate is 1 (no shrinkage): under a small fixed leaf budget, full steps fit
    RCFR's targets best. Each tree sees a random `subsample` of the rows (bagging), so `random_state`
    matters: with ``subsample=1`` LightGBM is deterministic and every seed gives the same model. The
    measurements behind both defaults are in docs/rcfr.md, "Regressors".
    """
    return _lightgbm_class()(
        n_estimators=n_estimators, num_leaves=num_leaves, learning_rate=learning_rate,
        min_child_samples=min_child_samples, min_child_weight=0.0, min_data_in_bin=1,
        subsample=subsample, subsample_freq=1 if subsample < 1 else 0,
        random_state=random_state, n_jobs=1, deterministic=True, verbose=-1)
