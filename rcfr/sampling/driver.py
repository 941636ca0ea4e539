"""The one driver of every sampler: `traverse` picks the walk, `run` iterates, `estimate` repeats at a fixed profile.

Walks by job: `outcome_walks` (one trajectory), `tree_walks` (external sampling and relatives),
`chance_walks` (chance sampling over histories, public chance sampling over the public tree); the
decisions they share are in `decisions`, the set updates in `strategies`, the state source in `states`,
the bundles in `bundles`. The outcome, tree and chance walks are inlined into `run` and `estimate`
(``inline="always"``): as separate compiled functions taking the bundles they ran 2-3x slower.

The compiled entry points (`run`, `estimate`, `chance_walks.public_chance_walk`) are built without numba's
reference counting (``_nrt=False``): they allocate nothing and only borrow the caller's arrays, while
with it every inlined call that binds a bundle to a new name increfs and decrefs each array of the bundle
(atomics); numba's pruning pass left ~230 such call sites in the one driver, a fixed cost per traversal
that outcome sampling's short trajectories paid the most (docs/mccfr.md, "Kernel structure").

numba's disk cache keys an entry point on its own file only: after editing an inlined walk in another
module, delete ``rcfr/sampling/__pycache__/driver.*.nb*`` (or edit this file), or the old code is loaded.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .bundles import ALTERNATING, BASELINE_OUTCOME, BOTH, CHANCE_SAMPLED, OUTCOME, PUBLIC_CHANCE
from .chance_walks import chance_walk, public_chance_walk
from .outcome_walks import baseline_outcome_walk, outcome_walk
from .states import room
from .strategies import apply_regrets, collect_regrets
from .tree_walks import tree_walk


@njit(cache=True, inline="always")
def traverse(tree, state, scratch, settings, traverser, t, weight, from_regrets):
    """One traversal of ``settings.sampler`` for `traverser` (0, 1 or BOTH)."""
    sampler, average_mode = settings.sampler, settings.average_mode
    if sampler == OUTCOME:
        outcome_walk(tree, state, scratch.path, traverser, settings.epsilon, t, weight, average_mode, from_regrets)
    elif sampler == BASELINE_OUTCOME:
        baseline_outcome_walk(tree, state, scratch.path, traverser, settings.epsilon, settings.baseline_decay,
                              settings.baseline_update, t, weight, average_mode, from_regrets)
    elif sampler == CHANCE_SAMPLED:
        chance_walk(tree, state, scratch, traverser, t, weight, average_mode, from_regrets, settings.chance_sampling)
    elif sampler == PUBLIC_CHANCE:
        public_chance_walk(tree, state, scratch, traverser, t, weight, average_mode, from_regrets,
                           settings.chance_sampling)
    else:
        tree_walk(tree, state, scratch, traverser, t, weight, average_mode, from_regrets, sampler, settings.epsilon,
                  settings.tau, settings.beta)


@njit(cache=True, _nrt=False)
def run(tree, state, scratch, settings, t0, iterations):
    """Iterations t0+1 .. t0+iterations: one traversal per player, each followed by its regret update
    (alternating), or one traversal updating both (simultaneous). Returns the iterations done: fewer when
    the state source needs to grow first (`states.room`)."""
    for it in range(iterations):
        if not room(tree):
            return it
        t = t0 + it + 1
        w = np.float64(t) ** settings.averaging_power
        if settings.updates == ALTERNATING:
            for i in range(2):
                traverse(tree, state, scratch, settings, i, t, w, True)
                apply_regrets(tree, state, settings.regret_matching)
        else:
            traverse(tree, state, scratch, settings, BOTH, t, w, True)
            apply_regrets(tree, state, settings.regret_matching)
    return iterations


@njit(cache=True, _nrt=False)
def estimate(tree, state, scratch, settings, traverser, samples, sums, squares, visits):
    """`samples` traversals at the fixed strategy ``state.sigma`` (traversal k counts as iteration k),
    their sampled regrets summed into `sums`, `squares` and `visits`."""
    for it in range(samples):
        traverse(tree, state, scratch, settings, traverser, it + 1, 1.0, False)
        collect_regrets(tree, state, sums, squares, visits)
