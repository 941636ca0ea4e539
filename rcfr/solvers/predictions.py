"""Predictions become strategies: only when they are one finite number per row, and by regret matching on
t x prediction (`match_predictions`, shared by the lean path's full refresh and its visited batches)."""

from __future__ import annotations

import numpy as np
from numba import njit


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


@njit(cache=True, inline="always")
def match_set(prediction, t, f, n, k, sigma):
    """Regret matching on t x prediction[k:k+n] into sigma[f:f+n] (one information set); t = 0 reads no
    prediction and writes the uniform strategy."""
    total = 0.0
    for a in range(n):
        r = prediction[k + a] * t if t != 0.0 else 0.0
        if r > 0.0:
            total += r
    for a in range(n):
        r = prediction[k + a] * t if t != 0.0 else 0.0
        if total > 0.0:
            sigma[f + a] = r / total if r > 0.0 else 0.0
        else:
            sigma[f + a] = 1.0 / n


@njit(cache=True)
def match_predictions(prediction, t, first, size, at, sigma):
    """Regret matching on t x prediction for the information sets (first[i], size[i]) (global sequence ids)
    whose predictions start at prediction[at[i]]; written into sigma. The same arithmetic as
    `rcfr.kernels.regret_matching` on the dense path's estimates, so a set gets the same strategy from a
    full refresh, from a batch of visited sets and from a compiled model in compiled code
    (`rcfr.solvers.model_strategies`). t = 0 (nothing fit yet) reads no prediction and writes uniform
    strategies."""
    for i in range(first.shape[0]):
        match_set(prediction, t, first[i], size[i], at[i], sigma)
