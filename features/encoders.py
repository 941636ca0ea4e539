"""On-demand sequence features: feature rows computed in compiled code for just the sequences asked for.

A dense `Features` matrix holds (sequences x features) floats: fine for Leduc, gigabytes for a game of
1e7 sequences. An *encoder* instead computes one sequence's row from the game's fast state
(`rcfr.games.fast.FastGame`) at any history of the sequence's information set, so a solver that visits
a few thousand information sets per iteration pays for those rows only.

An encoder is a `FeatureEncoder`: column names, its own ``data`` tuple ``(int64[::1], float64[::1])``
and an ``encode(data, state, action, out)`` function compiled with ``@njit(cache=True)`` that writes the
row of the sequence (information set of ``state``, local action index ``action``) into ``out``. It
must use only what the acting player knows: every history of an information set gives the same row
(`tests/test_encoders.py` checks this for every registered encoder). `sequence_rows` replays each
requested information set's representative history from the root (forced moves collapsed, as the
compiler does) and calls ``encode``; `encoded_features` applies it to every sequence, which is how an
encoder's dense `Features` are made, so the two forms agree by construction.

Register one with `register_encoder(name, make)`, ``make(game, **params) -> FeatureEncoder``: this
also registers the dense features under the same name.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, NamedTuple

import numpy as np
from numba import types as nb

from rcfr.compiler import replay
from rcfr.games.fast import DATA, FUNCTION_TYPES, STATE
from rcfr.numba_lazy import njit_on_first_call
from rcfr.registry import check_choice, keyword_names

#: The signature of an encoder's ``encode`` function.
ENCODE = nb.void(DATA, STATE, nb.int64, nb.float64[::1])


class FeatureEncoder(NamedTuple):
    """Column names, the encoder's data and its compiled ``encode(data, state, action, out)``, and the
    fingerprint of the game it was made for (`make_encoder` fills it; None: unchecked).

    Optionally split: the first ``set_width`` columns depend on the state alone, ``encode_set(data, state,
    action, out)`` writes just those (action unread) and ``encode_action`` just the others, each onto zeros, so
    that a set's rows cost one set part and n action parts (`rcfr.solvers.model_strategies.model_strategy`) where
    ``encode`` would compute the set part n times. Together they write exactly what ``encode`` writes
    (`tests/test_encoders.py` checks it bit for bit); 0 and None: not split."""

    names: tuple[str, ...]
    data: Any
    encode: Any
    fingerprint: str | None = None
    set_width: int = 0
    encode_set: Any = None
    encode_action: Any = None

    @property
    def num_features(self) -> int:
        return len(self.names)


def _rows_signature(action):
    fn = FUNCTION_TYPES
    return nb.void(fn["initial"], fn["player"], fn["num_children"], fn["child"], nb.FunctionType(ENCODE), DATA,
                   DATA, nb.int64, nb.int32[::1], action[::1], nb.int64[::1], nb.int32[::1], nb.int64[::1],
                   nb.float64[:, ::1])


@njit_on_first_call([_rows_signature(nb.int16), _rows_signature(nb.int32)], cache=True)
def _rows(initial, player, num_children, child, encode, game_data, encoder_data, width, parent, action,
          infoset_history, infoset_first_seq, sequences, out):
    """Row r of `out` gets the features of global sequence ``sequences[r]``; consecutive sequences of one
    information set share one replay."""
    state = np.empty(width, np.int64)
    tmp = np.empty(width, np.int64)
    path = np.empty(64, np.int64)
    current = -1
    for r in range(sequences.shape[0]):
        s = sequences[r]
        # the information set of s: the last set whose first sequence is <= s
        lo, hi = 0, infoset_first_seq.shape[0] - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if infoset_first_seq[mid] <= s:
                lo = mid
            else:
                hi = mid - 1
        if lo != current:
            current = lo
            path = replay(initial, player, num_children, child, game_data, parent, action, infoset_history[lo],
                          state, tmp, path)
        out[r, :] = 0.0
        encode(encoder_data, state, s - infoset_first_seq[lo], out[r])


def sequence_rows(game, encoder: FeatureEncoder, sequences, out: np.ndarray | None = None) -> np.ndarray:
    """The (len(sequences), num_features) rows of these global sequence ids (sorted ids are fastest)."""
    if encoder.fingerprint is not None and encoder.fingerprint != getattr(game, "fingerprint", None):
        raise ValueError(f"this encoder was made for another game than {game.name} (its data, such as the "
                         f"number of cards, would be read wrongly); make one with make_encoder(game, name)")
    fast = game.rules.fast()
    if fast is None:
        raise ValueError(f"{game.name} has no fast path (GameRules.fast), so no on-demand features; "
                         f"use dense features")
    sequences = np.ascontiguousarray(sequences, np.int64)
    if sequences.size and (sequences.min() < 0 or sequences.max() >= game.num_sequences):
        raise ValueError(f"sequence ids must lie in [0, {game.num_sequences}); got "
                         f"[{sequences.min()}, {sequences.max()}]")
    if out is None:
        out = np.empty((sequences.size, encoder.num_features))
    elif out.shape != (sequences.size, encoder.num_features) or out.dtype != np.float64:
        raise ValueError(f"out must be float64 of shape {(sequences.size, encoder.num_features)}, got "
                         f"{out.dtype} {out.shape}")
    _rows(fast.initial, fast.player, fast.num_children, fast.child, encoder.encode, fast.data, encoder.data,
          fast.width, np.ascontiguousarray(game.parent, np.int32), np.ascontiguousarray(game.action),
          np.ascontiguousarray(game.infoset_history, np.int64), np.ascontiguousarray(game.infoset_first_seq, np.int32),
          sequences, out)
    return out


class _Pinned(nb.WrapperAddressProtocol):
    """A compiled function passed as a first-class function with its address looked up once (numba looks a
    dispatcher's up at every call, tens of microseconds each)."""

    def __init__(self, function, signature):
        from numba.experimental.function_type import _get_wrapper_address
        self.function, self._signature = function, signature
        self._address = _get_wrapper_address(function, signature)

    def __wrapper_address__(self):
        return self._address

    def signature(self):
        return self._signature


def bound_rows(game, encoder: FeatureEncoder):
    """`sequence_rows(game, encoder, sequences)` as a function of the sequences, its checks and arguments
    prepared once and the compiled `_rows` called directly (an order of magnitude less per call), for
    callers that ask for a few rows many times (`rcfr.solvers.visited`). Sequence ids are not checked."""
    from rcfr.games.fast import SIGNATURES
    sequence_rows(game, encoder, np.zeros(1, np.int64))  # checks the game and compiles
    fast = game.rules.fast()
    action = np.ascontiguousarray(game.action)
    arrays = (np.ascontiguousarray(game.parent, np.int32), action, np.ascontiguousarray(game.infoset_history, np.int64),
              np.ascontiguousarray(game.infoset_first_seq, np.int32))
    try:
        functions = [_Pinned(getattr(fast, role), SIGNATURES[role]) for role in ("initial", "player", "num_children",
                                                                               "child")]
        functions.append(_Pinned(encoder.encode, ENCODE))
        kind = nb.int16 if action.dtype == np.int16 else nb.int32
        entry = _rows.overloads[_rows_signature(kind).args].entry_point
    except Exception:  # numba internals moved: the checked path
        return lambda sequences: sequence_rows(game, encoder, sequences)

    def rows(sequences):
        sequences = np.ascontiguousarray(sequences, np.int64)
        out = np.empty((sequences.size, encoder.num_features))
        entry(*functions, fast.data, encoder.data, fast.width, *arrays, sequences, out)
        return out
    return rows


def _states_signature(action):
    fn = FUNCTION_TYPES
    return nb.void(fn["initial"], fn["player"], fn["num_children"], fn["child"], DATA, nb.int32[::1], action[::1],
                   nb.int64[::1], nb.int64[:, ::1])


@njit_on_first_call([_states_signature(nb.int16), _states_signature(nb.int32)], cache=True)
def _states(initial, player, num_children, child, game_data, parent, action, histories, out):
    tmp = np.empty(out.shape[1], np.int64)
    path = np.empty(64, np.int64)
    for r in range(histories.shape[0]):
        path = replay(initial, player, num_children, child, game_data, parent, action, histories[r], out[r], tmp, path)


def infoset_states(game, infosets) -> np.ndarray:
    """(len(infosets), width) int64: the fast state of each information set's first history."""
    fast = game.rules.fast()
    histories = np.ascontiguousarray(game.infoset_history[np.asarray(infosets, np.int64)], np.int64)
    out = np.empty((histories.size, fast.width), np.int64)
    _states(fast.initial, fast.player, fast.num_children, fast.child, fast.data,
            np.ascontiguousarray(game.parent, np.int32), np.ascontiguousarray(game.action), histories, out)
    return out


def _encode_signature():
    return nb.void(nb.FunctionType(ENCODE), DATA, nb.int64[:, ::1], nb.int64[::1], nb.float64[:, ::1])


@njit_on_first_call([_encode_signature()], cache=True)
def _encode_rows(encode, encoder_data, states, actions, out):
    for r in range(states.shape[0]):
        out[r, :] = 0.0
        encode(encoder_data, states[r], actions[r], out[r])


def encode_rows(encoder: FeatureEncoder, states, actions) -> np.ndarray:
    """The rows of (state, local action) pairs a traversal already holds: no replay (``states``: one fast
    state per row, (rows, width) int64, each at a decision of the player to move)."""
    states = np.ascontiguousarray(states, np.int64)
    actions = np.ascontiguousarray(actions, np.int64)
    if states.ndim != 2 or actions.shape != (states.shape[0],):
        raise ValueError(f"states must be (rows, width) and actions (rows,), got {states.shape} and {actions.shape}")
    out = np.empty((states.shape[0], encoder.num_features))
    _encode_rows(encoder.encode, encoder.data, states, actions, out)
    return out


def bound_encode_rows(encoder: FeatureEncoder):
    """`encode_rows(encoder, states, actions)` with the encoder's function pinned and the compiled loop called
    directly (no typing of the function argument per call), for callers that encode a few rows many times
    (the rules path's discovery walks). Inputs are not checked."""
    encode_rows(encoder, np.zeros((0, 1), np.int64), np.zeros(0, np.int64))  # compiles
    try:
        encode = _Pinned(encoder.encode, ENCODE)
        entry = _encode_rows.overloads[_encode_signature().args].entry_point
    except Exception:  # numba internals moved: the checked path
        return lambda states, actions: encode_rows(encoder, states, actions)

    def rows(states, actions):
        out = np.empty((states.shape[0], encoder.num_features))
        entry(encode, encoder.data, np.ascontiguousarray(states, np.int64), np.ascontiguousarray(actions, np.int64),
              out)
        return out
    return rows


def encoded_features(game, encoder: FeatureEncoder):
    """The dense `Features` of every sequence, made by the encoder."""
    from .base import Features
    return Features(sequence_rows(game, encoder, np.arange(game.num_sequences)), tuple(encoder.names))


ENCODERS: dict[str, Callable] = {}


def register_encoder(name: str, make: Callable) -> None:
    """Make ``make_encoder(game, name, **params)`` call ``make(game, **params) -> FeatureEncoder``, and
    register the dense features `name` computed through it."""
    from .base import register_features
    if not callable(make):
        raise TypeError(f"an encoder factory must be callable, got {make!r}")
    ENCODERS[name] = make

    def extract(game, **params):
        return encoded_features(game, make(game, **params))

    extract.__signature__ = inspect.signature(make)  # so feature_matrix checks the same options
    register_features(name, extract)


def make_encoder(game, name: str, **params) -> FeatureEncoder:
    """The encoder `name` for `game`, with its options checked."""
    make = ENCODERS[check_choice("encoder", name, sorted(ENCODERS))]
    unknown = sorted(set(params) - set(keyword_names(make)[1:]))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))} for encoder {name!r}; "
                         f"allowed: {', '.join(keyword_names(make)[1:]) or 'none'}")
    return make(game, **params)._replace(fingerprint=getattr(game, "fingerprint", None))
