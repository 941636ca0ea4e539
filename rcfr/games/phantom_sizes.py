"""Information sets of Phantom Tic-Tac-Toe counted without walking its 1.6e10 histories.

A player's information set is its own tries; what the rest of the game can still show it depends only
on the opponent's marks and the squares the opponent knows to be taken. So we walk each player's tree
of try sequences, carrying the set of such (marks, known) pairs that the opponent may be in: the
"belief". A sequence is an information set when its belief is not empty. Beliefs hold tens of pairs,
so the whole game takes 5-20 s, where `rcfr.sources.sizes.count_sizes` (which also counts histories)
would walk 1.6e10 histories for about two hours; the two agree on every opening small enough for both.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from ..options import check_choice
from .phantom_fast import BASE, FORGET, WIN_MASKS, forget_code

FULL = 511


@njit(cache=True)
def _popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True)
def _wins(marks, masks):
    for w in masks:
        if marks & w == w:
            return True
    return False


@njit(cache=True)
def _opponent_turn(pool, start, end, mine, masks, top, stamp, mark):
    """Append to ``pool[top:]`` every (marks, known) the opponent can reach by its turn from the pairs
    ``pool[start:end]``, against our marks `mine`, where the game goes on, once each (``mark[pair] ==
    stamp`` once appended); returns the new top.
    The opponent fails on any subset F of our marks it does not know yet, in any order, then places a
    mark on an empty square s: (marks | s, known | F | s)."""
    for j in range(start, end):
        theirs = pool[j] >> 9
        known = pool[j] & FULL
        hidden = mine & ~known
        empty = FULL & ~(mine | theirs)
        f = hidden
        while True:  # every subset of the hidden marks
            for s in range(9):
                bit = 1 << s
                if empty & bit:
                    placed = theirs | bit
                    if _wins(placed, masks) or (placed | mine) == FULL:
                        continue
                    key = (placed << 9) | known | f | bit
                    if mark[key] != stamp:
                        mark[key] = stamp
                        pool[top] = key
                        top += 1
            if f == 0:
                break
            f = (f - 1) & hidden
    return top


@njit(cache=True)
def _root_belief(me, marks0, marks1, closed, to_move, masks, pool, mark):
    """Player `me`'s marks and its belief ``pool[0:top]`` at its first decision (after the opponent's
    turn if the opponent moves first); returns (marks, top)."""
    mine0 = marks1 if me else marks0
    theirs0 = marks0 if me else marks1
    pool[0] = (theirs0 << 9) | closed
    top = 1
    if to_move != me:  # the opponent moves first: our first belief is after its turn
        top = _opponent_turn(pool, 0, 1, mine0, masks, 1, 1, mark)
        pool[0:top - 1] = pool[1:top]
        top -= 1
    return mine0, top


@njit(cache=True)
def _try_square(pool, b0, b1, mine, bit, placed, masks, stamp, mark):
    """Our try of square `bit` from the belief ``pool[b0:b1]``, failed or `placed`: the belief at our next
    decision is written from ``pool[b1]`` on; returns (our marks, its end), the end being b1 when no state
    leads there (the try cannot fail, or the game ends first). `stamp` must be new for each call."""
    top = b1
    if not placed:  # the opponent's square: the try fails and we try again
        for j in range(b0, b1):
            if (pool[j] >> 9) & bit:
                pool[top] = pool[j]
                top += 1
        return mine, top
    mine = mine | bit
    if _wins(mine, masks):
        return mine, b1
    for j in range(b0, b1):
        theirs = pool[j] >> 9
        if not theirs & bit and (mine | theirs) != FULL:
            pool[top] = pool[j]
            top += 1
    mid = top
    top = _opponent_turn(pool, b1, mid, mine, masks, mid, stamp, mark)
    n = top - mid
    pool[b1:b1 + n] = pool[mid:top]
    return mine, b1 + n


@njit(cache=True)
def _count_player(me, marks0, marks1, closed, to_move, collapse, masks, forget):
    """(information sets, (set, action) pairs) of player `me` after an opening with marks `marks0` (X's)
    and `marks1` (O's), `closed` its squares and `to_move` the player to move; sets merged by the
    abstraction `forget` (a value of `FORGET`, 0 for none)."""
    seen = Dict.empty(key_type=types.int64, value_type=types.int64)
    pool = np.empty(1 << 22, np.int64)  # the beliefs on the walk's path, one above the other
    mark = np.zeros(1 << 18, np.int64)
    stamp = 2
    mine0, top = _root_belief(me, marks0, marks1, closed, to_move, masks, pool, mark)
    sets = 0
    pairs = 0
    if top == 0:
        return sets, pairs
    # frames: our marks, the squares we may not try, the belief pool[start:end], the next (square, outcome)
    f_mine = np.empty(32, np.int64)
    f_known = np.empty(32, np.int64)
    f_start = np.empty(32, np.int64)
    f_end = np.empty(32, np.int64)
    f_next = np.empty(32, np.int64)
    f_code = np.empty(32, np.int64)  # our tries, base 19 as in the fast state
    d = 0
    f_mine[0], f_known[0], f_start[0], f_end[0], f_next[0], f_code[0] = mine0, closed, 0, top, 0, 0
    legal = 9 - _popcount(closed)
    if legal > 1 or not collapse:
        sets += 1
        pairs += legal
        if forget:
            seen[forget_code(forget, 0)] = legal
    while d >= 0:
        k = f_next[d]
        if k == 18:
            top = f_start[d]
            d -= 1
            continue
        f_next[d] = k + 1
        q, placed = k >> 1, k & 1
        bit = 1 << q
        if f_known[d] & bit:
            continue
        start = f_end[d]  # (what an earlier child left above our belief is overwritten)
        mine, top = _try_square(pool, f_start[d], start, f_mine[d], bit, placed, masks, stamp, mark)
        stamp += 1
        if top == start:
            continue
        d += 1
        known = f_known[d - 1] | bit
        f_mine[d], f_known[d], f_start[d], f_end[d], f_next[d] = mine, known, start, top, 0
        f_code[d] = f_code[d - 1] * BASE + 2 * q + 1 + placed
        legal = 9 - _popcount(known)
        if legal > 1 or not collapse:
            if not forget:
                sets += 1
                pairs += legal
            else:
                key = forget_code(forget, f_code[d])
                if key not in seen:
                    seen[key] = legal
                    sets += 1
                    pairs += legal
                elif seen[key] != legal:
                    raise ValueError("phantom_ttt abstraction merges sets with different actions")
    return sets, pairs


def phantom_infosets(opening: tuple = (), collapse: bool = True,
                     forget: str = "none") -> tuple[tuple[int, int], tuple[int, int]]:
    """(information sets per player, (set, action) pairs per player) of ``phantom_ttt(opening)``;
    decisions with one square left to try are not counted when `collapse`, as in the compiled game.
    `forget` counts the abstract sets of one of the thesis's abstractions instead (`FORGET`)."""
    kind = check_choice("forget", forget, FORGET)
    marks = [0, 0]
    for i, q in enumerate(opening):
        marks[i % 2] |= 1 << q
    closed = marks[0] | marks[1]
    counts = [_count_player(me, marks[0], marks[1], closed, len(opening) % 2, collapse, WIN_MASKS,
                             FORGET[kind]) for me in (0, 1)]
    return (counts[0][0], counts[1][0]), (counts[0][1], counts[1][1])
