"""The average strategy as a mixture of kept models (``average="mixture"``, SD-CFR's rule), not per-set sums.

Lean sampled RCFR(+) with ``profile="model"`` plays, between two refits of a player, the strategy of one compiled
model: a *snapshot* (the model, the t its predictions are regret-matched with, and its weight: the summed
averaging weights t ** power of the iterations whose traversals credited the player's average while it was
current). `Snapshots` keeps a player's snapshots, at most ``bound`` of them by reservoir sampling over snapshots
(each snapshot kept with probability bound / snapshots seen; the draws come from (seed, player, count) alone, so
they need no saved state).

The average policy at a set I of player p is the exact mixture (Steinberger 2019, SD-CFR)

    avg(I, a) = sum_k w_k pi_p^k(I) sigma_k(I, a) / sum_k w_k pi_p^k(I),

pi_p^k(I) the owner's own reach of I under snapshot k. In sequence form that is the normalized sum of the
snapshots' weighted realization plans (`rcfr.kernels.realization_plan`, then `normalize_plan`): one pass per
snapshot over the sets asked, no Python object per set. The sets come from the compiled game (`game_sets`) or,
on a game walked by its rules, from one walk of the rules (`rules_sets`): a set's state, player, actions and the
owner's previous set and action, so nothing about a set is kept between iterations.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba import types as nb

from ..compiler import _grow
from ..games.fast import DATA, FUNCTION_TYPES
from ..numba_lazy import njit_on_first_call
from ..sources.walk import DEPTH, ROOM, always, depth_first


class SetList(NamedTuple):
    """Information sets in top-down order (a set after its owner's previous set), in a sequence-form layout:
    slot 0 is the empty sequence, set i's actions are slots first[i]..first[i]+size[i]-1, and parent[i] is the
    owner's slot before it (0: none)."""

    player: np.ndarray  # int64[sets]
    first: np.ndarray  # int64[sets]
    size: np.ndarray  # int64[sets]
    parent: np.ndarray  # int64[sets]
    states: np.ndarray  # int64[sets, width]: the fast state of one history of the set
    codes: np.ndarray  # int64[sets]: the rules' information-set codes (empty on a compiled game)


class Snapshot(NamedTuple):
    """One kept model: its compiled arrays, the t it is regret-matched with, its averaging weight."""

    model: object  # CompiledModel
    t: float
    weight: float


class Snapshots:
    """One player's snapshots, at most `bound` (None: all), by reservoir sampling over the snapshots seen."""

    def __init__(self, bound: int | None, seed: int, player: int):
        self.bound, self.seed, self.player = bound, int(seed), int(player)
        self.kept: list[Snapshot] = []
        self.seen = 0

    def add(self, snapshot: Snapshot) -> None:
        """Keep `snapshot` (Algorithm R: the n-th seen replaces a uniform slot with probability bound / n)."""
        self.seen += 1
        if self.bound is None or len(self.kept) < self.bound:
            self.kept.append(snapshot)
            return
        j = int(np.random.default_rng([self.seed, self.player, self.seen]).integers(self.seen))
        if j < self.bound:
            self.kept[j] = snapshot

    # ---- checkpoints -----------------------------------------------------------------------------
    def state_dict(self, prefix: str) -> dict[str, np.ndarray]:
        """The kept snapshots, each model field by field, and the count seen."""
        state = {f"{prefix}seen": np.array(self.seen), f"{prefix}kept": np.array(len(self.kept))}
        for k, snap in enumerate(self.kept):
            state[f"{prefix}{k}.t"], state[f"{prefix}{k}.weight"] = np.array(snap.t), np.array(snap.weight)
            state.update(model_state(snap.model, f"{prefix}{k}.model."))
        return state

    def load_state_dict(self, state: dict[str, np.ndarray], prefix: str) -> None:
        self.seen = int(state[f"{prefix}seen"])
        self.kept = [Snapshot(model_from_state(state, f"{prefix}{k}.model."), float(state[f"{prefix}{k}.t"]),
                              float(state[f"{prefix}{k}.weight"])) for k in range(int(state[f"{prefix}kept"]))]


def model_state(model, prefix: str) -> dict[str, np.ndarray]:
    """A compiled model's fields as checkpoint arrays."""
    return {f"{prefix}{name}": value.copy() if isinstance(value, np.ndarray) else np.array(value)
            for name, value in zip(model._fields, model)}


def model_from_state(state: dict[str, np.ndarray], prefix: str):
    """The compiled model `model_state` wrote under `prefix`."""
    from ..regressors.compiled import CompiledModel
    scalars = {"width": int, "bias": float, "divisor": float, "round32": bool, "out_scale": float}
    fields = {}
    for name in CompiledModel._fields:
        value = state[f"{prefix}{name}"]
        fields[name] = scalars[name](value) if name in scalars else np.ascontiguousarray(value)
    return CompiledModel(**fields)


# ---- the sets: a compiled game's, or one walk of the rules ------------------------------------------
def game_sets(game) -> SetList:
    """Every information set of compiled `game`, ordered by first sequence (the compiler numbers a set's
    sequences after its owner's previous sequence), with the state of its first history."""
    from rcfr.features.encoders import infoset_states
    order = np.argsort(np.asarray(game.infoset_first_seq), kind="stable")
    parent = np.asarray(game.infoset_parent_seq, np.int64)[order]
    return SetList(player=np.asarray(game.infoset_player, np.int64)[order],
                   first=np.asarray(game.infoset_first_seq, np.int64)[order] + 1,
                   size=np.asarray(game.infoset_num_actions, np.int64)[order],
                   parent=np.where(parent < 0, 0, parent + 1), states=infoset_states(game, order),
                   codes=np.zeros(0, np.int64))


@njit(inline="always")
def _terminal(utility, data, c, v, d, s):
    return 0


@njit(inline="always")
def _enter(infoset_code, aux, data, c, v, d, s, p, nxt, moves):
    """Record the decision at depth d: its code, player, actions, the owner's previous (code, action), state."""
    if p < 0:
        return 0
    code, who, size, before, act, states, count, here, own, took = v
    i = count[0]
    if i == code.shape[0]:
        return ROOM
    here[d] = infoset_code(data, s)
    code[i], who[i], size[i], before[i], act[i] = here[d], p, moves[d], own[d, p], took[d, p]
    for j in range(s.shape[0]):
        states[i, j] = s[j]
    count[0] = i + 1
    return 0


@njit(inline="always")
def _room(c, v, d, m):
    code, who, size, before, act, states, count, here, own, took = v
    n = 2 * code.shape[0]
    return (_grow(code, n), _grow(who, n), _grow(size, n), _grow(before, n), _grow(act, n), _grow(states, n),
            count, here, own, took)


@njit(inline="always")
def _push(c, v, d, k, q, p, m):
    here, own, took = v[7], v[8], v[9]
    for j in range(2):
        own[d + 1, j], took[d + 1, j] = own[d, j], took[d, j]
    if p >= 0:
        own[d + 1, p], took[d + 1, p] = here[d], k


@njit(inline="always")
def _deeper(c, v, cap):
    code, who, size, before, act, states, count, here, own, took = v
    return code, who, size, before, act, states, count, _grow(here, cap), _grow(own, cap), _grow(took, cap)


_sets_walk = depth_first(_terminal, _enter, _room, always, _push, _deeper)

_VECTOR = nb.int64[::1]


@njit_on_first_call(nb.Tuple((nb.int64, _VECTOR, _VECTOR, _VECTOR, _VECTOR, _VECTOR, nb.int64[:, ::1]))(
    FUNCTION_TYPES["initial"], FUNCTION_TYPES["player"], FUNCTION_TYPES["num_children"], FUNCTION_TYPES["child"],
    FUNCTION_TYPES["utility"], FUNCTION_TYPES["infoset_code"], DATA, nb.int64), cache=True)
def _decisions(initial, player, num_children, child, utility, infoset_code, data, width):
    """Every decision history of the rules (forced moves collapsed): (count, code, player, actions, owner's
    previous code (-1: none), its action, state)."""
    n = 1024
    own = np.full((DEPTH, 2), -1, np.int64)
    v = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
         np.zeros(n, np.int64), np.zeros((n, width), np.int64), np.zeros(1, np.int64), np.zeros(DEPTH, np.int64),
         own, own.copy())
    status, v = _sets_walk(initial, player, num_children, child, utility, infoset_code, infoset_code, data, width,
                           True, (np.zeros(1),), v)
    return v[6][0], v[0], v[1], v[2], v[3], v[4], v[5]


