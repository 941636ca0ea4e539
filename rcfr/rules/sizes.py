"""Exact sizes of a game too large to compile: a depth-first walk of its `FastGame` rules.

The compiled tree stores every history; counting needs only the path being walked and one table entry
per information set, so games of 1e10 histories can be counted (in hours rather than memory). Forced
moves (a node with exactly one child) are collapsed as `rcfr.compiler` does, so on games small enough
to compile the counts equal the compiled `Game`'s; ``collapse=False`` counts them, as papers do.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba import types as nb

from ..compiler import _settle, _typed
from ..games.base import TERMINAL
from ..games.fast import DATA, FUNCTION_TYPES, FastGame
from ..numba_lazy import njit_on_first_call

_FN = FUNCTION_TYPES
_EMPTY = -1
#: 2**64 / golden ratio: multiplicative hashing spreads nearby codes over the table.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class Sizes(NamedTuple):
    """A game's size; per-player entries are (player 0, player 1)."""

    histories: int
    terminals: int
    infosets: tuple[int, int]
    #: (information set, action) pairs
    sequences: tuple[int, int]


@njit(cache=True)
def _slot(keys, code, shift):
    """The table slot of `code`: its own, or the empty one where it belongs (linear probing)."""
    mask = keys.shape[0] - 1
    i = np.int64((np.uint64(code) * _GOLDEN) >> np.uint64(shift))
    while keys[i] != _EMPTY and keys[i] != code:
        i = (i + 1) & mask
    return i


@njit(cache=True)
def _grow(keys, who, size, shift):
    """The table at twice the capacity, every entry rehashed."""
    bigger = np.full(2 * keys.shape[0], _EMPTY, np.int64)
    new_who = np.empty(2 * keys.shape[0], np.int8)
    new_size = np.empty(2 * keys.shape[0], np.int32)
    for j in range(keys.shape[0]):
        if keys[j] != _EMPTY:
            i = _slot(bigger, keys[j], shift - 1)
            bigger[i] = keys[j]
            new_who[i] = who[j]
            new_size[i] = size[j]
    return bigger, new_who, new_size


@njit_on_first_call(nb.int64(_FN["initial"], _FN["player"], _FN["num_children"], _FN["child"], _FN["infoset_code"], DATA,
               nb.int64, nb.boolean, nb.int64[::1]), cache=True)
def _walk(initial, player, num_children, child, infoset_code, data, width, collapse, out):
    """Depth-first count into ``out = [histories, terminals, sets 0, sets 1, pairs 0, pairs 1]``.
    Returns -1, or the history number (in walk order) where a code disagrees with its set's player or
    number of actions, or is negative."""
    cap = 64
    stack = np.empty((cap, width), np.int64)
    next_k = np.empty(cap, np.int64)
    kids = np.empty(cap, np.int64)
    last = np.full(cap, _EMPTY, np.int64)  # the code met last at each depth: siblings often share a set
    last_size = np.empty(cap, np.int64)  # its player and number of actions
    tmp = np.empty(width, np.int64)
    bits = 16
    keys = np.full(1 << bits, _EMPTY, np.int64)
    who_of = np.empty(1 << bits, np.int8)
    size_of = np.empty(1 << bits, np.int32)
    used = 0
    for j in range(6):
        out[j] = 0
    initial(data, stack[0])
    if collapse:
        _settle(player, num_children, child, data, stack[0], tmp)
    d = 0
    entering = True
    while d >= 0:
        if entering:  # a new history at depth d
            entering = False
            out[0] += 1
            who = player(data, stack[d])
            if who == TERMINAL:
                out[1] += 1
                d -= 1
                continue
            c = num_children(data, stack[d])
            next_k[d] = 0
            kids[d] = c
            if who >= 0:
                code = infoset_code(data, stack[d])
                if code < 0:
                    return out[0] - 1
                if code == last[d]:
                    if last_size[d] != who * (1 << 40) + c:
                        return out[0] - 1
                else:
                    last[d] = code
                    last_size[d] = who * (1 << 40) + c
                    i = _slot(keys, code, 64 - bits)
                    if keys[i] == _EMPTY:
                        keys[i] = code
                        who_of[i] = who
                        size_of[i] = c
                        out[2 + who] += 1
                        out[4 + who] += c
                        used += 1
                        if 2 * used > keys.shape[0]:
                            keys, who_of, size_of = _grow(keys, who_of, size_of, 64 - bits)
                            bits += 1
                    elif who_of[i] != who or size_of[i] != c:
                        return out[0] - 1
        if next_k[d] == kids[d]:
            d -= 1
            continue
        if d + 1 == cap:
            deeper = np.empty((2 * cap, width), np.int64)
            deeper[:cap] = stack
            stack = deeper
            more_k = np.empty(2 * cap, np.int64)
            more_k[:cap] = next_k
            next_k = more_k
            more_kids = np.empty(2 * cap, np.int64)
            more_kids[:cap] = kids
            kids = more_kids
            more_last = np.full(2 * cap, _EMPTY, np.int64)
            more_last[:cap] = last
            last = more_last
            more_size = np.empty(2 * cap, np.int64)
            more_size[:cap] = last_size
            last_size = more_size
            cap *= 2
        child(data, stack[d], next_k[d], stack[d + 1])
        next_k[d] += 1
        if collapse:
            _settle(player, num_children, child, data, stack[d + 1], tmp)
        d += 1
        entering = True
    return -1


def count_sizes(game, collapse: bool = True) -> Sizes:
    """The exact size of `game` (rules with a fast path, or a `FastGame`) by a depth-first walk: memory is
    the walk's depth plus ~40 bytes per information set; time about that of visiting every history."""
    fast = game if isinstance(game, FastGame) else game.fast()
    if fast is None:
        raise ValueError(f"count_sizes needs a game with a fast path (GameRules.fast), got {game!r}")
    fast = _typed(fast)
    out = np.zeros(6, np.int64)
    bad = _walk(fast.initial, fast.player, fast.num_children, fast.child, fast.infoset_code, fast.data,
                fast.width, bool(collapse), out)
    if bad >= 0:
        raise ValueError(f"history {bad} (depth-first order) has a negative information-set code or one "
                         "whose set disagrees on its player or number of actions: the game's infoset_code is wrong")
    return Sizes(int(out[0]), int(out[1]), (int(out[2]), int(out[3])), (int(out[4]), int(out[5])))
