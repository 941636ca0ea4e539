"""Strategies made where an information set is met: the encoder's rows, a compiled model, regret matching.

The lean path's visited profile predicts in batches, returning to Python for each (`rcfr.solvers.visited`).
Code that holds a set's game state (the rules path keeps one per set; `rcfr.features.encoders.infoset_states`
replays one on a compiled game) and the player's compiled model (`rcfr.regressors.compiled`) can make the
strategy on the spot instead: `model_strategy` writes the set's rows with the game's encoder, predicts
each with `predict_row` and regret-matches t x prediction with the lean path's own arithmetic
(`predictions.match_set`). So a set gets the strategy a batch would give it: bit for bit for trees, whose
compiled predictions are the regressor's own; to rounding (1e-12) for dense layers. It is the unit a
sampling walk calls at a set (issue 34, item 1); `model_strategies` applies it to many sets from Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..regressors.compiled import predict_row
from .predictions import match_set


@njit(cache=True, inline="always")
def model_strategy(model, encode, encoder_data, state, n, t, rows, scratch, sigma, f):
    """The strategy of the set whose (fast) game state is `state`, with n actions, into sigma[f:f+n]: rows[a]
    gets action a's features (``encode``), sigma[f+a] its prediction, then regret matching on t x prediction
    in place (``match_set`` reads each entry before writing it). False if a prediction is not finite (then
    sigma[f:f+n] holds the predictions: the caller must refuse them)."""
    for a in range(n):
        rows[a, :] = 0.0
        encode(encoder_data, state, a, rows[a])
        sigma[f + a] = predict_row(model, rows[a], scratch)
        if not np.isfinite(sigma[f + a]):
            return False
    match_set(sigma, t, f, n, f, sigma)
    return True


@njit(cache=True)
def _strategies(model, encode, encoder_data, states, sizes, t, first, sigma, rows, scratch):
    """`model_strategy` for set i (state states[i], sizes[i] actions) into sigma[first[i]:...]; -1, or the
    first set whose prediction is not finite."""
    for i in range(states.shape[0]):
        if not model_strategy(model, encode, encoder_data, states[i], sizes[i], t, rows, scratch, sigma, first[i]):
            return i
    return -1


def _pinned(encoder):
    """The encoder's function as a first-class function of type `ENCODE`: one compiled `_strategies` (cached
    on disk) serves every encoder, where the dispatcher itself would compile one per encoder, in every process."""
    from rcfr.features.encoders import ENCODE, _Pinned
    return _Pinned(encoder.encode, ENCODE)


def model_strategies(model, encoder, states, sizes, t: float) -> np.ndarray:
    """The strategies (concatenated, set after set) of the sets at these fast `states` ((sets, width) int64),
    with `sizes` actions each, from compiled `model` at iteration t (`model_strategy`). The model must read
    the encoder's rows: a width that differs is refused, naming both."""
    from ..regressors.compiled import CompiledModel
    if not isinstance(model, CompiledModel):
        raise TypeError(f"model must be a CompiledModel (rcfr.regressors.compile_model), got {type(model).__name__}")
    if model.width != encoder.num_features:
        raise ValueError(f"the model reads rows of {model.width} features but the encoder writes "
                         f"{encoder.num_features} ({', '.join(encoder.names)}): fit the model on this encoder's rows")
    states = np.ascontiguousarray(states, np.int64)
    sizes = np.ascontiguousarray(sizes, np.int64)
    if states.ndim != 2 or sizes.shape != (len(states),) or (sizes.size and sizes.min() < 1):
        raise ValueError(f"states must be (sets, width) and sizes (sets,) of counts >= 1, got {states.shape} and "
                         f"{sizes.shape}")
    first = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    sigma = np.empty(int(sizes.sum()))
    rows = np.empty((int(sizes.max(initial=1)), model.width))
    bad = _strategies(model, _pinned(encoder), encoder.data, states, sizes, float(t), first, sigma, rows, model.scratch())
    if bad >= 0:
        raise ValueError(f"the compiled model predicted a non-finite value for set {bad} (state {states[bad].tolist()})")
    return sigma
