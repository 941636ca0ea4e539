"""Indicator features: one column per sequence, the tabular special case of RCFR.

The matrix is dense (the regressors take dense arrays), so it grows as sequences squared; above
`MAX_BYTES` extraction fails before allocating, pointing to compact features instead.
"""

from __future__ import annotations

import numpy as np

MAX_BYTES = 1 << 30  # 1 GiB: about 11,500 sequences


def extract(game):
    from .base import Features
    n = game.num_sequences
    size = 8 * n * n
    if size > MAX_BYTES:
        raise ValueError(f"indicator features for {game.name} would be a dense {n} x {n} matrix "
                         f"({size / 2**30:.1f} GiB, limit {MAX_BYTES / 2**30:.1f} GiB); use features='generic' "
                         f"(or 'poker' for poker games), or a tabular solver (cfr, cfr+) for a regret table")
    return Features(np.eye(n), tuple(f"is[{k}]:{a}" for k, a in zip(
        game.infoset_keys[game.sequence_infoset], game.action_names)))
