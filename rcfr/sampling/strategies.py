"""What a walk does at an information set besides sampling: current strategy, average credit, regret batch.

Every walk writes the *sampled instantaneous counterfactual regrets* of the sets it updates into
``state.delta`` and lists each set once in ``state.touched`` (`touch`). Regrets only change afterwards,
in `apply_regrets`, so the current strategy is the same everywhere inside one walk even when an
information set is reached by several histories (hidden actions). ``touched`` + ``delta`` is the batch
a regret store (a table here; a regressor in sampled RCFR) consumes.

Average strategies (`credit_average`): "stochastic" adds ``w * pi_p(h) * pi_c(h) / q(h) * sigma(I, .)`` at
each visited history of the accumulating player p, whose expectation is ``w * pi_c(I) * pi_p(I) *
sigma(I, .)`` (``pi_c(I)`` is constant over iterations, so it cancels when normalizing); "optimistic" adds
``(t - last[I]) * pi_p(h) * sigma(I, .)`` and sets ``last[I] = t`` (Lanctot et al. 2009); "lazy" pushes
realization mass down p's sequence tree only when a sample reaches it: I receives the mass its parent
sequence gained since I's last visit (``t`` for the empty sequence), split by the current sigma, so reach
weights need no importance weighting; like optimistic averaging it assumes sigma(I) did not change
between visits.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit
from numba.core import types
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import overload

from .bundles import AVG_LAZY, AVG_OPTIMISTIC, AVG_STOCHASTIC, C_TRAVERSAL, RM_PLUS


@njit(cache=True, inline="always")
def regret_matching(regrets, sigma, first, n, from_regrets):
    """Write the current strategy of an information set (regret matching on its cumulative regrets) into
    sigma[first:first+n]; with `from_regrets` False, sigma already holds it (a fixed or predicted profile)."""
    if not from_regrets:
        return
    total = 0.0
    for s in range(first, first + n):
        if regrets[s] > 0.0:
            total += regrets[s]
    for s in range(first, first + n):
        if total > 0.0:
            sigma[s] = regrets[s] / total if regrets[s] > 0.0 else 0.0
        else:
            sigma[s] = 1.0 / n


# ---- where a set's current strategy comes from -----------------------------------------------------
# `State.model` picks it when the driver compiles (numba types, as `states` picks the state source): the table
# (`bundles.NO_MODEL`, an array: the code every table solver compiled before models existed) here, a compiled
# model per player (`rcfr.solvers.model_strategies.WalkModel`) where that module overloads the same functions.
# Each returns where the strategy lies, ``(array, offset)``: the table's ``(sigma, first_seq[J])``, a model's
# row of its per-depth work, so that nothing is kept per set.

def current_strategy(model, tree, regrets, sigma, h, f, n, d, p, from_regrets):
    """The current strategy of the set (sequences f..f+n, player p) of the walk's state h at depth d, made now:
    ``(array, offset)`` of its n probabilities."""


def strategy_at(model, sigma, f, d):
    """Where `current_strategy` put the strategy it made at depth d for the set at f (read again later in the
    same walk, below that depth nothing having been made at d since)."""


def regrets_met(model, tree, h, value, v, n, e):
    """The traverser's sampled regrets at history h, ``value[e, a] - v`` for its n actions, once its children are
    done: nothing for the table (they go to ``delta``); a model that keeps feature rows writes them where the walk
    meets the set (`rcfr.solvers.model_strategies.RowReservoir`)."""


# numba's pedantic SSA check warns about the loop variables of an ``inline="always"`` overload that calls an
# inlined function (`regret_matching` here, `set_action` in `decisions`): an internal check, not an error, and the code is
# the walks' own (the golden tests compare it bit for bit), so only these overloads' warnings are silenced.
warnings.filterwarnings("ignore", message=r".*variable '_(table|walk)_(set_)?strategy\w*__locals__",
                        category=NumbaIRAssumptionWarning)


def is_table(model) -> bool:
    """True for the numba type of `bundles.NO_MODEL`."""
    return isinstance(model, types.Array)


@overload(current_strategy, inline="always")
def _table_strategy(model, tree, regrets, sigma, h, f, n, d, p, from_regrets):
    if is_table(model):
        def strategy(model, tree, regrets, sigma, h, f, n, d, p, from_regrets):
            regret_matching(regrets, sigma, f, n, from_regrets)
            return sigma, f
        return strategy


@overload(strategy_at, inline="always")
def _table_strategy_at(model, sigma, f, d):
    if is_table(model):
        return lambda model, sigma, f, d: (sigma, f)


@overload(regrets_met, inline="always")
def _table_regrets_met(model, tree, h, value, v, n, e):
    if is_table(model):
        return lambda model, tree, h, value, v, n, e: None


@njit(cache=True, inline="always")
def touch(J, touched, num_touched, touched_stamp, counters):
    """List (abstract) information set J in the walk's batch (once per walk)."""
    stamp = counters[C_TRAVERSAL]
    if touched_stamp[J] != stamp:
        touched_stamp[J] = stamp
        touched[num_touched[0]] = J
        num_touched[0] += 1


