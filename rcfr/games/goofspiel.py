"""Imperfect-information Goofspiel."""

from __future__ import annotations

from math import factorial
from typing import NamedTuple

import numpy as np

from ..registry import check_choice
from .base import TERMINAL, GameRules
from .goofspiel_fast import goofspiel_fast
from .poker import _check_int

#: Cards per player: a suit. The fast path's information-set codes (`goofspiel_code_space`) fit int64 up to
#: 14 cards; at 15 they overflow.
MAX_CARDS = 13


class GoofspielState(NamedTuple):
    bids: tuple[tuple[int, ...], tuple[int, ...]]  # each player's bids so far (card values)


class Goofspiel(GameRules):
    """Goofspiel(N), imperfect-information form: each player holds cards 1..N; the point cards 1..N are
    contested in a fixed order both players know: ``points_order="descending"`` (N, N-1, ..., 1: Lanctot's
    thesis, the default), ``"ascending"``, or ``"random"``: one permutation drawn from ``seed`` when the
    game is built (as in Kuchar 2020, where each game's seed fixes its point order; ``points_order``
    names the order, ``self.points`` holds it). Each turn both players bid a card at once (modelled as
    player 0 then player 1, who does not see player 0's card); the higher bid wins the point card, a
    tie discards it. Players see only whether they won, lost or tied each bid, never the other's card.
    With ``returns="win_loss"`` (default) the payoff is +1/-1/0 by who has more points; with
    ``"points"`` it is the point difference. Keys read ``player:own bids|results``, e.g. ``1:5 3|WT``.
    """

    name = "goofspiel"
    has_chance = False  # the point cards come in a fixed order

    def __init__(self, cards: int = 5, returns: str = "win_loss", points_order: str = "descending", seed: int = 0):
        # No cap on the tree: (N!)^2 terminals, 25 million at N = 7, 3.9e19 at N = 13. A game too large to
        # compile is refused by its `estimate_histories` and walked by its rules instead (`rcfr.rules`).
        self.cards = _check_int("cards", cards, 1, MAX_CARDS)
        self.returns = check_choice("returns", returns, ["win_loss", "points"])
        self.points_order = check_choice("points_order", points_order, ["descending", "ascending", "random"])
        self.seed = _check_int("seed", seed, 0)
        if points_order == "random":
            self.points = tuple(int(c) + 1 for c in np.random.default_rng(seed).permutation(cards))
        else:
            self.points = tuple(range(cards, 0, -1)) if points_order == "descending" else tuple(range(1, cards + 1))

    def initial_state(self):
        return GoofspielState(((), ()))

    def player(self, s: GoofspielState) -> int:
        done = len(s.bids[1])
        if done == self.cards:
            return TERMINAL
        return 0 if len(s.bids[0]) == done else 1

    def _hand(self, s: GoofspielState, p: int) -> list[int]:
        return [c for c in range(1, self.cards + 1) if c not in s.bids[p]]

    def actions(self, s: GoofspielState):
        return [str(c) for c in self._hand(s, self.player(s))]

    def next_state(self, s: GoofspielState, action: int):
        p = self.player(s)
        bids = list(s.bids)
        bids[p] = bids[p] + (self._hand(s, p)[action],)
        return GoofspielState(tuple(bids))

    def utility(self, s: GoofspielState) -> float:
        points = [0, 0]
        for turn, (a, b) in enumerate(zip(*s.bids)):
            if a != b:
                points[0 if a > b else 1] += self.points[turn]
        diff = points[0] - points[1]
        return float(diff) if self.returns == "points" else float((diff > 0) - (diff < 0))

    def fast(self):
        return goofspiel_fast(self)

    def walk_bounds(self) -> tuple[int, int]:
        """Two bids a turn, the last turn's forced for both (so collapsed); the widest node the first bid."""
        return 2 * (self.cards - 1), self.cards

    def estimate_histories(self) -> int:
        """Exact: (N!/r!)^2 turns begin with r cards in each hand, each with player 0's node and r of
        player 1's; the last turn (r = 1) is forced for both, so its nodes are the terminals."""
        n, total = self.cards, factorial(self.cards) ** 2
        for r in range(n, 1, -1):
            total += (factorial(n) // factorial(r)) ** 2 * (1 + r)
        return total

    def infoset_key(self, s: GoofspielState) -> str:
        p = self.player(s)
        done = len(s.bids[1])
        results = "".join("T" if a == b else ("W" if (a > b) == (p == 0) else "L")
                          for a, b in zip(s.bids[0][:done], s.bids[1][:done]))
        return f"{p}:{' '.join(map(str, s.bids[p]))}|{results}"
