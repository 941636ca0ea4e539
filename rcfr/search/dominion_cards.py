"""Solitaire Dominion's cards (costs, effects, supply) and the layout of a state's 85 integers, shared by the
readable rules (`rcfr.search.dominion`) and the compiled ones (`rcfr.search.dominion_kernels`)."""

from __future__ import annotations

import numpy as np

CARDS = ("Copper", "Silver", "Gold", "Estate", "Duchy", "Province", "Moat", "Village", "Woodcutter", "Gardens",
         "Moneylender", "Smithy", "Council Room", "Festival", "Laboratory", "Market")
K = len(CARDS)
(COPPER, SILVER, GOLD, ESTATE, DUCHY, PROVINCE, MOAT, VILLAGE, WOODCUTTER, GARDENS, MONEYLENDER, SMITHY,
 COUNCIL_ROOM, FESTIVAL, LABORATORY, MARKET) = range(K)
COST = np.array([0, 3, 6, 2, 5, 8, 2, 3, 3, 4, 4, 4, 5, 5, 5, 5], dtype=np.int64)
MONEY = np.array([1, 2, 3] + [0] * 13, dtype=np.int64)
POINTS = np.array([0, 0, 0, 1, 3, 6] + [0] * 10, dtype=np.int64)      # Gardens: 1 per 10 cards owned
IS_ACTION = np.array([0] * 6 + [1, 1, 1, 0] + [1] * 6, dtype=np.int64)
PLUS_CARDS = np.array([0] * 6 + [2, 1, 0, 0, 0, 3, 4, 0, 2, 1], dtype=np.int64)
PLUS_ACTIONS = np.array([0] * 6 + [0, 2, 0, 0, 0, 0, 0, 2, 1, 1], dtype=np.int64)
PLUS_BUYS = np.array([0] * 6 + [0, 0, 1, 0, 0, 0, 1, 1, 0, 1], dtype=np.int64)
PLUS_COINS = np.array([0] * 6 + [0, 0, 2, 0, 0, 0, 0, 2, 0, 1], dtype=np.int64)
SUPPLY = np.array([46, 40, 30, 8, 8, 8, 10, 10, 10, 8, 10, 10, 10, 10, 10, 10], dtype=np.int64)
#: Moneylender trashes a Copper from hand for this many coins
LENDER_COINS = 3
#: a hand with this much money buys a Province: the control variate's event (thesis §7.1)
RICH = 8

ACTION, BUY_PHASE = 0, 1
BUY = K                 # action BUY + c buys card c; 0 <= c < K plays card c
END = 2 * K
LEFT, PHASE, ACTIONS, BUYS, COINS = range(5)
DECK, HAND, DISCARD, PLAY, PILES = (5 + K * j for j in range(5))
FIELDS = 5 + 5 * K
SEED_SPACE = 1 << 62
#: the most turns a game may last: a rollout plays every one, and states hold the count in an int64
MAX_TURNS = 10_000
_MASK = (1 << 64) - 1
