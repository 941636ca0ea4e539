"""The update walk of full-width CFR over a game's rules (`rcfr.solvers.rules_cfr`): one shard of it, each
sequence's terminal values summed in float64 or in 128-bit fixed point (``sums``; why: the solver's docstring).
The solver numbers the sets and runs the regret updates; this module is what each shard computes."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import types as nb
from numba.typed import Dict

from ..evaluation.rules import (
    OUT_FIELDS,
    _count,
    _deeper,
    _descend,
    _enter,
    _push,
    _room,
    _walk,
)
from ..games.fast import ABSTRACT_CODE, DATA
from ..games.fast import FUNCTION_TYPES as _FN
from ..numba_lazy import njit_on_first_call
from ..policy.rules import fast_game
from ..sources.abstraction import no_abstraction
from ..sources.walk import DEPTH, depth_first

#: How an update walk sums each sequence's terminal values: "float" (float64, in walk order, then the shards'
#: vectors in shard order: the numbers depend on the shard count) or "fixed" (`FRACTION_BITS`: any shard count
#: gives the same bits).
SUMS = ("float", "fixed")

#: With ``sums="fixed"`` terminal values are summed in fixed point, 2**-FRACTION_BITS per unit, in two 64-bit
#: words per sequence (|value| < 2**(127 - FRACTION_BITS) = 1.4e14, not checked: far above any payoff sum here):
#: integer sums do not depend on their order, so every shard count gives the same bits. Each term is cut to the
#: grid (towards zero) before it is added, 8e-25 at most.
FRACTION_BITS = 80
_SCALE = 2.0 ** FRACTION_BITS
_WORD = 2.0 ** 64


@njit(inline="always")
def _fixed_add(high, low, i, x):
    """Add `x`, cut to the grid, to the 128-bit two's-complement number (high[i], low[i])."""
    a = abs(x) * _SCALE
    ah = np.floor(a / _WORD)
    al = a - ah * _WORD  # exact: both are whole multiples of a's last place, and al < 2**64
    h = np.uint64(ah)
    lo = np.uint64(al)
    if x < 0.0:  # two's complement of (h, lo)
        h = ~h
        lo = ~lo + np.uint64(1)
        if lo == np.uint64(0):
            h += np.uint64(1)
    total = low[i] + lo
    if total < lo:  # carry
        high[i] += np.uint64(1)
    low[i] = total
    high[i] += h


@njit(inline="always")
def _fixed_terminal(utility, data, c, v, d, s):
    """The evaluation walk's terminal (`rcfr.evaluation.rules._terminal`), its payoffs added in fixed point to ``c[13]``,
    ``c[14]`` (the policy's sequences, then the two empty ones)."""
    reach0, reach1, chance, seq0, seq1 = v[11], v[12], v[13], v[14], v[15]
    if not _count(c, v, d):
        return 0
    u = utility(data, s)
    w = chance[d]
    high, low, nseq = c[13], c[14], c[12]
    _fixed_add(high, low, seq0[d] if seq0[d] >= 0 else nseq, w * reach1[d] * u)
    _fixed_add(high, low, seq1[d] if seq1[d] >= 0 else nseq + 1, -(w * reach0[d] * u))
    return 0


_update_walk = depth_first(_fixed_terminal, _enter, _room, _descend, _push, _deeper)


def _update_signature():
    frozen = [nb.Array(t, 1, "C", readonly=True) for t in (nb.int64, nb.int64, nb.float64)]
    words = nb.uint64[::1]
    return nb.int64(_FN["initial"], _FN["player"], _FN["num_children"], _FN["child"], _FN["utility"],
                    _FN["infoset_code"], DATA, nb.int64, *frozen, nb.FunctionType(ABSTRACT_CODE), nb.int64[::1],
                    nb.int64, nb.int64, nb.int64, words, words)


@njit_on_first_call([_update_signature()], cache=True)
def _update(initial, player, num_children, child, utility, infoset_code, data, width, codes, first, probs,
            abstract_code, error, cut, lo, hi, high, low):
    """One shard of an update walk with a full policy: the evaluation walk (`rcfr.evaluation.rules._walk`, same hooks)
    whose terminals add in fixed point (`_fixed_terminal`). Returns the histories it counted."""
    n = codes.shape[0]
    nseq = probs.shape[0]
    c = (codes, first, probs, False, data, False, error, np.zeros(2, np.int64), cut, lo, hi, n, nseq, high, low)
    v = (np.zeros(nseq), np.full(n, -2, np.int64), np.zeros(n, np.int8), np.empty(n, np.int64),
         np.zeros(1, np.int64), np.zeros(0, np.int64), Dict.empty(key_type=nb.int64, value_type=nb.int64),
         np.zeros(3), np.zeros(6, np.int64), np.zeros(DEPTH, np.int64), np.zeros(DEPTH, np.int64),
         np.ones(DEPTH), np.ones(DEPTH), np.ones(DEPTH), np.full(DEPTH, -1, np.int64), np.full(DEPTH, -1, np.int64))
    _, v = _update_walk(initial, player, num_children, child, utility, infoset_code, abstract_code, data, width,
                        True, c, v)
    return v[8][0]


def _fixed_sum(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The 128-bit sums of the shards' fixed-point vectors (wrapping, as two's complement adds)."""
    high, low = parts[0][0].copy(), parts[0][1].copy()
    for h, lo in parts[1:]:
        total = low + lo
        high += h + (total < lo).astype(np.uint64)
        low = total
    return high, low


def _fixed_to_float(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """The float64 nearest (to two roundings) the fixed-point numbers."""
    negative = high >= np.uint64(1 << 63)
    h = np.where(negative, ~high, high)
    lo = np.where(negative, ~low, low)
    lo_plus = lo + np.where(negative, np.uint64(1), np.uint64(0))  # magnitude = (~high, ~low) + 1
    h = h + np.where(negative & (lo_plus == 0), np.uint64(1), np.uint64(0))
    magnitude = (h.astype(np.float64) * _WORD + lo_plus.astype(np.float64)) / _SCALE
    return np.where(negative, -magnitude, magnitude)


def _iteration_shard(common, task) -> dict:
    """One shard of an update walk (`task` = (cut, lo, hi)): per sequence of the policy layout, the chance- and
    opponent-weighted payoffs of the terminals below it (each player's own), the two empty sequences' and the
    histories entered; in float64 (``tv``, ``roots``), or with ``sums="fixed"`` in fixed point (``high``, ``low``:
    the sequences, then the two empty ones). Module-level, so that Ray workers import it."""
    rules, codes, first, probs, sums = common
    fast = fast_game(rules)
    error = np.zeros(4, np.int64)
    if sums == "fixed":
        high, low = np.zeros(len(probs) + 2, np.uint64), np.zeros(len(probs) + 2, np.uint64)
        histories = _update(fast.initial, fast.player, fast.num_children, fast.child, fast.utility,
                            fast.infoset_code, fast.data, fast.width, codes, first, probs, no_abstraction, error,
                            *task, high, low)
        return {"high": high, "low": low, "histories": histories, "error": error}
    out = np.zeros(len(OUT_FIELDS))
    tv = _walk(fast.initial, fast.player, fast.num_children, fast.child, fast.utility, fast.infoset_code, fast.data,
               fast.width, codes, first, probs, False, no_abstraction, fast.data, False, out, error, *task)[0]
    return {"tv": tv[:len(probs)], "roots": out[1:3].copy(), "histories": out[3], "error": error}
