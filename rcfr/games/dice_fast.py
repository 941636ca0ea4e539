"""The fast paths (`rcfr.games.fast.FastGame`) of Liar's Dice / Bluff and Die-Roll Poker.

State words: ``[rolled, roll_0, roll_1, last bid, bids mask, bids, called]``: how many players have
rolled, each roll's index in the rules' list of outcomes, the last bid (-1 before any), the bids made
as a bit mask (bids only increase, so the mask is the sequence), their number and whether bluff was
called. The information-set code is ``2 * (own roll * 2^bids + mask) + player``.
"""

from __future__ import annotations

from itertools import combinations_with_replacement

import numpy as np

from .base import CHANCE, TERMINAL
from .fast import FastGame, fast_function
from .poker_fast import (
    BOARDS,
    DECK,
    FIRST,
    KIND,
    NUM,
    public_tree,
    table_entry,
    table_initial,
    table_payoff,
    table_player,
)
from .poker_fast import HEADER as TABLE_HEADER

ROLLED, ROLL0, ROLL1, LAST, MASK, BIDS, CALLED = range(7)
# the int64 data: these parameters, then each player's rolls (outcome x dice, faces 0-5)
DICE0, DICE1, NUM_BIDS, FACES, ROLLS0, ROLLS1, HEADER = range(7)


def bluff_fast(rules, faces: int) -> FastGame:
    rolls = [list(combinations_with_replacement(range(faces), d)) for d in (rules.dice1, rules.dice2)]
    probs = [[q for _, q in rules.chance_outcomes(rules.initial_state())]]
    probs.append([q for _, q in rules.chance_outcomes(rules.next_state(rules.initial_state(), 0))])
    ints = np.array([rules.dice1, rules.dice2, rules.num_bids, faces, len(rolls[0]), len(rolls[1])]
                    + [f for r in rolls[0] for f in r] + [f for r in rolls[1] for f in r], np.int64)
    return FastGame(width=7, data=(ints, np.array(probs[0] + probs[1])),
                    code_space=2 * max(map(len, rolls)) * 2 ** rules.num_bids, initial=_initial, player=_player,
                    num_children=_num_children, child=_child, utility=_utility, infoset_code=_infoset_code)


@fast_function("initial")
def _initial(data, out):
    out[:] = 0
    out[LAST] = -1


@fast_function("player")
def _player(data, s):
    if s[ROLLED] < 2:
        return CHANCE
    if s[CALLED]:
        return TERMINAL
    return s[BIDS] % 2


@fast_function("num_children")
def _num_children(data, s):
    ints = data[0]
    if s[ROLLED] < 2:
        return ints[ROLLS0 + s[ROLLED]]
    if s[CALLED]:
        return 0
    return ints[NUM_BIDS] - (s[LAST] + 1) + (1 if s[BIDS] > 0 else 0)


@fast_function("child")
def _child(data, s, k, out):
    ints = data[0]
    out[:] = s
    if s[ROLLED] < 2:
        out[ROLL0 + s[ROLLED]] = k
        out[ROLLED] = s[ROLLED] + 1
        return data[1][k if s[ROLLED] == 0 else ints[ROLLS0] + k]
    if k == ints[NUM_BIDS] - (s[LAST] + 1):
        out[CALLED] = 1
        return 1.0
    bid = s[LAST] + 1 + k
    out[LAST] = bid
    out[MASK] = s[MASK] | (1 << bid)
    out[BIDS] = s[BIDS] + 1
    return 1.0


@fast_function("utility")
def _utility(data, s):
    ints = data[0]
    faces = ints[FACES]
    quantity, face = s[LAST] // faces + 1, s[LAST] % faces
    star = faces - 1
    matching = 0
    start = HEADER
    for p in range(2):
        dice = ints[DICE0 + p]
        for i in range(dice):
            d = ints[start + s[ROLL0 + p] * dice + i]
            if d == face or d == star:
                matching += 1
        start += ints[ROLLS0] * ints[DICE0]
    caller = s[BIDS] % 2
    loser = caller if matching >= quantity else 1 - caller
    return -1.0 if loser == 0 else 1.0


@fast_function("infoset_code")
def _infoset_code(data, s):
    p = s[BIDS] % 2
    return 2 * (s[ROLL0 + p] * (1 << data[0][NUM_BIDS]) + s[MASK]) + p


# ---- Die-Roll Poker -------------------------------------------------------------------------------
# State words: ``[node, rolled, die_0, die_1, die_2, die_3]``: the row of the public betting tree
# (`rcfr.games.poker_fast.public_tree`, walked with dummy dice; 0 until both first dice are rolled), the
# number of dice rolled, and the dice in the order rolled (players alternate: dice 0 and 2 are player 0's).
# The information-set code is ``(node * faces + first own die) * faces + second own die (0 before it)``.
# Its data is the poker table's (`poker_fast`), the faces where poker keeps its deck size.


def dieroll_fast(rules) -> FastGame:
    table = public_tree(rules).table
    header = np.zeros(TABLE_HEADER, np.int64)
    header[DECK] = rules.faces
    ints = np.concatenate([header, table.ravel()])
    return FastGame(width=6, data=(ints, np.zeros(0)), code_space=table.shape[0] * rules.faces ** 2,
                    initial=table_initial, player=table_player, num_children=_drp_num_children, child=_drp_child,
                    utility=_drp_utility, infoset_code=_drp_infoset_code)


def drp_walk_bounds(table, faces: int) -> tuple[int, int]:
    """The deepest path and widest node, from the public tree (rows in breadth-first order, so a parent
    precedes its children): the two first dice, then a move per betting node (a forced one collapsed) and
    per die rolled between rounds (a table chance row has one child, the game `faces`)."""
    depth = np.zeros(table.shape[0], np.int64)
    for node in range(table.shape[0]):
        kind, num = table[node, KIND], table[node, NUM]
        step = 1 if kind == CHANCE or num > 1 else 0
        children = slice(table[node, FIRST], table[node, FIRST] + num)
        depth[children] = depth[node] + step
    decisions = table[table[:, KIND] != CHANCE, NUM]
    return 2 + int(depth.max()), max(faces, int(decisions.max()))


@fast_function("num_children")
def _drp_num_children(data, s):
    ints = data[0]
    if s[1] < 2 or table_entry(ints, s[0], KIND) == CHANCE:
        return ints[DECK]
    return table_entry(ints, s[0], NUM)


@fast_function("child")
def _drp_child(data, s, k, out):
    ints = data[0]
    out[:] = s
    if s[1] < 2 or table_entry(ints, s[0], KIND) == CHANCE:
        out[2 + s[1]] = k
        out[1] = s[1] + 1
        if s[1] >= 2:
            out[0] = table_entry(ints, s[0], FIRST)
        return 1.0 / ints[DECK]
    out[0] = table_entry(ints, s[0], FIRST) + k
    return 1.0


@fast_function("utility")
def _drp_utility(data, s):
    return table_payoff(data[0], s[0], s[2] + s[4], s[3] + s[5])


@fast_function("infoset_code")
def _drp_infoset_code(data, s):
    ints = data[0]
    node = s[0]
    faces = ints[DECK]
    p = table_entry(ints, node, KIND)
    second = s[4 + p] if table_entry(ints, node, BOARDS) == 2 else 0
    return (node * faces + s[2 + p]) * faces + second
