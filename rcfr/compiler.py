"""The fast path of the compiler: games that describe their states as fixed-width integer vectors
through a few numba functions (`FastGame`) are enumerated level by level in compiled code, into
exactly the arrays that the per-state Python path (`rcfr.tree._enumerate`) builds from rule objects.

Both paths share the numbering: histories breadth-first (a parent before its children, siblings
contiguous and in action order), information sets in order of first encounter. Both collapse forced
moves: a node with exactly one child (a decision with one legal action, or a chance node with one
outcome) is no node; its only child takes its place. See docs/compiler.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import types as nb
from numba.typed import Dict

from .games.base import CHANCE, TERMINAL
from .games.fast import DATA, FUNCTION_TYPES, SIGNATURES, STATE, FastGame, fast_function  # noqa: F401  (re-exported)
from .numba_lazy import njit_on_first_call

#: Dense code-to-id tables up to this many entries; larger code spaces use a hash table.
DENSE_CODES = 1 << 27

_FN = FUNCTION_TYPES


@njit(nb.UniTuple(nb.int64, 2)(_FN["player"], _FN["num_children"], _FN["child"], DATA, STATE, STATE), cache=True,
      inline="always")
def _settled(player, num_children, child, data, s, tmp):
    """Collapse forced moves in place: while `s` has exactly one child, become that child. Returns its
    player and number of children (0 at a terminal), so that a walk asks each state for them once. Inlined:
    the enumerator calls it (through `_settle`) at every node; a call level slowed compiling Goofspiel(6)
    by 10-40% (noisy runs)."""
    while True:
        who = player(data, s)
        if who == TERMINAL:
            return who, 0
        m = num_children(data, s)
        if m != 1:
            return who, m
        child(data, s, 0, tmp)
        s[:] = tmp


@njit(nb.int64(_FN["player"], _FN["num_children"], _FN["child"], DATA, STATE, STATE), cache=True)
def _settle(player, num_children, child, data, s, tmp):
    """`_settled` for callers that need only the player."""
    return _settled(player, num_children, child, data, s, tmp)[0]


@njit(cache=True)
def _grow(a, n):
    """A copy of `a` (a vector, or a stack of states) lengthened to n rows, the new rows uninitialized."""
    b = np.empty((n,) + a.shape[1:], a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def replay(initial, player, num_children, child, data, parent, action, h, s, tmp, path):
    """Write the state of compiled history `h` into `s`: the root, then the actions and outcomes on the
    way down (`parent`/`action` arrays of `rcfr.tree.Game`), forced moves collapsed as the compiler does.
    `path` is scratch space; returns it (grown if the history was deeper)."""
    n = 0
    while parent[h] >= 0:
        if n == path.shape[0]:
            path = _grow(path, 2 * n)
        path[n] = action[h]
        n += 1
        h = parent[h]
    initial(data, s)
    _settle(player, num_children, child, data, s, tmp)
    for j in range(n - 1, -1, -1):
        child(data, s, path[j], tmp)
        s[:] = tmp
        _settle(player, num_children, child, data, s, tmp)
    return path


@njit_on_first_call(nb.Tuple((nb.int64, nb.int64, nb.int64[::1], nb.int64))(
    _FN["initial"], _FN["player"], _FN["num_children"], _FN["child"], DATA, nb.int64, nb.int64), cache=True)
def _count(initial, player, num_children, child, data, width, limit):
    """(histories, decision histories, level sizes, most children of a node); stops (returning
    what it has) once the total passes `limit`."""
    tmp = np.empty(width, np.int64)
    level = np.empty((1, width), np.int64)
    initial(data, level[0])
    _settle(player, num_children, child, data, level[0], tmp)
    sizes = [1]
    total, decisions, widest = 1, 0, 0
    while level.shape[0] > 0:
        m = 0
        for i in range(level.shape[0]):
            who = player(data, level[i])
            if who != TERMINAL:
                c = num_children(data, level[i])
                m += c
                widest = max(widest, c)
            if who >= 0:
                decisions += 1
        total += m
        if m == 0 or total > limit:
            break
        sizes.append(m)
        nxt = np.empty((m, width), np.int64)
        j = 0
        for i in range(level.shape[0]):
            if player(data, level[i]) != TERMINAL:
                for k in range(num_children(data, level[i])):
                    child(data, level[i], k, nxt[j])
                    _settle(player, num_children, child, data, nxt[j], tmp)
                    j += 1
        level = nxt
    return total, decisions, np.array(sizes, np.int64), widest


def _fill_signature(action):
    return nb.int64(_FN["initial"], _FN["player"], _FN["num_children"], _FN["child"], _FN["utility"],
                    _FN["infoset_code"], DATA, nb.int64, nb.int64, nb.int8[::1], nb.int32[::1], action[::1],
                    nb.int16[::1], nb.float64[::1], nb.int32[::1], nb.float64[::1], nb.int32[::1], nb.int32[::1],
                    nb.int32[::1], nb.int8[::1], nb.int64[::1], nb.int64[::1], nb.int64[::1])


@njit_on_first_call([_fill_signature(nb.int16), _fill_signature(nb.int32)], cache=True)
def _fill(initial, player, num_children, child, utility, infoset_code, data, width, code_space,
          who_out, parent, action, depth, prob, infoset, util, first_child, nchildren,
          dense, set_player, set_size, set_history, error):
    """Second pass: write every history's arrays; information sets get raw ids in order of first
    encounter. Returns the number of sets, or -1 with ``error = (kind, history)``: kind 1, a code
    outside [0, code_space); kind 2, a history that disagrees with its set's player or number of
    actions."""
    tmp = np.empty(width, np.int64)
    level = np.empty((1, width), np.int64)
    initial(data, level[0])
    _settle(player, num_children, child, data, level[0], tmp)
    sparse = Dict.empty(key_type=nb.int64, value_type=nb.int64)
    use_dense = dense.shape[0] > 0
    parent[0] = -1
    action[0] = -1
    depth[0] = 0
    prob[0] = 1.0
    start, d, sets = 0, 0, 0
    while level.shape[0] > 0:
        n = level.shape[0]
        nxt_start = start + n
        m = 0
        for i in range(n):
            h = start + i
            s = level[i]
            who = player(data, s)
            who_out[h] = who
            util[h] = 0.0
            infoset[h] = -1
            if who == TERMINAL:
                util[h] = utility(data, s)
                first_child[h] = -1
                nchildren[h] = 0
                continue
            c = num_children(data, s)
            first_child[h] = nxt_start + m
            nchildren[h] = c
            m += c
            if who >= 0:
                code = infoset_code(data, s)
                if code < 0 or code >= code_space:
                    error[0], error[1] = 1, h
                    return -1
                if use_dense:
                    raw = dense[code]
                    if raw < 0:
                        raw = sets
                        dense[code] = raw
                else:
                    if code in sparse:
                        raw = sparse[code]
                    else:
                        raw = sets
                        sparse[code] = raw
                if raw == sets:
                    set_player[raw] = who
                    set_size[raw] = c
                    set_history[raw] = h
                    sets += 1
                elif set_player[raw] != who or set_size[raw] != c:
                    error[0], error[1] = 2, h
                    return -1
                infoset[h] = raw
        if m == 0:
            break
        nxt = np.empty((m, width), np.int64)
        j = 0
        for i in range(n):
            h = start + i
            if who_out[h] == TERMINAL:
                continue
            chance = who_out[h] == CHANCE
            for k in range(nchildren[h]):
                q = child(data, level[i], k, nxt[j])
                _settle(player, num_children, child, data, nxt[j], tmp)
                g = nxt_start + j
                parent[g] = h
                action[g] = k
                depth[g] = d + 1
                prob[g] = q if chance else 1.0
                j += 1
        level = nxt
        start = nxt_start
        d += 1
    return sets


def _typed(fast: FastGame) -> FastGame:
    """Compile each function for its role's signature (a no-op once done or loaded from the cache)."""
    for role, signature in SIGNATURES.items():
        getattr(fast, role).compile(signature)
    return fast


