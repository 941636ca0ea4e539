"""The sampled walk behind `rcfr.evaluation.approx`: play-outs of a profile, and a responder's training.

One numba depth-first walk over a game's `FastGame` functions (compiled or rules path alike), where each
kind of node either walks every child or samples one:

* chance: samples an outcome from its own stream (one splitmix64 stream per play-out, so two play-outs with
  the same index see the same chance draws: both seatings of a match share their deals), or walks every
  outcome weighted by its probability (``chance_all``);
* a player: samples an action from its seat's `CodePolicy` rows (uniform at a code the policy lacks when
  ``uniform``), except the *learner*, whose actions are all walked (``own_all``: external sampling) or
  drawn from ``eps`` * uniform + (1 - eps) * its seat's row with the importance weight 1/q (outcome sampling).

At a terminal the walk adds its weight times player 0's payoff to the play-out's value, and, when there is
a learner, the learner's payoff to its *last own sequence*: the sequence-form terminal values, as
`rcfr.evaluation.rules` sums them exactly. Either way the sums are unbiased estimates (times the number
of traversals) of the exact ones. The learner's sets are numbered as first met (a set is met after the set
above it), so one bottom-up pass in reverse order takes each set's best action (where its samples suffice,
else the seat's row): a best response to the sampled opponent and chance, which an independent evaluation
then scores.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import types as nb
from numba.typed import Dict

from ..compiler import _grow, _settled
from ..games.base import CHANCE, TERMINAL
from ..games.fast import ABSTRACT_CODE, DATA, FUNCTION_TYPES
from ..numba_lazy import njit_on_first_call
from ..sampling.decisions import pick_at, uniform01
from .rules import POLICY_ERRORS

_FN = FUNCTION_TYPES
#: Fields of the walk's `counts` output.
COUNT_FIELDS = ("traversals", "nodes", "error", "code", "a", "b", "sets")
ERRORS = {
    **POLICY_ERRORS,
    5: "one external-sampling traversal touched over {a} nodes, the whole budget: raise the budget or use "
       "method='os-br' (one trajectory per traversal)",
}
_ROWS = nb.Array(nb.int64, 1, "C", readonly=True)
_PROBS = nb.Array(nb.float64, 1, "C", readonly=True)
_ABSTRACT = (nb.FunctionType(ABSTRACT_CODE), DATA, nb.boolean)  # a seat's abstraction: code function, data, on
_SIGNATURE = nb.Tuple((nb.int64[::1], nb.int64[::1], nb.int64[::1]))(
    _FN["initial"], _FN["player"], _FN["num_children"], _FN["child"], _FN["utility"], _FN["infoset_code"], DATA,
    nb.int64, _ROWS, _ROWS, _PROBS, _ROWS, _ROWS, _PROBS, *_ABSTRACT, *_ABSTRACT, nb.boolean, nb.int64, nb.boolean,
    nb.float64,
    nb.boolean, nb.int64, nb.int64, nb.int64, nb.uint64, nb.uint64[::1], nb.float64[::1], nb.int64[::1])
_STREAM = np.uint64(0xD1B54A32D192ED03)


@njit(cache=True, inline="always")
def _none():
    return np.zeros(0, np.int64)


@njit_on_first_call(_SIGNATURE, cache=True)
def walk_samples(initial, player, num_children, child, utility, infoset_code, data, width,
                 codes0, first0, probs0, codes1, first1, probs1, abstract0, abstract_data0, abstracted0,
                 abstract1, abstract_data1, abstracted1, uniform, learner, own_all, eps,
                 chance_all, samples, budget, min_visits, chance_seed, rng, values, counts):
    """Up to `samples` traversals (and, with ``budget > 0``, none begun past `budget` nodes touched); see the
    module docstring. ``values[j]`` receives traversal j's weighted sum of player 0's payoffs (while j is in
    range); `counts` the `COUNT_FIELDS`. Returns the learner's sets as met: (codes, action counts, best
    action), empty without a learner. A set plays its best action among those taken at least `min_visits`
    times, if that beats its seat's row by the estimates; else it keeps the row (best action -1) and passes
    the row's estimated value up: a best action read off a few samples is noise, and worse than the row."""
    key = np.zeros(2, np.int64)
    cap_sets = 64
    set_code = np.empty(cap_sets, np.int64)
    set_first = np.zeros(cap_sets + 1, np.int64)
    above = np.empty(cap_sets, np.int64)
    set_row = np.empty(cap_sets, np.int64)  # the seat policy's row start (-1: uniform)
    index = Dict.empty(key_type=nb.int64, value_type=nb.int64)
    tv = np.zeros(256)
    taken = np.zeros(256, np.int64)  # per learner sequence: how many times a traversal took it
    sets = 0
    root = 0.0
    cap = 64
    states = np.empty((cap, width), np.int64)
    who = np.zeros(cap, np.int64)
    nxt = np.zeros(cap, np.int64)
    end = np.zeros(cap, np.int64)
    row = np.zeros(cap, np.int64)  # policy row start at a decision (-1: uniform; learner: tv base)
    weight = np.ones(cap)
    own = np.full(cap, -1, np.int64)  # the learner's last sequence (index into tv), -1: the empty one
    tmp = np.empty(width, np.int64)
    crng = np.zeros(1, np.uint64)
    nodes = 0
    j = 0
    while j < samples and (budget <= 0 or nodes < budget):
        crng[0] = chance_seed + np.uint64(j) * _STREAM
        start = nodes
        total = 0.0
        initial(data, states[0])
        who[0], end[0] = _settled(player, num_children, child, data, states[0], tmp)
        weight[0] = 1.0
        own[0] = -1
        d = 0
        fresh = True
        while d >= 0:
            if fresh:
                fresh = False
                nodes += 1
                p = who[d]
                m = end[d]
                nxt[d] = 0
                if p == TERMINAL:
                    u = utility(data, states[d])
                    total += weight[d] * u
                    if learner >= 0:
                        mine = u if learner == 0 else -u
                        if own[d] >= 0:
                            tv[own[d]] += weight[d] * mine
                        else:
                            root += weight[d] * mine
                    d -= 1
                    continue
                if p == CHANCE:
                    if not chance_all:
                        x = uniform01(crng)
                        k = 0
                        while k < m - 1:  # inverse CDF over the outcome probabilities, asked one by one
                            q = child(data, states[d], k, tmp)
                            x -= q
                            if x < 0.0:
                                break
                            k += 1
                        nxt[d], end[d] = k, k + 1
                else:
                    code = infoset_code(data, states[d])
                    codes, first = (codes0, first0) if p == 0 else (codes1, first1)
                    look = code  # the seat's row: by its abstract key under an abstraction
                    if p == 0 and abstracted0:
                        abstract0(abstract_data0, states[d], key)
                        look = 2 * key[0]
                    elif p == 1 and abstracted1:
                        abstract1(abstract_data1, states[d], key)
                        look = 2 * key[0] + 1
                    i = np.searchsorted(codes, look)
                    if i < codes.shape[0] and codes[i] == look:
                        if first[i + 1] - first[i] != m:
                            counts[2], counts[3], counts[4], counts[5] = 2, look, first[i + 1] - first[i], m
                            return _none(), _none(), _none()
                        row[d] = first[i]
                    elif uniform:
                        row[d] = -1
                    else:
                        counts[2], counts[3] = 1, look
                        return _none(), _none(), _none()
                    probs = probs0 if p == 0 else probs1
                    if p == learner:
                        if code in index:
                            s = index[code]
                            if above[s] != own[d]:
                                counts[2], counts[3] = 3, code
                                return _none(), _none(), _none()
                        else:
                            s = sets
                            sets += 1
                            if sets == cap_sets:
                                cap_sets *= 2
                                set_code, above = _grow(set_code, cap_sets), _grow(above, cap_sets)
                                set_row = _grow(set_row, cap_sets)
                                set_first = _grow(set_first, cap_sets + 1)
                            index[code] = s
                            set_code[s], above[s], set_row[s] = code, own[d], row[d]
                            set_first[s + 1] = set_first[s] + m
                            if set_first[s + 1] > tv.shape[0]:
                                old = tv.shape[0]
                                tv, taken = _grow(tv, 2 * set_first[s + 1]), _grow(taken, 2 * set_first[s + 1])
                                tv[old:] = 0.0
                                taken[old:] = 0
                        base = set_first[s]
                        if not own_all:
                            x = uniform01(rng)
                            k = 0
                            q = 0.0
                            while k < m:
                                sigma = probs[row[d] + k] if row[d] >= 0 else 1.0 / m
                                q = eps / m + (1.0 - eps) * sigma
                                x -= q
                                if x < 0.0 or k == m - 1:
                                    break
                                k += 1
                            nxt[d], end[d] = k, k + 1
                            weight[d] /= q  # the walk below reads weight[d] through the child rows
                        row[d] = -2 - base  # the learner's tv base, told apart from a policy row
                    else:
                        x = uniform01(rng)
                        k = pick_at(probs, row[d], m, x) if row[d] >= 0 else min(int(x * m), m - 1)
                        nxt[d], end[d] = k, k + 1
            if nxt[d] == end[d]:
                d -= 1
                continue
            k = nxt[d]
            nxt[d] += 1
            if budget > 0 and own_all and nodes - start > budget:
                counts[2], counts[4] = 5, budget
                return _none(), _none(), _none()
            if d + 1 == cap:
                cap *= 2
                states = _grow(states, cap)
                who, nxt, end, row = _grow(who, cap), _grow(nxt, cap), _grow(end, cap), _grow(row, cap)
                weight, own = _grow(weight, cap), _grow(own, cap)
            q = child(data, states[d], k, states[d + 1])
            e = d + 1
            who[e], end[e] = _settled(player, num_children, child, data, states[e], tmp)
            weight[e], own[e] = weight[d], own[d]
            if who[d] == CHANCE and chance_all:
                weight[e] *= q
            elif learner >= 0 and who[d] == learner and row[d] <= -2:
                own[e] = -2 - row[d] + k
                taken[own[e]] += 1
            d = e
            fresh = True
        if j < values.shape[0]:
            values[j] = total
        j += 1
    counts[0], counts[1], counts[6] = j, nodes, sets
    best = np.zeros(sets, np.int64)
    probs = probs0 if learner == 0 else probs1
    for s in range(sets - 1, -1, -1):  # children first: a set is met after the set above it
        lo, hi = set_first[s], set_first[s + 1]
        worth = 0.0
        top = -1
        for t in range(lo, hi):
            worth += tv[t] * (probs[set_row[s] + t - lo] if set_row[s] >= 0 else 1.0 / (hi - lo))
            if taken[t] >= min_visits and (top < 0 or tv[t] > tv[top]):
                top = t
        if top >= 0 and tv[top] > worth:
            best[s] = top - lo
            worth = tv[top]
        else:
            best[s] = -1
        if above[s] >= 0:
            tv[above[s]] += worth
    sizes = set_first[1:sets + 1] - set_first[:sets]
    return set_code[:sets].copy(), sizes, best
