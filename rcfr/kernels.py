"""Compiled full-width passes over one player's sequence form (see `rcfr.tree.PlayerView`).

All arrays use local sequence ids (0 = the empty sequence). Information sets are visited in
topological order (top-down) or its reverse (bottom-up), so each pass is one loop over the
player's sequences: no recursion, no Python object per node.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def realization_plan(strategy, first, size, parent, out):
    """out[s] = product of the player's own action probabilities along sequence s."""
    out[0] = 1.0
    for i in range(first.shape[0]):
        reach = out[parent[i]]
        for s in range(first[i], first[i] + size[i]):
            out[s] = reach * strategy[s]
    return out


@njit(cache=True)
def csr_matvec(indptr, indices, data, x, out):
    for row in range(out.shape[0]):
        total = 0.0
        for k in range(indptr[row], indptr[row + 1]):
            total += data[k] * x[indices[k]]
        out[row] = total
    return out


@njit(cache=True)
def counterfactual_regrets(values, strategy, first, size, parent, regrets):
    """Bottom-up pass: `values` holds each sequence's own terminal value against the opponent's
    realization plan and becomes its full counterfactual value; `regrets[s]` = value(s) minus the
    value of its information set under `strategy`. Returns the value of the empty sequence."""
    for i in range(first.shape[0] - 1, -1, -1):
        total = 0.0
        for s in range(first[i], first[i] + size[i]):
            total += strategy[s] * values[s]
        for s in range(first[i], first[i] + size[i]):
            regrets[s] = values[s] - total
        values[parent[i]] += total
    return values[0]


@njit(cache=True)
def best_response(values, first, size, parent, choice):
    """Bottom-up pass taking the best action at every information set; `choice[i]` receives the
    local sequence id chosen at information set i. Returns the best-response value."""
    for i in range(first.shape[0] - 1, -1, -1):
        best = first[i]
        for s in range(first[i] + 1, first[i] + size[i]):
            if values[s] > values[best]:
                best = s
        choice[i] = best
        values[parent[i]] += values[best]
    return values[0]


@njit(cache=True)
def regret_matching(regrets, first, size, out):
    """Strategy proportional to positive regrets; uniform where no regret is positive."""
    for i in range(first.shape[0]):
        total = 0.0
        for s in range(first[i], first[i] + size[i]):
            if regrets[s] > 0.0:
                total += regrets[s]
        for s in range(first[i], first[i] + size[i]):
            if total > 0.0:
                out[s] = regrets[s] / total if regrets[s] > 0.0 else 0.0
            else:
                out[s] = 1.0 / size[i]
    out[0] = 1.0
    return out


@njit(cache=True)
def adaptive_prediction(regrets, total, before, last, errors, steps, first, size, cap, prediction):
    """APCFR+'s prediction step, in one pass per information set i: E_i += ||r - last||^2 (the prediction
    `last` was wrong by that), S_i += ||total - before||^2 (the stored regrets' step), a_i = min(sqrt(E_i /
    S_i), cap) (cap while S_i = 0); adds r / (1 + a_i) to `prediction` and keeps r as the next `last`."""
    for i in range(first.shape[0]):
        error, step = 0.0, 0.0
        for s in range(first[i], first[i] + size[i]):
            error += (regrets[s] - last[s]) ** 2
            step += (total[s] - before[s]) ** 2
            last[s] = regrets[s]
        errors[i] += error
        steps[i] += step
        a = min(np.sqrt(errors[i] / steps[i]), cap) if steps[i] > 0.0 else cap
        for s in range(first[i], first[i] + size[i]):
            prediction[s] += regrets[s] / (1.0 + a)


@njit(cache=True)
def normalize_plan(plan, first, size, out):
    """Behavioural strategy from an (unnormalized) realization plan; uniform where it is all zero."""
    for i in range(first.shape[0]):
        total = 0.0
        for s in range(first[i], first[i] + size[i]):
            total += plan[s]
        for s in range(first[i], first[i] + size[i]):
            out[s] = plan[s] / total if total > 0.0 else 1.0 / size[i]
    out[0] = 1.0
    return out



# ---- building the sequence form from the history arrays (no temporaries per history) -------------
@njit(cache=True)
def history_sequences(player, parent, action, infoset, first_seq, out):
    """out[h, p] = player p's last global sequence on the way to history h (-1: the empty sequence);
    histories are numbered breadth-first, so a parent comes before its children."""
    out[0, 0] = -1
    out[0, 1] = -1
    for h in range(1, player.shape[0]):
        u = parent[h]
        out[h, 0] = out[u, 0]
        out[h, 1] = out[u, 1]
        p = player[u]
        if p >= 0:
            out[h, p] = first_seq[infoset[u]] + action[h]
    return out


@njit(cache=True)
def attach_parent_sequences(player, infoset, sequences, parent_seq):
    """parent_seq[I] = the acting player's own sequence before I (the last history of I decides); returns
    the first decision history whose own sequence differs from its set's (imperfect recall), else -1."""
    for h in range(player.shape[0]):
        p = player[h]
        if p >= 0:
            parent_seq[infoset[h]] = sequences[h, p]
    for h in range(player.shape[0]):
        p = player[h]
        if p >= 0 and parent_seq[infoset[h]] != sequences[h, p]:
            return h
    return -1


@njit(cache=True)
def renumber_infosets(infoset, renumber):
    """infoset[h] = renumber[infoset[h]] at decision histories (-1 elsewhere stays), in place."""
    for h in range(infoset.shape[0]):
        if infoset[h] >= 0:
            infoset[h] = renumber[infoset[h]]
