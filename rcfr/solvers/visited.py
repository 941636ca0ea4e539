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
from ..sampling.driver import bound
from ..sampling.states import child, infoset, mover, num_moves, outcome_probs, regret_set
from .predictions import match_predictions

NEVER, UNFITTED = -2, -1  # `fresh` of a set not met yet (rules path); `updated` of a player not fit yet


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
def _stale(tree, sigma, h, J, p, fresh, updated, version, limit):
    """Whether set J (at history h) of player p needs a prediction: older than p's latest refit, and a real
    set (the rules path files what overflows its arrays under a sink set at `limit`; the solver grows them and
    walks again). A player not fit yet (``updated[p] == UNFITTED``, the rules path's sets first met) plays uniformly:
    the set gets it here, without a prediction."""
    if J >= limit or fresh[J] >= updated[p]:
        return False
    if updated[p] == UNFITTED:
        n = num_moves(tree, h)
        f = tree.first_seq[J]
        for a in range(n):
            sigma[f + a] = 1.0 / n
        fresh[J] = version
        return False
    return True


@njit(cache=True, inline="always")
def _list_certain(tree, sigma, traverser, stack, top, below, fresh, updated, version, listed, counts, limit, width,
                  region):
    """External sampling: list the stale sets of the histories the walk visits whatever the strategies, those
    pending on its stack and, below the traverser's, every history down to the next opponent or chance node
    (`below`: a work stack of (history, depth) rows whose states take the slots from `region` on, apart from the
    stack's). So one batch holds the sets of all siblings of a blocking set, not one."""
    for j in range(top + 1):
        under = 0
        below[0, 0], below[0, 1] = stack[j, 0], stack[j, 1]
        while under >= 0:
            h, d = below[under, 0], below[under, 1]
            under -= 1
            p = mover(tree, h)
            if p == TERMINAL or p == CHANCE:
                continue
            J = regret_set(tree, infoset(tree, h))
            if _stale(tree, sigma, h, J, p, fresh, updated, version, limit):
                _list(J, p, fresh, version, listed, counts)
            if p == traverser:
                for a in range(num_moves(tree, h)):
                    under += 1
                    below[under, 0] = child(tree, h, a, region + (d + 1) * width + a)
                    below[under, 1] = d + 1


