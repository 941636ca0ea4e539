"""One depth-first walk over a game's rules (`FastGame` functions), for every exact walk of the rules path.

Exact evaluation (`rcfr.evaluation.rules`), the full-regret plans (`rcfr.regrets.rules`), the size count
(`rcfr.sources.sizes`) and the compiled tree's codes (`rcfr.policy.rules.infoset_codes`) each walked the whole
game with the same explicit stack (a row of state per depth, the next child and the number of children per
depth, arrays doubled when the walk goes deeper). `depth_first` is that walk once; what a walk computes is
its *visitor*, five small numba functions (``inline="always"``, so the walk costs what a hand-written one does):

* ``terminal(utility, data, c, v, d, s)`` at a terminal history (state `s`, depth `d`);
* ``enter(infoset_code, aux, data, c, v, d, s, p, nxt, moves)`` at a decision or chance node (player `p`),
  before its children; it may narrow the children walked (``nxt[d]``, ``moves[d]``: the first child and one
  past the last);
* ``descend(c, v, d, k) -> bool``: whether to walk child `k` of the node at depth `d` (a shard skips others');
* ``push(c, v, d, k, q, p, m)`` after child `k` (its chance probability `q`) is written at depth ``d + 1``:
  carry the visitor's per-depth values (reaches, sequences) down;
* ``grow(c, v, cap) -> v`` when the stack doubles to `cap` rows: the visitor's per-depth arrays, longer.

* ``room(c, v, d, m) -> v`` when ``enter`` asked for it (status `ROOM`): v with its tables grown, before
  ``enter`` is asked again.

`c` is what the visitor reads (the policy, scratch and error arrays: never reassigned), `v` the tuple of
arrays it writes. ``terminal`` and ``enter`` return a status: 0 to go on, `ROOM` (``enter`` only, before it
changed anything) for room in v, anything else (positive) to stop the walk, which returns it with v. They
return no v, and the loop over nodes never reassigns it: reference counts of a tuple of arrays reassigned in
the loop, at every hook call, halved the walk's speed. A visitor keeps its scalars in arrays of v. A per-depth array of v starts with `DEPTH` rows. The game's functions
are arguments of the walk and of the hooks, not members of `c` (numba warns of first-class functions in a
tuple); `aux` is one function of the visitor's own (an abstraction's `code`; `ABSTRACT_CODE`).

`carry_reach` is the push of the visitors that follow a policy's reaches (evaluation, full regret).

Forced moves (a node with one child) are collapsed as `rcfr.compiler` does, or, with ``collapse=False``,
walked as nodes (`rcfr.sources.sizes` counts them so on request).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiler import _grow, _settled
from ..games.base import CHANCE, TERMINAL

#: The stack's first number of rows (a visitor's per-depth arrays start with as many).
DEPTH = 64
#: What ``enter`` returns for room in its tables.
ROOM = -1
#: What the loop over nodes returns for a deeper stack.
DEEPER = -2


@njit(inline="always")
def arrive(player, num_children, child, data, s, tmp, collapse):
    """(player, number of children) of the state `s` the walk arrives at, forced moves collapsed unless not
    `collapse` (0 children at a terminal)."""
    if collapse:
        return _settled(player, num_children, child, data, s, tmp)
    who = player(data, s)
    return who, 0 if who == TERMINAL else num_children(data, s)


def depth_first(terminal, enter, room, descend, push, grow):
    """The walk for one visitor (see the module docstring): a numba function
    ``walk(initial, player, num_children, child, utility, infoset_code, aux, data, width, collapse, c, v)
    -> (status, v)``, status 0 when the whole game (every child `descend` let in) was walked. Built once per
    visitor, at import.

    The loop over nodes (`run`) never reassigns v: a tuple of arrays reassigned in a loop costs an increment
    and a decrement of every member's reference count at each hook call (77 ns for 16 arrays). It returns to
    the walk for room (`ROOM`) or a deeper stack (`DEEPER`), and the walk resumes it with v grown. Both are
    inlined into the entry point that calls the walk: one compiled function, as a hand-written walk is (as
    separate functions they took a cold compile of the evaluation from 16 s to 26-31 s)."""

    @njit(inline="always")
    def run(player, num_children, child, utility, infoset_code, aux, data, collapse, c, v, states, who, moves, nxt,
            tmp, d, fresh):
        cap = states.shape[0]
        while d >= 0:
            if fresh:  # first visit of the node at depth d
                if who[d] == TERMINAL:
                    nxt[d] = 0
                    status = terminal(utility, data, c, v, d, states[d])
                    if status:
                        return status, d, True
                    d -= 1
                    fresh = False
                    continue
                nxt[d] = 0
                status = enter(infoset_code, aux, data, c, v, d, states[d], who[d], nxt, moves)
                if status:
                    return status, d, True
                fresh = False
            if nxt[d] == moves[d]:
                d -= 1
                continue
            if d + 1 == cap:
                return DEEPER, d, False
            k = nxt[d]
            nxt[d] += 1
            if not descend(c, v, d, k):
                continue
            q = child(data, states[d], k, states[d + 1])
            who[d + 1], moves[d + 1] = arrive(player, num_children, child, data, states[d + 1], tmp, collapse)
            push(c, v, d, k, q, who[d], moves[d])
            d += 1
            fresh = True
        return 0, d, False

    @njit(inline="always")
    def walk(initial, player, num_children, child, utility, infoset_code, aux, data, width, collapse, c, v):
        cap = DEPTH
        states = np.empty((cap, width), np.int64)
        who = np.zeros(cap, np.int64)
        moves = np.zeros(cap, np.int64)
        nxt = np.zeros(cap, np.int64)
        tmp = np.empty(width, np.int64)
        initial(data, states[0])
        who[0], moves[0] = arrive(player, num_children, child, data, states[0], tmp, collapse)
        d = 0
        fresh = True
        while True:
            status, d, fresh = run(player, num_children, child, utility, infoset_code, aux, data, collapse, c, v,
                                   states, who, moves, nxt, tmp, d, fresh)
            if status == ROOM:
                v = room(c, v, d, moves[d])
            elif status == DEEPER:
                cap *= 2
                states = _grow(states, cap)
                who, moves, nxt = _grow(who, cap), _grow(moves, cap), _grow(nxt, cap)
                v = grow(c, v, cap)
            else:
                return status, v

    return walk


@njit(inline="always")
def always(c, v, d, k):
    """A `descend` that walks every child."""
    return True


@njit(inline="always")
def carry_reach(probs, row, reach0, reach1, chance, d, k, q, p, m):
    """Reaches and chance one move (child k) down from depth d: the mover's reach times its probability
    (``probs[row[d] + k]``; uniform where ``row[d]`` is -1), chance's times q."""
    e = d + 1
    reach0[e], reach1[e], chance[e] = reach0[d], reach1[d], chance[d]
    if p == CHANCE:
        chance[e] *= q
    else:
        pr = probs[row[d] + k] if row[d] >= 0 else 1.0 / m
        if p == 0:
            reach0[e] *= pr
        else:
            reach1[e] *= pr

