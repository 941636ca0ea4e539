"""Public chance sampling (Johanson et al. 2012; Lanctot 2013, §4.8.2) as one compiled walk of the public tree.

A walk visits public states (`rcfr.sampling.public`) and carries, per state and player, one number
per private state (a *slot*): reach probabilities down, counterfactual values up. Where player i
acts, slot s (information set I) gets, with ``v_i`` its values in the children and ``sigma`` the
current strategy,

    v_i(S, s) = sum_a sigma(I, a) v_i(S a, s)        delta(I, a) = w(S) (v_i(S a, s) - v_i(S, s)),

and the opponent's values add up over the children. At a terminal state every terminal history z
adds ``pi_c(z) u_i(z) pi_-i(z)`` to its slot (``pi_c``: chance reach, private and public chance
included). At a public chance state either every outcome is walked (``sample=False``: exactly
vanilla CFR, vectorised) or one outcome is drawn with its public chance probability q and its values
are weighted by 1/q; ``w(S)`` is the product of these weights above S, so that ``E[w(S) [S walked]] = 1``
and every regret and average-strategy increment is unbiased.

Averages: the walk of player i adds i's own ``weight w(S) pi_i(s) sigma(I, .)`` (stochastic) or
``(t - last[I]) pi_i(s) sigma(I, .)`` (optimistic) before i's regret update, as vanilla CFR does
(the other samplers record the *other* player's average; see docs/mccfr.md).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from .kernels import (AVG_NONE, BOTH, C_NODES, C_TRAVERSAL, _average, _merged, _pick, _strategy, _touch,
                      apply_regrets, collect_regrets)
from .public import CHANCE, TERMINAL, PublicTree

Work = namedtuple("Work", ["stack", "chosen", "scale", "reach0", "reach1", "value0", "value1", "action_value"])
Work.__doc__ = """Scratch of one walk: the depth-first stack, the sampled outcome and the weight w(S) per public
state, reaches and values per slot of each player, and one state's values per (action, slot)."""

Settings = namedtuple("Settings", ["alternating", "sample", "power", "averaging", "clip"])
Settings.__doc__ = """Alternating or simultaneous updates, public chance sampled or enumerated, averaging
weight power and mode, RM+ clipping."""


def make_work(public: PublicTree) -> Work:
    K = len(public.kind)
    slots = np.maximum(public.count0, public.count1).max(initial=1)
    actions = int(public.num_children.max(initial=1))
    return Work(stack=np.zeros(K + 2, np.int64), chosen=np.zeros(K, np.int64), scale=np.zeros(K),
                reach0=np.zeros(len(public.up0)), reach1=np.zeros(len(public.up1)),
                value0=np.zeros(len(public.up0)), value1=np.zeros(len(public.up1)),
                action_value=np.zeros(int(slots) * actions))


@njit(cache=True, inline="always")
def _player(public, work, p):
    """Player p's slot layout, reaches and values."""
    if p == 0:
        return public.first0, public.count0, public.up0, public.infoset0, work.reach0, work.value0
    return public.first1, public.count1, public.up1, public.infoset1, work.reach1, work.value1


@njit(cache=True)
def walk(tree, state, public, work, traverser, t, weight, averaging, from_regrets, sample):
    """One walk of the public tree updating `traverser` (0, 1 or BOTH): its sampled regrets into
    ``state.delta`` and its own average strategy."""
    regrets, avg, sigma, delta, last, rng = state.regrets, state.avg, state.sigma, state.delta, state.last, state.rng
    touched, num_touched, touched_stamp, counters = (state.touched, state.num_touched, state.touched_stamp,
                                                     state.counters)
    first_seq, abstract = tree.first_seq, tree.abstract
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
                first, count, up, infosets, reach, value = _player(public, work, p)
                for s in range(first[S], first[S] + count[S]):
                    if P < 0:
                        reach[s] = 1.0
                        continue
                    ps = up[s]
                    r = reach[ps]
                    if kind[P] == p:
                        r *= sigma[first_seq[_merged(abstract, infosets[ps])] + action[S]]
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
                    chosen[S] = _pick(public.prob, c, n, rng)
                    top += 1
                    stack[top] = children[c + chosen[S]]
                    continue
                chosen[S] = -1
            else:
                first, count, up, infosets, reach, value = _player(public, work, k)
                for s in range(first[S], first[S] + count[S]):
                    I = infosets[s]
                    f = first_seq[_merged(abstract, I)]
                    _strategy(regrets, sigma, f, n, from_regrets)
                    own = reach[s]
                    if averaging != AVG_NONE and (traverser == BOTH or traverser == k) and own > 0.0:
                        _average(avg, sigma, last, tree.parent_seq, tree.average_first, I, f, n, t, averaging,
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
                first, count, up, infosets, reach, value = _player(public, work, p)
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
                    J = _merged(abstract, I)
                    f = first_seq[J]
                    v = 0.0
                    for a in range(n):
                        v += sigma[f + a] * action_value[a * m + j]
                    value[f0 + j] = v
                    _touch(J, touched, num_touched, touched_stamp, counters)
                    for a in range(n):
                        delta[f + a] += w * (action_value[a * m + j] - v)
    counters[C_NODES] += nodes


@njit(cache=True)
def run(tree, state, public, work, settings, t0, iterations):
    """Iterations t0+1 .. t0+iterations: a walk per player, each followed by its regret update
    (alternating), or one walk updating both (simultaneous)."""
    for it in range(iterations):
        t = t0 + it + 1
        w = np.float64(t) ** settings.power
        if settings.alternating:
            for i in range(2):
                walk(tree, state, public, work, i, t, w, settings.averaging, True, settings.sample)
                apply_regrets(tree, state, settings.clip)
        else:
            walk(tree, state, public, work, BOTH, t, w, settings.averaging, True, settings.sample)
            apply_regrets(tree, state, settings.clip)


@njit(cache=True)
def estimate(tree, state, public, work, settings, traverser, samples, sums, squares, visits):
    """`samples` walks at the fixed strategy ``state.sigma``, their sampled regrets summed into `sums`,
    `squares` and `visits` (walk k counts as iteration k)."""
    for it in range(samples):
        walk(tree, state, public, work, traverser, it + 1, 1.0, settings.averaging, False, settings.sample)
        collect_regrets(tree, state, sums, squares, visits)
