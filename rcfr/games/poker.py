"""Poker rule objects: limit poker (Kuhn, one-card poker, Leduc hold'em) and no-limit one-card poker.

Shared conventions:

* Player 0 acts first in every betting round. Every player antes before the cards are dealt.
* Cards are dealt one at a time by chance: player 0's private card, player 1's, then one public
  (board) card before each betting round after the first.
* Action names: ``f`` fold, ``c`` check or call, ``r`` bet or raise (limit), ``rT`` bet or raise
  so that the acting player's total contribution, ante included, becomes ``T`` chips (no-limit).
* Information-set keys read ``private|board|betting`` where betting lists the rounds' action
  names separated by ``/``: e.g. ``Qh|Ks|rc/r`` (Leduc) or ``K||c`` (Kuhn).
* Showdown: a private card that pairs the board wins, otherwise the higher rank; equal hands split.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import perm
from typing import NamedTuple

import numpy as np

from ..options import check_int
from .base import CHANCE, TERMINAL, GameRules
from .poker_fast import poker_fast, private_deals, public_tree

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "shdc"


def _check_int(name: str, value, low: int, high: int | None = None) -> int:
    return check_int(f"game parameter {name!r}", value, low, high)


def _check_bets(bets) -> tuple[int, ...]:
    """Bet sizes, one per betting round: a non-empty list or tuple of positive integers."""
    ok = (isinstance(bets, (Sequence, np.ndarray)) and not isinstance(bets, (str, bytes)) and len(bets) > 0
          and all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) and b >= 1 for b in bets))
    if not ok:
        raise ValueError("game parameter 'bets' must be a non-empty sequence of positive integers, one bet "
                         f"size per betting round (e.g. (2, 4)), got {bets!r}")
    return tuple(int(b) for b in bets)


class _Cards:
    """A deck of `ranks` x `suits` cards; card index = rank * suits + suit, rank 0 lowest."""

    def __init__(self, ranks: int, suits: int, show_suits: bool):
        self.ranks, self.suits, self.show_suits = ranks, suits, show_suits and suits > 1
        self.rank_chars = RANK_CHARS[-ranks:] if ranks == len(RANK_CHARS) else RANK_CHARS[-ranks - 1:-1]
        if ranks > len(RANK_CHARS):  # large one-card decks: ranks are named 1 (lowest) to N
            self.rank_chars = [str(r + 1) for r in range(ranks)]

    @property
    def size(self) -> int:
        return self.ranks * self.suits

    def rank(self, card: int) -> int:
        return card // self.suits

    def name(self, card: int) -> str:
        text = self.rank_chars[self.rank(card)]
        return text + SUIT_CHARS[card % self.suits] if self.show_suits else text

    def full_name(self, card: int) -> str:
        text = self.rank_chars[self.rank(card)]
        return text + SUIT_CHARS[card % self.suits] if self.suits > 1 else text

    def deal_outcomes(self, dealt: tuple[int, ...]) -> list[tuple[str, float]]:
        left = [c for c in range(self.size) if c not in dealt]
        return [(self.full_name(c), 1.0 / len(left)) for c in left]

    def next_card(self, dealt: tuple[int, ...], index: int) -> int:
        return [c for c in range(self.size) if c not in dealt][index]

    def showdown(self, cards: tuple[int, ...]) -> int:
        """+1 if player 0 wins, -1 if player 1 wins, 0 on a tie."""
        board = [self.rank(c) for c in cards[2:]]
        strength = [(board.count(self.rank(cards[p])), self.rank(cards[p])) for p in (0, 1)]
        return (strength[0] > strength[1]) - (strength[0] < strength[1])


class LimitState(NamedTuple):
    cards: tuple[int, ...]
    rounds: tuple[str, ...]  # action letters of each betting round begun so far
    contrib: tuple[int, int]
    folded: int  # -1, or the player who folded


class LimitPoker(GameRules):
    """Limit poker with one private card each and one board card before each later round.

    Each player antes `ante`; round k's bets and raises are `bets[k]` chips; a round allows one bet
    and at most `max_raises` raises. A round ends when a wager is called or both players check.
    """

    name = "limit_poker"
    #: the largest deck of ranks (13 have one-character names; OneCardPoker allows more)
    max_ranks = len(RANK_CHARS)

    def __init__(self, ranks: int = 3, suits: int = 2, ante: int = 1, bets: tuple = (2, 4),
                 max_raises: int = 1, merge_suits: bool = False):
        self.ranks = _check_int("ranks", ranks, 2, self.max_ranks)
        self.suits = _check_int("suits", suits, 1, len(SUIT_CHARS))
        self.ante = _check_int("ante", ante, 1)
        self.bets = _check_bets(bets)
        self.max_raises = _check_int("max_raises", max_raises, 0)
        if not isinstance(merge_suits, bool):
            raise ValueError(f"game parameter 'merge_suits' must be True or False, got {merge_suits!r}")
        self.merge_suits = merge_suits
        if ranks * suits < 2 + len(self.bets) - 1:
            raise ValueError(f"a deck of {ranks * suits} cards cannot deal {2 + len(self.bets) - 1} cards")
        self.deck = _Cards(self.ranks, self.suits, show_suits=not merge_suits)
        self.big_blind = float(self.ante)

    def initial_state(self):
        return LimitState((), (), (self.ante, self.ante), -1)

    def _round_over(self, history: str) -> bool:
        return len(history) >= 2 and history[-1] == "c"

    def player(self, s: LimitState) -> int:
        if s.folded >= 0:
            return TERMINAL
        if len(s.cards) < 2:
            return CHANCE
        if not s.rounds:
            return 0
        if self._round_over(s.rounds[-1]):
            return TERMINAL if len(s.rounds) == len(self.bets) else CHANCE
        return len(s.rounds[-1]) % 2

    def actions(self, s: LimitState):
        facing = s.contrib[0] != s.contrib[1]
        wagers = s.rounds[-1].count("r") if s.rounds else 0
        legal = ["f", "c"] if facing else ["c"]
        if wagers <= self.max_raises:
            legal.append("r")
        return legal

    def chance_outcomes(self, s: LimitState):
        return self.deck.deal_outcomes(s.cards)

    def next_state(self, s: LimitState, action: int):
        if self.player(s) == CHANCE:
            cards = s.cards + (self.deck.next_card(s.cards, action),)
            rounds = s.rounds if len(cards) <= 2 else s.rounds + ("",)
            return s._replace(cards=cards, rounds=rounds)
        rounds = s.rounds or ("",)
        p = len(rounds[-1]) % 2
        letter = self.actions(s._replace(rounds=rounds))[action]
        contrib = list(s.contrib)
        if letter == "f":
            return s._replace(rounds=rounds[:-1] + (rounds[-1] + "f",), folded=p)
        if letter == "r":
            contrib[p] = contrib[1 - p] + self.bets[len(rounds) - 1]
        else:
            contrib[p] = contrib[1 - p]
        return LimitState(s.cards, rounds[:-1] + (rounds[-1] + letter,), tuple(contrib), -1)

    def utility(self, s: LimitState) -> float:
        if s.folded >= 0:
            return float(-s.contrib[0] if s.folded == 0 else s.contrib[1])
        return float(self.deck.showdown(s.cards) * s.contrib[0])

    def infoset_key(self, s: LimitState) -> str:
        p = len(s.rounds[-1]) % 2 if s.rounds else 0
        board = "".join(self.deck.name(c) for c in s.cards[2:])
        return f"{self.deck.name(s.cards[p])}|{board}|{'/'.join(s.rounds)}"

    def fast(self):
        return poker_fast(self, self.deck)

    def estimate_histories(self) -> int:
        return public_tree(self).histories(self.deck.size)


class Kuhn(LimitPoker):
    """Kuhn poker: cards J < Q < K, ante 1, one betting round with a single bet of 1 and no raise."""

    name = "kuhn"

    def __init__(self):
        super().__init__(ranks=3, suits=1, ante=1, bets=(1,), max_raises=0)


class OneCardPoker(LimitPoker):
    """One-card poker OCP(N): Kuhn betting (ante 1, one bet of 1, no raise) on an N-card deck (up to
    1000 cards; past 13, cards are named by rank, 1 to N)."""

    name = "ocp"
    max_ranks = 1000

    def __init__(self, cards: int = 3):
        super().__init__(ranks=_check_int("cards", cards, 2, self.max_ranks), suits=1, ante=1,
                         bets=(1,), max_raises=0)
        self.cards = cards


class Leduc(LimitPoker):
    """Leduc hold'em: 6 cards (J, Q, K in two suits), ante 1, bets of 2 then 4, one bet and one raise per
    round, one board card before round 2; a pair with the board wins, else the higher card, ties split.

    `merge_suits=True` gives the rank-only view: suits never matter, so information sets that differ
    only in suits merge (288 instead of 936), a lossless abstraction with the same game value.
    """

    name = "leduc"

    def __init__(self, ranks: int = 3, suits: int = 2, ante: int = 1, bets: tuple = (2, 4),
                 max_raises: int = 1, merge_suits: bool = False):
        super().__init__(ranks=ranks, suits=suits, ante=ante, bets=bets, max_raises=max_raises,
                         merge_suits=merge_suits)


class NoLimitState(NamedTuple):
    cards: tuple[int, ...]
    history: tuple[str, ...]
    contrib: tuple[int, int]
    increment: int  # the last bet or raise increment (0 before any wager)
    folded: int


class NoLimitOneCardPoker(GameRules):
    """No-limit one-card poker (Morrill 2016): a deck of `cards` distinct ranks, each player antes `ante`
    from a stack of `stack` chips (ante included); one betting round, no board card.

    Betting: check/call; fold only when facing a wager; bet or raise to any integer total; a raise must
    increase the wager by at least the previous bet or raise increment (at least 1 chip); going all-in
    is always allowed, even below that minimum. The round ends on a call (or a second check) or a fold;
    the higher card wins the showdown.
    """

    name = "nlocp"
    #: The full betting tree roughly doubles every 4 chips (58 million histories per deal at stack 60);
    #: subclasses that abstract the bet sizes raise this.
    max_stack = 50

    def __init__(self, cards: int = 4, stack: int = 10, ante: int = 1):
        self.cards = _check_int("cards", cards, 2, len(RANK_CHARS))
        self.ante = _check_int("ante", ante, 1)
        self.stack = _check_int("stack", stack, self.ante + 1, max(self.max_stack, self.ante + 1))
        self.deck = _Cards(self.cards, 1, show_suits=False)
        self.big_blind = float(self.ante)

    def initial_state(self):
        return NoLimitState((), (), (self.ante, self.ante), 0, -1)

    def player(self, s: NoLimitState) -> int:
        if s.folded >= 0 or (len(s.history) >= 2 and s.history[-1] == "c"):
            return TERMINAL
        if len(s.cards) < 2:
            return CHANCE
        return len(s.history) % 2

    def actions(self, s: NoLimitState):
        p = len(s.history) % 2
        high = max(s.contrib)
        legal = ["f", "c"] if s.contrib[1 - p] > s.contrib[p] else ["c"]
        if high < self.stack:
            lowest = min(high + max(s.increment, 1), self.stack)
            legal += [f"r{total}" for total in range(lowest, self.stack + 1)]
        return legal

    def chance_outcomes(self, s: NoLimitState):
        return self.deck.deal_outcomes(s.cards)

    def next_state(self, s: NoLimitState, action: int):
        if self.player(s) == CHANCE:
            return s._replace(cards=s.cards + (self.deck.next_card(s.cards, action),))
        p = len(s.history) % 2
        name = self.actions(s)[action]
        history = s.history + (name,)
        if name == "f":
            return s._replace(history=history, folded=p)
        contrib = list(s.contrib)
        increment = s.increment
        if name == "c":
            contrib[p] = contrib[1 - p]
        else:
            total = int(name[1:])
            increment = max(increment, total - max(s.contrib))
            contrib[p] = total
        return NoLimitState(s.cards, history, tuple(contrib), increment, -1)

    def utility(self, s: NoLimitState) -> float:
        if s.folded >= 0:
            return float(-s.contrib[0] if s.folded == 0 else s.contrib[1])
        return float(self.deck.showdown(s.cards) * s.contrib[0])

    def infoset_key(self, s: NoLimitState) -> str:
        return f"{self.deck.name(s.cards[len(s.history) % 2])}||{''.join(s.history)}"

    def fast(self):
        return poker_fast(self, self.deck)

    def estimate_histories(self) -> int:
        return private_deals(self.cards) + perm(self.cards, 2) * _betting_nodes(self.stack, self.ante)


def _betting_nodes(stack: int, ante: int) -> int:
    """Nodes of the no-limit betting tree (decisions and terminals), by a memoized recursion on
    (acting player's total, opponent's total, last increment, first action taken)."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def size(me: int, other: int, increment: int, started: bool) -> int:
        high = max(me, other)
        count = 1
        if other > me:
            count += 1  # fold
        # call or check: ends the round unless it is the opening check
        count += 1 if (started or other > me) else size(other, me, increment, True)
        if high < stack:
            for total in range(min(high + max(increment, 1), stack), stack + 1):
                count += size(other, total, max(increment, total - high), True)
        return count
    return size(ante, ante, 0, False)
