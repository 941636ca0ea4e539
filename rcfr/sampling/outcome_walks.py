"""Outcome walks: one sampled trajectory per traversal (outcome sampling; VR-MCCFR and MCCFRb's baselines).

Estimators (the unbiasedness lemma, Lanctot et al. 2009, Lemma 1: for every sampler
``E[delta[I, a]] = v(I, a) - v(I)`` with the exact counterfactual values, chance included). One terminal z
is drawn with probability q(z); where traverser i acts at h in I and the path takes a*, with
``W = u_i(z) * pi_-i(h) / q(z)`` and ``tail = pi(h a* -> z)`` (both players and chance):
``delta[I, a*] = W * tail * (1 - sigma(a*))`` and ``delta[I, a] = -W * tail * sigma(a*)`` otherwise.
With baselines the trajectory's values are corrected by control variates (`baseline_outcome_walk`).

Both walks share the forward pass `_sample_trajectory` and read states through `rcfr.sampling.states`.
"""

from __future__ import annotations

from numba import njit

from .bundles import AVG_NONE, BOTH, C_NODES, C_TRAVERSAL, CHANCE, DA, TERMINAL
from .decisions import chance_outcome, trajectory_action
from .states import ROOT, child, edge_slot, infoset, mover, num_moves, outcome_probs, payoff, regret_set
from .strategies import credit_average, current_strategy, strategy_at, touch


@njit(cache=True, inline="always")
def _sample_trajectory(tree, state, path, traverser, eps, t, weight, average_mode, from_regrets):
    """Forward pass: sample one terminal history, epsilon-exploring at the traverser's decisions (all
    decisions when ``traverser == BOTH``), crediting the other players' averages on the way. Fills one `path`
    record per move and returns (terminal history, number of moves, its sampling probability q(z))."""
    first_seq, parent_seq, average_first = tree.first_seq, tree.parent_seq, tree.average_first
    regrets, avg, sigma, last, model = state.regrets, state.avg, state.sigma, state.last, state.model
    counters, rng = state.counters, state.rng
    counters[C_TRAVERSAL] += 1
    h = ROOT
    r0, r1, rc, q = 1.0, 1.0, 1.0, 1.0
    depth = 0
    while mover(tree, h) != TERMINAL:
        p = mover(tree, h)
        move = path[depth]
        move.node = h
        move.reach0 = r0
        move.reach1 = r1
        move.chance = rc
        move.q = q
        n = num_moves(tree, h)
        if p == CHANCE:
            probs, start = outcome_probs(tree, h)
            k = chance_outcome(probs, start, n, rng)
            xi = probs[start + k]
            rc *= xi
        else:
            I = infoset(tree, h)
            f = first_seq[regret_set(tree, I)]
            sh, g = current_strategy(model, tree, regrets, sigma, h, f, n, depth, p, from_regrets)
            k, xi = trajectory_action(sh, g, n, traverser == BOTH or p == traverser, eps, rng)
            if average_mode != AVG_NONE and (traverser == BOTH or p != traverser):
                own = r0 if p == 0 else r1
                stochastic = weight * own * rc / q
                credit_average(avg, sh, last, parent_seq, average_first, I, g, n, t, average_mode, stochastic,
                               own)
            if p == 0:
                r0 *= sh[g + k]
            else:
                r1 *= sh[g + k]
        q *= xi
        move.action = k
        move.xi = xi
        depth += 1
        h = child(tree, h, k, depth)
    counters[C_NODES] += depth + 1
    return h, depth, q


@njit(cache=True, inline="always")
def outcome_walk(tree, state, path, traverser, eps, t, weight, average_mode, from_regrets):
    """One sampled trajectory. ``traverser`` is 0 or 1 (alternating form: exploration at the traverser's
    decisions, averages for the other player) or BOTH (simultaneous form: exploration at every decision,
    both players' regrets and averages from the same trajectory)."""
    h, depth, q = _sample_trajectory(tree, state, path, traverser, eps, t, weight, average_mode, from_regrets)
    first_seq = tree.first_seq
    sigma, delta, touched, num_touched, touched_stamp, counters, model = (
        state.sigma, state.delta, state.touched, state.num_touched, state.touched_stamp, state.counters, state.model)
    u0 = payoff(tree, h)
    # backward: tail = pi(h a* -> z), both players and chance
    tail = 1.0
    for d in range(depth - 1, -1, -1):
        move = path[d]
        node = move.node
        p = mover(tree, node)
        k = move.action
        if p == CHANCE:
            probs, start = outcome_probs(tree, node)
            tail *= probs[start + k]
            continue
        J = regret_set(tree, infoset(tree, node))
        f = first_seq[J]
        n = num_moves(tree, node)
        sd, g = strategy_at(model, sigma, f, d)
        sk = sd[g + k]
        if traverser == BOTH or p == traverser:
            opp = move.reach1 if p == 0 else move.reach0
            u = u0 if p == 0 else -u0
            w = u * opp * move.chance / q
            touch(J, touched, num_touched, touched_stamp, counters)
            for a in range(n):
                if a == k:
                    delta[f + a] += w * tail * (1.0 - sk)
                else:
                    delta[f + a] -= w * tail * sk
        tail *= sk


