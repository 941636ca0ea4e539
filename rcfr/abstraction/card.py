"""Card (state-space) abstractions for the library's poker games.

Information-set keys read ``private|board|betting`` (see `rcfr.games.poker`); a card abstraction
rewrites the card part and keeps the betting, so merged sets always share their legal actions.

* `ranks`: forget suits (lossless in these games: suits never matter).
* `partition`: Waugh et al. 2009's rank partitions, e.g. ``"J.QK"`` (J alone, Q and K together):
  a player knows the bucket of its private card and, once there is a board, whether its card pairs it.
* `ehs`: expected-hand-strength bucketing (E[HS] or E[HS^2], k buckets per round, k-means or
  percentile), with perfect recall (the key keeps every round's bucket) or imperfect recall (only the
  current round's bucket, Lanctot 2013 ch. 5).
"""

from __future__ import annotations

import numpy as np

from ..games.hand_strength import board_cards, deck_of, hand_strength, split_key
from ..options import check_choice, check_int
from ..tree import Game
from ..tree.abstraction import Abstraction


# ---- reading keys -----------------------------------------------------------------------------
def _rank_key(game: Game):
    chars = deck_of(game).rank_chars

    def key(k: str) -> str:
        private, board, betting = split_key(game, k)
        return f"{chars[private]}|{''.join(chars[r] for r in board)}|{betting}"
    return key


# ---- named abstractions -------------------------------------------------------------------------
def ranks(game: Game) -> Abstraction:
    """Suits forgotten: lossless here; on Leduc the rank-only game's 288 sets and 672 sequences."""
    return Abstraction.from_keys(game, "ranks", _rank_key(game))


def parse_partition(game: Game, partition: str) -> list[int]:
    """Bucket of each rank for a partition such as ``"J.QK"``; every rank exactly once."""
    chars = deck_of(game).rank_chars
    groups = partition.split(".") if isinstance(partition, str) else None
    letters = "".join(groups or [])
    if not groups or any(not g for g in groups) or sorted(letters) != sorted(chars):
        raise ValueError(f"card partition {partition!r} must list each rank of {chars!r} exactly once, in "
                         f"groups separated by '.', e.g. {'.'.join(chars)!r} or {chars!r}")
    return [next(b for b, g in enumerate(groups) if c in g) for c in chars]


def partition(game: Game, partition: str) -> Abstraction:
    """Waugh et al. 2009: the private card's bucket, then also whether it pairs the board."""
    bucket = parse_partition(game, partition)

    def key(k: str) -> str:
        private, board, betting = split_key(game, k)
        paired = "" if not board else ("p" if private in board else "n")
        return f"{bucket[private]}|{paired}|{betting}"
    return Abstraction.from_keys(game, partition, key)


METRICS = ("ehs", "ehs2")
METHODS = ("kmeans", "percentile")
RECALL = ("perfect", "imperfect")


def _count(k) -> bool:
    try:
        return check_int("buckets", k, 1) >= 1
    except ValueError:
        return False


def _buckets(values: np.ndarray, weights: np.ndarray, k: int, method: str, seed: int) -> np.ndarray:
    """Bucket 0..k-1 of each value (0 weakest); equal values always share a bucket."""
    distinct, inverse = np.unique(values, return_inverse=True)
    mass = np.bincount(inverse, weights)
    if len(distinct) <= k:
        return inverse
    if method == "percentile":
        middle = (np.cumsum(mass) - mass / 2) / mass.sum()
        labels = np.minimum((middle * k).astype(np.int64), k - 1)
    else:
        from sklearn.cluster import KMeans
        model = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(distinct.reshape(-1, 1), sample_weight=mass)
        order = np.argsort(np.argsort(model.cluster_centers_.ravel()))
        labels = order[model.labels_]
    _, labels = np.unique(labels, return_inverse=True)  # drop empty buckets, keep the order
    return labels.reshape(-1)[inverse]


def ehs(game: Game, buckets: int | tuple = 3, metric: str = "ehs", method: str = "kmeans",
        recall: str = "perfect", seed: int = 0) -> Abstraction:
    """Expected-hand-strength bucketing: `buckets` per round (one int for every round, or one per round)."""
    check_choice("metric", metric, METRICS)
    check_choice("method", method, METHODS)
    check_choice("recall", recall, RECALL)
    rounds = board_cards(game) + 1
    counts = (buckets,) * rounds if isinstance(buckets, (int, np.integer)) else tuple(buckets)
    if len(counts) != rounds or not all(_count(k) for k in counts):
        raise ValueError(f"buckets must be an integer >= 1 or {rounds} of them (one per round), got {buckets!r}")
    strength = hand_strength(game)
    bucket_of: list[dict[tuple[int, ...], int]] = []
    for k, classes in enumerate(strength.classes):
        names = list(classes)
        table = np.array([classes[n] for n in names])
        labels = _buckets(table[:, METRICS.index(metric)], table[:, 2], int(counts[k]), method, seed)
        bucket_of.append(dict(zip(names, labels.tolist())))

    def key(k: str) -> str:
        private, seen, betting = split_key(game, k)
        path = [bucket_of[r][(private, *seen[:r])] for r in range(len(seen) + 1)]
        if recall == "imperfect":
            path = path[-1:]
        return f"{'.'.join(map(str, path))}|{betting}"
    label = "x".join(map(str, counts))
    return Abstraction.from_keys(game, f"{metric}-{method}-{label}-{recall}", key)
