"""The average policy of a snapshot mixture (``average="mixture"``) on Bluff's public bid tree, as a whole policy.

Why: lean sampled RCFR(+) with ``average="mixture"`` keeps compiled models, not sums per set; its average policy
is SD-CFR's exact mixture (`rcfr.solvers.snapshots`), made there at the sets of one walk of the rules
(`rules_sets`: one record per decision history), which Bluff(2,2) (176M decision sets, far more histories) does
not allow. On Bluff an information set is (own roll, bid sequence), and the owner's reach of it under a snapshot
depends on the bid sequence and the own roll only, so one depth-first walk of the public tree (the 2^(bids-1) bid
sequences, `rcfr.games.dice_bid_tree`) carries, per snapshot, its owner's reach as a vector over the owner's
rolls. At each node and roll of the mover the encoder writes the set's rows once (its fast state, the opponent's
roll left at 0: the encoder never reads it), every snapshot of the mover predicts them and regret-matches t x
prediction (`model_strategy`'s arithmetic: `predict_row`, `match_set`), and the set's row of the average is

    avg(I, a) = sum_k w_k pi^k(I) sigma_k(I, a) / sum_k w_k pi^k(I)   (uniform where the sum is 0),

written straight into the layout of `bluff.decision_sets` (sorted codes, the row found by its position). The
result is a `CodePolicy` that `bluff.evaluate` (so `rcfr.exploitability`) reads as any whole policy.

Memory: the policy (codes and row offsets, 16 bytes a set, and one probability an action: float32 on
Bluff(2,2), about 5 GB in all), plus O(bids x snapshots x rolls x bids) for the walk. Time: one prediction a
snapshot an action of every set; nothing per history, nothing per set in Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.typed import List

from ...evaluation.bluff import _check_bluff, decision_sets, roll_tables, whole_policy
from ...games import dice_bid_tree as bids
from ...games.dice_fast import ROLL0
from ...policy.rules import CodePolicy
from ...regressors.compiled import CompiledModel, predict_row
from ..model_strategies import _set_rows, row_coder
from ..predictions import match_set

#: `public_mixture`'s ``dtype="auto"``: float64 up to this many actions (8 bytes each), float32 beyond (Bluff(2,2))
FLOAT64_ACTIONS = 2 ** 27

_BAD_PREDICTION, _BAD_LAYOUT = 1, 2


@njit(cache=True)
def _mixture_walk(nb, r0, r1, models, owner, weights, ts, coder, encoder_data, width, codes, first, probs, scratch,
                  error):
    """Depth first over the bid sequences (see the module docstring): each decision set's mixture row into
    probs[first[i]:first[i + 1]]. Snapshot j is models[j], owned by player owner[j], weight weights[j], matched with
    ts[j]. On a problem stops with ``error = (kind, code, snapshot or actions, -)``."""
    nrolls = (r0, r1)
    rmax = max(r0, r1)
    rmin, half = bids.row_layout(nb, r0, r1)
    depth = nb + 1
    snaps = len(models)
    last, mask, _, nxt = bids.bid_path(nb)
    rows = np.zeros((rmax, nb + 1, width))
    need = np.zeros(rmax, np.bool_)
    sig = np.zeros((depth, snaps, rmax, nb + 1))
    reach = np.ones((snaps, depth, rmax))
    num = np.zeros((rmax, nb + 1))
    sets = 0
    predicted = 0
    state = bids.rolled_state()
    d = 0
    fresh = True
    while True:
        p, o, L, nact = bids.at_node(nb, last, d)
        if fresh:
            fresh = False
            m = bids.node_state(state, last, mask, d)
            state[ROLL0 + o] = 0
            for r in range(nrolls[p]):  # each roll's rows, once for all its snapshots, where one reaches it
                need[r] = False
                for j in range(snaps):
                    if owner[j] == p and reach[j, d, r] != 0.0:
                        need[r] = True
                        break
                if need[r]:
                    state[ROLL0 + p] = r
                    _set_rows(coder, encoder_data, state, nact, rows[r])
                for a in range(nact):
                    num[r, a] = 0.0
            for j in range(snaps):  # snapshot by snapshot (a model is taken from the list once a node)
                if owner[j] != p:
                    continue
                model = models[j]
                for r in range(nrolls[p]):
                    s = sig[d, j, r]
                    if reach[j, d, r] == 0.0:  # adds nothing here nor below (0 x sigma = 0): not predicted
                        for a in range(nact):
                            s[a] = 0.0
                        continue
                    if ts[j] != 0.0:  # at t = 0 regret matching reads no prediction (uniform): none made
                        predicted += 1
                        for a in range(nact):
                            s[a] = predict_row(model, rows[r, a], scratch)
                            if not np.isfinite(s[a]):
                                error[0], error[1], error[2] = _BAD_PREDICTION, 2 * ((np.int64(r) << nb) + m) + p, j
                                return sets, predicted
                    match_set(s, ts[j], 0, nact, 0, s)
                    for a in range(nact):
                        num[r, a] += weights[j] * (reach[j, d, r] * s[a])
            for r in range(nrolls[p]):
                code = 2 * ((np.int64(r) << nb) + m) + p
                i = bids.whole_policy_row(r, m, rmin, half)
                if i >= codes.shape[0] or codes[i] != code or first[i + 1] - first[i] != nact:
                    error[0], error[1], error[2] = _BAD_LAYOUT, code, nact
                    return sets, predicted
                total = 0.0
                for a in range(nact):
                    total += num[r, a]
                for a in range(nact):
                    probs[first[i] + a] = num[r, a] / total if total > 0.0 else 1.0 / nact
                sets += 1
        a = bids.next_action(nxt, d, nact)
        if a >= 0:
            if a == nact - 1 and d > 0:  # the call (the last action after the first bid): terminal
                continue
            b = L + 1 + a
            if b >= nb - 1:  # the top bid: the next player's call is forced, no decision below
                continue
            for j in range(snaps):
                if owner[j] == p:
                    for r in range(nrolls[p]):
                        reach[j, d + 1, r] = reach[j, d, r] * sig[d, j, r, a]
                else:
                    for r in range(nrolls[o]):
                        reach[j, d + 1, r] = reach[j, d, r]
            d = bids.down(last, mask, nxt, d, b)
            fresh = True
            continue
        if d == 0:
            break
        d -= 1
    return sets, predicted


def _checked_snapshots(snapshots, encoder) -> list[tuple[int, int, object]]:
    """(player, index, snapshot) of each snapshot with a positive weight, every field checked."""
    if not isinstance(snapshots, (list, tuple)) or len(snapshots) != 2:
        raise ValueError(f"snapshots must be a pair (player 0's, player 1's) of lists of Snapshot, got "
                         f"{type(snapshots).__name__}{'' if not hasattr(snapshots, '__len__') else f' of {len(snapshots)}'}")
    width = encoder.num_features
    kept = []
    for p, mine in enumerate(snapshots):
        if not isinstance(mine, (list, tuple)):
            raise ValueError(f"snapshots[{p}] must be a list of Snapshot, got {type(mine).__name__}")
        for k, snap in enumerate(mine):
            where = f"snapshots[{p}][{k}]"
            for field in ("model", "t", "weight"):
                if not hasattr(snap, field):
                    raise ValueError(f"{where} must be a Snapshot (model, t, weight), got {type(snap).__name__}")
            if not isinstance(snap.model, CompiledModel):
                raise ValueError(f"{where}.model must be a CompiledModel (rcfr.regressors.compile_model), got "
                                 f"{type(snap.model).__name__}")
            if snap.model.width != width:
                raise ValueError(f"{where}.model.width is {snap.model.width} but the encoder writes {width} features "
                                 f"({', '.join(encoder.names[:4])}, ...): the snapshots must be fit on this encoder's rows")
            for field in ("t", "weight"):
                value = getattr(snap, field)
                if not isinstance(value, (int, float, np.integer, np.floating)) or not np.isfinite(value) or value < 0:
                    raise ValueError(f"{where}.{field} must be a finite number >= 0, got {value!r}")
            if snap.weight > 0.0:
                kept.append((p, k, snap))
    return kept


def public_mixture(rules, snapshots, encoder, dtype="auto", stats: dict | None = None) -> CodePolicy:
    """The exact average policy of `snapshots` (``[player 0's, player 1's]`` lists of `Snapshot`: a compiled model,
    its t, its averaging weight) at every decision set of Liar's Dice / Bluff `rules`, as the whole `CodePolicy` of
    `bluff.decision_sets` (see the module docstring); `encoder` writes the rows the models read (the solver's
    ``features``). Snapshots of weight 0 are left out, as `rcfr.solvers.snapshots.mixture` leaves them.
    ``dtype``: float64, float32, or "auto" (float64 up to `FLOAT64_ACTIONS` actions, float32 beyond: a temporary
    policy for the exact evaluation, Bluff(2,2)'s ~5 GB). A snapshot whose owner's reach of a set is 0 adds nothing
    there nor below, so its model is not evaluated there (a non-finite prediction it would make is not seen).
    `stats` (a dict), if given, gets ``sets``, ``snapshots`` (those of positive weight) and ``predicted`` (the
    (set, snapshot) pairs evaluated)."""
    rules = _check_bluff(rules)
    for field in ("names", "data", "encode"):
        if not hasattr(encoder, field):
            raise ValueError(f"encoder must be a FeatureEncoder (rcfr.features.encoders.make_encoder), got "
                             f"{type(encoder).__name__}")
    kept = _checked_snapshots(snapshots, encoder)
    q0, q1, _, _ = roll_tables(rules)
    codes, first = decision_sets(rules)
    if isinstance(dtype, str) and dtype == "auto":
        dtype = np.float64 if first[-1] <= FLOAT64_ACTIONS else np.float32
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be float64, float32 or 'auto', got {dtype}")
    probs = np.empty(int(first[-1]), dtype)
    models = List()
    for _, _, snap in kept:
        models.append(snap.model)
    if not kept:  # an empty typed list has no type: a placeholder of weight 0 that no set reads (owner -1)
        from ..model_strategies import zero_model
        models.append(zero_model(encoder.num_features))
    owner = np.array([p for p, _, _ in kept] or [-1], np.int64)
    weights = np.array([float(s.weight) for _, _, s in kept] or [0.0])
    ts = np.array([float(s.t) for _, _, s in kept] or [0.0])
    widest = max(max(m.scratch().shape[1] for m in models), 1)
    scratch = np.empty((2, widest))
    error = np.zeros(4, np.int64)
    sets, predicted = _mixture_walk(rules.num_bids, len(q0), len(q1), models, owner, weights, ts, row_coder(encoder),
                         encoder.data, encoder.num_features, codes, first, probs, scratch, error)
    if error[0] == _BAD_PREDICTION:
        p, k, _ = kept[int(error[2])]
        raise ValueError(f"snapshots[{p}][{k}].model predicted a non-finite value at the set of code {int(error[1])}")
    if error[0] == _BAD_LAYOUT:
        raise AssertionError(f"the set of code {int(error[1])} ({int(error[2])} actions) is not at its place in "
                             f"Bluff's whole-policy layout")
    if stats is not None:
        stats.update(sets=int(sets), snapshots=len(kept), predicted=int(predicted))
    if sets != len(codes):
        raise AssertionError(f"the public-tree walk met {sets:,} decision sets of {len(codes):,}")
    return whole_policy(rules, codes, first, probs)
