"""Dice games: Liar's Dice / Bluff(D1, D2) and Die-Roll Poker (Lanctot 2013)."""

from __future__ import annotations

from itertools import combinations_with_replacement
from math import comb, factorial
from typing import NamedTuple

from ..options import check_float
from .base import CHANCE, TERMINAL, GameRules
from .dice_fast import bluff_fast, dieroll_fast, drp_walk_bounds
from .poker import LimitPoker, LimitState, _check_bets, _check_int

FACE_NAMES = "12345*"  # Bluff: faces 1-5 and the wild star, the highest face
#: Dice per player: with 8, no partner fits the int64 codes (`bluff_code_space`).
MAX_DICE = 7


def bluff_code_space(dice1: int, dice2: int) -> int:
    """Bluff's information-set codes, ``2 * (own roll * 2^bids + bid mask) + player``, lie below this."""
    rolls = max(comb(len(FACE_NAMES) + d - 1, d) for d in (dice1, dice2))
    return 2 * rolls * 2 ** ((dice1 + dice2) * len(FACE_NAMES))


class BluffState(NamedTuple):
    dice: tuple[tuple[int, ...], ...]  # each player's dice, sorted, once rolled
    bids: tuple[int, ...]  # bid indices so far
    called: bool


class Bluff(GameRules):
    """Liar's Dice / Bluff(D1, D2): player 0 rolls `dice1` dice and player 1 `dice2` dice, each with faces
    1-5 and a wild star, and sees only their own. Players alternate bids, player 0 first; a bid
    "QxF" claims that at least Q of all dice show face F or a star (a star bid counts stars only).
    Bids are ordered by quantity, then face with the star highest; each bid must exceed the last.
    Instead of bidding (not on the first move) a player calls ``bluff``: if the claim holds the caller
    loses, otherwise the bidder loses. One round; the winner gets +1, the loser -1.

    Chance rolls each player's dice as one outcome (the sorted multiset, with its probability), so
    information-set keys read ``own dice|bids``, e.g. ``3*|1x5 2x2``.
    """

    name = "liars_dice"

    def __init__(self, dice1: int = 1, dice2: int = 1):
        # No cap on the tree: a game too large to compile is refused by its `estimate_histories` (Bluff(2, 2)
        # has 1.1e10 histories) and walked by its rules instead (`rcfr.rules`). The bound is the int64 code.
        self.dice1 = _check_int("dice1", dice1, 1, MAX_DICE)
        self.dice2 = _check_int("dice2", dice2, 1, MAX_DICE)
        self.num_bids = (dice1 + dice2) * len(FACE_NAMES)
        if bluff_code_space(dice1, dice2) > 2**63:
            raise ValueError(f"game parameters 'dice1' and 'dice2': Bluff({dice1}, {dice2})'s information-set codes "
                             f"(own roll x 2^{self.num_bids} bid sequences x 2 players) overflow int64; allowed: "
                             f"dice1 + dice2 <= 8, or (5, 4) and (4, 5)")

    def initial_state(self):
        return BluffState((), (), False)

    def player(self, s: BluffState) -> int:
        if s.called:
            return TERMINAL
        if len(s.dice) < 2:
            return CHANCE
        return len(s.bids) % 2

    def estimate_histories(self) -> int:
        """Exact: the two rolls, then per pair of rolls the empty bidding, every increasing bid sequence
        and its call, less the decisions after the top bid (where the call is forced)."""
        rolls = [comb(len(FACE_NAMES) + d - 1, d) for d in (self.dice1, self.dice2)]
        sequences = 2 ** self.num_bids - 1
        return 1 + rolls[0] + rolls[0] * rolls[1] * (1 + 2 * sequences - 2 ** (self.num_bids - 1))

    def fast(self):
        return bluff_fast(self, len(FACE_NAMES))

    def walk_bounds(self) -> tuple[int, int]:
        """The deepest path is the two rolls and every bid (the call after the top bid is forced, so
        collapsed); the widest node a roll or the opening bid (every bid, no call yet)."""
        rolls = [comb(len(FACE_NAMES) + d - 1, d) for d in (self.dice1, self.dice2)]
        return 2 + self.num_bids, max(*rolls, self.num_bids)

    def _bids_left(self, s: BluffState) -> range:
        return range(s.bids[-1] + 1 if s.bids else 0, self.num_bids)

    def actions(self, s: BluffState):
        names = [self.bid_name(b) for b in self._bids_left(s)]
        return names + ["bluff"] if s.bids else names

    @staticmethod
    def bid_name(bid: int) -> str:
        quantity, face = divmod(bid, len(FACE_NAMES))
        return f"{quantity + 1}x{FACE_NAMES[face]}"

    def chance_outcomes(self, s: BluffState):
        count = (self.dice1, self.dice2)[len(s.dice)]
        return [("".join(FACE_NAMES[f] for f in roll), _multiset_probability(roll, len(FACE_NAMES)))
                for roll in combinations_with_replacement(range(len(FACE_NAMES)), count)]

    def next_state(self, s: BluffState, action: int):
        if self.player(s) == CHANCE:
            count = (self.dice1, self.dice2)[len(s.dice)]
            roll = list(combinations_with_replacement(range(len(FACE_NAMES)), count))[action]
            return s._replace(dice=s.dice + (roll,))
        left = self._bids_left(s)
        if action == len(left):
            return s._replace(called=True)
        return s._replace(bids=s.bids + (left[action],))

    def utility(self, s: BluffState) -> float:
        quantity, face = divmod(s.bids[-1], len(FACE_NAMES))
        star = len(FACE_NAMES) - 1
        matching = sum(d == face or d == star for roll in s.dice for d in roll)
        caller = len(s.bids) % 2
        loser = caller if matching >= quantity + 1 else 1 - caller
        return -1.0 if loser == 0 else 1.0

    def infoset_key(self, s: BluffState) -> str:
        own = "".join(FACE_NAMES[d] for d in s.dice[len(s.bids) % 2])
        return f"{own}|{' '.join(self.bid_name(b) for b in s.bids)}"


