"""Can't Stop (thesis §3.2.3), two players.

Columns 2..12 have 3, 5, 7, 9, 11, 13, 11, 9, 7, 5, 3 steps. A turn alternates two decisions:
roll-or-stop, then (after four dice) the choice of a pairing move. A move advances the three
turn markers: in both columns of a pairing when both can move, else in either one (the player
picks); a column can move when nobody has claimed it, its marker is below the top, and it already
has a turn marker or a free one remains. A roll with no legal move busts (the turn's progress is
lost and the turn passes). Stopping makes the turn's progress permanent; a column whose top is
reached is claimed, and three claimed columns win. A turn must start with a roll.

State ``(perm0, perm1, turn, player, dice)``: permanent heights per column (11-tuples), the turn
markers' heights (11-tuple, 0 where no marker), the player, and the sorted dice awaiting a
pairing choice (``None`` at roll-or-stop). Actions: ``ROLL``, ``STOP``, or a move ``2 + 13 * a + b``
advancing columns a and b (column indices 0..10, ``b = 11`` for a single column; a == b moves
one column twice). Raw chance outcomes are the 1296 ordered four-dice throws.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np

from .base import SearchGame

HEIGHTS = (3, 5, 7, 9, 11, 13, 11, 9, 7, 5, 3)
ROLL, STOP = 0, 1
NONE = 11
THROWS = list(itertools.product(range(1, 7), repeat=4))
SORTED = [tuple(sorted(t)) for t in THROWS]
_counts = Counter(SORTED)
#: Distinct throws (as sorted dice) with one representative raw id each and their probabilities.
DISTINCT = sorted(_counts)
REPRESENTATIVE = [SORTED.index(d) for d in DISTINCT]
DISTINCT_PROBS = [_counts[d] / 1296 for d in DISTINCT]


def pairings(dice) -> set[tuple[int, int]]:
    """Column-index pairs (sorted) of the three ways to split four dice into two pairs."""
    a, b, c, d = dice
    out = set()
    for x, y in ((a + b, c + d), (a + c, b + d), (a + d, b + c)):
        out.add((min(x, y) - 2, max(x, y) - 2))
    return out


class CantStop(SearchGame):
    """Can't Stop; utilities +-100."""

    name = "cantstop"
    num_raw_outcomes = 1296

    def initial(self, rng=None):
        zero = (0,) * 11
        return (zero, zero, zero, 0, None)

    def claimed(self, state, player) -> int:
        perm = state[player]
        return sum(perm[c] >= HEIGHTS[c] for c in range(11))

    def winner(self, state) -> int:
        for p in (0, 1):
            if self.claimed(state, p) >= 3:
                return p
        return -1

    def is_terminal(self, state):
        return self.winner(state) >= 0

    def player(self, state):
        return state[3]

    def _height(self, state, c):
        return state[2][c] or state[state[3]][c]

    def _open(self, state, c):
        return state[0][c] < HEIGHTS[c] and state[1][c] < HEIGHTS[c]

    def moves(self, state, dice) -> list[int]:
        turn = state[2]
        used = sum(1 for h in turn if h)
        out = []

        def room(c, steps, free):
            if not self._open(state, c) or self._height(state, c) + steps > HEIGHTS[c]:
                return None
            if turn[c]:
                return free
            return free - 1 if free > 0 else None

        for a, b in sorted(pairings(dice)):
            free = 3 - used
            if a == b:
                if room(a, 2, free) is not None:
                    out.append(2 + 13 * a + a)
                elif room(a, 1, free) is not None:
                    out.append(2 + 13 * a + NONE)
                continue
            left = room(a, 1, free)
            both = left is not None and room(b, 1, left) is not None
            if both:
                out.append(2 + 13 * a + b)
            else:
                for c in (a, b):
                    if room(c, 1, free) is not None:
                        out.append(2 + 13 * c + NONE)
        return sorted(set(out))

    def actions(self, state):
        if state[4] is not None:
            return self.moves(state, state[4])
        return (ROLL, STOP) if any(state[2]) else (ROLL,)

    def chance(self, state, action):
        if action == ROLL:
            return REPRESENTATIVE, DISTINCT_PROBS
        return (0,), (1.0,)

    def apply(self, state, action, outcome):
        perm0, perm1, turn, p, _ = state
        if action == STOP:
            perm = tuple(turn[c] or (perm0, perm1)[p][c] for c in range(11))
            zero = (0,) * 11
            return (perm, perm1, zero, 1, None) if p == 0 else (perm0, perm, zero, 0, None)
        if action == ROLL:
            dice = SORTED[outcome]
            if not self.moves(state, dice):
                return (perm0, perm1, (0,) * 11, 1 - p, None)
            return (perm0, perm1, turn, p, dice)
        a, b = divmod(action - 2, 13)
        new = list(turn)
        for c in (a, b):
            if c != NONE:
                new[c] = (new[c] or state[p][c]) + 1
        return (perm0, perm1, tuple(new), p, None)

    def default_policy(self, state, rng):
        """Thesis §7.4: stop right after finishing a column, else roll with probability 0.85; a
        uniformly random pairing move."""
        actions = self.actions(state)
        if state[4] is not None:
            return actions[int(rng.integers(len(actions)))]
        if len(actions) == 1:
            return ROLL
        p = state[3]
        finished = any(state[2][c] >= HEIGHTS[c] > state[p][c] for c in range(11))
        return STOP if finished or rng.random() >= 0.85 else ROLL

    def utility(self, state):
        return self.vmax if self.winner(state) == 0 else self.vmin

    def evaluate(self, state):
        """Progress difference: each column's share of its height, squared so that nearly claimed
        columns count most; the mover's turn markers count at 70% (they can still be lost)."""
        p = state[3]
        score = [0.0, 0.0]
        for who in (0, 1):
            perm = state[who]
            for c in range(11):
                h = perm[c]
                if who == p and state[2][c]:
                    h = h + 0.7 * (state[2][c] - h)
                score[who] += (h / HEIGHTS[c]) ** 2
        return float(np.clip(30.0 * (score[0] - score[1]), -95.0, 95.0))
