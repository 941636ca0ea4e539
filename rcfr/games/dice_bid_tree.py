"""Bluff's public bid tree as a depth-first walk sees it: a node is a bid sequence, its depth the bids made.

Why: every walk of the tree (the exact evaluation, CFR's update and evaluation walks, the scalar walk of
chance-sampled CFR, external and outcome sampling) moves through it the same way; this is that arithmetic,
written once. A walk keeps one entry per depth (`bid_path`): the node's last bid, its bid mask, its kept mask
under the last-r-bids abstraction and its next action.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .dice_fast import BIDS, LAST, MASK, ROLLED


@njit(cache=True, inline="always")
def bid_path(nb):
    """A walk's path arrays, one entry per depth, at the root (no bid yet): (last, mask, kept, nxt)."""
    depth = nb + 1
    last = np.empty(depth, np.int64)
    last[0] = -1
    return last, np.zeros(depth, np.int64), np.zeros(depth, np.int64), np.zeros(depth, np.int64)


@njit(cache=True, inline="always")
def rolled_state():
    """A set's fast state (`dice_fast`) once both players have rolled, for a walk to fill node by node."""
    state = np.zeros(7, np.int64)
    state[ROLLED] = 2
    return state


@njit(cache=True, inline="always")
def node_state(state, last, mask, d):
    """Writes the node at depth `d` (its last bid, bid mask and bids made) into `state`; returns the mask."""
    m = mask[d]
    state[LAST], state[MASK], state[BIDS] = last[d], m, d
    return m


@njit(cache=True, inline="always")
def row_layout(nb, r0, r1):
    """(rmin, half) of `whole_policy_row` for a game of `nb` bids whose players have `r0` and `r1` rolls."""
    return min(r0, r1), np.int64(1) << (nb - 2)


@njit(cache=True, inline="always")
def whole_policy_row(r, m, rmin, half):
    """The row of set ``(roll r, mask m)`` in a policy over every decision set sorted by code: per roll below
    `rmin`, every decision mask (< 2^(bids-1): the top bid leaves only the call), and beyond it only the masks
    of the player with more rolls (one parity: rank ``m >> 1``)."""
    if r < rmin:
        return r * 2 * half + m
    return rmin * 2 * half + (r - rmin) * half + (m >> 1)


@njit(cache=True, inline="always")
def next_action(nxt, d, na):
    """The next action of the node at depth d to walk (moving its cursor on), or -1 when all na are done."""
    a = nxt[d]
    if a >= na:
        return -1
    nxt[d] = a + 1
    return a


@njit(cache=True, inline="always")
def at_node(nb, last, d):
    """The node at depth d: its mover, the other player, its last bid and its number of actions."""
    p = d & 1
    return p, 1 - p, last[d], actions(nb, last[d], d)


@njit(cache=True, inline="always")
def actions(nb, last, d):
    """Actions at a decision node at depth `d` (bids made) whose last bid is `last`: the higher bids, and the
    call after the first bid."""
    return nb - 1 - last + (1 if d > 0 else 0)


@njit(cache=True, inline="always")
def keep(kept, bid, d, r):
    """The kept mask after `bid`, the d-th bid (0-based): the new bid is the highest, so once r are kept the
    lowest is dropped."""
    kept |= np.int64(1) << bid
    if d + 1 > r:
        kept &= kept - 1
    return kept


@njit(cache=True, inline="always")
def down(last, mask, nxt, d, bid):
    """Enter the child of the node at depth `d` reached by `bid` (its last bid, mask and action cursor); returns
    its depth."""
    last[d + 1] = bid
    mask[d + 1] = mask[d] | (np.int64(1) << bid)
    nxt[d + 1] = 0
    return d + 1


@njit(cache=True, inline="always")
def descend(last, mask, kept, nxt, d, bid, r):
    """`down`, with the kept mask of the last-r-bids abstraction too."""
    kept[d + 1] = keep(kept[d], bid, d, r)
    return down(last, mask, nxt, d, bid)
