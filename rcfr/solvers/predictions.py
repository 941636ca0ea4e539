"""Predictions become strategies only when they are one finite number per row."""

from __future__ import annotations

import numpy as np


def checked_prediction(model, prediction, rows: int, who: str) -> np.ndarray:
    """`prediction` as `rows` finite numbers, else a ValueError naming the regressor and `who`: regret
    matching would read NaN as "no positive regret" and play uniform without a word."""
    name = repr(model) if not repr(model).startswith("<") else type(model).__name__
    name = name if len(name) <= 120 else name[:117] + "..."
    try:
        values = np.asarray(prediction, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or values.shape != (rows,):
        raise ValueError(f"regressor {name} predicted {type(prediction).__name__} of shape {np.shape(prediction)} "
                         f"for {who}; expected {rows} numbers")
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(f"regressor {name} predicted {values[bad][0]} for {who} "
                         f"({int(bad.sum())} of {rows} predictions are not finite)")
    return values
