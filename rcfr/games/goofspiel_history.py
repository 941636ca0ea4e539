"""What a Goofspiel bidder knows, decoded from the fast state (`goofspiel_fast`): its own bids and
their results turn by turn. Shared by the Goofspiel features and the Goofspiel recall abstraction."""

from __future__ import annotations

from numba import njit

from .goofspiel_fast import CARDS, CODE0


@njit(cache=True)
def kth_card(hand, k):
    """The k-th card (0-based, ascending) of a hand held as a bit mask (bit c - 1 for card c)."""
    card, seen = 0, -1
    while seen < k:
        card += 1
        if hand & (1 << (card - 1)):
            seen += 1
    return card


@njit(cache=True)
def own_history(data, s, p, turns, cards, results):
    """Write player p's card (1..N) and result (0 tie, 1 won, 2 lost) of each of the first `turns`
    finished turns into `cards` and `results`, decoded from p's code (most recent turn last)."""
    n = data[0][CARDS]
    code = s[CODE0 + p]
    for t in range(turns - 1, -1, -1):
        radix = 3 * (n - t)
        rest = code % radix
        code //= radix
        cards[t] = rest // 3  # for now the card's index among those still held at turn t
        results[t] = rest % 3
    held = (1 << n) - 1
    for t in range(turns):
        card = kth_card(held, cards[t])
        held &= ~(1 << (card - 1))
        cards[t] = card
