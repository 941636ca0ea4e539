"""Tree walks: external sampling and its relatives, depth first over the traverser's actions.

One walk, `tree_walk`, serves four samplers. Every one samples one action per opponent information set
(kept for the whole traversal, `decisions.set_action`) and one outcome per chance node, and differs only
at the traverser's decisions, in two places, each one small function:

* which of the traverser's actions it walks (`_walk_all` or `_walk_sampled`);
* how the children's values become the history's value and its regrets (`_traverser_update`).

The samplers:

* `EXTERNAL`: every action; ``v(h) = sum_a sigma(a) v(h a)``, regret ``v(h a) - v(h)``;
* `PURE` (pure CFR, Lanctot 2013 §8.1): every action, but the traverser also plays a sampled pure
  strategy (one action per information set): ``v(h) = v(h a*)`` with ``a* ~ sigma(I)``, regret
  ``v(h a) - v(h a*)``; unbiased because a trajectory meets each information set once;
* `AVERAGE_STRATEGY` (Gibson et al. 2012; thesis §4.8.4): action a kept independently with probability
  rho (`decisions.keeps_action`); kept children count ``v(h a) / rho``, the others 0, and the regret is
  weighted by ``scale[h] = 1 / q_i(h)``, the inverse probability of the traverser's own sampling above h;
* `PROBING` (Gibson et al. 2012; thesis §4.8.3): actions kept as in `AVERAGE_STRATEGY`, but a dropped
  action gets the value of a *probe* (one trajectory to a terminal with every player and chance
  on-policy) instead of 0; every action then has an unbiased value estimate, so
  ``v(h) = sum_a sigma(a) v(h a)`` needs no importance weights, and regrets are weighted by
  ``scale[h] = 1 / q_i(h)`` as in average strategy sampling.

Values are the traverser's. A history's work lives in its slot (depth d, index i among its siblings) of
`bundles.Scratch`; the stack holds (history, d, i) rows, the history as ``-h - 1`` for its second visit.
"""

from __future__ import annotations

from numba import njit

from .bundles import AVERAGE_STRATEGY, C_NODES, C_TRAVERSAL, CHANCE, EXTERNAL, PROBING, PURE, TERMINAL
from .decisions import chance_outcome, keeps_action, set_action, set_strategy_action, trajectory_action
from .stack import pop, push, push_root
from .states import child, infoset, mover, num_moves, outcome_probs, payoff, regret_set
from .strategies import credit_average, current_strategy, regrets_met, strategy_at, touch


@njit(cache=True, inline="always")
def _probe(tree, state, z, e, width, from_regrets):
    """Player 0's payoff at the end of one on-policy trajectory from history z (at depth e), and the
    histories it visits."""
    regrets, sigma, rng, first_seq, model = state.regrets, state.sigma, state.rng, tree.first_seq, state.model
    nodes = 0
    depth = e
    while mover(tree, z) != TERMINAL:
        nodes += 1
        m = num_moves(tree, z)
        pz = mover(tree, z)
        if pz == CHANCE:
            probs, start = outcome_probs(tree, z)
            k = chance_outcome(probs, start, m, rng)
        else:
            fz = first_seq[regret_set(tree, infoset(tree, z))]
            sz, gz = current_strategy(model, tree, regrets, sigma, z, fz, m, depth, pz, from_regrets)
            k, xi = trajectory_action(sz, gz, m, False, 0.0, rng)
        depth += 1
        z = child(tree, z, k, depth * width)
    return payoff(tree, z), nodes + 1


@njit(cache=True, inline="always")
def _walk_all(tree, stack, top, reach, h, n, d, i, e, width):
    """Push every action of the traverser's history h (slot d, i)."""
    for a in range(n):
        top = push(stack, top, child(tree, h, a, e * width + a), e, a)
        reach[e, a] = reach[d, i]
    return top


@njit(cache=True, inline="always")
def _walk_sampled(tree, state, scratch, reach, top, h, I, n, d, i, e, width, sign, sampler, eps, tau, beta,
                  from_regrets):
    """Push the actions of the traverser's history h that average strategy sampling keeps, with their
    importance weights; probe the dropped ones under `PROBING`. Returns (top, histories probed)."""
    avg, rng = state.avg, state.rng
    stack, scale, value = scratch.stack, scratch.scale, scratch.value
    g = tree.average_first[I]
    total = 0.0
    for a in range(n):
        total += avg[g + a]
    nodes = 0
    for a in range(n):
        kept, rho = keeps_action(avg, g, total, a, eps, tau, beta, rng)
        if not kept:
            scale[e, a] = 0.0
            if sampler == PROBING:  # one on-policy trajectory estimates v(h a)
                u, probed = _probe(tree, state, child(tree, h, a, e * width + a), e, width, from_regrets)
                nodes += probed
                value[e, a] = sign * u
            continue
        scale[e, a] = scale[d, i] / min(rho, 1.0)
        top = push(stack, top, child(tree, h, a, e * width + a), e, a)
        reach[e, a] = reach[d, i]
    return top, nodes