def rules_sets(rules) -> SetList:
    """Every information set of `rules`, from one walk over the rules' fast path: the first history met in each
    (depth first, so a set comes after its owner's previous set), keyed by code."""
    from ..policy.rules import fast_game
    fast = fast_game(rules)
    count, code, who, size, before, act, states = _decisions(fast.initial, fast.player, fast.num_children, fast.child,
                                                             fast.utility, fast.infoset_code, fast.data, fast.width)
    code, before = code[:count], before[:count]
    codes, at = np.unique(code, return_index=True)
    order = np.argsort(at, kind="stable")  # top-down: the order first met
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    at = at[order]
    sizes = size[at]
    first = 1 + np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    above = before[at]
    parent = np.zeros(len(at), np.int64)
    has = above >= 0
    parent[has] = first[rank[np.searchsorted(codes, above[has])]] + act[at][has]
    return SetList(player=who[at].copy(), first=first, size=sizes.copy(), parent=parent,
                   states=np.ascontiguousarray(states[at]), codes=codes[order])


# ---- the mixture ---------------------------------------------------------------------------------
def snapshot_strategies(sets: SetList, mine: np.ndarray, snapshot: Snapshot, encoder) -> np.ndarray:
    """Snapshot's strategy at the sets `mine` (indices into `sets`), as a sequence-form vector (1 + slots)."""
    from .model_strategies import model_strategies
    sigma = np.zeros(int(sets.first[-1] + sets.size[-1]) if len(sets.first) else 1)
    flat = model_strategies(snapshot.model, encoder, sets.states[mine], sets.size[mine], snapshot.t)
    at = np.repeat(sets.first[mine] - np.cumsum(sets.size[mine]) + sets.size[mine], sets.size[mine])
    sigma[at + np.arange(len(flat))] = flat
    return sigma


