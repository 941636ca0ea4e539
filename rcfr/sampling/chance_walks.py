"""Chance walks: full width over both players' actions, sampling chance (chance sampling; public chance sampling).

`chance_walk` walks histories (chance-sampled CFR and its paired and common forms, Lanctot 2013 §7.5; with
`ALL`, every outcome weighted by its probability: vanilla CFR, depth first, which is how a game walked by
its rules runs full-width CFR without a tree);
`public_chance_walk` walks the public tree (`rcfr.sampling.public`), one number per private state (a
*slot*) per player: public chance sampling (Johanson et al. 2012; Lanctot 2013, §4.8.2).

Estimator of `chance_walk` (chance on-policy): ``pi_-i(h) * (v(h a) - v(h))`` with chance left out of pi;
paired and common chance-sampling walk several outcomes of some chance nodes and carry ``pi_c(h) / q(h)``
(``q``: the probability that h is walked) into the weight and the values.

`public_chance_walk`: where player i acts, slot s (information set I) gets, with ``v_i`` its values in the
children and ``sigma`` the current strategy,

    v_i(S, s) = sum_a sigma(I, a) v_i(S a, s)        delta(I, a) = w(S) (v_i(S a, s) - v_i(S, s)),

and the opponent's values add up over the children. At a terminal state every terminal history z adds
``pi_c(z) u_i(z) pi_-i(z)`` to its slot (``pi_c``: chance reach, private and public chance included). At a
public chance state either every outcome is walked (`ALL`: exactly vanilla CFR, vectorised) or one outcome
is drawn with its public chance probability q and its values are weighted by 1/q (`SINGLE`); ``w(S)`` is
the product of these weights above S, so that ``E[w(S) [S walked]] = 1`` and every regret and
average-strategy increment is unbiased. Averages: the walk of player i adds i's own
``w(S) pi_i(s) sigma(I, .)`` (stochastic) or ``(t - last[I]) pi_i(s) sigma(I, .)`` (optimistic) before i's
regret update, as vanilla CFR does (the other samplers record the *other* player's average; docs/mccfr.md).
"""

from __future__ import annotations

from numba import njit

from .bundles import ALL, AVG_NONE, BOTH, C_NODES, C_TRAVERSAL, CHANCE, COMMON, PAIRED, SINGLE, TERMINAL
from .decisions import chance_outcome, common_chance_outcome
from .stack import pop, push, push_root
from .states import child, infoset, mover, num_moves, outcome_probs, payoff, regret_set
from .strategies import credit_average, regret_matching, touch


@njit(cache=True, inline="always")
def _chance_weight(probs, c, n, k, a, chance_sampling):
    """pi_c / q of outcome a of a chance node (probabilities probs[c:c+n]) whose draw was k (-1: every outcome
    walked), 0 if a is not walked. `PAIRED` walks k and its antithetic partner n - 1 - k, so a pair is walked
    with probability p_k + p_partner and each member weighs p_a / (that sum); a walked-all node weighs p_a;
    one sampled outcome weighs 1."""
    if k < 0:
        return probs[c + a]
    if chance_sampling == PAIRED:
        m = n - 1 - k
        if a != k and a != m:
            return 0.0
        mass = probs[c + k] + (probs[c + m] if m != k else 0.0)
        return probs[c + a] / mass
    return 1.0 if a == k else 0.0


