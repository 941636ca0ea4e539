"""External sampling on Bluff's public bid tree, with the direct index of `rcfr.rules.bluff_cfr`.

Why: the general external-sampling walk on the rules keys its tables by a hash of information-set codes and
keeps about 230 bytes per set met, 47 GB for Bluff(2,2)'s 176M sets; here a set is its node's block plus an
arithmetic roll term, so the whole game's regret and average tables take one number per (set, action) pair
each (4.2 GB in float32) and nothing is kept per set.

Once both rolls are drawn, a traversal is a walk of bid sequences with scalars: a call's payoff is one
comparison of the dice showing the bid's face with its quantity. The walk makes the general walk's draws in
its order (the two rolls, then each opponent decision as the depth-first walk meets it, the traverser's
actions taken last first, as the general walk's stack pops them), so a seeded run equals the general
`ExternalSamplingMCCFR` iteration for iteration (`tests/test_bluff_public_cfr.py`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..sampling.decisions import pick
from .bluff_cfr import _actions, _row_strategy


@njit(cache=True, inline="always")
def _payoff(caller, bid, faces, c0, c1, r0, r1):
    """Player 0's payoff when `caller` calls `bid`: the caller loses when at least the bid's quantity of dice
    show its face (or a star)."""
    face = bid % faces
    holds = c0[r0, face] + c1[r1, face] >= bid // faces + 1
    return (1.0 if holds else -1.0) * (-1.0 if caller == 0 else 1.0)


@njit(cache=True)
def external_walk(nb, faces, rolls, c0, c1, traverser, regrets, avg, offsets, weight, clip, rng):
    """One external-sampling traversal for `traverser` with the rolls ``rolls[0], rolls[1]``: its regrets
    (`regrets`, clipped at zero when `clip`) take every action's sampled counterfactual regret; the
    opponent's strategy at each of its sets met is added to `avg` times `weight` and one action is drawn
    from it. Returns the histories entered after the rolls (decisions and terminals)."""
    depth = nb + 1
    last = np.empty(depth, np.int64)
    mask = np.zeros(depth, np.int64)
    nxt = np.zeros(depth, np.int64)  # the traverser's next action to walk (downwards), or the opponent's draw
    row = np.zeros(depth, np.int64)
    sig = np.empty((depth, nb + 1))
    cv = np.zeros((depth, nb + 1))
    sign = 1.0 if traverser == 0 else -1.0
    nodes = 0
    d = 0
    last[0] = -1
    fresh = True
    while True:
        p = d & 1
        L = last[d]
        na = _actions(nb, L, d)
        if fresh:  # enter the node: the mover's strategy; the opponent credits its average and draws
            fresh = False
            nodes += 1
            row[d] = offsets[mask[d]] + rolls[p] * na
            _row_strategy(regrets, row[d], na, True, sig[d], 0)
            if p == traverser:
                nxt[d] = na
            else:
                for a in range(na):
                    avg[row[d] + a] += weight * sig[d, a]
                nxt[d] = -1 - pick(sig[d], 0, na, rng)
        if p == traverser and nxt[d] == 0 or p != traverser and nxt[d] >= 0:  # node done
            v = 0.0
            if p == traverser:
                for a in range(na):
                    v += sig[d, a] * cv[d, a]
                for a in range(na):
                    x = regrets[row[d] + a] + (cv[d, a] - v)
                    regrets[row[d] + a] = x if (x > 0.0 or not clip) else 0.0
            else:
                v = cv[d, nxt[d]]
            if d == 0:
                return nodes
            d -= 1
            a = nxt[d] if d & 1 == traverser else -1 - nxt[d]
            cv[d, a] = v
            if d & 1 != traverser:
                nxt[d] = a  # the drawn action is done
            continue
        if p == traverser:
            nxt[d] -= 1
            a = nxt[d]
        else:
            a = -1 - nxt[d]
        if a == na - 1 and d > 0:  # the mover calls the last bid
            nodes += 1
            cv[d, a] = sign * _payoff(p, L, faces, c0, c1, rolls[0], rolls[1])
        else:
            b = L + 1 + a
            if b < nb - 1:  # a decision node: go down
                last[d + 1] = b
                mask[d + 1] = mask[d] | (np.int64(1) << b)
                d += 1
                fresh = True
                continue
            nodes += 1  # the top bid: the next player's call is forced (collapsed, as in the compiled tree)
            cv[d, a] = sign * _payoff(1 - p, b, faces, c0, c1, rolls[0], rolls[1])
        if p != traverser:
            nxt[d] = a
