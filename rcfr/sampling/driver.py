"""The one driver of every sampler: `traverse` picks the walk, `drive` is the compiled loop around it, which
`run` calls to iterate and `estimate` to repeat walks at a fixed profile.

Walks by job: `outcome_walks` (one trajectory), `tree_walks` (external sampling and relatives),
`chance_walks` (chance sampling over histories, public chance sampling over the public tree); the
decisions they share are in `decisions`, the set updates in `strategies`, the state source in `states`,
the bundles in `bundles`. The outcome, tree and chance walks are inlined into `drive`
(``inline="always"``): as separate compiled functions taking the bundles they ran slower (the call passes
~30 arrays; docs/mccfr.md, "Kernel structure").

The compiled entry points (`drive`, `chance_walks.public_chance_walk`) are built without numba's
reference counting (``_nrt=False``): they allocate nothing and only borrow the caller's arrays, while
with it every inlined call that binds a bundle to a new name increfs and decrefs each array of the bundle
(atomics); numba's pruning pass left ~230 such call sites in the one driver, a fixed cost per traversal
that outcome sampling's short trajectories paid the most (docs/mccfr.md, "Kernel structure").

Where a set's current strategy comes from is the type of ``state.model`` (`strategies.current_strategy`): the
table (`bundles.NO_MODEL`, every table solver), or compiled models evaluated in the walk
(`rcfr.solvers.model_strategies.WalkModel`, lean sampled RCFR's ``profile="model"``), one compile each.

numba alone would key the cached driver by this file only; `rcfr.numba_cache` widens the key to every file it
compiles in (the inlined walks, the overloads of the state sources and strategy sources), so an edited walk is
recompiled.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .bundles import ALTERNATING, BASELINE_OUTCOME, BOTH, CHANCE_SAMPLED, NO_TALLY, OUTCOME, PUBLIC_CHANCE
from .chance_walks import chance_walk, public_chance_walk
from .outcome_walks import baseline_outcome_walk, outcome_walk
from .states import room
from .strategies import apply_regrets, collect_regrets, next_regret_weight
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
def drive(tree, state, scratch, settings, t0, iterations, fixed, weight, tally):
    """The one compiled entry point (`run` and `estimate` below): ``fixed < 0`` runs iterations t0+1 ..
    t0+iterations of the solver; ``fixed`` 0, 1 or BOTH repeats that traverser's walk (as iterations t0+1 ..,
    crediting the average with `weight`) at the fixed strategy ``state.sigma`` instead, adding its sampled
    regrets to `tally` (`bundles.Tally`). One call site of
    `traverse`, because each inlined copy is every walk again for numba to compile (compile times in
    docs/mccfr.md)."""
    estimating = fixed >= 0
    passes = 2 if settings.updates == ALTERNATING and not estimating else 1
    regret_weight = settings.regret_weight  # W(t0 + 1): see `strategies.next_regret_weight`
    for it in range(iterations):
        if not room(tree):
            return it
        t = t0 + it + 1
        w = weight if estimating else np.float64(t) ** settings.averaging_power
        for k in range(passes):
            traverser = fixed if estimating else (k if passes == 2 else BOTH)
            traverse(tree, state, scratch, settings, traverser, t, w, not estimating)
            if estimating:
                collect_regrets(tree, state, tally)
            else:
                apply_regrets(tree, state, settings.regret_matching, regret_weight)
        regret_weight = next_regret_weight(regret_weight, t, settings.regret_discount)
    return iterations


def bound(function, *args):
    """The compiled entry point of numba `function` for the types of `args`. Calling it with arguments of the same
    types skips numba's dispatch, which types every argument anew (each array of a bundle, at every call), the
    main cost of walks that return to Python often, as the lean path's discovery walks and single traversals do."""
    return function.compile(tuple(function.typeof_pyval(a) for a in args))


def run(tree, state, scratch, settings, t0, iterations):
    """Iterations t0+1 .. t0+iterations: one traversal per player, each followed by its regret update
    (alternating), or one traversal updating both (simultaneous). Returns the iterations done: fewer when
    the state source needs to grow first (`states.room`)."""
    return drive(tree, state, scratch, settings, t0, iterations, -1, 0.0, NO_TALLY)


def estimate(tree, state, scratch, settings, traverser, samples, tally, t0=0, weight=1.0):
    """`samples` traversals at the fixed strategy ``state.sigma`` (traversal k counts as iteration t0+k,
    its average credit weighs `weight`), their sampled regrets added to `tally`."""
    drive(tree, state, scratch, settings, t0, samples, traverser, weight, tally)
