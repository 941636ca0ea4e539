"""Can't Stop (thesis §3.2.3): the two-player game and the solitaire of chapter 7.

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

The move rules, and the solitaire's transitions and rollouts, exist once, as numba kernels (below)
that the Python classes call.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
from numba import njit

from .base import SearchGame, draw_chance

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


def rollout_policy(actions, pairing, perm, turn, rng):
    """Thesis §7.4: stop right after finishing a column, else roll with probability 0.85; a uniformly
    random pairing move (`pairing`: the dice await one). `perm` is the mover's permanent heights."""
    if pairing:
        return actions[int(rng.integers(len(actions)))]
    if len(actions) == 1:
        return ROLL
    finished = any(turn[c] >= HEIGHTS[c] > perm[c] for c in range(11))
    return STOP if finished or rng.random() >= ROLL_PROB else ROLL


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

    def moves(self, state, dice) -> list[int]:
        """The pairing moves for `dice` (sorted) at `state`; columns claimed by either player are
        closed. The rules are the compiled `legal_moves`, shared with the solitaire."""
        limit = np.where(np.maximum(state[0], state[1]) >= H, 0, H)
        limit.setflags(write=False)  # typed as the frozen H is: one compiled `legal_moves`
        out = np.empty(6, dtype=np.int64)
        k = legal_moves(np.array(state[state[3]], dtype=np.int64), np.array(state[2], dtype=np.int64), limit,
                        DISTINCT_INDEX[dice], out)
        return out[:k].tolist()

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
        return rollout_policy(self.actions(state), state[4] is not None, state[state[3]], state[2], rng)

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


# -- compiled rules (numba) ------------------------------------------------------------------------
# One form of the move rules and of the solitaire's transitions, rollout, control variate and
# ranking of throws: the Python classes call these kernels, the rollouts run inside them.

DISTINCT_INDEX = {d: j for j, d in enumerate(DISTINCT)}
H = np.array(HEIGHTS, dtype=np.int64)
H.setflags(write=False)  # a constant: frozen, so calls from Python type it as the compiled code's global H does
#: raw throw -> distinct throw index; per distinct throw its count (of 1296), its 3 pairings
RAW_DISTINCT = np.array([DISTINCT_INDEX[d] for d in SORTED], dtype=np.int64)
COUNTS = np.array([_counts[d] for d in DISTINCT], dtype=np.int64)
REP = np.array(REPRESENTATIVE, dtype=np.int64)
PAIRS = np.array([[(min(x, y) - 2, max(x, y) - 2) for x, y in
                   ((a + b, c + e), (a + c, b + e), (a + e, b + c))] for a, b, c, e in DISTINCT], dtype=np.int64)
#: solitaire score per step of each column: a completed column is worth 1000 points
STEP_POINTS = 1000.0 / H
#: rollout policy (thesis §7.4): roll again with this probability unless a column was just finished
ROLL_PROB = 0.85


@njit(cache=True)
def _room(base, turn, limit, c, steps, free):
    """Markers still free after moving column c by `steps`, or -1 if it cannot move."""
    h = turn[c] if turn[c] > 0 else base[c]
    if h + steps > limit[c]:
        return -1
    if turn[c] > 0:
        return free
    return free - 1 if free > 0 else -1


@njit(cache=True)
def _free_markers(turn):
    free = 3
    for c in range(11):
        if turn[c] > 0:
            free -= 1
    return free


@njit(cache=True)
def _add(out, k, move):
    for i in range(k):
        if out[i] == move:
            return k
    out[k] = move
    return k + 1


@njit(cache=True)
def legal_moves(base, turn, limit, d, out):
    """The pairing moves for distinct throw `d` (sorted into out[:k]; returns k, 0 = bust): base
    heights of the mover, turn markers (0 = none), per-column limit (0 = closed)."""
    free = _free_markers(turn)
    k = 0
    for p in range(3):
        a, b = PAIRS[d, p, 0], PAIRS[d, p, 1]
        if a == b:
            if _room(base, turn, limit, a, 2, free) >= 0:
                k = _add(out, k, 2 + 13 * a + a)
            elif _room(base, turn, limit, a, 1, free) >= 0:
                k = _add(out, k, 2 + 13 * a + NONE)
            continue
        left = _room(base, turn, limit, a, 1, free)
        if left >= 0 and _room(base, turn, limit, b, 1, left) >= 0:
            k = _add(out, k, 2 + 13 * a + b)
        else:
            if _room(base, turn, limit, a, 1, free) >= 0:
                k = _add(out, k, 2 + 13 * a + NONE)
            if _room(base, turn, limit, b, 1, free) >= 0:
                k = _add(out, k, 2 + 13 * b + NONE)
    for i in range(1, k):          # insertion sort: at most 6 moves
        m, j = out[i], i - 1
        while j >= 0 and out[j] > m:
            out[j + 1] = out[j]
            j -= 1
        out[j + 1] = m
    return k


