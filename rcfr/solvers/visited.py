"""Current strategies predicted for the information sets a traversal visits, not for every set of the game.

The lean path (`rcfr.solvers.on_demand`) keeps the current strategy in the profile the sampling kernels
read, one float per sequence. Its ``profile="cache"`` form refreshes all of a player's sequences after
each refit (rows, predict, regret matching): cheap per sequence, but the whole game every ``refit_every``
iterations. The ``profile="visited"`` form here predicts only what the traversals read:

* a refit only marks the player's information sets *stale*: one epoch counter per player, compared with
  a stamp per information set (``fresh[J]``), so no per-sequence work;
* before each traversal a *discovery walk* replays the traversal's sampling (same order, same random
  numbers, from a copy of the solver's splitmix64 state, without writing regrets, averages or counters).
  It lists the stale sets it meets and stops at the first one whose strategy decides where the walk
  goes: every set on an outcome-sampling trajectory, the opponent's sets under external sampling (the
  traverser's sets only feed values there, so the walk lists them and goes on);
* the listed sets are predicted in one batch per player (encoder rows of their sequences, one predict,
  regret matching on t x prediction, the same arithmetic as the cache's refresh) and marked fresh; the
  walk resumes where it stopped with its random state, so a traversal costs one discovery walk plus one
  batch per stale set that decides the path;
* when the walk ends, every strategy the real traversal reads is fresh, and the real traversal runs as
  in the cache form. Same random stream, same strategies where read: the runs are bit-identical
  (`tests/test_visited_profile.py`), only the work differs (docs/large_rcfr.md measures it).

The walks read strategies from the profile only, so the sampling walks (`rcfr.sampling`) are unchanged;
the discovery here makes each of their draws through the same decision helpers (`rcfr.sampling.decisions`),
in the same order, for external and outcome sampling.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..sampling.bundles import CHANCE, OUTCOME, TERMINAL
from ..sampling.decisions import chance_outcome, set_action, trajectory_action
from ..sampling.states import child, infoset, mover, num_moves, outcome_probs, regret_set
from .predictions import match_predictions


@njit(cache=True, inline="always")
def _list(J, p, fresh, version, listed, counts):
    """List stale set J of player p (player 0 from the front of `listed`, player 1 from the back) and mark
    it fresh: it is predicted before the walk goes on."""
    fresh[J] = version
    if p == 0:
        listed[counts[0]] = J
    else:
        listed[listed.shape[0] - 1 - counts[1]] = J
    counts[p] += 1


@njit(cache=True, inline="always")
def _list_certain(tree, traverser, stack, top, below, fresh, updated, version, listed, counts):
    """External sampling: list the stale sets of the histories the walk visits whatever the strategies, those
    pending on its stack and, below the traverser's, every history down to the next opponent or chance node
    (`below`: a work stack). So one batch holds the sets of all siblings of a blocking set, not one."""
    for j in range(top + 1):
        under = 0
        below[0] = stack[j]
        while under >= 0:
            h = below[under]
            under -= 1
            p = mover(tree, h)
            if p == TERMINAL or p == CHANCE:
                continue
            J = regret_set(tree, infoset(tree, h))
            if fresh[J] < updated[p]:
                _list(J, p, fresh, version, listed, counts)
            if p == traverser:
                for a in range(num_moves(tree, h)):
                    under += 1
                    below[under] = child(tree, h, a, -1)


@njit(cache=True, _nrt=False)
def _discover(tree, sigma, cached, sampler, eps, traverser, walk, rng, stack, below, fresh, updated, version,
              listed, counts):
    """Resume the discovery walk of one traversal of `traverser`: ``walk = [top of stack, history, stamp]``
    (external sampling's explicit stack of first visits; outcome sampling's current history; the walk's
    stamp in external sampling's `cached`, negative so that it never equals a real traversal's). Lists the
    stale sets met; returns True when the walk is complete, False when it stopped at a stale set whose
    strategy decides the path (it resumes at that history once the set is predicted; with it, external
    sampling lists every stale set it will certainly meet, see `_list_certain`).

    Every draw is the traversal's own decision helper (`rcfr.sampling.decisions`), called in the order the
    traversal calls it (`outcome_walks._sample_trajectory`; `tree_walks.tree_walk`'s first visits), so the
    two consume the same random numbers for the same purposes. (It walks the compiled tree: ``slot`` -1.)"""
    first_seq = tree.first_seq
    if sampler == OUTCOME:  # alternating: exploration at the traverser's sets
        h = walk[1]
        while mover(tree, h) != TERMINAL:
            p, n = mover(tree, h), num_moves(tree, h)
            if p == CHANCE:
                probs, start = outcome_probs(tree, h)
                k = chance_outcome(probs, start, n, rng)
            else:
                J = regret_set(tree, infoset(tree, h))
                if fresh[J] < updated[p]:
                    _list(J, p, fresh, version, listed, counts)
                    walk[1] = h
                    return False
                k, xi = trajectory_action(sigma, first_seq[J], n, p == traverser, eps, rng)
            h = child(tree, h, k, -1)
        walk[1] = h
        return True
    # external sampling: the first visits of `tree_walk`, in its order
    top, stamp = walk[0], walk[2]
    while top >= 0:
        h = stack[top]
        top -= 1
        p = mover(tree, h)
        if p == TERMINAL:
            continue
        n = num_moves(tree, h)
        if p == CHANCE:
            probs, start = outcome_probs(tree, h)
            k = chance_outcome(probs, start, n, rng)
        else:
            I = infoset(tree, h)
            J = regret_set(tree, I)
            if fresh[J] < updated[p]:
                _list(J, p, fresh, version, listed, counts)
                if p != traverser:  # its sampled action decides the path: predict it first
                    top += 1
                    stack[top] = h
                    walk[0] = top
                    _list_certain(tree, traverser, stack, top, below, fresh, updated, version, listed, counts)
                    return False
            if p == traverser:
                for a in range(n):
                    top += 1
                    stack[top] = child(tree, h, a, -1)
                continue
            k = set_action(sigma, sigma, first_seq[J], n, False, cached, I, stamp, rng)
        top += 1
        stack[top] = child(tree, h, k, -1)
    walk[0] = top
    return True


@njit(cache=True)
def _sequences(sets, first_seq, num_actions):
    """The global sequence ids of these information sets, set after set."""
    total = 0
    for J in sets:
        total += num_actions[J]
    out = np.empty(total, np.int64)
    i = 0
    for J in sets:
        for s in range(first_seq[J], first_seq[J] + num_actions[J]):
            out[i] = s
            i += 1
    return out


class VisitedProfile:
    """Which information sets hold the current strategy, and the discovery walk that predicts the stale ones
    a traversal will read (see the module docstring). `predict(player, sequences)` is the solver's: the
    player's predictions for these global sequence ids (finite, checked) and the t to match them with."""

    def __init__(self, buffers, sampler: str, epsilon: float, predict):
        game = buffers.game
        self.tree, self.sigma, self.cached = buffers.tree, buffers.sigma, buffers.scratch.cached
        self.sampler, self.epsilon, self.predict = sampler, float(epsilon), predict
        self.fresh = np.zeros(game.num_infosets, np.int64)  # the epoch at which each set was last predicted
        self.updated = np.zeros(2, np.int64)  # each player's epoch of its latest refit (sets below it are stale)
        self.version = 0
        self.listed = np.zeros(game.num_infosets, np.int64)
        self.counts = np.zeros(2, np.int64)
        self.walk = np.zeros(3, np.int64)
        self.rng = np.zeros(1, np.uint64)
        self.stack = np.zeros(max(buffers.scratch.stack.shape[0], 1), np.int64)
        self.below = np.zeros_like(self.stack)
        self.stamp = 0
        self.rounds = self.predicted = 0  # batches and sets predicted (for benchmarks)

    def stale(self, player: int) -> None:
        """After a refit of `player`: every one of its sets is stale."""
        self.version += 1
        self.updated[player] = self.version

    def all_fresh(self, player: int) -> None:
        """After a refresh of every set of `player`."""
        self.updated[player] = 0

    def prepare(self, traverser: int, rng: np.ndarray) -> None:
        """Predict every stale set the next traversal of `traverser` will read (`rng`: the solver's generator,
        read, not advanced)."""
        from ..sampling.buffers import SAMPLERS
        self.stamp -= 1
        self.walk[:] = (0, 0, self.stamp)
        self.stack[0] = 0
        self.rng[0] = rng[0]
        sampler, listed, counts = SAMPLERS[self.sampler], self.listed, self.counts
        while True:
            done = _discover(self.tree, self.sigma, self.cached, sampler, self.epsilon, traverser, self.walk,
                             self.rng, self.stack, self.below, self.fresh, self.updated, self.version, listed, counts)
            for p in (0, 1):
                if counts[p]:
                    sets = listed[:counts[p]] if p == 0 else listed[len(listed) - counts[p]:]
                    self._predict(p, sets)
            counts[:] = 0
            if done:
                return

    def _predict(self, player: int, sets: np.ndarray) -> None:
        tree = self.tree
        prediction, t = self.predict(player, _sequences(sets, tree.first_seq, tree.num_actions))
        size = tree.num_actions[sets]
        at = np.cumsum(size) - size  # the sets' sequences follow each other in `prediction`
        match_predictions(prediction, float(t), tree.first_seq[sets], size, at, self.sigma)
        self.rounds += 1
        self.predicted += len(sets)
