"""The fast path (`rcfr.games.fast.FastGame`) of Phantom Tic-Tac-Toe.

State words: ``[marks_X, marks_O, known_X, known_O, open_X, open_O, player, winner, filled, code_X,
code_O]``. Marks are bit masks of squares 0-8; ``known_p`` masks the squares player p may no longer try
(the opening, its marks, its failed tries) and ``open_p`` counts the others. ``code_p`` spells p's tries
in base 19, digit ``2 * square + 1`` for a failed try and ``2 * square + 2`` for a placed one; a player
never tries a square twice, so at most 8 digits precede a decision and the information-set code
``2 * code + player`` is below ``2 * 19**8`` < 2**36.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import TERMINAL
from .fast import FastGame, fast_function
from .tictactoe import WIN_MASKS, winner_utility

MARKS, KNOWN, OPEN, PLAYER, WINNER, FILLED, CODE = 0, 2, 4, 6, 7, 8, 9
WIDTH = 11
BASE = 19


#: information sets of the full game, forced moves collapsed (`phantom_sizes.phantom_infosets`)
FULL_GAME_INFOSETS = 4_200_461


def phantom_fast(rules) -> FastGame:
    initial = np.zeros(WIDTH, np.int64)
    for i, q in enumerate(rules.opening):
        initial[MARKS + i % 2] |= 1 << q
    initial[KNOWN:KNOWN + 2] = sum(1 << q for q in rules.opening)
    empty = 9 - len(rules.opening)
    initial[OPEN:OPEN + 2] = empty
    initial[PLAYER] = len(rules.opening) % 2
    initial[WINNER] = -1
    initial[FILLED] = len(rules.opening)
    ints = np.concatenate([WIN_MASKS, initial])
    # each player tries each open square at most once and keeps at least one untried at a decision
    return FastGame(width=WIDTH, data=(ints, np.zeros(0)), code_space=2 * BASE ** (empty - 1),
                    initial=_initial, player=_player, num_children=_num_children, child=_child,
                    utility=_utility, infoset_code=_infoset_code,
                    max_infosets=0 if rules.opening else FULL_GAME_INFOSETS)


@fast_function("initial")
def _initial(data, out):
    out[:] = data[0][8:8 + WIDTH]


@fast_function("player")
def _player(data, s):
    if s[WINNER] >= 0 or s[FILLED] == 9:
        return TERMINAL
    return s[PLAYER]


@fast_function("num_children")
def _num_children(data, s):
    if s[WINNER] >= 0 or s[FILLED] == 9:
        return 0
    return s[OPEN + s[PLAYER]]


@fast_function("child")
def _child(data, s, k, out):
    out[:] = s
    p = s[PLAYER]
    known = s[KNOWN + p]
    seen = -1
    square = -1
    while seen < k:
        square += 1
        if not (known >> square) & 1:
            seen += 1
    bit = 1 << square
    out[KNOWN + p] = known | bit
    out[OPEN + p] = s[OPEN + p] - 1
    if s[MARKS + 1 - p] & bit:  # the opponent's mark: the try fails and p tries again
        out[CODE + p] = s[CODE + p] * BASE + 2 * square + 1
        return 1.0
    out[CODE + p] = s[CODE + p] * BASE + 2 * square + 2
    marks = s[MARKS + p] | bit
    out[MARKS + p] = marks
    out[FILLED] = s[FILLED] + 1
    out[PLAYER] = 1 - p
    masks = data[0]
    for line in range(8):
        if marks & masks[line] == masks[line]:
            out[WINNER] = p
    return 1.0


_utility = winner_utility(WINNER)


@fast_function("infoset_code")
def _infoset_code(data, s):
    p = s[PLAYER]
    return 2 * s[CODE + p] + p


#: The thesis's imperfect-recall abstractions (Lanctot 2013, §5.5): what a player forgets of its tries.
#: fosf: the order of the failures within each turn; foi: how failures and placed marks interleave (each
#: sequence kept); fos: which square was placed at which turn (the failures and the turns they fell in
#: kept, the placed squares as a set); foe: every order (the sets of failed and of placed squares remain).
FORGET = {"none": 0, "fosf": 1, "foi": 2, "fos": 3, "foe": 4}


@njit(cache=True)
def forget_code(kind, code):
    """The abstract code (below 2^62) of a player's tries, spelled as ``code_p`` of the state, under the
    abstraction `kind` (a value of `FORGET`)."""
    digits = np.empty(20, np.int64)
    n = 0
    while code > 0:
        digits[n] = code % BASE
        code //= BASE
        n += 1
    if kind == 0:
        out = 0
        for i in range(n - 1, -1, -1):
            out = out * BASE + digits[i]
        return out
    out = 0  # fosf: per finished turn (failed mask, placed square); then the current turn's failed mask
    fails = 0  # foi: failed squares in order (base 10, square + 1)
    placed = 0  # foi: placed squares in order (base 10)
    fmask = 0
    turn_mask = 0
    pmask = 0
    marked = 0  # fos: the tries with each placed square replaced by one digit (18, no failure's)
    for i in range(n - 1, -1, -1):
        square = (digits[i] - 1) >> 1
        marked = marked * BASE + (18 if (digits[i] - 1) & 1 else digits[i])
        if (digits[i] - 1) & 1:
            out = out * (512 * 9 + 1) + turn_mask * 9 + square + 1
            turn_mask = 0
            placed = placed * 10 + square + 1
            pmask |= 1 << square
        else:
            turn_mask |= 1 << square
            fails = fails * 10 + square + 1
            fmask |= 1 << square
    if kind == 1:
        return out * 512 + turn_mask
    if kind == 2:
        return fails * 100000000 + placed
    if kind == 3:
        return marked * 512 + pmask
    return fmask * 512 + pmask
