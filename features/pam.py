"""Princess and Monster features: a player's own path, as an on-demand encoder (`rcfr.features.encoders`).

Neither player ever sees the other, so what a player knows is its own path (start first). Columns
(values in [0, 1]): the player (one-hot), the time step t and the steps left, (t_max - t) / t_max (both
over t_max); the current node (one-hot); the path, node by node (``path{k}={n}``: the node after k
moves, for k = 0..t_max); how often each node was visited (over t_max + 1); then the action: its
destination (one-hot), whether it stays put, and whether the destination was visited before.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rcfr.games.pursuit import PrincessAndMonster
from rcfr.games.pursuit_fast import BASE, CODE0, HEADER, HORIZON, MOVES, NODE0, NODES, WIDTH

from .encoders import FeatureEncoder


def serves(rules) -> bool:
    return isinstance(rules, PrincessAndMonster)


def make(game) -> FeatureEncoder:
    rules = game.rules
    if not serves(rules):
        raise ValueError(f"features 'pam' need pam rules, not {rules.name!r}")
    nodes, horizon = rules.nodes, rules.horizon
    names = (["player0", "player1", "time", "time_left"] + [f"at{n}" for n in range(nodes)]
             + [f"path{k}={n}" for k in range(horizon + 1) for n in range(nodes)]
             + [f"visits{n}" for n in range(nodes)] + [f"to{n}" for n in range(nodes)] + ["stay", "to_visited"])
    return FeatureEncoder(tuple(names), rules.fast().data, _encode)


@njit(cache=True)
def _encode(data, s, action, out):
    ints = data[0]
    nodes, horizon, base, width = ints[NODES], ints[HORIZON], ints[BASE], ints[WIDTH]
    p = s[MOVES] % 2
    t = s[MOVES] // 2
    here = s[NODE0 + p]
    out[p] = 1.0
    if horizon > 0:
        out[2] = t / horizon
        out[3] = (horizon - t) / horizon
    out[4 + here] = 1.0
    # the path from its code: (start + 1), then * base + option + 1 per move
    digits = np.empty(horizon + 1, np.int64)
    code = s[CODE0 + p]
    steps = 0
    while code > 0:
        digits[steps] = code % base - 1
        code //= base
        steps += 1
    col_path = 4 + nodes
    col_visits = col_path + (horizon + 1) * nodes
    node = digits[steps - 1]
    for k in range(steps):
        if k > 0:
            node = ints[HEADER + node * width + digits[steps - 1 - k]]
        out[col_path + k * nodes + node] = 1.0
        out[col_visits + node] += 1.0 / (horizon + 1)
    destination = ints[HEADER + here * width + action]
    col = col_visits + nodes
    out[col + destination] = 1.0
    out[col + nodes] = 1.0 if destination == here else 0.0
    out[col + nodes + 1] = 1.0 if out[col_visits + destination] > 0 else 0.0
