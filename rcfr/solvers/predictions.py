"""Predictions become strategies only when they are one finite number per row."""

from __future__ import annotations

import numpy as np


def checked_prediction(model, prediction, rows: int, who: str) -> np.ndarray:
    """`prediction` as `rows` finite numbers, else a ValueError naming the regressor and `who`: regret
    matching would read NaN as "no positive regret" and play uniform without a word."""
    try:
        values = np.asarray(prediction, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or values.shape != (rows,):
        raise ValueError(f"regressor {_name(model)} predicted {type(prediction).__name__} of shape "
                         f"{np.shape(prediction)} for {who}; expected {rows} numbers")
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"regressor {_name(model)} predicted {values[bad][0]} for {who} "
                         f"({int(bad.sum())} of {rows} predictions are not finite)")
    return values


def _name(model) -> str:
    """The regressor's repr with its parameters (a scikit-learn estimator's), else its class name."""
    text = repr(model)
    text = type(model).__name__ if text.startswith("<") else text
    return text if len(text) <= 120 else text[:117] + "..."
