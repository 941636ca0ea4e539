"""Imperfect-recall abstractions of the dice games (Lanctot 2013, ch. 5).

* ``drp_ir``: Die-Roll Poker where, from the second round on, a player remembers only the sum of their
  two dice (the betting stays remembered). Well-formed for DRP and skew well-formed for Skew-DRP(δ)
  (``load_game("dieroll", skew=δ)``).
* ``bluff_last_bids``: Bluff where a player remembers their own roll, whose turn it is and only the
  last `r` bids; sequences of at most `r` bids stay distinct (their length tells them apart).

`bluff_counters` counts the (information set, action) pairs of Bluff and of its last-r-bids
abstractions in closed form, for games too large to compile (the thesis's Bluff(2,2), Table 5.1).
"""

from __future__ import annotations

from math import comb

import numpy as np

from ..evaluation import _best_response, _plans
from ..games.dice import FACE_NAMES, Bluff, DieRollPoker
from ..policy import Policy
from ..tree import Game
from .base import Abstraction


def _rules(game: Game, kind: type, name: str):
    if not isinstance(game.rules, kind):
        raise ValueError(f"abstraction {name!r} needs a {kind.name!r} game, not {game.name!r}")
    return game.rules


def drp_ir(game: Game) -> Abstraction:
    """DRP-IR: second-round information sets keyed by the sum of one's own dice, not the dice."""
    _rules(game, DieRollPoker, "drp_ir")

    def key(k: str) -> str:
        dice, betting = k.split("|", 1)
        return f"{dice}|{betting}" if len(dice) < 2 else f"sum{sum(map(int, dice))}|{betting}"
    return Abstraction.from_keys(game, "drp_ir", key)


def bluff_last_bids(game: Game, r: int = 4) -> Abstraction:
    """Bluff keyed by (own roll, whose turn, the last `r` bids)."""
    _rules(game, Bluff, "bluff_last_bids")
    if isinstance(r, bool) or not isinstance(r, int) or r < 1:
        raise ValueError(f"abstraction 'bluff_last_bids': r (bids remembered) must be an integer >= 1, got {r!r}")

    def key(k: str) -> str:  # the player to move is added by `from_keys`
        own, bids = k.split("|", 1)
        return f"{own}|{' '.join(bids.split()[-r:])}"
    return Abstraction.from_keys(game, f"bluff_last_bids(r={r})", key)


def bluff_counters(dice1: int, dice2: int, r: int | None = None, forced: bool = True) -> int:
    """(Information set, action) pairs of both players in Bluff(dice1, dice2) (``r=None``) or in its
    last-`r`-bids abstraction. With ``forced=False`` the information sets whose only action is "bluff"
    (after the highest bid) are left out, as a compiled game with forced moves collapsed has them.

    With n bids, a set of bids before the last r is any subset of the bids below the first remembered one,
    so a remembered suffix starting at bid s is reached with both parities (players to move) when s > 0.
    A set whose last bid is b has n - b actions (the n - 1 - b higher bids and "bluff")."""
    if r is not None and (isinstance(r, bool) or not isinstance(r, int) or r < 1):
        raise ValueError(f"r (bids remembered) must be an integer >= 1 or None (every bid), got {r!r}")
    n = (dice1 + dice2) * len(FACE_NAMES)
    rolls = [comb(d + len(FACE_NAMES) - 1, d) for d in (dice1, dice2)]  # multisets of each player's dice
    r = n if r is None else r

    def actions(last: int) -> int:
        return n - last if forced or last < n - 1 else 0

    total = n * rolls[0]  # the empty bidding sequence: player 0 to move, n bids
    # short sequences (1 <= length < r, remembered whole): C(last, length - 1) choices below the last bid
    for length in range(1, min(r, n + 1)):
        total += rolls[length % 2] * sum(comb(last, length - 1) * actions(last) for last in range(n))
    if r > n:
        return total
    # remembered suffixes of exactly r bids, first bid s and last bid b: C(b - s - 1, r - 2) between them
    for s in range(n):
        parities = (r % 2,) if s == 0 else (0, 1)
        per_roll = sum(rolls[p] for p in parities)
        if r == 1:
            total += per_roll * actions(s)
        else:
            total += per_roll * sum(comb(b - s - 1, r - 2) * actions(b) for b in range(s + 1, n))
    return total


class FullRegret:
    """Each player's average regret in the full game against the profiles σ^1..σ^T it is shown:
    R_i^T / T = max_σ' (1/T) Σ_t u_i(σ', σ^t_-i) - (1/T) Σ_t u_i(σ^t). The first term is player i's
    best-response value against the uniform average of the opponent's realization plans (u_i is linear in
    them), so summing plans and values over t gives it exactly."""

    def __init__(self, game):
        self.game, self.t, self.value = game, 0, 0.0
        self.plans = [np.zeros(v.num_sequences) for v in game.views]

    def add(self, policy: Policy) -> None:
        """Count `policy` as the next profile σ^t."""
        if policy.game is not self.game:
            raise ValueError(f"FullRegret measures {self.game.rules.description()}; the policy is of "
                             f"{policy.game.rules.description()}")
        plans = _plans(self.game, policy)
        self.value += float(plans[0] @ self.game.views[0].terminal_values(plans[1]))
        for total, plan in zip(self.plans, plans):
            total += plan
        self.t += 1

    def average_regrets(self) -> tuple[float, float]:
        """(R_1^T / T, R_2^T / T), unclipped."""
        if not self.t:
            raise ValueError("FullRegret has no profiles yet: call add(policy) once per iteration first")
        own = (self.value / self.t, -self.value / self.t)
        return tuple(_best_response(self.game, p, self.plans[1 - p] / self.t)[0] - own[p] for p in (0, 1))

    def positive_sum(self) -> float:
        """(R_1^{T,+} + R_2^{T,+}) / T."""
        return sum(max(r, 0.0) for r in self.average_regrets())


RECALL_ABSTRACTIONS = {"drp_ir": drp_ir, "bluff_last_bids": bluff_last_bids}
