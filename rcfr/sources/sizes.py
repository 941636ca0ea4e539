"""Exact sizes of a game too large to compile: a depth-first walk of its `FastGame` rules.

The compiled tree stores every history; counting needs only the path being walked (`rcfr.sources.walk`) and
one table entry per information set, so games of 1e10 histories can be counted (in hours rather than memory). Forced
moves (a node with exactly one child) are collapsed as `rcfr.compiler` does, so on games small enough
to compile the counts equal the compiled `Game`'s; ``collapse=False`` counts them, as papers do.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba import types as nb

from ..compiler import _grow, _typed
from ..games.fast import DATA, FUNCTION_TYPES, FastGame
from ..numba_lazy import njit_on_first_call
from .walk import DEPTH, ROOM, always, depth_first

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
def _rehash(keys, who, size, shift):
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


@njit(inline="always")
def _terminal(utility, data, c, v, d, s):
    out = v[3]
    out[0] += 1
    out[1] += 1
    return 0


@njit(inline="always")
def _enter(infoset_code, aux, data, c, v, d, s, p, nxt, moves):
    """Counts the history, and its set where first met; 1 where its code is negative or disagrees with its
    set's player or number of actions."""
    keys, who_of, size_of, out, table, last, last_size = v
    if p >= 0 and 2 * (table[0] + 1) > keys.shape[0]:
        return ROOM  # the table would be over half full
    out[0] += 1
    if p < 0:
        return 0
    m = moves[d]
    code = infoset_code(data, s)
    if code < 0:
        return 1
    if code == last[d]:
        if last_size[d] != p * (1 << 40) + m:
            return 1
    else:
        last[d] = code
        last_size[d] = p * (1 << 40) + m
        i = _slot(keys, code, 64 - table[1])
        if keys[i] == _EMPTY:
            keys[i] = code
            who_of[i] = p
            size_of[i] = m
            out[2 + p] += 1
            out[4 + p] += m
            table[0] += 1
        elif who_of[i] != p or size_of[i] != m:
            return 1
    return 0


@njit(inline="always")
def _room(c, v, d, m):
    keys, who_of, size_of, out, table, last, last_size = v
    keys, who_of, size_of = _rehash(keys, who_of, size_of, 64 - table[1])
    table[1] += 1
    return keys, who_of, size_of, out, table, last, last_size


@njit(inline="always")
def _push(c, v, d, k, q, p, m):
    pass


@njit(inline="always")
def _deeper(c, v, cap):
    keys, who_of, size_of, out, table, last, last_size = v
    more_last = np.full(cap, _EMPTY, np.int64)
    more_last[:last.shape[0]] = last
    return keys, who_of, size_of, out, table, more_last, _grow(last_size, cap)


_count_walk = depth_first(_terminal, _enter, _room, always, _push, _deeper)


@njit_on_first_call(nb.int64(_FN["initial"], _FN["player"], _FN["num_children"], _FN["child"], _FN["utility"],
                             _FN["infoset_code"], DATA, nb.int64, nb.boolean, nb.int64[::1]), cache=True)
def _walk(initial, player, num_children, child, utility, infoset_code, data, width, collapse, out):
    """Depth-first count (`rcfr.sources.walk`) into ``out = [histories, terminals, sets 0, sets 1, pairs 0,
    pairs 1]``. Returns -1, or the history number (in walk order) where a code disagrees with its set's player
    or number of actions, or is negative."""
    bits = 16
    for j in range(6):
        out[j] = 0
    v = (np.full(1 << bits, _EMPTY, np.int64), np.empty(1 << bits, np.int8), np.empty(1 << bits, np.int32), out,
         np.array([0, bits], np.int64),  # sets in the table, log2 of its size
         np.full(DEPTH, _EMPTY, np.int64),  # the code met last at each depth: siblings often share a set
         np.empty(DEPTH, np.int64))  # its player and number of actions
    status, v = _count_walk(initial, player, num_children, child, utility, infoset_code, infoset_code, data, width,
                            collapse, (0,), v)
    return -1 if status == 0 else out[0] - 1


def count_sizes(game, collapse: bool = True) -> Sizes:
    """The exact size of `game` (rules with a fast path, or a `FastGame`) by a depth-first walk: memory is
    the walk's depth plus ~40 bytes per information set; time about that of visiting every history."""
    fast = game if isinstance(game, FastGame) else game.fast()
    if fast is None:
        raise ValueError(f"count_sizes needs a game with a fast path (GameRules.fast), got {game!r}")
    fast = _typed(fast)
    out = np.zeros(6, np.int64)
    bad = _walk(fast.initial, fast.player, fast.num_children, fast.child, fast.utility, fast.infoset_code, fast.data,
                fast.width, bool(collapse), out)
    if bad >= 0:
        raise ValueError(f"history {bad} (depth-first order) has a negative information-set code or one "
                         "whose set disagrees on its player or number of actions: the game's infoset_code is wrong")
    return Sizes(int(out[0]), int(out[1]), (int(out[2]), int(out[3])), (int(out[4]), int(out[5])))
