"""Poker features (Morrill 2016): card strength plus the betting history of each sequence, as an
on-demand encoder (`rcfr.features.encoders`) of the poker games (kuhn, ocp, leduc, limit_poker, nlocp).

Columns: the acting player's expected hand strength E[HS] (probability of winning, ties counting
half, over a uniform opponent hand and any future board cards, given the cards it sees), the board
card's rank (rank + 1; 0 before the board), then for each (information set, action) pair of the
sequence from the most recent (the sequence's own action) to the least recent, padded with zeros
(``history=k`` keeps the k most recent pairs; None keeps the game's longest history):
player 1 to act, player 2 to act, pot after the action, acting player's remaining stack, fold, call,
non-all-in wager, all-in wager, wager size in chips (beyond calling), wager as a fraction of the pot
after matching, wager as a fraction of the stack remaining after matching.
Limit games have no stack; their stack is the most a player can ever put in.

Betting facts are public, so they are computed once per edge of the public betting tree
(`rcfr.games.poker_fast.public_tree`, walked through the rules with dummy cards) and E[HS] once per
hand class (`rcfr.games.hand_strength.strength_classes`); both tables go into the encoder's float
data, and ``encode`` reads a sequence's row off them by walking up the betting tree from its node.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from numba import njit

from rcfr.games.base import CHANCE
from rcfr.games.hand_strength import strength_classes
from rcfr.games.poker import LimitPoker, NoLimitOneCardPoker
from rcfr.games.poker_fast import BOARDS, COLUMNS, FIRST, KIND, NUM, public_tree
from rcfr.options import check_int

from .encoders import FeatureEncoder

PAIR_FIELDS = ("player1", "player2", "pot", "stack", "fold", "call", "wager", "all_in", "wager_chips",
               "wager_pot_fraction", "wager_stack_fraction")
# the int64 data: these, then the public tree (nodes x COLUMNS), each node's parent, the E[HS] offsets per round
RANKS, SUITS, NUM_NODES, LENGTH, HEADER = range(5)


def _stack(rules) -> int:
    if isinstance(rules, NoLimitOneCardPoker):
        return rules.stack
    return rules.ante + sum(b * (rules.max_raises + 1) for b in rules.bets)


def _pair(rules, stack: int, before, action: str, after) -> list[float]:
    q = rules.player(before)
    wager = action.startswith("r")
    remaining = stack - after.contrib[q]
    matched = before.contrib[1 - q]
    size = after.contrib[q] - matched if wager else 0
    pot_matched = 2 * matched
    return [q == 0, q == 1, sum(after.contrib), remaining, action == "f", action == "c",
            wager and remaining > 0, wager and remaining == 0, size,
            size / pot_matched if pot_matched else 0.0,
            size / (stack - matched) if stack > matched else 0.0]


def _betting(rules, table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per public node: its parent (-1 at the root), the pair of the action leading to it (zeros after a
    deal) and the number of betting actions before it; the walk matches `public_tree`'s order."""
    nodes = table.shape[0]
    parent = np.full(nodes, -1, np.int64)
    pairs = np.zeros((nodes, len(PAIR_FIELDS)))
    before = np.zeros(nodes, np.int64)
    stack = _stack(rules)
    queue = deque([(0, rules.next_state(rules.next_state(rules.initial_state(), 0), 0))])
    while queue:
        node, s = queue.popleft()
        kind = table[node, KIND]
        names = rules.actions(s) if kind >= 0 else ()
        for a in range(table[node, NUM]):  # actions, or the one dummy deal of a chance node
            c = table[node, FIRST] + a
            after = rules.next_state(s, a)
            parent[c] = node
            if kind >= 0:
                pairs[c] = _pair(rules, stack, s, names[a], after)
                before[c] = before[node] + 1
            else:
                before[c] = before[node]
            queue.append((c, after))
    return parent, pairs, before


def serves(rules) -> bool:
    """Poker with a deck and the poker fast path (not Die-Roll Poker, whose "cards" are dice)."""
    return isinstance(rules, (LimitPoker, NoLimitOneCardPoker)) and getattr(rules, "deck", None) is not None


def make(game, history: int | None = None) -> FeatureEncoder:
    rules = game.rules
    if not serves(rules):
        raise ValueError(f"features 'poker' need poker rules (kuhn, ocp, leduc, nlocp), not "
                         f"{rules.name!r}; use features 'generic'")
    if history is not None:
        try:
            history = check_int("history", history, 1)
        except ValueError:
            raise ValueError(f"features 'poker' option history must be None or an integer >= 1, "
                             f"got {history!r}") from None
    table = public_tree(rules).table
    parent, pairs, before = _betting(rules, table)
    decisions = table[:, KIND] >= 0
    length = 1 + int(before[decisions].max()) if history is None else history
    boards = int(table[:, BOARDS].max())
    deck = rules.deck
    classes = strength_classes(deck, boards)
    # E[HS] of (private rank, k board ranks) at offsets[k] + the ranks in base `ranks`
    offsets = np.cumsum([0] + [deck.ranks ** (k + 1) for k in range(boards + 1)])
    ehs = np.zeros(offsets[-1])
    for k, round_classes in enumerate(classes):
        for ranks, (e, _, _) in round_classes.items():
            ehs[offsets[k] + np.ravel_multi_index(ranks, (deck.ranks,) * (k + 1))] = e
    ints = np.concatenate([np.array([deck.ranks, deck.suits, table.shape[0], length], np.int64), table.ravel(),
                           parent, offsets])
    names = ["hand_strength", "board_rank"] + [f"a{k}.{f}" for k in range(length) for f in PAIR_FIELDS]
    return FeatureEncoder(tuple(names), (ints, np.concatenate([pairs.ravel(), ehs])), _encode)


@njit(cache=True)
def _encode(data, s, action, out):
    ints, floats = data
    ranks, suits, nodes, length = ints[RANKS], ints[SUITS], ints[NUM_NODES], ints[LENGTH]
    parent = HEADER + nodes * COLUMNS
    width = 11  # len(PAIR_FIELDS)
    node = s[0]
    p = ints[HEADER + node * COLUMNS + KIND]
    boards = ints[HEADER + node * COLUMNS + BOARDS]
    index = s[2 + p] // suits
    for i in range(boards):
        index = index * ranks + s[4 + i] // suits
    out[0] = floats[nodes * width + ints[parent + nodes + boards] + index]
    out[1] = s[3 + boards] // suits + 1 if boards > 0 else 0.0
    # the pairs from the sequence's own action up the betting tree, most recent first
    c = ints[HEADER + node * COLUMNS + FIRST] + action
    k = 0
    while k < length and c > 0:
        up = ints[parent + c]
        if ints[HEADER + up * COLUMNS + KIND] != CHANCE:
            out[2 + k * width:2 + (k + 1) * width] = floats[c * width:(c + 1) * width]
            k += 1
        c = up
