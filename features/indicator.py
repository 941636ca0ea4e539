"""Indicator features: one column per sequence, the tabular special case of RCFR."""

from __future__ import annotations

import numpy as np


def extract(game):
    from . import Features
    n = game.num_sequences
    return Features(np.eye(n), tuple(f"is[{k}]:{a}" for k, a in zip(
        game.infoset_keys[game.sequence_infoset], game.action_names)))