@njit(cache=True, inline="always")
def _baseline_at(baseline, row, j):
    """The baseline at slot j of a traverser's row (zero where an edge has none, j = -1)."""
    return baseline[row + j] if j >= 0 else 0.0


@njit(cache=True, inline="always")
def baseline_outcome_walk(tree, state, path, traverser, eps, baseline_decay, baseline_update, t, weight,
                          average_mode, from_regrets):
    """Outcome sampling with action baselines b(h, a) (player 0's values; VR-MCCFR, Schmid et al. 2019;
    MCCFRb, Kuchar 2020) at ``state.baseline[row + edge_slot(...)]``: keyed by the child history (VR-MCCFR)
    or by the information set and action (MCCFRb), one table per traverser or shared (see `Tree`).

    Backwards along the sampled path, each history gets the control-variate estimate
    ``u(h, a) = b(h, a) + [a sampled] (u(h a) - b(h, a)) / xi(h, a)`` for every action (xi: the sampling
    probability) and ``u(h) = sum_a sigma(h, a) u(h, a)`` (chance likewise with its probabilities). For any
    baseline that does not depend on the current sample, ``E[u(h, a)] = v(h, a)``; the traverser's regret is
    ``pi_-i(h) / q(h) * (u(h, a) - u(h))``. Afterwards the sampled action's baseline moves towards its
    estimate u(h a): ``b <- b + (u(h a) - b) / n`` with n its number of updates (`DA`, direct average), or
    ``b <- (1 - decay) b + decay * u(h a)`` (`EDA`; decay 0 keeps the baseline fixed). A path meets each
    history and, with perfect recall, each information set once, so no baseline is used after it was
    updated in the same traversal."""
    h, depth, q = _sample_trajectory(tree, state, path, traverser, eps, t, weight, average_mode, from_regrets)
    first_seq = tree.first_seq
    sigma, delta, baseline, visits, touched, num_touched, touched_stamp, counters, model = (
        state.sigma, state.delta, state.baseline, state.baseline_visits, state.touched, state.num_touched,
        state.touched_stamp, state.counters, state.model)
    row = 0 if traverser == BOTH else traverser * tree.baseline_stride
    below = payoff(tree, h)  # estimate of the value of the child history on the path
    for d in range(depth - 1, -1, -1):
        move = path[d]
        node = move.node
        p = mover(tree, node)
        k = move.action
        n = num_moves(tree, node)
        if p == CHANCE:
            probs, f = outcome_probs(tree, node)
            J = -1
        else:
            J = regret_set(tree, infoset(tree, node))
            probs, f = strategy_at(model, sigma, first_seq[J], d)
        jk = edge_slot(tree, node, k, d + 1, J)
        corrected = _baseline_at(baseline, row, jk)
        corrected += (below - corrected) / move.xi
        value = 0.0
        for a in range(n):
            u = corrected if a == k else _baseline_at(baseline, row, edge_slot(tree, node, a, d + 1, J))
            value += probs[f + a] * u
        if p != CHANCE and (traverser == BOTH or p == traverser):
            opp = move.reach1 if p == 0 else move.reach0
            w = (1.0 if p == 0 else -1.0) * opp * move.chance / move.q
            touch(J, touched, num_touched, touched_stamp, counters)
            for a in range(n):
                u = corrected if a == k else _baseline_at(baseline, row, edge_slot(tree, node, a, d + 1, J))
                delta[first_seq[J] + a] += w * (u - value)
        if jk >= 0:
            if baseline_update == DA:
                visits[row + jk] += 1
                baseline[row + jk] += (below - baseline[row + jk]) / visits[row + jk]
            else:
                baseline[row + jk] += baseline_decay * (below - baseline[row + jk])
        below = value
