"""Who sees each chance outcome, and which chance nodes are one event seen from a player's side.

Common chance-sampling (Lanctot 2013, §7.5) walks every outcome of the chance nodes that *belong* to the
updating player i (their outcome is revealed to i alone) and samples the others; a chance node that is
reached again under a different combination of i's outcomes reuses the number drawn for it before.
Both notions are read off the compiled tree, so any game gets them:

* player p *observes* chance node c when no information set of p holds histories below two different
  outcomes of c; c belongs to i when i observes it and the other player does not;
* two chance nodes are the *same event* for i when their paths from the root agree once the outcomes
  of the chance nodes that belong to i are blanked out (in Bluff(1,1) with i = player 0: the six nodes
  that roll player 1's die, one below each of player 0's rolls).
"""

from __future__ import annotations

import numpy as np

from ..tree import Game

CHANCE = -1


def _levels(game: Game) -> list[np.ndarray]:
    """Histories grouped by depth, shallowest first (a parent is always shallower than its children)."""
    order = np.argsort(game.depth, kind="stable")
    bounds = np.flatnonzero(np.diff(game.depth[order])) + 1
    return np.split(order, bounds)


def observers(game: Game) -> np.ndarray:
    """``(2, H)`` bools: ``[p, c]`` is True when player p tells the outcomes of chance node c apart (False
    at histories that are not chance nodes)."""
    H = game.num_histories
    is_chance = game.player == CHANCE
    levels = _levels(game)
    # per history: how many chance nodes lie above it, and for the d-th one the node and the outcome taken
    above = np.zeros(H, np.int64)
    for level in levels[1:]:
        up = game.parent[level]
        above[level] = above[up] + is_chance[up]
    depth = int(above.max()) + 1 if H else 1
    node = np.full((depth, H), -1, np.int64)
    outcome = np.full((depth, H), -1, np.int64)
    for level in levels[1:]:
        up = game.parent[level]
        node[:, level] = node[:, up]
        outcome[:, level] = outcome[:, up]
        below = level[is_chance[up]]
        node[above[up[is_chance[up]]], below] = game.parent[below]
        outcome[above[up[is_chance[up]]], below] = game.action[below]
    seen = np.zeros((2, H), bool)
    seen[:, is_chance] = True
    for p in (0, 1):
        for d in range(depth):
            rows = np.flatnonzero((game.player == p) & (node[d] >= 0))
            if not len(rows):
                continue
            # one group per (chance node, information set of p): p tells c apart iff each group has one outcome
            groups, inverse = np.unique(node[d, rows] * game.num_infosets + game.infoset[rows], return_inverse=True)
            low = np.full(len(groups), np.iinfo(np.int64).max)
            high = np.full(len(groups), -1)
            np.minimum.at(low, inverse, outcome[d, rows])
            np.maximum.at(high, inverse, outcome[d, rows])
            seen[p, groups[low != high] // game.num_infosets] = False
    return seen


def common_keys(game: Game) -> np.ndarray:
    """``(2, H)`` int32 for common chance-sampling with updating player i = row: -1 where every outcome is
    walked (chance nodes that belong to i, and every history that is not a chance node), otherwise the
    id of the node's event for i (equal ids share one random number per traversal)."""
    seen = observers(game)
    is_chance = game.player == CHANCE
    keys = np.full((2, game.num_histories), -1, np.int32)
    levels = _levels(game)
    width = int(game.num_children.max()) + 2
    for i in (0, 1):
        walked = is_chance & seen[i] & ~seen[1 - i]  # the chance nodes that belong to i
        path = np.zeros(game.num_histories, np.int64)  # id of the path with i's outcomes blanked
        ids = 1
        for level in levels[1:]:
            up = game.parent[level]
            step = np.where(walked[up], 0, game.action[level].astype(np.int64) + 1)
            distinct, inverse = np.unique(path[up] * width + step, return_inverse=True)
            path[level] = ids + inverse
            ids += len(distinct)
        sampled = np.flatnonzero(is_chance & ~walked)
        _, keys[i, sampled] = np.unique(path[sampled], return_inverse=True)
    return keys