@njit(cache=True, inline="always")
def chance_walk(tree, state, scratch, traverser, t, weight, average_mode, from_regrets, chance_sampling):
    """Full width over both players' actions; at chance nodes, by `chance_sampling`:

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
    first_seq, average_first, parent_seq, chance_key = tree.first_seq, tree.average_first, tree.parent_seq, tree.chance_key
    regrets, avg, sigma, delta, last, rng = state.regrets, state.avg, state.sigma, state.delta, state.last, state.rng
    touched, num_touched, touched_stamp = state.touched, state.num_touched, state.touched_stamp
    counters = state.counters
    stack, value, chosen, scale = scratch.stack, scratch.value, scratch.chosen, scratch.scale
    common_u, common_stamp = scratch.common_u, scratch.common_stamp
    reach0, reach1 = scratch.reach[0], scratch.reach[1]
    width = value.shape[1]
    counters[C_TRAVERSAL] += 1
    stamp = counters[C_TRAVERSAL]
    weighted = chance_sampling != SINGLE
    top = push_root(stack)
    reach0[0, 0] = 1.0
    reach1[0, 0] = 1.0
    if weighted:
        scale[0, 0] = 1.0
    nodes = 0
    while top >= 0:
        code, d, i, e, top = pop(stack, top)  # history h at slot (depth d, child index i), its children at depth e
        if code >= 0:
            h = code
            nodes += 1
            p = mover(tree, h)
            if p == TERMINAL:
                value[d, i] = payoff(tree, h)
                continue
            n = num_moves(tree, h)
            top = push(stack, top, -h - 1, d, i)
            if p == CHANCE:
                probs, c = outcome_probs(tree, h)
                if chance_sampling == ALL or (chance_sampling == COMMON and chance_key[traverser, h] < 0):
                    k = -1
                elif chance_sampling == COMMON:
                    k = common_chance_outcome(probs, c, n, chance_key[traverser, h], common_u, common_stamp, stamp,
                                              rng)
                else:
                    k = chance_outcome(probs, c, n, rng)
                chosen[d] = k
                if not weighted:
                    reach0[e, k] = reach0[d, i]
                    reach1[e, k] = reach1[d, i]
                    top = push(stack, top, child(tree, h, k, e * width + k), e, k)
                    continue
                for a in range(n):
                    w = _chance_weight(probs, c, n, k, a, chance_sampling)
                    if w > 0.0:
                        reach0[e, a] = reach0[d, i]
                        reach1[e, a] = reach1[d, i]
                        scale[e, a] = scale[d, i] * w
                        top = push(stack, top, child(tree, h, a, e * width + a), e, a)
                continue
            I = infoset(tree, h)
            f = first_seq[regret_set(tree, I)]
            regret_matching(regrets, sigma, f, n, from_regrets)
            own = reach0[d, i] if p == 0 else reach1[d, i]
            cw = scale[d, i] if weighted else 1.0
            if average_mode != AVG_NONE and (traverser == BOTH or p != traverser) and own > 0.0:
                credit_average(avg, sigma, last, parent_seq, average_first, I, f, n, t, average_mode, weight * own * cw,
                               own)
            for a in range(n):
                r0 = reach0[d, i] * sigma[f + a] if p == 0 else reach0[d, i]
                r1 = reach1[d, i] * sigma[f + a] if p == 1 else reach1[d, i]
                reach0[e, a] = r0
                reach1[e, a] = r1
                if weighted:
                    scale[e, a] = cw
                if r0 > 0.0 or r1 > 0.0:
                    top = push(stack, top, child(tree, h, a, e * width + a), e, a)
                else:
                    value[e, a] = 0.0  # unreachable for both: contributes nothing
        else:
            h = -code - 1
            p = mover(tree, h)
            n = num_moves(tree, h)
            if p == CHANCE:
                if not weighted:
                    value[d, i] = value[e, chosen[d]]
                    continue
                probs, c = outcome_probs(tree, h)
                v = 0.0
                for a in range(n):
                    w = _chance_weight(probs, c, n, chosen[d], a, chance_sampling)
                    if w > 0.0:
                        v += w * value[e, a]
                value[d, i] = v
                continue
            J = regret_set(tree, infoset(tree, h))
            f = first_seq[J]
            v = 0.0
            for a in range(n):
                v += sigma[f + a] * value[e, a]
            value[d, i] = v
            if traverser == BOTH or p == traverser:
                opp = reach1[d, i] if p == 0 else reach0[d, i]
                sign = 1.0 if p == 0 else -1.0
                if weighted:
                    sign *= scale[d, i]
                touch(J, touched, num_touched, touched_stamp, counters)
                for a in range(n):
                    delta[f + a] += sign * opp * (value[e, a] - v)
    counters[C_NODES] += nodes


# ---- public chance sampling: the public tree ----------------------------------------------------
@njit(cache=True, inline="always")
def _player_slots(public, work, p):
    """Player p's slot layout, reaches and values."""
    if p == 0:
        return public.first0, public.count0, public.up0, public.infoset0, work.reach0, work.value0
    return public.first1, public.count1, public.up1, public.infoset1, work.reach1, work.value1