@njit(cache=True, _nrt=False)
def _discover(tree, sigma, cached, sampler, eps, traverser, walk, rng, stack, below, fresh, updated, version,
              listed, counts, limit, width, region):
    """Resume the discovery walk of one traversal of `traverser`: ``walk = [top of stack, history, stamp]``
    (external sampling's explicit stack of first visits, (history, depth) rows; outcome sampling's current
    history; the walk's stamp in external sampling's `cached`, negative so that it never equals a real
    traversal's). Lists the stale sets met; returns True when the walk is complete, False when it stopped at a
    stale set whose strategy decides the path (it resumes at that history once the set is predicted; with it,
    external sampling lists every stale set it will certainly meet, see `_list_certain`).

    Every draw is the traversal's own decision helper (`rcfr.sampling.decisions`), called in the order the
    traversal calls it (`outcome_walks._sample_trajectory`; `tree_walks.tree_walk`'s first visits), so the
    two consume the same random numbers for the same purposes. On the rules a history is a row of the
    walk's states: a child at depth e, index k takes row ``e * width + k`` as in `tree_walk` (outcome
    sampling alternates rows 1 and 2); the compiled tree ignores rows."""
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
                if J >= limit:  # the rules path's arrays are full: the solver grows them and walks again
                    return False
                if _stale(tree, sigma, h, J, p, fresh, updated, version, limit):
                    _list(J, p, fresh, version, listed, counts)
                    walk[1] = h
                    return False
                k, xi = trajectory_action(sigma, first_seq[J], n, p == traverser, eps, rng)
            h = child(tree, h, k, 2 if h == 1 else 1)
        walk[1] = h
        return True
    # external sampling: the first visits of `tree_walk`, in its order
    top, stamp = walk[0], walk[2]
    while top >= 0:
        h, d = stack[top, 0], stack[top, 1]
        top -= 1
        p = mover(tree, h)
        if p == TERMINAL:
            continue
        n = num_moves(tree, h)
        e = d + 1
        if p == CHANCE:
            probs, start = outcome_probs(tree, h)
            k = chance_outcome(probs, start, n, rng)
        else:
            I = infoset(tree, h)
            J = regret_set(tree, I)
            if J >= limit:  # as above
                return False
            if _stale(tree, sigma, h, J, p, fresh, updated, version, limit):
                _list(J, p, fresh, version, listed, counts)
                if p != traverser:  # its sampled action decides the path: predict it first
                    top += 1
                    stack[top, 0], stack[top, 1] = h, d
                    walk[0] = top
                    _list_certain(tree, sigma, traverser, stack, top, below, fresh, updated, version, listed, counts,
                                  limit, width, region)
                    return False
            if p == traverser:
                for a in range(n):
                    top += 1
                    stack[top, 0], stack[top, 1] = child(tree, h, a, e * width + a), e
                continue
            k = set_action(sigma, sigma, first_seq[J], n, False, cached, I, stamp, rng)
        top += 1
        stack[top, 0], stack[top, 1] = child(tree, h, k, e * width + k), e
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
    player's predictions for these global sequence ids (finite, checked) and the t to match them with.

    The buffers say what differs by source (`SamplerBuffers`, `rcfr.sampling.rules_buffers.RulesBuffers`), read here and
    never by asking the game's kind: where sets are numbered as met (``sets_as_met``, the rules) a set met for the
    first time is stale (``fresh`` `NEVER`) and the last id is the overflow's sink, the per-set arrays follow the
    buffers' ``num_set_ids`` (`sync`), and the walk has the rows of states the buffers give it
    (``discovery_rows``: on the rules twice the tree walk's, as `_list_certain` walks apart from the stack)."""

    def __init__(self, buffers, sampler: str, epsilon: float, predict):
        self.buffers, self.sampler, self.epsilon, self.predict = buffers, sampler, float(epsilon), predict
        self.fresh = np.zeros(0, np.int64)  # the epoch at which each set was last predicted (-1: never)
        self.listed = np.zeros(0, np.int64)
        self.updated = np.zeros(2, np.int64)  # each player's epoch of its latest refit (sets below it are stale)
        self.version = 0
        self.counts = np.zeros(2, np.int64)
        self.walk = np.zeros(3, np.int64)
        self.rng = np.zeros(1, np.uint64)
        rows = max(buffers.scratch.stack.shape[0], 1)
        self.stack = np.zeros((rows, 2), np.int64)
        self.below = np.zeros_like(self.stack)
        self.width = int(buffers.scratch.value.shape[1]) if buffers.scratch.value.ndim == 2 else 1
        # the walk's own rows of states (none where a history is its id) and where they start past the stack's
        self.rows, self.region = buffers.discovery_rows()
        # sets numbered as met: one not met yet is stale, and the last id is the overflow's sink, never listed
        self.unmet, self.sink = (NEVER, 1) if buffers.sets_as_met else (0, 0)
        self.stamp = 0
        self._discover = None  # `_discover` bound to the arguments' types at the first call
        self.rounds = self.predicted = 0  # batches and sets predicted (for benchmarks)
        self.sync()

    def sync(self) -> None:
        """Size the per-set arrays to the buffers' (after they grew); sets not met yet are stale."""
        size = self.buffers.num_set_ids
        if self.fresh.shape[0] != size:
            fresh = np.full(size, self.unmet, np.int64)
            kept = min(size, self.fresh.shape[0])
            fresh[:kept] = self.fresh[:kept]
            self.fresh, self.listed = fresh, np.zeros(size, np.int64)
        self.tree = self.buffers.discovery_tree(self.rows)
        self.sigma, self.cached = self.buffers.state.sigma, self.buffers.scratch.cached
        self.limit = size - self.sink  # the sets that may be listed

    def stale(self, player: int) -> None:
        """After a refit of `player`: every one of its sets is stale."""
        self.version += 1
        self.updated[player] = self.version

    def all_fresh(self, player: int, fitted: bool = True) -> None:
        """After a refresh of every set of `player` (met so far, on the rules); a player not `fitted` yet plays
        uniformly at the sets the walk meets first (`_stale`)."""
        self.updated[player] = 0 if fitted else UNFITTED

    def prepare(self, traverser: int, rng: np.ndarray) -> None:
        """Predict every stale set the next traversal of `traverser` will read (`rng`: the solver's generator,
        read, not advanced). On the rules the walk also numbers the sets the traversal will meet; when they
        overflow the buffers' arrays, the arrays grow and the walk starts again (what it predicted stays)."""
        from ..sampling.buffers import SAMPLERS
        sampler, listed, counts = SAMPLERS[self.sampler], self.listed, self.counts
        while True:
            self.sync()
            listed = self.listed
            self.stamp -= 1
            self.walk[:] = (0, 0, self.stamp)
            self.stack[0] = 0
            self.rng[0] = rng[0]
            while True:
                args = (self.tree, self.sigma, self.cached, sampler, self.epsilon, traverser, self.walk, self.rng,
                        self.stack, self.below, self.fresh, self.updated, self.version, listed, counts, self.limit,
                        self.width, self.region)
                self._discover = self._discover or bound(_discover, *args)
                done = self._discover(*args)
                for p in (0, 1):
                    if counts[p]:
                        sets = listed[:counts[p]] if p == 0 else listed[len(listed) - counts[p]:]
                        self._predict(p, sets)
                counts[:] = 0
                if self.buffers.overflowed:
                    break
                if done:
                    return
            self.buffers.grow(4, both=True)

    def _predict(self, player: int, sets: np.ndarray) -> None:
        tree = self.tree
        prediction, t = self.predict(player, _sequences(sets, tree.first_seq, tree.num_actions))
        size = tree.num_actions[sets]
        at = np.cumsum(size) - size  # the sets' sequences follow each other in `prediction`
        match_predictions(prediction, float(t), tree.first_seq[sets], size, at, self.sigma)
        self.rounds += 1
        self.predicted += len(sets)