@njit(cache=True, inline="always")
def _traverser_update(sampler, sigma, g, delta, value, scale, chosen, f, n, d, i, e):
    """The traverser's history at slot (d, i) once its children are done, its strategy at sigma[g:g+n]: its
    sampled regrets into delta (sequences f..f+n), and its value."""
    if sampler == EXTERNAL:
        v = 0.0
        for a in range(n):
            v += sigma[g + a] * value[e, a]
        for a in range(n):
            delta[f + a] += value[e, a] - v
    elif sampler == PURE:
        v = value[e, chosen[d]]
        for a in range(n):
            delta[f + a] += value[e, a] - v
    elif sampler == PROBING:  # sampled or probed, every child has an unbiased value
        v = 0.0
        for a in range(n):
            v += sigma[g + a] * value[e, a]
        for a in range(n):
            delta[f + a] += scale[d, i] * (value[e, a] - v)
    else:  # AVERAGE_STRATEGY: values of kept children, importance weighted; regrets weighted by 1 / q_i(h)
        v = 0.0
        for a in range(n):
            if scale[e, a] > 0.0:
                value[e, a] *= scale[e, a] / scale[d, i]
            else:
                value[e, a] = 0.0
            v += sigma[g + a] * value[e, a]
        for a in range(n):
            delta[f + a] += scale[d, i] * (value[e, a] - v)
    return v


@njit(cache=True, inline="always")
def tree_walk(tree, state, scratch, traverser, t, weight, average_mode, from_regrets, sampler, eps, tau, beta):
    """One traversal of `sampler` (`EXTERNAL`, `PURE`, `AVERAGE_STRATEGY` or `PROBING`) updating `traverser`'s
    regrets and the opponent's average (see the module docstring)."""
    first_seq, parent_seq, average_first = tree.first_seq, tree.parent_seq, tree.average_first
    regrets, avg, sigma, delta, last, rng = state.regrets, state.avg, state.sigma, state.delta, state.last, state.rng
    touched, num_touched, touched_stamp = state.touched, state.num_touched, state.touched_stamp
    counters, model = state.counters, state.model
    stack, value, chosen, cached, scale = scratch.stack, scratch.value, scratch.chosen, scratch.cached, scratch.scale
    reach = scratch.reach[1 - traverser]  # the opponent's reach (the player whose average accumulates)
    width = value.shape[1]  # slot (depth, index) is row depth * width + index of the state source's scratch
    counters[C_TRAVERSAL] += 1
    stamp = counters[C_TRAVERSAL]
    sign = 1.0 if traverser == 0 else -1.0
    top = push_root(stack)
    reach[0, 0] = 1.0
    subsample = sampler == AVERAGE_STRATEGY or sampler == PROBING
    if subsample:
        scale[0, 0] = 1.0
    nodes = 0
    while top >= 0:
        code, d, i, e, top = pop(stack, top)  # history h at slot (depth d, child index i), its children at depth e
        if code >= 0:  # first visit
            h = code
            nodes += 1
            p = mover(tree, h)
            if p == TERMINAL:
                value[d, i] = sign * payoff(tree, h)
                continue
            n = num_moves(tree, h)
            if p == traverser:
                I = infoset(tree, h)
                f = first_seq[regret_set(tree, I)]
                sh, g = current_strategy(model, tree, regrets, sigma, h, f, n, d, p, from_regrets)
                top = push(stack, top, -h - 1, d, i)
                if sampler == PURE:
                    chosen[d] = set_action(regrets, sh, g, n, False, cached, I, stamp, rng)
                if subsample:
                    top, probed = _walk_sampled(tree, state, scratch, reach, top, h, I, n, d, i, e, width, sign,
                                                sampler, eps, tau, beta, from_regrets)
                    nodes += probed
                else:
                    top = _walk_all(tree, stack, top, reach, h, n, d, i, e, width)
                continue
            if p == CHANCE:
                probs, start = outcome_probs(tree, h)
                k = chance_outcome(probs, start, n, rng)
                reach[e, k] = reach[d, i]
            else:
                I = infoset(tree, h)
                f = first_seq[regret_set(tree, I)]
                k, sh, g = set_strategy_action(model, tree, regrets, sigma, h, f, n, d, p, from_regrets, cached, I,
                                               stamp, rng)
                credit_average(avg, sh, last, parent_seq, average_first, I, g, n, t, average_mode, weight,
                               reach[d, i])
                reach[e, k] = reach[d, i] * sh[g + k]
            if subsample:
                scale[e, k] = scale[d, i]
            top = push(stack, top, -h - 1, d, i)
            top = push(stack, top, child(tree, h, k, e * width + k), e, k)
            chosen[d] = k
        else:  # second visit: children are done
            h = -code - 1
            if mover(tree, h) != traverser:
                value[d, i] = value[e, chosen[d]]
                continue
            J = regret_set(tree, infoset(tree, h))
            f = first_seq[J]
            touch(J, touched, num_touched, touched_stamp, counters)
            sh, g = strategy_at(model, sigma, f, d)
            n = num_moves(tree, h)
            value[d, i] = _traverser_update(sampler, sh, g, delta, value, scale, chosen, f, n, d, i, e)
            regrets_met(model, tree, h, value, value[d, i], n, e)
    counters[C_NODES] += nodes