@njit(cache=True, _nrt=False)
def public_chance_walk(tree, state, scratch, traverser, t, weight, average_mode, from_regrets, chance_sampling):
    """One walk of the public tree ``tree.public`` updating `traverser` (0, 1 or BOTH): its sampled regrets
    into ``state.delta`` and its own average strategy; public chance outcomes one sampled (`SINGLE`) or all
    (`ALL`). A called function, not inlined: one walk covers whole public states, so the call costs nothing
    that matters, and the other samplers' driver does not compile its body."""
    public, work = tree.public, scratch.public
    sample = chance_sampling != ALL
    regrets, avg, sigma, delta, last, rng = state.regrets, state.avg, state.sigma, state.delta, state.last, state.rng
    touched, num_touched, touched_stamp, counters = (state.touched, state.num_touched, state.touched_stamp,
                                                     state.counters)
    first_seq = tree.first_seq
    kind, parent, action, first_child, num_children, children = (public.kind, public.parent, public.action,
                                                                public.first_child, public.num_children,
                                                                public.children)
    stack, chosen, scale, action_value = work.stack, work.chosen, work.scale, work.action_value
    counters[C_TRAVERSAL] += 1
    top = 0
    stack[0] = 0
    nodes = 0
    while top >= 0:
        code = stack[top]
        top -= 1
        if code >= 0:  # first visit: reaches, strategies, averages, then the children
            S = code
            nodes += public.histories[S]
            P = parent[S]
            if P < 0:
                scale[S] = 1.0
            elif kind[P] == CHANCE and sample:
                scale[S] = scale[P] * public.weight[first_child[P] + action[S]]
            else:
                scale[S] = scale[P]
            for p in range(2):
                first, count, up, infosets, reach, value = _player_slots(public, work, p)
                for s in range(first[S], first[S] + count[S]):
                    if P < 0:
                        reach[s] = 1.0
                        continue
                    ps = up[s]
                    r = reach[ps]
                    if kind[P] == p:
                        r *= sigma[first_seq[regret_set(tree, infosets[ps])] + action[S]]
                    reach[s] = r
            k = kind[S]
            if k == TERMINAL:
                v0, v1, r0, r1 = work.value0, work.value1, work.reach0, work.reach1
                z0, z1 = public.term_first[S], public.term_first[S] + public.term_count[S]
                if traverser != 1:
                    for s in range(public.first0[S], public.first0[S] + public.count0[S]):
                        v0[s] = 0.0
                    for z in range(z0, z1):
                        v0[public.term_slot0[z]] += public.term_value[z] * r1[public.term_slot1[z]]
                if traverser != 0:
                    for s in range(public.first1[S], public.first1[S] + public.count1[S]):
                        v1[s] = 0.0
                    for z in range(z0, z1):
                        v1[public.term_slot1[z]] -= public.term_value[z] * r0[public.term_slot0[z]]
                continue
            top += 1
            stack[top] = -S - 1
            n = num_children[S]
            c = first_child[S]
            if k == CHANCE:
                if sample:
                    chosen[S] = chance_outcome(public.prob, c, n, rng)
                    top += 1
                    stack[top] = children[c + chosen[S]]
                    continue
                chosen[S] = -1
            else:
                first, count, up, infosets, reach, value = _player_slots(public, work, k)
                for s in range(first[S], first[S] + count[S]):
                    I = infosets[s]
                    f = first_seq[regret_set(tree, I)]
                    regret_matching(regrets, sigma, f, n, from_regrets)
                    own = reach[s]
                    if average_mode != AVG_NONE and (traverser == BOTH or traverser == k) and own > 0.0:
                        credit_average(avg, sigma, last, tree.parent_seq, tree.average_first, I, f, n, t, average_mode,
                                       weight * scale[S] * own, own)
            for a in range(n - 1, -1, -1):
                top += 1
                stack[top] = children[c + a]
        else:  # second visit: values from the children, regrets where the updated player acts
            S = -code - 1
            k = kind[S]
            n = num_children[S]
            c = first_child[S]
            for p in range(2):
                if traverser != BOTH and traverser != p:
                    continue
                first, count, up, infosets, reach, value = _player_slots(public, work, p)
                f0, m = first[S], count[S]
                if k != p:  # chance or the opponent: values add up (a sampled outcome's times 1/q)
                    for s in range(f0, f0 + m):
                        value[s] = 0.0
                    for a in range(n):
                        if k == CHANCE and chosen[S] >= 0 and a != chosen[S]:
                            continue
                        C = children[c + a]
                        factor = public.weight[c + a] if (k == CHANCE and chosen[S] >= 0) else 1.0
                        for s in range(first[C], first[C] + count[C]):
                            value[up[s]] += factor * value[s]
                    continue
                for i in range(n * m):
                    action_value[i] = 0.0
                for a in range(n):
                    C = children[c + a]
                    for s in range(first[C], first[C] + count[C]):
                        action_value[a * m + up[s] - f0] += value[s]
                w = scale[S]
                for j in range(m):
                    I = infosets[f0 + j]
                    J = regret_set(tree, I)
                    f = first_seq[J]
                    v = 0.0
                    for a in range(n):
                        v += sigma[f + a] * action_value[a * m + j]
                    value[f0 + j] = v
                    touch(J, touched, num_touched, touched_stamp, counters)
                    for a in range(n):
                        delta[f + a] += w * (action_value[a * m + j] - v)
    counters[C_NODES] += nodes
