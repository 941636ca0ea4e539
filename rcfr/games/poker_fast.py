"""The fast path (`rcfr.compiler.FastGame`) of the poker games: a state is the node of the public
betting tree plus the cards dealt so far, and the betting tree is a small table built once from the
rule object itself, so that the two descriptions cannot drift apart.

State words: ``[node, dealt, card_0, card_1, board_0, ...]``. Until both private cards are dealt
``node`` is 0, the first betting decision; a board card is dealt at a table node of kind ``CHANCE``.
"""

from __future__ import annotations

from collections import deque
from math import perm
from typing import NamedTuple

import numpy as np
from numba import njit

from .base import CHANCE, TERMINAL
from .fast import FastGame, fast_function

# columns of the public table
KIND, FIRST, NUM, BOARDS, FOLDED, C0, C1 = range(7)
COLUMNS = 7
# the int64 data: these parameters, then the table row by row
DECK, SUITS, DIVISOR, BASE, MAX_BOARDS, HEADER = range(6)


class PublicTree(NamedTuple):
    """The betting tree without cards, breadth-first: one row per node (see the column names)."""

    table: np.ndarray  # (nodes, 7) int64

    def histories(self, deck: int) -> int:
        """Exact history count of the full game on a deck of `deck` cards, forced moves collapsed:
        each public node occurs once per ordered deal of the cards dealt by then."""
        t = self.table
        total = private_deals(deck)
        for kind, num, boards in zip(t[:, KIND], t[:, NUM], t[:, BOARDS]):
            cards = 2 + int(boards)
            choices = deck - cards if kind == CHANCE else num
            if kind == TERMINAL or choices != 1:
                total += perm(deck, cards)
        return total


def private_deals(deck: int) -> int:
    """Histories before the betting: the first deal, and the second unless one card is left (forced)."""
    return 1 + (deck if deck - 1 > 1 else 0)


def public_tree(rules) -> PublicTree:
    """Walk the rules' betting with dummy cards (the first two, then the lowest left)."""
    start = rules.next_state(rules.next_state(rules.initial_state(), 0), 0)
    rows = []
    queue = deque([start])
    count = 1
    while queue:
        s = queue.popleft()
        kind = rules.player(s)
        if kind == TERMINAL:
            num = 0
        elif kind == CHANCE:
            num = 1
        else:
            num = len(rules.actions(s))
        rows.append((kind, count, num, len(s.cards) - 2, s.folded, s.contrib[0], s.contrib[1]))
        for a in range(num):
            queue.append(rules.next_state(s, a))
        count += num
    return PublicTree(np.array(rows, np.int64).reshape(-1, 7))


def poker_fast(rules, deck) -> FastGame:
    """The `FastGame` of a LimitPoker or NoLimitOneCardPoker rule object."""
    table = public_tree(rules).table
    show = deck.show_suits
    base = deck.size if show else deck.ranks  # a card's digit in information-set codes
    max_boards = int(table[:, BOARDS].max())
    params = [deck.size, deck.suits, 1 if show else deck.suits, base, max_boards]
    ints = np.concatenate([np.array(params, np.int64), table.ravel()])
    return FastGame(width=4 + max_boards, data=(ints, np.zeros(0)),
                    code_space=table.shape[0] * base ** (1 + max_boards), initial=table_initial, player=table_player,
                    num_children=_num_children, child=_child, utility=_utility, infoset_code=_infoset_code)


@njit(cache=True, inline="always")
def table_entry(ints, node, column):
    """Row `node`, `column` of the public table stored after the header of the int64 data."""
    return ints[HEADER + node * COLUMNS + column]


@fast_function("initial")
def table_initial(data, out):
    out[:] = 0


@fast_function("player")
def table_player(data, s):
    if s[1] < 2:
        return CHANCE
    return table_entry(data[0], s[0], KIND)


@fast_function("num_children")
def _num_children(data, s):
    ints = data[0]
    if s[1] < 2 or table_entry(ints, s[0], KIND) == CHANCE:
        return ints[DECK] - s[1]
    return table_entry(ints, s[0], NUM)


@fast_function("child")
def _child(data, s, k, out):
    ints = data[0]
    out[:] = s
    dealt = s[1]
    if dealt < 2 or table_entry(ints, s[0], KIND) == CHANCE:
        card = -1
        seen = 0
        while seen <= k:  # the k-th card not dealt yet, in increasing order
            card += 1
            free = True
            for i in range(dealt):
                if s[2 + i] == card:
                    free = False
            if free:
                seen += 1
        out[2 + dealt] = card
        out[1] = dealt + 1
        if dealt >= 2:
            out[0] = table_entry(ints, s[0], FIRST)
        return 1.0 / (ints[DECK] - dealt)
    out[0] = table_entry(ints, s[0], FIRST) + k
    return 1.0


@njit(cache=True)
def _strength(s, p, suits, boards):
    rank = s[2 + p] // suits
    pairs = 0
    for i in range(boards):
        if s[4 + i] // suits == rank:
            pairs += 1
    return pairs * 1000 + rank


@fast_function("utility")
def _utility(data, s):
    ints = data[0]
    node = s[0]
    boards = table_entry(ints, node, BOARDS)
    return table_payoff(ints, node, _strength(s, 0, ints[SUITS], boards), _strength(s, 1, ints[SUITS], boards))


@njit(cache=True, inline="always")
def table_payoff(ints, node, a, b):
    """Player 0's payoff at the terminal row `node`: a fold loses the folder's contribution, a showdown goes to
    the larger strength (a: player 0's, b: player 1's; Die-Roll Poker shares it with its dice sums)."""
    folded, c0 = table_entry(ints, node, FOLDED), float(table_entry(ints, node, C0))
    if folded == 0:
        return -c0
    if folded == 1:
        return float(table_entry(ints, node, C1))
    return c0 if a > b else (-c0 if a < b else 0.0)


@fast_function("infoset_code")
def _infoset_code(data, s):
    ints = data[0]
    node = s[0]
    divisor, base = ints[DIVISOR], ints[BASE]
    code = node * base + s[2 + table_entry(ints, node, KIND)] // divisor
    boards = table_entry(ints, node, BOARDS)
    for i in range(ints[MAX_BOARDS]):
        code = code * base + (s[4 + i] // divisor if i < boards else 0)
    return code