@njit(cache=True)
def _advance(base, turn, move):
    a, b = (move - 2) // 13, (move - 2) % 13
    turn[a] = (turn[a] if turn[a] > 0 else base[a]) + 1
    if b != NONE:
        turn[b] = (turn[b] if turn[b] > 0 else base[b]) + 1


@njit(cache=True)
def movable(base, turn, limit):
    """Bit mask of the columns that can move one step: a throw busts when none of its pairings'
    columns is movable."""
    free = _free_markers(turn)
    mask = 0
    for c in range(11):
        if _room(base, turn, limit, c, 1, free) >= 0:
            mask |= 1 << c
    return mask


#: per distinct throw, the mask of columns its pairings name; per movable mask, P[bust]
THROW_COLUMNS = np.array([sum(1 << int(c) for c in set(PAIRS[d].ravel())) for d in range(126)], dtype=np.int64)
BUST = np.array([COUNTS[(THROW_COLUMNS & m) == 0].sum() / 1296 for m in range(2048)])


@njit(cache=True)
def bust_probability(base, turn, limit):
    """P[a roll has no legal move]: the control variate's expectation (§7.1) in Can't Stop."""
    return BUST[movable(base, turn, limit)]


def _luck_tables():
    """Per movable mask (2048) the distinct throws from luckiest to unluckiest and their cumulative
    counts: a throw's luck is the most points of the movable columns one of its pairings names
    (busts, which name none, last; ties by throw index)."""
    masks = np.arange(2048)[:, None]
    best = np.full((2048, 126), -1.0)
    for p in range(3):
        a, b = PAIRS[:, p, 0], PAIRS[:, p, 1]
        ma, mb = (masks >> a) & 1, (masks >> b) & 1
        gain = np.where(ma, STEP_POINTS[a], 0.0) + np.where(mb & (a != b), STEP_POINTS[b], 0.0)
        best = np.maximum(best, np.where(ma | mb, gain, -1.0))
    order = np.argsort(-best, axis=1, kind="stable")
    return order.astype(np.uint8), np.cumsum(COUNTS[order], axis=1).astype(np.int16)   # small enough to cache


LUCK_ORDER, LUCK_CUMULATIVE = _luck_tables()


@njit(cache=True)
def ranked_throw(base, turn, limit, rank):
    """The raw throw of luck rank `rank` (0..1295, luckiest first) in this position (§7.3). The
    ranking is a heuristic of the movable columns: throws ordered by the most points (one step per
    movable column, ignoring marker shortage and double steps) one of their pairings names, busts
    last; ranks are spread over the 1296 equally likely raw throws, so a uniform rank gives a throw
    with its probability, and rank 1295 - r is the antithetic partner of rank r."""
    m = movable(base, turn, limit)
    j = np.searchsorted(LUCK_CUMULATIVE[m], rank, side="right")
    return REP[LUCK_ORDER[m, j]]


@njit(cache=True)
def solitaire_step(perm, turn, left, d, action, raw):
    """One transition of the solitaire in place on (perm, turn); returns (turns left, pending
    distinct throw or -1)."""
    if action == STOP:
        for c in range(11):
            if turn[c] > 0:
                perm[c] = turn[c]
                turn[c] = 0
        return left - 1, -1
    if action == ROLL:
        d = RAW_DISTINCT[raw]
        out = np.empty(6, dtype=np.int64)
        if legal_moves(perm, turn, H, d, out) == 0:
            turn[:] = 0
            return left - 1, -1
        return left, d
    _advance(perm, turn, action)
    return left, -1


@njit(cache=True)
def solitaire_score(perm):
    s = 0.0
    for c in range(11):
        s += STEP_POINTS[c] * perm[c]
    return s


@njit(cache=True)
def solitaire_rollout(perm, turn, left, d, draws, rpos, use_draws, ranked, u, upos, cv):
    """The default policy to the end from (perm, turn, left, d), drawing the policy's uniforms from
    u[upos:] and one chance outcome per action: draws[rpos:] when `use_draws` (luck ranks read by
    `ranked_throw` when `ranked`, else raw throws), else floor(1296 u). Returns (score, summed
    control terms, rpos, upos, actions taken), actions -1 when u or draws ran out (the caller
    extends them and reruns)."""
    perm, turn = perm.copy(), turn.copy()
    out = np.empty(6, dtype=np.int64)
    tail, steps = 0.0, 0
    while left > 0:
        steps += 1
        if d >= 0:
            k = legal_moves(perm, turn, H, d, out)
            if upos >= len(u):
                return 0.0, 0.0, rpos, upos, -1
            action = out[int(u[upos] * k)]
            upos += 1
        else:
            marked, finished = False, False
            for c in range(11):
                if turn[c] > 0:
                    marked = True
                    if turn[c] >= H[c] and perm[c] < H[c]:
                        finished = True
            if not marked:
                action = ROLL
            elif finished:
                action = STOP
            else:
                if upos >= len(u):
                    return 0.0, 0.0, rpos, upos, -1
                action = STOP if u[upos] >= ROLL_PROB else ROLL
                upos += 1
        raw, rpos, upos = draw_chance(draws, rpos, use_draws, u, upos, 1296)
        if raw < 0:
            return 0.0, 0.0, rpos, upos, -1
        if use_draws and ranked and action == ROLL:
            raw = ranked_throw(perm, turn, H, raw)
        if cv and action == ROLL:
            tail += (legal_moves(perm, turn, H, RAW_DISTINCT[raw], out) == 0) - bust_probability(perm, turn, H)
        left, d = solitaire_step(perm, turn, left, d, action, raw)
    return solitaire_score(perm), tail, rpos, upos, steps


