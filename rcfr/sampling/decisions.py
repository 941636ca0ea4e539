"""Random numbers and the sampling decisions every walk shares, each written once.

A walk's random stream is a splitmix64 generator whose state is one uint64 owned by the solver, so runs
are reproducible and resumable. Each decision below is the one place its draw happens; the walks
(`outcome_walks`, `tree_walks`, `chance_walks`) and the visited-set discovery
(`rcfr.solvers.visited._discover`, which replays a traversal's draws ahead of it) call the same helper,
so the discovery cannot drift from the traversal it predicts:

* `chance_outcome`: one outcome of a chance node, from its probabilities;
* `trajectory_action`: outcome sampling's action at a decision, epsilon-exploring for the players it
  explores for (the traverser; everyone in the simultaneous form), with the probability it was drawn with;
* `set_action`: the one action an information set plays in a traversal (external sampling's opponent,
  pure CFR's traverser): drawn at its first visit, reused at the others;
* `keeps_action`: average strategy sampling's (and probing's) exploration of one of the traverser's actions;
* `common_chance_outcome`: common chance-sampling's outcome from one random number per event.

All are ``inline="always"``: numba pastes them into each walk, so sharing them costs nothing per node.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from .strategies import is_table, regret_matching


# ---- random numbers ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def uniform01(rng):
    """The next number of the splitmix64 stream ``rng[0]``, uniform in [0, 1) (53 bits)."""
    z = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def pick_at(probs, start, n, x):
    """The index in [0, n) whose cumulative-probability interval of probs[start:start+n] holds x in [0, 1)
    (inverse CDF)."""
    for k in range(n - 1):
        x -= probs[start + k]
        if x < 0.0:
            return k
    return n - 1


@njit(cache=True, inline="always")
def pick(probs, start, n, rng):
    """Index in [0, n) drawn from probs[start:start+n] (which sum to one)."""
    return pick_at(probs, start, n, uniform01(rng))


@njit(cache=True, inline="always")
def pick_mixed(sigma, start, n, eps, rng):
    """Index drawn from eps * uniform + (1 - eps) * sigma[start:start+n]."""
    x = uniform01(rng)
    for k in range(n - 1):
        x -= eps / n + (1.0 - eps) * sigma[start + k]
        if x < 0.0:
            return k
    return n - 1


# ---- the shared decisions ------------------------------------------------------------------------
@njit(cache=True, inline="always")
def chance_outcome(probs, start, n, rng):
    """One outcome of a chance node whose n outcome probabilities are probs[start:start+n]."""
    return pick(probs, start, n, rng)


@njit(cache=True, inline="always")
def trajectory_action(sigma, f, n, explore, eps, rng):
    """Outcome sampling's action at a decision whose strategy is sigma[f:f+n]: drawn from
    ``eps * uniform + (1 - eps) * sigma`` where the walk `explore`s, from sigma elsewhere. Returns the action
    and the probability it was drawn with."""
    if explore:
        k = pick_mixed(sigma, f, n, eps, rng)
        return k, eps / n + (1.0 - eps) * sigma[f + k]
    k = pick(sigma, f, n, rng)
    return k, sigma[f + k]


@njit(cache=True, inline="always")
def set_action(regrets, sigma, f, n, from_regrets, cached, I, stamp, rng):
    """The action information set I plays in traversal `stamp`: at its first visit, its strategy (regret
    matching when `from_regrets`) is written to sigma[f:f+n] and an action drawn from it and kept in
    ``cached[I]``; later visits reuse it (one draw per set, so the sample stays unbiased when a traversal
    meets the set at several histories)."""
    if cached[I, 0] != stamp:
        regret_matching(regrets, sigma, f, n, from_regrets)
        cached[I, 0] = stamp
        cached[I, 1] = pick(sigma, f, n, rng)
    return cached[I, 1]


def set_strategy_action(model, tree, regrets, sigma, h, f, n, d, p, from_regrets, cached, I, stamp, rng):
    """`set_action` with the set's strategy as `strategies.current_strategy` makes it: ``(action, array,
    offset)``. The table makes the strategy at the set's first visit of the traversal only (later visits read
    sigma); a model makes it at every visit, since it keeps none."""


@overload(set_strategy_action, inline="always")
def _table_set_strategy_action(model, tree, regrets, sigma, h, f, n, d, p, from_regrets, cached, I, stamp, rng):
    if is_table(model):
        def action(model, tree, regrets, sigma, h, f, n, d, p, from_regrets, cached, I, stamp, rng):
            return set_action(regrets, sigma, f, n, from_regrets, cached, I, stamp, rng), sigma, f
        return action


@njit(cache=True, inline="always")
def keeps_action(avg, g, total, a, eps, tau, beta, rng):
    """Average strategy sampling's exploration of the traverser's action a (Gibson et al. 2012): kept with
    probability ``rho = max(eps, (beta + tau s[a]) / (beta + total))`` (1 when the denominator is 0; s: the
    average-strategy sums avg[g:], total their sum), with no draw when rho >= 1. Returns (kept, rho)."""
    rho = 1.0
    if beta + total > 0.0:
        rho = max(eps, (beta + tau * avg[g + a]) / (beta + total))
    if rho < 1.0 and uniform01(rng) >= rho:
        return False, rho
    return True, rho


@njit(cache=True, inline="always")
def common_chance_outcome(probs, start, n, key, common_u, common_stamp, stamp, rng):
    """Common chance-sampling's outcome of a chance node that is event `key` for the updating player: drawn
    by inverse CDF from the event's one random number of traversal `stamp` (drawn at the event's first node),
    so every node of the event takes the same quantile (common random numbers)."""
    if common_stamp[key] != stamp:
        common_stamp[key] = stamp
        common_u[key] = uniform01(rng)
    return pick_at(probs, start, n, common_u[key])