@njit(cache=True, inline="always")
def apply_regrets(tree, state, regret_matching_code, weight):
    """Add the sampled regrets of the touched (abstract) information sets, times `weight` (the iteration's
    regret weight, `next_regret_weight`), to the table (clipping at zero for `RM_PLUS`), clear them from
    ``delta`` and empty the touched list."""
    regrets, delta, touched, num_touched = state.regrets, state.delta, state.touched, state.num_touched
    first_seq, num_actions = tree.first_seq, tree.num_actions
    clip = regret_matching_code == RM_PLUS
    for k in range(num_touched[0]):
        J = touched[k]
        for s in range(first_seq[J], first_seq[J] + num_actions[J]):
            r = regrets[s] + weight * delta[s]
            regrets[s] = r if (r > 0.0 or not clip) else 0.0
            delta[s] = 0.0
    num_touched[0] = 0


@njit(cache=True, inline="always")
def next_regret_weight(weight, t, alpha):
    """W(t + 1) from W(t), the weight of iteration t's sampled regrets: W(1) = 1, W(t + 1) = W(t) (1 + t^-alpha).

    Discounted CFR multiplies the cumulative regrets by d(t) = t^alpha / (t^alpha + 1) after iteration t; a
    sampled iteration touches few regrets, so the table is kept divided by prod_{k <= t} d(k) instead, which
    weights iteration t's regrets by 1 / prod_{k < t} d(k) = W(t) and changes no strategy (regret matching is
    scale free). alpha 1 is Linear CFR's W(t) = t; alpha 0 means no discounting (W = 1). For alpha >= 1,
    W(t) <= t stays finite."""
    if alpha == 0.0:
        return weight
    return weight * (1.0 + np.float64(t) ** -alpha)


@njit(cache=True)
def regret_weight(weight, first, last, alpha):
    """W(last) from W(first) = `weight`, by the multiplications the driver makes (so bit for bit the same)."""
    for t in range(first, last):
        weight = next_regret_weight(weight, t, alpha)
    return weight


@njit(cache=True, inline="always")
def collect_regrets(tree, state, tally):
    """Add the sampled regrets of one walk to `tally` (a `bundles.Tally`: sums, squares where kept, visits,
    and each newly written information set listed), then clear them."""
    delta, touched, num_touched = state.delta, state.touched, state.num_touched
    first_seq, num_actions = tree.first_seq, tree.num_actions
    sums, squares, visits, listed, count = tally
    for k in range(num_touched[0]):
        J = touched[k]
        f = first_seq[J]
        if visits[f] == 0:
            listed[count[0]] = J
            count[0] += 1
        for s in range(f, f + num_actions[J]):
            sums[s] += delta[s]
            visits[s] += 1
            if squares.size:
                squares[s] += delta[s] * delta[s]
            delta[s] = 0.0
    num_touched[0] = 0


@njit(cache=True, inline="always")
def _accumulate(avg, target, sigma, first, n, amount):
    for a in range(n):
        avg[target + a] += amount * sigma[first + a]


@njit(cache=True, inline="always")
def credit_average(avg, sigma, last, parent_seq, average_first, I, f, n, t, average_mode, stochastic, own):
    """Credit the accumulating player's average strategy at a visit of its (full) information set I, whose
    current strategy is sigma[f:f+n] (see the module docstring for the three average modes)."""
    target = average_first[I]
    if average_mode == AVG_STOCHASTIC:
        _accumulate(avg, target, sigma, f, n, stochastic)
    elif average_mode == AVG_OPTIMISTIC:
        _accumulate(avg, target, sigma, f, n, (t - last[I]) * own)
        last[I] = t
    elif average_mode == AVG_LAZY:
        parent = parent_seq[I]
        mass = np.float64(t) if parent < 0 else avg[parent]
        _accumulate(avg, target, sigma, f, n, mass - last[I])
        last[I] = mass