class CantStopSolitaire(SearchGame):
    """One-player Can't Stop (thesis ch. 7): score as many points as possible in `turns` turns.

    The thesis does not give the solitaire's scoring; ours (docs/search.md): each completed column is
    worth 1000 points and a column's progress counts pro rata (1000 / height per step), so the score
    lies in [0, 11000] and the thesis's UCB constant 5500 is half the range, as for its other games.
    There is no opponent: no column is ever blocked, a completed column simply cannot move, and play
    goes on after three columns until the turns run out. A turn starts with a roll.

    State ``(turns_left, perm, turn, throw)``: permanent and turn-marker heights (11-tuples) and the
    distinct throw awaiting a pairing choice (-1 at roll-or-stop). Raw chance outcomes are the
    1296 ordered throws; `ranked_outcome` reads them by the state's luck ranking (§7.3).
    """

    num_players = 1
    num_raw_outcomes = 1296
    vmin, vmax = 0.0, 11000.0
    #: offline coefficient of the bust control variate (§7.4), fitted as the thesis did: the mean
    #: of -Cov(X, Y) / Var(Y) of the roll action over 16 positions of rollout-policy games (680-815)
    cv_constant = 730.0

    def __init__(self, turns: int = 10):
        if not isinstance(turns, int) or turns < 1:
            raise ValueError(f"cantstop_solitaire turns must be an integer >= 1, got {turns!r}")
        self.turns = turns
        self.name = f"cantstop_solitaire(turns={turns})"

    @staticmethod
    def _arrays(state):
        return np.array(state[1], dtype=np.int64), np.array(state[2], dtype=np.int64)

    def initial(self, rng=None):
        zero = (0,) * 11
        return (self.turns, zero, zero, -1)

    def is_terminal(self, state):
        return state[0] == 0

    def player(self, state):
        return 0

    def actions(self, state):
        if state[3] >= 0:
            perm, turn = self._arrays(state)
            out = np.empty(6, dtype=np.int64)
            return tuple(out[:legal_moves(perm, turn, H, state[3], out)].tolist())
        return (ROLL, STOP) if any(state[2]) else (ROLL,)

    chance = CantStop.chance

    def apply(self, state, action, outcome):
        perm, turn = self._arrays(state)
        left, d = solitaire_step(perm, turn, state[0], state[3], action, outcome)
        return (left, tuple(perm.tolist()), tuple(turn.tolist()), d)

    def utility(self, state):
        return float(solitaire_score(np.array(state[1], dtype=np.int64)))

    def evaluate(self, state):
        """Banked points, 70% of the turn's unbanked progress, 300 points per turn left."""
        perm, turn = self._arrays(state)
        banked = solitaire_score(perm)
        reached = solitaire_score(np.maximum(perm, turn))
        return float(min(self.vmax, banked + 0.7 * (reached - banked) + 300.0 * state[0]))

    def default_policy(self, state, rng):
        return rollout_policy(self.actions(state), state[3] >= 0, state[1], state[2], rng)

    def control(self, state, action, outcome):
        """I[the roll busts] - P[a roll busts] (thesis §7.1 for Can't Stop): zero mean."""
        if action != ROLL:
            return 0.0
        perm, turn = self._arrays(state)
        out = np.empty(6, dtype=np.int64)
        bust = legal_moves(perm, turn, H, RAW_DISTINCT[outcome], out) == 0
        return float(bust) - bust_probability(perm, turn, H)

    def antithetic(self, rank):
        return 1295 - rank

    def ranked_outcome(self, state, action, rank):
        if action != ROLL:
            return int(rank)
        perm, turn = self._arrays(state)
        return int(ranked_throw(perm, turn, H, rank))

    def rollout(self, state, draws, rpos, ranked, u, upos, cv):
        """The default policy to the end, compiled (`solitaire_rollout`); chance from `draws[rpos:]`
        (luck ranks when `ranked`) or from u."""
        perm, turn = self._arrays(state)
        use = draws is not None
        return solitaire_rollout(perm, turn, state[0], state[3], draws if use else _NO_DRAWS, rpos, use, ranked,
                                 u, upos, cv)


_NO_DRAWS = np.zeros(1, dtype=np.int64)
