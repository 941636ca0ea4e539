"""Exact Pig values: value iteration for the two-player race (fewer than a million states at goal
100), backward induction for the solitaire, and policy iteration as an independent check."""

from __future__ import annotations

import numpy as np
from numba import njit

from .pig import ROLL_OUTCOMES, Pig, PigSolitaire

# Sums of two non-1 dice and their probabilities (the roll outcomes other than a 1).
SUM_VALUES = np.array([s for s in range(4, 13)], dtype=np.int64)
SUM_PROBS = np.array([p for _, p in ROLL_OUTCOMES[2:]])
P_BOTH_ONES, P_ONE_ONE = 1 / 36, 10 / 36


@njit(cache=True)
def _roll_value(w, i, j, k, goal, sums, probs):
    v = P_BOTH_ONES * (1.0 - w[j, 0, 0]) + P_ONE_ONE * (1.0 - w[j, i, 0])
    for t in range(sums.shape[0]):
        if i + k + sums[t] >= goal:
            v += probs[t]
        else:
            v += probs[t] * w[i, j, k + sums[t]]
    return v


@njit(cache=True)
def _value_iteration(goal, sums, probs, tol, max_sweeps):
    w = np.zeros((goal, goal, goal))
    for sweep in range(max_sweeps):
        delta = 0.0
        for i in range(goal - 1, -1, -1):
            for j in range(goal - 1, -1, -1):
                for k in range(goal - 1 - i, -1, -1):
                    v = _roll_value(w, i, j, k, goal, sums, probs)
                    if k > 0:
                        v = max(v, 1.0 - w[j, i + k, 0])
                    d = abs(v - w[i, j, k])
                    if d > delta:
                        delta = d
                    w[i, j, k] = v
        if delta < tol:
            return w, sweep + 1
    return w, -1


class PigValues:
    """Optimal winning chances W[mover score, other score, turn total] of two-player Pig; values
    and action values in the game's utility scale (player 0's view, +-100)."""

    def __init__(self, game: Pig, tol: float = 1e-12, max_sweeps: int = 10_000):
        self.game = game
        self.win, self.sweeps = _value_iteration(game.goal, SUM_VALUES, SUM_PROBS, tol, max_sweeps)
        if self.sweeps < 0:
            raise RuntimeError(f"value iteration did not reach tolerance {tol} in {max_sweeps} sweeps")

    def _scale(self, p0_wins: float) -> float:
        return self.game.vmin + (self.game.vmax - self.game.vmin) * p0_wins

    def value(self, state) -> float:
        g = self.game
        if g.is_terminal(state):
            return g.utility(state)
        s0, s1, turn, p = state
        mover = self.win[s0, s1, turn] if p == 0 else self.win[s1, s0, turn]
        return self._scale(mover if p == 0 else 1.0 - mover)

    def action_value(self, state, action) -> float:
        ids, probs = self.game.chance(state, action)
        return sum(p * self.value(self.game.apply(state, action, o)) for o, p in zip(ids, probs))

    def best_action(self, state) -> int:
        sign = 1 if self.game.player(state) == 0 else -1
        return max(self.game.actions(state), key=lambda a: sign * self.action_value(state, a))

    def regret(self, state, action) -> float:
        """How much worse `action` is than the best one, for the player to move (>= 0)."""
        sign = 1 if self.game.player(state) == 0 else -1
        return sign * (self.value(state) - self.action_value(state, action))


def policy_iteration(goal: int) -> np.ndarray:
    """Winning chances of two-player Pig by policy iteration with dense linear solves: an independent
    check of `value_iteration` for small goals (a few hundred states)."""
    states = [(i, j, k) for i in range(goal) for j in range(goal) for k in range(goal - i)]
    index = {s: n for n, s in enumerate(states)}
    n = len(states)
    stop = np.array([k > 0 for _, _, k in states])              # start from "stop whenever legal"
    while True:
        a = np.eye(n)
        b = np.zeros(n)
        for row, (i, j, k) in enumerate(states):
            for col, coef, const in _transitions(i, j, k, goal, bool(stop[row]), index):
                a[row, col] -= coef
                b[row] += const
        w = np.linalg.solve(a, b)
        better = stop.copy()
        for row, (i, j, k) in enumerate(states):
            if k == 0:
                continue
            vals = []
            for choice in (False, True):
                terms = _transitions(i, j, k, goal, choice, index)
                vals.append(sum(coef * w[col] + const for col, coef, const in terms))
            if vals[1] > vals[0] + 1e-12:
                better[row] = True
            elif vals[0] > vals[1] + 1e-12:
                better[row] = False
        if np.array_equal(better, stop):
            out = np.zeros((goal, goal, goal))
            for (i, j, k), v in zip(states, w):
                out[i, j, k] = v
            return out
        stop = better


def _transitions(i, j, k, goal, stop, index):
    """Terms (column, coefficient, constant) of W(i,j,k) = sum coef * W[column] + const: a value
    1 - W(x) enters as coefficient -1 and constant 1."""
    if stop:
        return [(index[(j, i + k, 0)], -1.0, 1.0)]
    terms = [(index[(j, 0, 0)], -P_BOTH_ONES, P_BOTH_ONES), (index[(j, i, 0)], -P_ONE_ONE, P_ONE_ONE)]
    for s, p in zip(SUM_VALUES, SUM_PROBS):
        if i + k + s >= goal:
            terms.append((0, 0.0, p))
        else:
            terms.append((index[(i, j, k + int(s))], p, 0.0))
    return terms


@njit(cache=True)
def _solitaire(turns, cap, sums, probs, roll_prob):
    """v[t, s, k]: expected final score with t turns left, score s, turn total k; roll_prob < 0
    means optimal play, otherwise the policy that rolls with that probability."""
    v = np.zeros((turns + 1, cap, cap))
    for s in range(cap):
        v[0, s, 0] = s
    for t in range(1, turns + 1):
        for s in range(cap - 1, -1, -1):
            for k in range(cap - 1 - s, -1, -1):
                roll = P_BOTH_ONES * v[t - 1, 0, 0] + P_ONE_ONE * v[t - 1, s, 0]
                for n in range(sums.shape[0]):
                    if s + k + sums[n] >= cap:
                        roll += probs[n] * cap
                    else:
                        roll += probs[n] * v[t, s, k + sums[n]]
                banked = s + k
                stop = cap * 1.0 if banked >= cap else v[t - 1, banked, 0]
                if roll_prob < 0:
                    v[t, s, k] = max(roll, stop)
                else:
                    v[t, s, k] = roll_prob * roll + (1 - roll_prob) * stop
    return v


class SolitaireValues:
    """Exact expected final scores of solitaire Pig, for optimal play (``roll_prob=None``) or for
    the policy that rolls with probability ``roll_prob`` (the chapter 7 rollout policy is 0.8)."""

    def __init__(self, game: PigSolitaire, roll_prob: float | None = None):
        self.game = game
        self.v = _solitaire(game.turns, game.cap, SUM_VALUES, SUM_PROBS, -1.0 if roll_prob is None else roll_prob)

    def value(self, state) -> float:
        if self.game.is_terminal(state):
            return self.game.utility(state)
        left, score, turn = state
        return float(self.v[left, score, turn])

    def action_value(self, state, action) -> float:
        ids, probs = self.game.chance(state, action)
        return sum(p * self.value(self.game.apply(state, action, o)) for o, p in zip(ids, probs))