def mixture(sets: SetList, snapshots: list[list[Snapshot]], encoder) -> np.ndarray:
    """The average strategy (sequence-form vector, slot 0 the empty sequence) at every set of `sets`: each
    player's snapshots' realization plans weighted by their weights, normalized per set (uniform where the
    weights give no reach)."""
    from .. import kernels
    out = np.zeros(int(sets.first[-1] + sets.size[-1]) if len(sets.first) else 1)
    for p in (0, 1):
        mine = np.flatnonzero(sets.player == p)
        first, size, parent = sets.first[mine], sets.size[mine], sets.parent[mine]
        total = np.zeros_like(out)
        plan = np.empty_like(out)
        for snap in snapshots[p]:
            if snap.weight > 0.0:
                kernels.realization_plan(snapshot_strategies(sets, mine, snap, encoder), first, size, parent, plan)
                total += snap.weight * _on(plan, first, size)
        average = kernels.normalize_plan(total, first, size, np.zeros_like(out))
        keep = _on(np.ones_like(out), first, size) > 0
        out[keep] = average[keep]
    return out


def _on(values: np.ndarray, first: np.ndarray, size: np.ndarray) -> np.ndarray:
    """`values` at the slots of these sets, zero elsewhere."""
    out = np.zeros_like(values)
    at = np.repeat(first - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
    out[at] = values[at]
    return out
