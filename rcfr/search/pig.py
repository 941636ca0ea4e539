"""Two-dice Pig (thesis §3.2.1): the two-player race of chapter 6 and the solitaire of chapter 7.

Each roll throws two dice. No 1: the sum joins the turn total. A single 1: the turn total is lost
and the turn ends. Two 1s: the turn ends and the player's whole score drops to 0. Stopping banks the
turn total. Choices the thesis leaves open (docs/search.md):

* Two players race to ``goal`` (default 100); a turn total that reaches the goal is banked at once
  (the player wins), and a turn must start with a roll (no passing, so play cannot cycle without
  rolling). States ``(score0, score1, turn_total, player)``; utilities +-100.
* Solitaire: ``turns`` turns (default 10) to score as much as possible, the score counting up to
  ``cap`` (default 200; reaching it ends the game). Stopping is legal at any time, also before the
  first roll of a turn (a pass), so the first decision compares roll and stop as in Fig. 7.1.
  States ``(turns_left, score, turn_total)``; utility = final score in ``[0, cap]``.

Raw chance outcomes are the 36 ordered dice pairs ``6 * (d1 - 1) + (d2 - 1)``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .base import SearchGame, draw_chance

ROLL, STOP = 0, 1
DICE = [(a, b) for a in range(1, 7) for b in range(1, 7)]
BOTH_ONES = 0                     # raw id of (1, 1)
ONE_ONE = 1                       # raw id of (1, 2): a representative single 1
#: The distinct effects of a roll: (representative raw id, probability); the sums 4..12 of two non-1 dice.
ROLL_OUTCOMES: list[tuple[int, float]] = [(BOTH_ONES, 1 / 36), (ONE_ONE, 10 / 36)]
for _s in range(4, 13):
    _pairs = [i for i, (a, b) in enumerate(DICE) if a > 1 and b > 1 and a + b == _s]
    ROLL_OUTCOMES.append((_pairs[0], len(_pairs) / 36))
ROLL_IDS = [o for o, _ in ROLL_OUTCOMES]
ROLL_PROBS = [p for _, p in ROLL_OUTCOMES]
ONES = np.array([(a == 1) + (b == 1) for a, b in DICE])      # number of 1s per raw outcome
SUMS = np.array([a + b for a, b in DICE])
#: P(at least one 1) for a roll: the event behind the chapter 7 control variate.
P_ANY_ONE = 11 / 36


#: rollout policy (thesis §7.4): roll with this probability where stopping is legal
ROLL_PROB = 0.8


def antithetic_roll(outcome):
    """The antithetic partner of a dice pair (ids or an array of ids): 35 - id turns each die d into
    7 - d, an involution on equally likely pairs, so it keeps the distribution; (6,6) pairs with
    (1,1), (1,x) with (6,7-x)."""
    return 35 - outcome


class _PigChance:
    """What chapter 7 adds to both Pig variants: the rollout policy, the control variate and the
    antithetic pairing of dice."""

    #: offline coefficient of the control variate before an edge has enough visits (thesis §7.4)
    cv_constant = 6.0

    def default_policy(self, state, rng):
        """Roll with probability 0.8, stop with 0.2 (where stopping is legal)."""
        actions = self.actions(state)
        return STOP if len(actions) > 1 and rng.random() >= ROLL_PROB else ROLL

    def control(self, state, action, outcome):
        """I[the roll showed a 1] - P[a roll shows a 1]: zero mean at every (state, action)."""
        return (ONES[outcome] > 0) - P_ANY_ONE if action == ROLL else 0.0

    def antithetic(self, outcome):
        return antithetic_roll(outcome)


class Pig(_PigChance, SearchGame):
    """Two-player two-dice Pig to `goal` points."""

    num_raw_outcomes = 36

    def __init__(self, goal: int = 100):
        if not isinstance(goal, int) or goal < 2:
            raise ValueError(f"pig goal must be an integer >= 2, got {goal!r}")
        self.goal = goal
        self.name = f"pig(goal={goal})"

    def initial(self, rng=None):
        return (0, 0, 0, 0)

    def is_terminal(self, state):
        return state[0] >= self.goal or state[1] >= self.goal

    def player(self, state):
        return state[3]

    def actions(self, state):
        return (ROLL, STOP) if state[2] > 0 else (ROLL,)

    def chance(self, state, action):
        if action == STOP:
            return (0,), (1.0,)
        return ROLL_IDS, ROLL_PROBS

    def apply(self, state, action, outcome):
        s0, s1, turn, p = state
        mine = s0 if p == 0 else s1
        if action == STOP:
            return self._bank(s0, s1, p, mine + turn)
        ones = ONES[outcome]
        if ones == 2:
            return self._bank(s0, s1, p, 0)
        if ones == 1:
            return self._bank(s0, s1, p, mine)
        turn += SUMS[outcome]
        if mine + turn >= self.goal:
            return self._bank(s0, s1, p, mine + turn)
        return (s0, s1, int(turn), p)

    @staticmethod
    def _bank(s0, s1, p, score):
        return (int(score), s1, 0, 1) if p == 0 else (s0, int(score), 0, 0)

    def utility(self, state):
        return self.vmax if state[0] >= self.goal else self.vmin

    def evaluate(self, state):
        """A race model: the mover's lead (banking 90% of the turn total, plus 6 points for having the
        move) over the spread of the points both still need, through a logistic. The four constants
        were fitted once by least squares to the exact values of goal-100 Pig (root-mean-square error
        7 on the +-100 scale, against 26 for a plain score-difference guess)."""
        s0, s1, turn, p = state
        mine, theirs = (s0, s1) if p == 0 else (s1, s0)
        lead = mine + 0.9 * turn - theirs + 6.0
        spread = 3.3 * math.sqrt(max(2 * self.goal - mine - theirs - 0.9 * turn, 0.0)) + 1.0
        mover = 1.0 / (1.0 + math.exp(-lead / spread))
        win = mover if p == 0 else 1.0 - mover
        return self.vmin + (self.vmax - self.vmin) * win


class PigSolitaire(_PigChance, SearchGame):
    """One-player two-dice Pig: maximize the score in `turns` turns, counting up to `cap`."""

    num_players = 1
    num_raw_outcomes = 36
    vmin = 0.0

    def __init__(self, turns: int = 10, cap: int = 200):
        if not isinstance(turns, int) or turns < 1:
            raise ValueError(f"pig_solitaire turns must be an integer >= 1, got {turns!r}")
        if not isinstance(cap, int) or cap < 2:
            raise ValueError(f"pig_solitaire cap must be an integer >= 2, got {cap!r}")
        self.turns, self.cap = turns, cap
        self.vmax = float(cap)
        self.name = f"pig_solitaire(turns={turns},cap={cap})"

    def initial(self, rng=None):
        return (self.turns, 0, 0)

    def is_terminal(self, state):
        return state[0] == 0

    def player(self, state):
        return 0

    def actions(self, state):
        return (ROLL, STOP)

    def chance(self, state, action):
        if action == STOP:
            return (0,), (1.0,)
        return ROLL_IDS, ROLL_PROBS

    def apply(self, state, action, outcome):
        return solitaire_step(state[0], state[1], state[2], action, outcome, self.cap)

    def rollout(self, state, draws, rpos, ranked, u, upos, cv):
        """The default policy to the end, compiled (`solitaire_rollout`); chance from `draws[rpos:]`
        (raw dice, which are also Pig's luck ranks, so `ranked` changes nothing) or from u."""
        use = draws is not None
        return solitaire_rollout(*state, self.cap, draws if use else _NO_DRAWS, rpos, use, u, upos, cv)

    def utility(self, state):
        return float(state[1])

    def evaluate(self, state):
        left, score, turn = state
        return float(min(self.cap, score + 0.5 * turn + 8.0 * left))


# -- compiled solitaire (numba): the one form of its transition, also run inside rollouts ----------

@njit(cache=True)
def _bank(left, score, cap):
    score = min(score, cap)
    return (0 if score >= cap else left - 1), score, 0


@njit(cache=True)
def solitaire_step(left, score, turn, action, raw, cap):
    """(turns left, score, turn total) after `action` and the dice pair `raw`."""
    if action == STOP:
        return _bank(left, score + turn, cap)
    ones = ONES[raw]
    if ones == 2:
        return _bank(left, 0, cap)
    if ones == 1:
        return _bank(left, score, cap)
    turn += SUMS[raw]
    if score + turn >= cap:
        return 0, cap, 0
    return left, score, turn


@njit(cache=True)
def solitaire_rollout(left, score, turn, cap, draws, rpos, use_draws, u, upos, cv):
    """The default policy to the end: the policy's uniforms from u[upos:], one chance outcome per
    action from draws[rpos:] when `use_draws`, else floor(36 u). Returns (score, summed control
    terms, rpos, upos, actions taken), actions -1 when u or draws ran out (the caller extends them
    and reruns)."""
    tail, steps = 0.0, 0
    while left > 0:
        steps += 1
        if upos >= len(u):
            return 0.0, 0.0, rpos, upos, -1
        action = STOP if u[upos] >= ROLL_PROB else ROLL
        upos += 1
        raw, rpos, upos = draw_chance(draws, rpos, use_draws, u, upos, 36)
        if raw < 0:
            return 0.0, 0.0, rpos, upos, -1
        if cv and action == ROLL:
            tail += (ONES[raw] > 0) - P_ANY_ONE
        left, score, turn = solitaire_step(left, score, turn, action, raw, cap)
    return float(score), tail, rpos, upos, steps


_NO_DRAWS = np.zeros(1, dtype=np.int64)
