"""Monte Carlo CFR traversals compiled with numba over the history arrays of `rcfr.tree.Game`.

Every traversal is iterative (explicit stacks or a path array) and writes the *sampled
instantaneous counterfactual regrets* of the traverser's sequences into ``delta`` (global sequence
ids), listing each information set it wrote in ``touched``. Regrets only change afterwards, in
`apply_regrets`, so the current strategy is the same everywhere inside one traversal even when an
information set is reached by several histories (hidden actions). ``touched`` + ``delta`` is the
batch a regret store (a table here; a regressor later) consumes.

Estimators (derived from the unbiasedness lemma, Lanctot et al. 2009, Lemma 1; for every sampler
``E[delta[I, a]] = v(I, a) - v(I)`` with the exact counterfactual values, chance included):

* outcome sampling, one terminal z drawn with probability q(z), traverser i acts at h in I and
  the path takes a*: with ``W = u_i(z) * pi_-i(h) / q(z)`` and ``tail = pi(h a* -> z)`` (both players),
  ``delta[I, a*] = W * tail * (1 - sigma(a*))`` and ``delta[I, a] = -W * tail * sigma(a*)`` otherwise;
* external sampling (chance and opponent on-policy, so ``pi_-i / q`` cancels): ``v(h a) - v(h)``
  with ``v`` the traverser's sampled values below;
* chance sampling (chance on-policy): ``pi_-i(h) * (v(h a) - v(h))`` with chance left out of pi; paired
  and common chance-sampling walk several outcomes of some chance nodes and carry ``pi_c(h) / q(h)``
  (``q``: the probability that h is walked) into the weight and the values (`chance_traversal`).

Average strategies: "stochastic" adds ``w * pi_p(h) * pi_c(h) / q(h) * sigma(I, .)`` at each
visited history of the accumulating player p, whose expectation is ``w * pi_c(I) * pi_p(I) *
sigma(I, .)`` (``pi_c(I)`` is constant over iterations, so it cancels when normalizing);
"optimistic" adds ``(t - last[I]) * pi_p(h) * sigma(I, .)`` and sets ``last[I] = t`` (Lanctot et al.
2009); "lazy" pushes realization mass down p's sequence tree only when a sample reaches it: I
receives the mass its parent sequence gained since I's last visit (``t`` for the empty sequence),
split by the current sigma, so reach weights need no importance weighting; like optimistic
averaging it assumes sigma(I) did not change between visits.

Random numbers come from a splitmix64 generator whose state is one uint64 owned by the solver, so
runs are reproducible and resumable.

Kernels take four named bundles (numba compiles namedtuples of arrays into plain structs): `Tree`
(the compiled game), `State` (what a solver owns and checkpoints, plus the traversal's batch),
`Scratch` (per-traversal work arrays) and `Settings` (the sampler and its options). One driver,
`run`, iterates any sampler; `estimate` repeats traversals at a fixed profile.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

CHANCE = -1
TERMINAL = -2

AVG_NONE, AVG_STOCHASTIC, AVG_OPTIMISTIC, AVG_LAZY = 0, 1, 2, 3
BOTH = 2  # traverser value meaning "both players" (simultaneous updates)
OUTCOME, EXTERNAL, CHANCE_SAMPLING, BASELINE, PURE, AVERAGE_SAMPLING, PROBING = 0, 1, 2, 3, 4, 5, 6  # Settings.sampler

SINGLE, PAIRED, COMMON = 0, 1, 2  # Settings.chance: how chance sampling treats chance nodes

# indices into the int64 counters array
C_TRAVERSAL, C_NODES = 0, 1

Tree = namedtuple("Tree", ["player", "first_child", "num_children", "chance_prob", "infoset", "utility",
                           "abstract", "first_seq", "num_actions", "average_first", "parent_seq", "baseline_index",
                           "baseline_stride", "chance_key"])
Tree.__doc__ = """The compiled game's history arrays (see `rcfr.tree.Game`) and its information sets as the
solver stores them: ``abstract[I]`` is the abstract information set J of full set I (empty without an
abstraction: J = I, one array fewer to miss in the cache); regrets, current strategy and sampled
regrets of J live at ``first_seq[J]`` .. ``+ num_actions[J]``; I's average-strategy sums at ``average_first[I]`` (a full or an abstract slot);
``parent_seq[I]`` is the full-game sequence before I (lazy averaging, full average space only).
Baseline samplers: the baseline of the edge into history ``h`` (its parent's action) lives at
``state.baseline[row + baseline_index[h]]`` (no baseline, i.e. zero, where the index is -1), with
``row = traverser * baseline_stride`` (stride 0: one table shared by both traversers).
``chance_key[i, h]`` (common chance-sampling only, else empty) is -1 where chance node h belongs to updating
player i, else the id of h's event for i (`rcfr.sampling.chance.common_keys`)."""

State = namedtuple("State", ["regrets", "avg", "sigma", "delta", "touched", "num_touched", "touched_stamp",
                             "last", "counters", "rng", "baseline", "baseline_visits"])
State.__doc__ = """Cumulative regrets, average-strategy sums, the current strategy of visited sets, the
traversal's sampled regrets (``delta``) and the information sets it wrote (``touched[:num_touched[0]]``),
averaging bookkeeping (``last``), counters, RNG state, and the baselines of the baseline samplers (per
history for VR-MCCFR, per information set and action for MCCFRb) with their update counts (direct average)."""

# one record per move of a sampled trajectory: the history, the index taken, both players' reaches,
# chance reach and sample probability q before the move, and the move's sampling probability
PATH_DTYPE = np.dtype([("node", np.int64), ("action", np.int64), ("reach0", np.float64), ("reach1", np.float64),
                       ("chance", np.float64), ("q", np.float64), ("xi", np.float64)])

Scratch = namedtuple("Scratch", ["path", "stack", "value", "reach", "chosen", "cached", "scale", "common_u",
                                 "common_stamp"])
Scratch.__doc__ = """Work arrays of one traversal: a trajectory (records of `PATH_DTYPE`); for tree walks, an
explicit depth-first stack of (history, depth, child index) rows, and per-*slot* values, reaches
(``reach[p, depth, index]``), sampled child index per depth, and average strategy sampling's importance
weight 1 / q_i(h) of the traverser's own sampling above h (paired and common chance-sampling: the chance
weight pi_c(h) / q(h)). A depth-first walk has at most one unfinished
history per depth, so a history's slot is (its depth, its index among its siblings): the work arrays
are depth x widest branching, small enough to stay in the CPU cache at any game size (indexing them by
history id made every visit a cache miss on large games). Also external sampling's sampled action per
information set, ``cached[I] = (traversal number, action)`` (valid where the number is the current
traversal's; one row, so one cache line, per set), and common chance-sampling's random number per event
(valid where ``common_stamp`` equals the traversal number)."""


Settings = namedtuple("Settings", ["sampler", "alternating", "epsilon", "decay", "tau", "beta", "power", "averaging",
                                   "clip", "direct_average", "chance"])
Settings.__doc__ = """Which traversal (`OUTCOME`, `EXTERNAL`, `CHANCE_SAMPLING`, `BASELINE`, `PURE`,
`AVERAGE_SAMPLING`, `PROBING`), alternating or simultaneous updates, exploration epsilon (outcome sampling; the
floor of average strategy sampling), baseline decay, average strategy sampling's tau and beta,
averaging weight power and mode, RM+ clipping, whether baselines are direct averages of their
estimates (else exponentially decaying averages with weight ``decay`` on the newest; decay 0 keeps them),
and how chance sampling treats chance nodes (`SINGLE`, `PAIRED`, `COMMON`)."""


# ---- random numbers ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def uniform01(rng):
    z = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def _pick(probs, start, n, rng):
    """Index in [0, n) drawn from probs[start:start+n] (which sum to one)."""
    return _pick_at(probs, start, n, uniform01(rng))


@njit(cache=True, inline="always")
def _pick_at(probs, start, n, x):
    """The index whose cumulative-probability interval holds x in [0, 1) (inverse CDF)."""
    for k in range(n - 1):
        x -= probs[start + k]
        if x < 0.0:
            return k
    return n - 1


@njit(cache=True, inline="always")
def _pick_mixed(sigma, start, n, eps, rng):
    """Index drawn from eps * uniform + (1 - eps) * sigma[start:start+n]."""
    x = uniform01(rng)
    for k in range(n - 1):
        x -= eps / n + (1.0 - eps) * sigma[start + k]
        if x < 0.0:
            return k
    return n - 1


@njit(cache=True, inline="always")
def _merged(abstract, I):
    """The abstract information set J of full set I: ``abstract[I]``, or I itself where the map is empty."""
    return abstract[I] if abstract.shape[0] > 0 else I


# ---- strategies and regret application ---------------------------------------------------------
@njit(cache=True, inline="always")
def _strategy(regrets, sigma, first, n, from_regrets):
    """Write the current strategy of an information set (regret matching) into sigma[first:first+n]."""
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


@njit(cache=True, inline="always")
def _touch(J, touched, num_touched, touched_stamp, counters):
    """List (abstract) information set J in the traversal's batch (once per traversal)."""
    stamp = counters[C_TRAVERSAL]
    if touched_stamp[J] != stamp:
        touched_stamp[J] = stamp
        touched[num_touched[0]] = J
        num_touched[0] += 1


@njit(cache=True, inline="always")
def apply_regrets(tree, state, clip):
    """Add the sampled regrets of the touched (abstract) information sets to the table (clipping at zero for
    regret-matching+), clear them from ``delta`` and empty the touched list."""
    regrets, delta, touched, num_touched = state.regrets, state.delta, state.touched, state.num_touched
    first_seq, num_actions = tree.first_seq, tree.num_actions
    for k in range(num_touched[0]):
        J = touched[k]
        for s in range(first_seq[J], first_seq[J] + num_actions[J]):
            r = regrets[s] + delta[s]
            regrets[s] = r if (r > 0.0 or not clip) else 0.0
            delta[s] = 0.0
    num_touched[0] = 0


@njit(cache=True, inline="always")
def collect_regrets(tree, state, sums, squares, visits):
    """Add the sampled regrets of one traversal to running sums (for estimates and tests), count the
    traversals that wrote each sequence (a visit may write a zero regret), then clear."""
    delta, touched, num_touched = state.delta, state.touched, state.num_touched
    first_seq, num_actions = tree.first_seq, tree.num_actions
    for k in range(num_touched[0]):
        J = touched[k]
        for s in range(first_seq[J], first_seq[J] + num_actions[J]):
            sums[s] += delta[s]
            visits[s] += 1
            squares[s] += delta[s] * delta[s]
            delta[s] = 0.0
    num_touched[0] = 0


@njit(cache=True, inline="always")
def _accumulate(avg, target, sigma, first, n, amount):
    for a in range(n):
        avg[target + a] += amount * sigma[first + a]


@njit(cache=True, inline="always")
def _average(avg, sigma, last, parent_seq, average_first, I, f, n, t, averaging, stochastic, own):
    """Credit the accumulating player's average strategy at a visit of its (full) information set I,
    whose current strategy is sigma[f:f+n]."""
    target = average_first[I]
    if averaging == AVG_STOCHASTIC:
        _accumulate(avg, target, sigma, f, n, stochastic)
    elif averaging == AVG_OPTIMISTIC:
        _accumulate(avg, target, sigma, f, n, (t - last[I]) * own)
        last[I] = t
    elif averaging == AVG_LAZY:
        parent = parent_seq[I]
        mass = np.float64(t) if parent < 0 else avg[parent]
        _accumulate(avg, target, sigma, f, n, mass - last[I])
        last[I] = mass


@njit(cache=True, inline="always")
def _sample_trajectory(tree, state, path, traverser, eps, t, weight, averaging, from_regrets):
    """Forward pass of outcome sampling: sample one terminal history, epsilon-exploring at the
    traverser's nodes (all nodes when ``traverser == BOTH``), accumulating the other players'
    averages on the way. Fills one `path` record per move and returns (terminal history, number of
    moves, its sampling probability q(z))."""
    player, first_child, num_children, chance_prob, infoset, first_seq, parent_seq = (
        tree.player, tree.first_child, tree.num_children, tree.chance_prob, tree.infoset, tree.first_seq,
        tree.parent_seq)
    abstract, average_first = tree.abstract, tree.average_first
    regrets, avg, sigma, last = state.regrets, state.avg, state.sigma, state.last
    counters, rng = state.counters, state.rng
    counters[C_TRAVERSAL] += 1
    h = 0
    r0, r1, rc, q = 1.0, 1.0, 1.0, 1.0
    depth = 0
    while player[h] != TERMINAL:
        p = player[h]
        move = path[depth]
        move.node = h
        move.reach0 = r0
        move.reach1 = r1
        move.chance = rc
        move.q = q
        n = num_children[h]
        if p == CHANCE:
            k = _pick(chance_prob, first_child[h], n, rng)
            xi = chance_prob[first_child[h] + k]
            rc *= xi
        else:
            I = infoset[h]
            f = first_seq[_merged(abstract, I)]
            _strategy(regrets, sigma, f, n, from_regrets)
            if traverser == BOTH or p == traverser:
                k = _pick_mixed(sigma, f, n, eps, rng)
                xi = eps / n + (1.0 - eps) * sigma[f + k]
            else:
                k = _pick(sigma, f, n, rng)
                xi = sigma[f + k]
            if averaging != AVG_NONE and (traverser == BOTH or p != traverser):
                own = r0 if p == 0 else r1
                stochastic = weight * own * rc / q
                _average(avg, sigma, last, parent_seq, average_first, I, f, n, t, averaging, stochastic, own)
            if p == 0:
                r0 *= sigma[f + k]
            else:
                r1 *= sigma[f + k]
        q *= xi
        move.action = k
        move.xi = xi
        h = first_child[h] + k
        depth += 1
    counters[C_NODES] += depth + 1
    return h, depth, q


# ---- outcome sampling -------------------------------------------------------------------------
@njit(cache=True, inline="always")
def outcome_traversal(tree, state, path, traverser, eps, t, weight, averaging, from_regrets):
    """One sampled trajectory. ``traverser`` is 0 or 1 (alternating form: exploration at the
    traverser's nodes, averages for the other player) or BOTH (simultaneous form: exploration at every
    decision node, both players' regrets and averages from the same trajectory)."""
    h, depth, q = _sample_trajectory(tree, state, path, traverser, eps, t, weight, averaging, from_regrets)
    player, first_child, num_children, chance_prob, infoset, first_seq = (
        tree.player, tree.first_child, tree.num_children, tree.chance_prob, tree.infoset, tree.first_seq)
    abstract = tree.abstract
    sigma, delta, touched, num_touched, touched_stamp, counters = (
        state.sigma, state.delta, state.touched, state.num_touched, state.touched_stamp, state.counters)
    u0 = tree.utility[h]
    # backward: tail = pi(h a* -> z), both players and chance
    tail = 1.0
    for d in range(depth - 1, -1, -1):
        move = path[d]
        node = move.node
        p = player[node]
        k = move.action
        if p == CHANCE:
            tail *= chance_prob[first_child[node] + k]
            continue
        I = infoset[node]
        f = first_seq[_merged(abstract, I)]
        n = num_children[node]
        sk = sigma[f + k]
        if traverser == BOTH or p == traverser:
            opp = move.reach1 if p == 0 else move.reach0
            u = u0 if p == 0 else -u0
            w = u * opp * move.chance / q
            _touch(_merged(abstract, I), touched, num_touched, touched_stamp, counters)
            for a in range(n):
                if a == k:
                    delta[f + a] += w * tail * (1.0 - sk)
                else:
                    delta[f + a] -= w * tail * sk
        tail *= sk


@njit(cache=True, inline="always")
def _baseline(baseline, row, j):
    """The baseline at slot j of a traverser's row (zero where an edge has none, j = -1)."""
    return baseline[row + j] if j >= 0 else 0.0


# ---- baseline-corrected outcome sampling (VR-MCCFR, Schmid et al. 2019; MCCFRb, Kuchar 2020) ------
@njit(cache=True, inline="always")
def baseline_traversal(tree, state, path, traverser, eps, decay, direct_average, t, weight, averaging,
                       from_regrets):
    """Outcome sampling with action baselines b(h, a) (player 0's values) at
    ``state.baseline[row + tree.baseline_index[child]]``: keyed by the child history (VR-MCCFR) or by
    the information set and action (MCCFRb), one table per traverser or shared (see `Tree`).

    Backwards along the sampled path, each history gets the control-variate estimate
    ``u(h, a) = b(h, a) + [a sampled] (u(h a) - b(h, a)) / xi(h, a)`` for every action (xi: the
    sampling probability) and ``u(h) = sum_a sigma(h, a) u(h, a)`` (chance likewise with its
    probabilities). For any baseline that does not depend on the current sample,
    ``E[u(h, a)] = v(h, a)``; the traverser's regret is ``pi_-i(h) / q(h) * (u(h, a) - u(h))``.
    Afterwards the sampled action's baseline moves towards its estimate u(h a):
    ``b <- b + (u(h a) - b) / n`` with n its number of updates (direct average), or
    ``b <- (1 - decay) b + decay * u(h a)`` (decay 0 keeps the baseline fixed). A path meets each
    history and, with perfect recall, each information set once, so no baseline is used after it
    was updated in the same traversal."""
    h, depth, q = _sample_trajectory(tree, state, path, traverser, eps, t, weight, averaging, from_regrets)
    player, first_child, num_children, chance_prob, infoset, first_seq = (
        tree.player, tree.first_child, tree.num_children, tree.chance_prob, tree.infoset, tree.first_seq)
    abstract, index = tree.abstract, tree.baseline_index
    sigma, delta, baseline, visits, touched, num_touched, touched_stamp, counters = (
        state.sigma, state.delta, state.baseline, state.baseline_visits, state.touched, state.num_touched,
        state.touched_stamp, state.counters)
    row = 0 if traverser == BOTH else traverser * tree.baseline_stride
    below = tree.utility[h]  # estimate of the value of the child history on the path
    for d in range(depth - 1, -1, -1):
        move = path[d]
        node = move.node
        p = player[node]
        k = move.action
        c = first_child[node]
        n = num_children[node]
        jk = index[c + k]
        corrected = _baseline(baseline, row, jk)
        corrected += (below - corrected) / move.xi
        f = first_seq[_merged(abstract, infoset[node])] if p != CHANCE else -1
        value = 0.0
        for a in range(n):
            u = corrected if a == k else _baseline(baseline, row, index[c + a])
            value += (chance_prob[c + a] if p == CHANCE else sigma[f + a]) * u
        if p != CHANCE and (traverser == BOTH or p == traverser):
            opp = move.reach1 if p == 0 else move.reach0
            w = (1.0 if p == 0 else -1.0) * opp * move.chance / move.q
            _touch(_merged(abstract, infoset[node]), touched, num_touched, touched_stamp, counters)
            for a in range(n):
                u = corrected if a == k else _baseline(baseline, row, index[c + a])
                delta[f + a] += w * (u - value)
        if jk >= 0:
            if direct_average:
                visits[row + jk] += 1
                baseline[row + jk] += (below - baseline[row + jk]) / visits[row + jk]
            else:
                baseline[row + jk] += decay * (below - baseline[row + jk])
        below = value


# ---- external sampling ------------------------------------------------------------------------
@njit(cache=True, inline="always")
def external_traversal(tree, state, scratch, traverser, t, weight, averaging, from_regrets, sampler, eps, tau, beta):
    """External sampling and two relatives, by `sampler`. One sampled action per opponent information
    set (kept for the whole traversal) and per chance node; at the traverser's sets:

    * `EXTERNAL`: every action; ``v(h) = sum_a sigma(a) v(h a)``, regret ``v(h a) - v(h)``;
    * `PURE` (pure CFR, Lanctot 2013 §8.1): every action, but the traverser also plays a sampled pure
      strategy (one action per information set): ``v(h) = v(h a*)`` with ``a* ~ sigma(I)``, regret
      ``v(h a) - v(h a*)``; unbiased because a trajectory meets each information set once;
    * `AVERAGE_SAMPLING` (Gibson et al. 2012; thesis §4.8.4): action a independently with probability
      ``rho = max(eps, (beta + tau s[a]) / (beta + sum_b s[b]))`` (1 if that exceeds 1 or the
      denominator is 0; s: the traverser's average-strategy sums at I); sampled children count
      ``v(h a) / rho``, unsampled ones 0, and the regret is weighted by ``scale[h] = 1 / q_i(h)``, the
      inverse probability of the traverser's own sampling above h;
    * `PROBING` (Gibson et al. 2012; thesis §4.8.3): actions sampled as in `AVERAGE_SAMPLING`, but an
      unsampled action gets the value of a *probe* (one trajectory to a terminal with every player and
      chance on-policy) instead of 0; every action then has an unbiased value estimate, so
      ``v(h) = sum_a sigma(a) v(h a)`` needs no importance weights, and regrets are weighted by
      ``scale[h] = 1 / q_i(h)`` as in average strategy sampling.

    Values are the traverser's."""
    player, first_child, num_children, infoset, first_seq = (tree.player, tree.first_child, tree.num_children,
                                                             tree.infoset, tree.first_seq)
    abstract, average_first = tree.abstract, tree.average_first
    chance_prob, utility, parent_seq = tree.chance_prob, tree.utility, tree.parent_seq
    regrets, avg, sigma, delta, last, rng = state.regrets, state.avg, state.sigma, state.delta, state.last, state.rng
    touched, num_touched, touched_stamp = state.touched, state.num_touched, state.touched_stamp
    counters = state.counters
    stack, value, chosen, cached, scale = scratch.stack, scratch.value, scratch.chosen, scratch.cached, scratch.scale
    reach = scratch.reach[1 - traverser]  # the opponent's reach (the player whose average accumulates)
    counters[C_TRAVERSAL] += 1
    stamp = counters[C_TRAVERSAL]
    sign = 1.0 if traverser == 0 else -1.0
    top = 0
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, 0
    reach[0, 0] = 1.0
    subsample = sampler == AVERAGE_SAMPLING or sampler == PROBING
    if subsample:
        scale[0, 0] = 1.0
    nodes = 0
    while top >= 0:
        code, d, i = stack[top, 0], stack[top, 1], stack[top, 2]  # history h at slot (depth d, child index i)
        top -= 1
        e = d + 1  # the children's depth
        if code >= 0:  # first visit
            h = code
            nodes += 1
            p = player[h]
            if p == TERMINAL:
                value[d, i] = sign * utility[h]
                continue
            n = num_children[h]
            c = first_child[h]
            if p == traverser:
                I = infoset[h]
                f = first_seq[_merged(abstract, I)]
                _strategy(regrets, sigma, f, n, from_regrets)
                top += 1
                stack[top, 0], stack[top, 1], stack[top, 2] = -h - 1, d, i
                if sampler == PURE:
                    if cached[I, 0] != stamp:
                        cached[I, 0] = stamp
                        cached[I, 1] = _pick(sigma, f, n, rng)
                    chosen[d] = cached[I, 1]
                total = 0.0
                if subsample:
                    g = average_first[I]
                    for a in range(n):
                        total += avg[g + a]
                for a in range(n):
                    if subsample:
                        rho = 1.0
                        if beta + total > 0.0:
                            rho = max(eps, (beta + tau * avg[g + a]) / (beta + total))
                        if rho < 1.0 and uniform01(rng) >= rho:
                            scale[e, a] = 0.0  # not sampled
                            if sampler == PROBING:  # one on-policy trajectory estimates v(h a)
                                z = c + a
                                while player[z] != TERMINAL:
                                    nodes += 1
                                    m, cz = num_children[z], first_child[z]
                                    if player[z] == CHANCE:
                                        z = cz + _pick(chance_prob, cz, m, rng)
                                    else:
                                        fz = first_seq[_merged(abstract, infoset[z])]
                                        _strategy(regrets, sigma, fz, m, from_regrets)
                                        z = cz + _pick(sigma, fz, m, rng)
                                nodes += 1
                                value[e, a] = sign * utility[z]
                            continue
                        scale[e, a] = scale[d, i] / min(rho, 1.0)
                    top += 1
                    stack[top, 0], stack[top, 1], stack[top, 2] = c + a, e, a
                    reach[e, a] = reach[d, i]
                continue
            if p == CHANCE:
                k = _pick(chance_prob, c, n, rng)
                reach[e, k] = reach[d, i]
                if subsample:
                    scale[e, k] = scale[d, i]
            else:
                I = infoset[h]
                f = first_seq[_merged(abstract, I)]
                if cached[I, 0] != stamp:
                    _strategy(regrets, sigma, f, n, from_regrets)
                    cached[I, 0] = stamp
                    cached[I, 1] = _pick(sigma, f, n, rng)
                k = cached[I, 1]
                _average(avg, sigma, last, parent_seq, average_first, I, f, n, t, averaging, weight, reach[d, i])
                reach[e, k] = reach[d, i] * sigma[f + k]
                if subsample:
                    scale[e, k] = scale[d, i]
            top += 1
            stack[top, 0], stack[top, 1], stack[top, 2] = -h - 1, d, i
            top += 1
            stack[top, 0], stack[top, 1], stack[top, 2] = c + k, e, k
            chosen[d] = k
        else:  # second visit: children are done
            h = -code - 1
            if player[h] != traverser:
                value[d, i] = value[e, chosen[d]]
                continue
            n = num_children[h]
            I = infoset[h]
            f = first_seq[_merged(abstract, I)]
            _touch(_merged(abstract, I), touched, num_touched, touched_stamp, counters)
            if sampler == EXTERNAL:
                v = 0.0
                for a in range(n):
                    v += sigma[f + a] * value[e, a]
                for a in range(n):
                    delta[f + a] += value[e, a] - v
            elif sampler == PURE:
                v = value[e, chosen[d]]
                for a in range(n):
                    delta[f + a] += value[e, a] - v
            elif sampler == PROBING:  # sampled or probed, every child has an unbiased value
                v = 0.0
                for a in range(n):
                    v += sigma[f + a] * value[e, a]
                for a in range(n):
                    delta[f + a] += scale[d, i] * (value[e, a] - v)
            else:  # values of sampled children, importance weighted; regrets weighted by 1 / q_i(h)
                v = 0.0
                for a in range(n):
                    if scale[e, a] > 0.0:
                        value[e, a] *= scale[e, a] / scale[d, i]
                    else:
                        value[e, a] = 0.0
                    v += sigma[f + a] * value[e, a]
                for a in range(n):
                    delta[f + a] += scale[d, i] * (value[e, a] - v)
            value[d, i] = v
    counters[C_NODES] += nodes


# ---- chance sampling --------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _chance_weight(chance_prob, c, n, k, a, mode):
    """pi_c / q of outcome a of a chance node whose draw was k (-1: every outcome walked), 0 if a is not
    walked. `PAIRED` walks k and its antithetic partner n - 1 - k, so a pair is walked with probability
    p_k + p_partner and each member weighs p_a / (that sum); a walked-all node weighs p_a; one sampled
    outcome weighs 1."""
    if k < 0:
        return chance_prob[c + a]
    if mode == PAIRED:
        m = n - 1 - k
        if a != k and a != m:
            return 0.0
        mass = chance_prob[c + k] + (chance_prob[c + m] if m != k else 0.0)
        return chance_prob[c + a] / mass
    return 1.0 if a == k else 0.0


@njit(cache=True, inline="always")
def chance_traversal(tree, state, scratch, traverser, t, weight, averaging, from_regrets, mode):
    """Full width over both players' actions; at chance nodes, by `mode`:

    * `SINGLE`: one sampled outcome (chance-sampled CFR);
    * `PAIRED` (paired chance-sampling, Lanctot 2013 §7.5): a sampled outcome k and its antithetic partner
      n - 1 - k (outcomes are listed from one extreme to the other: a die's 1 with its 6, 2 with 5, 3 with 4);
    * `COMMON` (common chance-sampling, §7.5): every outcome of the chance nodes that belong to the
      updating player (``chance_key < 0``), one sampled outcome elsewhere, drawn by inverse CDF from one
      random number per event key and traversal (common random numbers).

    Values below a chance node are weighted by `_chance_weight` (``scale[h]`` = pi_c(h) / q(h), the product
    above h), so each is unbiased; a walked history's regrets and average credit carry ``scale[h]``
    (1 for `SINGLE`). ``traverser`` 0 or 1 updates that player's regrets and the other's average; BOTH
    updates both (simultaneous; not with `COMMON`)."""
    player, first_child, num_children, infoset, first_seq = (tree.player, tree.first_child, tree.num_children,
                                                             tree.infoset, tree.first_seq)
    abstract, average_first = tree.abstract, tree.average_first
    chance_prob, utility, parent_seq, chance_key = tree.chance_prob, tree.utility, tree.parent_seq, tree.chance_key
    regrets, avg, sigma, delta, last, rng = state.regrets, state.avg, state.sigma, state.delta, state.last, state.rng
    touched, num_touched, touched_stamp = state.touched, state.num_touched, state.touched_stamp
    counters = state.counters
    stack, value, chosen, scale = scratch.stack, scratch.value, scratch.chosen, scratch.scale
    common_u, common_stamp = scratch.common_u, scratch.common_stamp
    reach0, reach1 = scratch.reach[0], scratch.reach[1]
    counters[C_TRAVERSAL] += 1
    stamp = counters[C_TRAVERSAL]
    weighted = mode != SINGLE
    top = 0
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, 0
    reach0[0, 0] = 1.0
    reach1[0, 0] = 1.0
    if weighted:
        scale[0, 0] = 1.0
    nodes = 0
    while top >= 0:
        code, d, i = stack[top, 0], stack[top, 1], stack[top, 2]  # history h at slot (depth d, child index i)
        top -= 1
        e = d + 1  # the children's depth
        if code >= 0:
            h = code
            nodes += 1
            p = player[h]
            if p == TERMINAL:
                value[d, i] = utility[h]
                continue
            n = num_children[h]
            c = first_child[h]
            top += 1
            stack[top, 0], stack[top, 1], stack[top, 2] = -h - 1, d, i
            if p == CHANCE:
                if mode == COMMON and chance_key[traverser, h] < 0:
                    k = -1
                elif mode == COMMON:
                    key = chance_key[traverser, h]
                    if common_stamp[key] != stamp:
                        common_stamp[key] = stamp
                        common_u[key] = uniform01(rng)
                    k = _pick_at(chance_prob, c, n, common_u[key])
                else:
                    k = _pick(chance_prob, c, n, rng)
                chosen[d] = k
                if not weighted:
                    reach0[e, k] = reach0[d, i]
                    reach1[e, k] = reach1[d, i]
                    top += 1
                    stack[top, 0], stack[top, 1], stack[top, 2] = c + k, e, k
                    continue
                for a in range(n):
                    w = _chance_weight(chance_prob, c, n, k, a, mode)
                    if w > 0.0:
                        reach0[e, a] = reach0[d, i]
                        reach1[e, a] = reach1[d, i]
                        scale[e, a] = scale[d, i] * w
                        top += 1
                        stack[top, 0], stack[top, 1], stack[top, 2] = c + a, e, a
                continue
            I = infoset[h]
            f = first_seq[_merged(abstract, I)]
            _strategy(regrets, sigma, f, n, from_regrets)
            own = reach0[d, i] if p == 0 else reach1[d, i]
            cw = scale[d, i] if weighted else 1.0
            if averaging != AVG_NONE and (traverser == BOTH or p != traverser) and own > 0.0:
                _average(avg, sigma, last, parent_seq, average_first, I, f, n, t, averaging, weight * own * cw, own)
            for a in range(n):
                r0 = reach0[d, i] * sigma[f + a] if p == 0 else reach0[d, i]
                r1 = reach1[d, i] * sigma[f + a] if p == 1 else reach1[d, i]
                reach0[e, a] = r0
                reach1[e, a] = r1
                if weighted:
                    scale[e, a] = cw
                if r0 > 0.0 or r1 > 0.0:
                    top += 1
                    stack[top, 0], stack[top, 1], stack[top, 2] = c + a, e, a
                else:
                    value[e, a] = 0.0  # unreachable for both: contributes nothing
        else:
            h = -code - 1
            p = player[h]
            n = num_children[h]
            if p == CHANCE:
                if not weighted:
                    value[d, i] = value[e, chosen[d]]
                    continue
                c = first_child[h]
                v = 0.0
                for a in range(n):
                    w = _chance_weight(chance_prob, c, n, chosen[d], a, mode)
                    if w > 0.0:
                        v += w * value[e, a]
                value[d, i] = v
                continue
            I = infoset[h]
            f = first_seq[_merged(abstract, I)]
            v = 0.0
            for a in range(n):
                v += sigma[f + a] * value[e, a]
            value[d, i] = v
            if traverser == BOTH or p == traverser:
                opp = reach1[d, i] if p == 0 else reach0[d, i]
                sign = 1.0 if p == 0 else -1.0
                if weighted:
                    sign *= scale[d, i]
                _touch(_merged(abstract, I), touched, num_touched, touched_stamp, counters)
                for a in range(n):
                    delta[f + a] += sign * opp * (value[e, a] - v)
    counters[C_NODES] += nodes


# ---- one driver for every sampler ---------------------------------------------------------------
@njit(cache=True, inline="always")
def traverse(tree, state, scratch, settings, traverser, t, weight, from_regrets):
    """One traversal of ``settings.sampler`` for `traverser` (0, 1 or BOTH)."""
    sampler, averaging = settings.sampler, settings.averaging
    if sampler == OUTCOME:
        outcome_traversal(tree, state, scratch.path, traverser, settings.epsilon, t, weight, averaging,
                          from_regrets)
    elif sampler == BASELINE:
        baseline_traversal(tree, state, scratch.path, traverser, settings.epsilon, settings.decay,
                           settings.direct_average, t, weight, averaging, from_regrets)
    elif sampler == EXTERNAL or sampler == PURE or sampler == AVERAGE_SAMPLING or sampler == PROBING:
        external_traversal(tree, state, scratch, traverser, t, weight, averaging, from_regrets, sampler,
                           settings.epsilon, settings.tau, settings.beta)
    else:
        chance_traversal(tree, state, scratch, traverser, t, weight, averaging, from_regrets, settings.chance)


@njit(cache=True)
def run(tree, state, scratch, settings, t0, iterations):
    """Iterations t0+1 .. t0+iterations: one traversal per player, each followed by its regret update
    (alternating), or one traversal updating both (simultaneous)."""
    for it in range(iterations):
        t = t0 + it + 1
        w = np.float64(t) ** settings.power
        if settings.alternating:
            for i in range(2):
                traverse(tree, state, scratch, settings, i, t, w, True)
                apply_regrets(tree, state, settings.clip)
        else:
            traverse(tree, state, scratch, settings, BOTH, t, w, True)
            apply_regrets(tree, state, settings.clip)


@njit(cache=True)
def estimate(tree, state, scratch, settings, traverser, samples, sums, squares, visits):
    """`samples` traversals at the fixed strategy ``state.sigma`` (traversal k counts as iteration k),
    their sampled regrets summed into `sums`, `squares` and `visits`."""
    for it in range(samples):
        traverse(tree, state, scratch, settings, traverser, it + 1, 1.0, False)
        collect_regrets(tree, state, sums, squares, visits)
