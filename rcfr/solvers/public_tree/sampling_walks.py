"""External sampling on Bluff's public bid tree, with the direct index of `rcfr.solvers.public_tree.cfr_walks`.

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

from ...games.dice_bid_tree import actions, at_node, bid_path
from ...sampling.bundles import BOTH
from ...sampling.decisions import pick, trajectory_action
from .cfr_walks import _row_strategy


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
    last, mask, _, nxt = bid_path(nb)  # nxt: the traverser's next action to walk (downwards), or the opponent's draw
    row = np.zeros(depth, np.int64)
    sig = np.empty((depth, nb + 1))
    cv = np.zeros((depth, nb + 1))
    sign = 1.0 if traverser == 0 else -1.0
    nodes = 0
    d = 0
    fresh = True
    while True:
        p, _, L, na = at_node(nb, last, d)
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


@njit(cache=True)
def outcome_walk(nb, faces, q0, q1, c0, c1, traverser, eps, regrets, avg, offsets, weight, clip, rng):
    """One outcome-sampling trajectory: the two rolls from `q0`, `q1`, then one action per decision,
    epsilon-exploring at the traverser's (at every decision when ``traverser == BOTH``); the other players'
    averages credited on the way (times ``weight x own reach x chance / q``), then the traverser's sampled
    regrets along the path, as `rcfr.sampling.outcome_walks.outcome_walk` computes them. Returns the histories
    on the trajectory (the rolls and the terminal included)."""
    depth = nb + 1
    row = np.zeros(depth, np.int64)
    take = np.zeros(depth, np.int64)
    num = np.zeros(depth, np.int64)
    sig = np.empty((depth, nb + 1))
    reach = np.empty((depth, 2))
    chance = np.empty(depth)  # chance's reach at each decision (both rolls)
    rolls = (pick(q0, 0, q0.shape[0], rng), 0)
    rc = q0[rolls[0]]
    q = rc
    rolls = (rolls[0], pick(q1, 0, q1.shape[0], rng))
    rc *= q1[rolls[1]]
    q *= q1[rolls[1]]
    r0, r1 = 1.0, 1.0
    last, mask, d = -1, np.int64(0), 0
    while True:  # forward: one decision per depth until a call
        p = d & 1
        na = actions(nb, last, d)
        row[d] = offsets[mask] + rolls[p] * na
        _row_strategy(regrets, row[d], na, True, sig[d], 0)
        reach[d, 0], reach[d, 1], chance[d], num[d] = r0, r1, rc, na
        k, xi = trajectory_action(sig[d], 0, na, traverser == BOTH or p == traverser, eps, rng)
        if traverser == BOTH or p != traverser:
            own = r0 if p == 0 else r1
            amount = weight * own * rc / q
            for a in range(na):
                avg[row[d] + a] += amount * sig[d, a]
        if p == 0:
            r0 *= sig[d, k]
        else:
            r1 *= sig[d, k]
        q *= xi
        take[d] = k
        if k == na - 1 and d > 0:  # a call of the last bid
            u0 = _payoff(p, last, faces, c0, c1, rolls[0], rolls[1])
            break
        b = last + 1 + k
        if b == nb - 1:  # the top bid: the next player's call is forced (collapsed)
            u0 = _payoff(1 - p, b, faces, c0, c1, rolls[0], rolls[1])
            break
        last, mask, d = b, mask | (np.int64(1) << b), d + 1
    tail = 1.0
    for e in range(d, -1, -1):  # backward: tail = pi(h a* -> z)
        p = e & 1
        na, k = num[e], take[e]
        sk = sig[e, k]
        if traverser == BOTH or p == traverser:
            w = (u0 if p == 0 else -u0) * reach[e, 1 - p] * chance[e] / q
            for a in range(na):
                x = regrets[row[e] + a] + (w * tail * (1.0 - sk) if a == k else -(w * tail * sk))
                regrets[row[e] + a] = x if (x > 0.0 or not clip) else 0.0
        tail *= sk
    return d + 4