def _multiset_probability(roll: tuple[int, ...], faces: int) -> float:
    counts = [roll.count(f) for f in set(roll)]
    ways = factorial(len(roll))
    for c in counts:
        ways //= factorial(c)
    return ways / faces ** len(roll)


class DieRollPoker(LimitPoker):
    """Die-Roll Poker (Lanctot 2013): each player antes `ante` and rolls a private `faces`-sided die;
    a limit betting round with bets of `bets[0]`; each player rolls a second private die; a second
    round with bets of `bets[1]`. Betting as in `LimitPoker`: player 0 acts first in each round, one
    bet and at most `max_raises` raises per round. At a showdown the higher sum of one's own dice
    wins, equal sums split. Keys read ``own dice|betting``, e.g. ``35|rc/r``.

    Skew-DRP(δ) (Lanctot 2013, §5.3) is ``skew=δ``: at a showdown player 0 also receives δ times the pot
    from player 1 when player 0's second die is even (0, the default, is plain DRP).
    """

    name = "dieroll"

    def __init__(self, faces: int = 6, ante: int = 1, bets: tuple = (2, 4), max_raises: int = 1,
                 skew: float = 0.0):
        self.faces = _check_int("faces", faces, 2, 9)
        self.ante = _check_int("ante", ante, 1)
        self.bets = _check_bets(bets)
        self.max_raises = _check_int("max_raises", max_raises, 0)
        self.skew = check_float("game parameter 'skew'", skew, 0.0)
        self.big_blind = float(self.ante)

    def fast(self):
        return dieroll_fast(self) if not self.skew else None  # the encoder pays no skew bonus: rule path

    def walk_bounds(self) -> tuple[int, int]:
        from .poker_fast import public_tree

        return drp_walk_bounds(public_tree(self).table, self.faces)

    def estimate_histories(self) -> int:
        """Exact: each node of the public tree (betting, and the rolls between rounds) occurs once per
        sequence of dice rolled by then; before it, the two first rolls."""
        from .poker_fast import BOARDS, public_tree

        table = public_tree(self).table
        return 1 + self.faces + sum(self.faces ** (2 + int(b)) for b in table[:, BOARDS])

    def params(self) -> dict:
        """Plain DRP (skew 0) keeps the description, cache key and fingerprint it had before `skew`."""
        params = super().params()
        if not self.skew:
            del params["skew"]
        return params

    def _dice_needed(self, s: LimitState) -> int:
        return 2 * max(1, len(s.rounds) + (1 if s.rounds and self._round_over(s.rounds[-1]) else 0))

    def player(self, s: LimitState) -> int:
        if s.folded >= 0:
            return TERMINAL
        if s.rounds and self._round_over(s.rounds[-1]) and len(s.rounds) == len(self.bets):
            return TERMINAL
        if len(s.cards) < self._dice_needed(s):
            return CHANCE
        return len(s.rounds[-1]) % 2 if s.rounds else 0

    def chance_outcomes(self, s: LimitState):
        return [(str(f + 1), 1.0 / self.faces) for f in range(self.faces)]

    def next_state(self, s: LimitState, action: int):
        if self.player(s) != CHANCE:
            return super().next_state(s, action)
        cards = s.cards + (action,)
        new_round = s.rounds and len(cards) == self._dice_needed(s)
        return s._replace(cards=cards, rounds=s.rounds + ("",) if new_round else s.rounds)

    def utility(self, s: LimitState) -> float:
        if s.folded >= 0:
            return super().utility(s)
        totals = [sum(s.cards[p::2]) for p in (0, 1)]
        second = s.cards[2] if len(s.cards) > 2 else None  # player 0's second die (none in a one-round game)
        bonus = self.skew * 2 * s.contrib[0] if self.skew and second is not None and second % 2 == 1 else 0.0
        return float((totals[0] > totals[1]) - (totals[0] < totals[1])) * s.contrib[0] + bonus

    def infoset_key(self, s: LimitState) -> str:
        p = len(s.rounds[-1]) % 2 if s.rounds else 0
        return f"{''.join(str(d + 1) for d in s.cards[p::2])}|{'/'.join(s.rounds)}"
