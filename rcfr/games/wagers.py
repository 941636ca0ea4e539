"""The rules of an action abstraction of no-limit one-card poker: nlocp whose bets and raises are
restricted to pot fractions (`NoLimitWagers`, the game "nlocp_wagers"). Solving it and translating
its policy into the full game is `rcfr.abstraction.action`'s job."""

from __future__ import annotations

import numpy as np

from .poker import NoLimitOneCardPoker, NoLimitState

FRACTIONS = {"H": 0.5, "P": 1.0, "D": 2.0}
#: The named abstractions of the issue; any letters of H, P, D in this order are accepted too.
ACTION_ABSTRACTIONS = ("null", "P", "HP", "PD", "HPD")


def parse_wagers(wagers: str) -> tuple[float, ...]:
    """Pot fractions of an abstraction name: "null" has none; "HPD" is (0.5, 1, 2)."""
    if wagers == "null":
        return ()
    if not isinstance(wagers, str) or not wagers or any(c not in FRACTIONS for c in wagers) \
            or list(wagers) != sorted(set(wagers), key="HPD".index):
        raise ValueError(f"action abstraction {wagers!r} must be 'null' or letters of 'HPD' in that order "
                         f"(H half pot, P pot, D double pot), e.g. {', '.join(ACTION_ABSTRACTIONS)}")
    return tuple(FRACTIONS[c] for c in wagers)


def _round(x: float) -> int:
    return int(np.floor(x + 0.5))


def pot_fraction(state: NoLimitState, total: int) -> float:
    """Size of a bet or raise to `total` as a fraction of the pot after calling."""
    high = max(state.contrib)
    return (total - high) / (2.0 * high)


class NoLimitWagers(NoLimitOneCardPoker):
    """nlocp with the wagers restricted to the pot fractions named by `wagers` (see the module)."""

    name = "nlocp_wagers"
    max_stack = 10_000  # pot-fraction wagers keep the tree small; the full game caps the stack at 50

    def __init__(self, cards: int = 4, stack: int = 10, ante: int = 1, wagers: str = "HPD"):
        super().__init__(cards=cards, stack=stack, ante=ante)
        self.fractions = parse_wagers(wagers)
        self.wagers = wagers

    def actions(self, s: NoLimitState):
        legal = super().actions(s)
        if legal[-1] != f"r{self.stack}":
            return legal
        high = max(s.contrib)
        lowest = min(high + max(s.increment, 1), self.stack)
        totals = {min(max(_round(high + f * 2 * high), lowest), self.stack) for f in self.fractions}
        totals.add(self.stack)
        return [a for a in legal if a[0] != "r"] + [f"r{t}" for t in sorted(totals)]
