"""The fast path (`rcfr.games.fast.FastGame`) of Princess and Monster.

State words: ``[phase, node_0, node_1, moves, caught, code_0, code_1]``: phase 0 before the monster is
placed, 1 before the princess is, 2 in play; each player's node; moves made; whether the princess is
caught; and each player's path code, ``(start + 1)`` then ``* B + action + 1`` per move, where
``B`` exceeds both the number of nodes and the most options of a node, so that a code names one path
(paths of different lengths have codes in disjoint ranges). The information-set code is ``2 * code + player``.
"""

from __future__ import annotations

import numpy as np

from .base import CHANCE, TERMINAL
from .fast import FastGame, fast_function

PHASE, NODE0, NODE1, MOVES, CAUGHT, CODE0, CODE1 = range(7)
# the int64 data: these parameters, then the options table (nodes x WIDTH), then each node's option count
NODES, HORIZON, BASE, WIDTH, HEADER = range(5)


def pursuit_fast(rules) -> FastGame:
    options = [rules.options(n) for n in range(rules.nodes)]
    width = max(len(o) for o in options)
    table = np.full((rules.nodes, width), -1, np.int64)
    for n, o in enumerate(options):
        table[n, :len(o)] = o
    base = max(width, rules.nodes) + 1
    ints = np.concatenate([np.array([rules.nodes, rules.horizon, base, width], np.int64), table.ravel(),
                           np.array([len(o) for o in options], np.int64)])
    start = rules.initial_state()
    initial = np.zeros(7, np.int64)
    if start.paths[1]:  # fixed starts
        initial[[PHASE, NODE0, NODE1, CODE0, CODE1]] = 2, start.paths[0][0], start.paths[1][0], \
            start.paths[0][0] + 1, start.paths[1][0] + 1
    ints = np.concatenate([ints, initial])
    return FastGame(width=7, data=(ints, np.zeros(0)), code_space=2 * (rules.nodes + 1) * base ** rules.horizon,
                    initial=_initial, player=_player, num_children=_num_children, child=_child,
                    utility=_utility, infoset_code=_infoset_code)


@fast_function("initial")
def _initial(data, out):
    ints = data[0]
    out[:] = ints[ints.size - 7:]


@fast_function("player")
def _player(data, s):
    if s[PHASE] < 2:
        return CHANCE
    if s[CAUGHT] or s[MOVES] == 2 * data[0][HORIZON] + 1:
        return TERMINAL
    return s[MOVES] % 2


@fast_function("num_children")
def _num_children(data, s):
    ints = data[0]
    if s[PHASE] < 2:
        return ints[NODES]
    if s[CAUGHT] or s[MOVES] == 2 * ints[HORIZON] + 1:
        return 0
    node = s[NODE0 + s[MOVES] % 2]
    return ints[HEADER + ints[NODES] * ints[WIDTH] + node]


@fast_function("child")
def _child(data, s, k, out):
    ints = data[0]
    out[:] = s
    if s[PHASE] < 2:
        out[NODE0 + s[PHASE]] = k
        out[CODE0 + s[PHASE]] = k + 1
        out[PHASE] = s[PHASE] + 1
        return 1.0 / ints[NODES]
    p = s[MOVES] % 2
    node = ints[HEADER + s[NODE0 + p] * ints[WIDTH] + k]
    out[NODE0 + p] = node
    out[CODE0 + p] = s[CODE0 + p] * ints[BASE] + k + 1
    out[MOVES] = s[MOVES] + 1
    out[CAUGHT] = 1 if out[NODE0] == out[NODE1] else 0
    return 1.0


@fast_function("utility")
def _utility(data, s):
    horizon = data[0][HORIZON]
    if not s[CAUGHT]:
        return -float(horizon)
    return float(horizon - (s[MOVES] - 1) // 2 + 1)


@fast_function("infoset_code")
def _infoset_code(data, s):
    p = s[MOVES] % 2
    return 2 * s[CODE0 + p] + p