def count_fast(fast: FastGame, limit: int) -> tuple[int, int, np.ndarray, int]:
    """(histories, decision histories, level sizes, most children of a node) of a fast game;
    histories > limit means the count stopped early."""
    fast = _typed(fast)
    return _count(fast.initial, fast.player, fast.num_children, fast.child, fast.data, fast.width, limit)


def enumerate_fast(fast: FastGame, total: int, decisions: int, arrays: dict[str, np.ndarray]) -> dict:
    """Fill the preallocated history arrays (``total`` entries each) and return the raw
    information sets (first-encounter order): their player, number of actions and first history."""
    fast = _typed(fast)
    dense = np.full(fast.code_space if fast.code_space <= DENSE_CODES else 0, -1, np.int32)
    set_player = np.empty(decisions, np.int8)
    set_size = np.empty(decisions, np.int64)
    set_history = np.empty(decisions, np.int64)
    a = arrays
    error = np.zeros(2, np.int64)
    sets = _fill(fast.initial, fast.player, fast.num_children, fast.child, fast.utility, fast.infoset_code,
                 fast.data, fast.width, fast.code_space, a["player"], a["parent"], a["action"], a["depth"],
                 a["chance_prob"], a["infoset"], a["utility"], a["first_child"], a["num_children"],
                 dense, set_player, set_size, set_history, error)
    del dense
    if sets < 0:
        problem = ("has an information-set code outside [0, code_space)" if error[0] == 1 else
                   "disagrees with its information set's player or number of actions")
        raise ValueError(f"history {error[1]} {problem}: the game's infoset_code is wrong")
    return dict(infoset_player=set_player[:sets].copy(), infoset_size=set_size[:sets].copy(),
                infoset_history=set_history[:sets].copy())
