"""Exact hand strength of every information set of the library's poker games (E[HS], E[HS^2]).

It sits below both users: card abstractions (`rcfr.abstraction.card` buckets by it) and poker
features (`rcfr.features.poker` has it as a column); neither imports the other.
Information-set keys read ``private|board|betting`` (see `rcfr.games.poker`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..tree import Game

MAX_DEALS = 2_000_000


def deck_of(game: Game):
    deck = getattr(game.rules, "deck", None)
    if deck is None:
        raise ValueError(f"hand strength and card abstractions need a poker game of rcfr.games.poker, not {game.name!r}")
    return deck


def board_cards(game: Game) -> int:
    """Number of public cards the game deals (one per betting round after the first)."""
    return len(getattr(game.rules, "bets", (0,))) - 1


def split_key(game: Game, key: str) -> tuple[int, tuple[int, ...], str]:
    """(private rank, board ranks, betting) of a readable information-set key."""
    deck = deck_of(game)
    private, board, betting = key.split("|", 2)
    width = 2 if deck.show_suits else 1
    ranks = tuple(deck.rank_chars.index(board[j]) for j in range(0, len(board), width))
    return deck.rank_chars.index(private[0]), ranks, betting


@dataclass(frozen=True)
class HandStrength:
    """Per information set: E[HS] and E[HS^2] (equity against a uniformly random opponent card,
    ties counted half, rolled out over the board cards still to come) and the round (board cards seen)."""

    ehs: np.ndarray
    ehs2: np.ndarray
    round: np.ndarray
    # per hand class (private rank, visible board ranks) of each round: values and deal frequencies
    classes: tuple[dict[tuple[int, ...], tuple[float, float, int]], ...]


def _deals(cards: int, count: int) -> np.ndarray:
    total = int(np.prod(np.arange(cards - count + 1, cards + 1)))
    if total > MAX_DEALS:
        raise ValueError(f"hand strength would enumerate {total} deals (more than {MAX_DEALS})")
    return np.array(list(itertools.permutations(range(cards), count)), dtype=np.int64).reshape(-1, count)


def _group(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row groups of equal `columns`: (unique rows, inverse index)."""
    unique, inverse = np.unique(columns, axis=0, return_inverse=True)
    return unique, inverse.reshape(-1)


def strength_classes(deck, boards: int) -> tuple[dict[tuple[int, ...], tuple[float, float, int]], ...]:
    """Per round k (board cards seen): (private rank, k board ranks) -> (E[HS], E[HS^2], deals), by
    enumerating all deals once (vectorized)."""
    deals = _deals(deck.size, 2 + boards)  # (me, opponent, board...)
    rank = deals // deck.suits
    board = rank[:, 2:]
    pairs = [(board == rank[:, [p]]).sum(axis=1) for p in (0, 1)]
    score = [pairs[p] * deck.ranks + rank[:, p] for p in (0, 1)]
    outcome = np.where(score[0] > score[1], 1.0, np.where(score[0] == score[1], 0.5, 0.0))
    # final hand strength of (my rank, board ranks): the mean over opponent cards
    mine = np.column_stack([rank[:, :1], board])
    _, inv = _group(mine)
    final = (np.bincount(inv, outcome) / np.bincount(inv))[inv]
    classes = []
    for k in range(boards + 1):
        unique, inv = _group(mine[:, :k + 1])
        count = np.bincount(inv)
        ehs, ehs2 = np.bincount(inv, final) / count, np.bincount(inv, final ** 2) / count
        classes.append({tuple(u.tolist()): (float(e), float(e2), int(c))
                        for u, e, e2, c in zip(unique, ehs, ehs2, count)})
    return tuple(classes)


def hand_strength(game: Game) -> HandStrength:
    """Exact E[HS] and E[HS^2] of every information set (`strength_classes` of its cards)."""
    classes = strength_classes(deck_of(game), board_cards(game))
    values = np.empty((game.num_infosets, 3))
    for i, key in enumerate(game.infoset_keys):
        private, seen, _ = split_key(game, str(key))
        e, e2, _ = classes[len(seen)][(private, *seen)]
        values[i] = e, e2, len(seen)
    return HandStrength(values[:, 0], values[:, 1], values[:, 2].astype(np.int64), classes)
