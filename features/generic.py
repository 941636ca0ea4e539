"""Generic features for any compiled game: what the acting player knows, position by position.

For each information set and each depth d of the path from the root, the chance-weighted share of
the set's histories whose step at depth d is each token (a chance outcome, or a player's action).
Steps the player observes (its own card, public cards, public actions) come out one-hot; hidden
ones (the opponent's card) as a distribution that still carries card-removal information. The
acting player and the sequence's action are appended one-hot. Nothing here knows about poker.
"""

from __future__ import annotations

import numpy as np

from rcfr.games.base import CHANCE


def _step_tokens(game) -> np.ndarray:
    """A readable token for the step that leads to each history ('' at the root)."""
    up = np.maximum(game.parent, 0)
    chance = game.player[up] == CHANCE
    seq = game.infoset_first_seq[np.maximum(game.infoset[up], 0)] + np.maximum(game.action, 0)
    acted = np.char.add(np.char.add("p", game.player[up].astype(str)), ":")
    moves = np.char.add(acted, game.action_names[np.minimum(seq, game.num_sequences - 1)])
    tokens = np.where(chance, game.chance_outcome_names, moves)
    tokens[game.parent < 0] = ""
    return tokens


def extract(game):
    from .base import Features
    tokens = _step_tokens(game)
    depth = game.depth.astype(np.int64)
    max_depth = int(depth.max())
    # One column per (depth, token) pair that occurs in the game.
    pairs = np.char.add(np.char.add(depth.astype(str), "="), tokens)
    names, column = np.unique(pairs[depth > 0], return_inverse=True)
    col = np.full(game.num_histories, -1, dtype=np.int64)
    col[depth > 0] = column
    # path[h, d-1]: the column of the step at depth d on the way to h (-1 beyond h's depth).
    path = np.full((game.num_histories, max(max_depth, 1)), -1, dtype=np.int64)
    bounds = np.flatnonzero(np.diff(depth)) + 1
    for level in np.split(np.arange(game.num_histories), bounds)[1:]:
        path[level] = path[game.parent[level]]
        path[level, depth[level] - 1] = col[level]
    decisions = np.flatnonzero(game.player >= 0)
    sets = game.infoset[decisions]
    weight = game.chance_reach[decisions]
    weight = weight / np.bincount(sets, weight, minlength=game.num_infosets)[sets]
    rows = np.repeat(sets, path.shape[1])
    cols = path[decisions].ravel()
    keep = cols >= 0
    known = np.zeros((game.num_infosets, len(names)))
    np.add.at(known, (rows[keep], cols[keep]), np.repeat(weight, path.shape[1])[keep])
    # Acting player and action, one-hot.
    action_names, action_col = np.unique(game.action_names, return_inverse=True)
    seq_set = game.sequence_infoset
    player = np.eye(2)[game.infoset_player[seq_set]]
    action = np.eye(len(action_names))[action_col]
    matrix = np.hstack([known[seq_set], player, action])
    names = [f"step{n}" for n in names] + ["player0", "player1"] + [f"action={a}" for a in action_names]
    return Features(matrix, tuple(names))
