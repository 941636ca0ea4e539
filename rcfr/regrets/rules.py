"""The full-game regret of played profiles over the rules: `RulesFullRegret`, `rcfr.regrets.FullRegret` without the
compiled tree.

(R_1^T + R_2^T) / T needs two sums over the profiles σ^1..σ^T a solver played: their values, and each player's
realization plans, whose average is the strategy the opponent's best response is measured against (u is linear
in a plan, so max_σ' (1/T) Σ_t u(σ', σ^t_-i) is a best response to the average plan). Per information set of the
full game the plan sums are S(I, a) = Σ_t π_i^t(I) σ^t(I, a) (π_i^t(I): the owner's reach, the same at every
history of I under perfect recall); normalized per set they are the behaviour strategy whose plan is the average
plan (the ratios telescope), a `CodePolicy` that `rcfr.evaluation.rules` best-responds to.

Each profile costs one depth-first walk of the whole game (`rcfr.sources.walk`, as the evaluation's): every
history, so only games whose full walk is affordable; memory is the sums, 8 bytes per (set, action) of the full
game, plus the code index. With ``shards > 1`` the walk is split at a cut as the evaluation's is
(docs/distributed.md): each shard numbers the sets it meets afresh and returns their codes and increments; the
driver adds each set's increment once (from the first shard, in shard order, that met it: the owner's reach is
the same product at every history of a set) and numbers new sets in that order, which is the one walk's order,
so the sums equal one walk's bit for bit for any shard count; only the value's sum depends on the shard count. Played profiles may be abstract (`CodePolicy.abstraction`): their rows are found by
abstract key while the sums are kept per full set, so the regret is the full game's, as Lanctot's Figure 5.4
measures it.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import types as nb
from numba.typed import Dict

from ..compiler import _grow
from ..distributed import check_sharding, run_shards
from ..evaluation.rules import FAILED, POLICY_ERRORS, decision_set, evaluate, raise_walk_error, subtree_tasks
from ..games.base import GameRules
from ..games.fast import ABSTRACT_CODE, DATA, FUNCTION_TYPES
from ..numba_lazy import njit_on_first_call
from ..options import check_int
from ..policy.rules import CodePolicy, check_default, fast_game, normalized
from ..sources.abstraction import no_abstraction
from ..sources.walk import DEPTH, ROOM, carry_reach, depth_first


def _signature():
    """One compiled walk for every game (its functions are pointers of their roles' types, as in the evaluation
    walk), cached on disk."""
    fn, frozen = FUNCTION_TYPES, nb.Array(nb.int64, 1, "C", readonly=True)
    vector, floats = nb.int64[::1], nb.float64[::1]
    returns = nb.Tuple((nb.float64, vector, vector, floats, vector))
    return returns(fn["initial"], fn["player"], fn["num_children"], fn["child"], fn["utility"], fn["infoset_code"], DATA,
                   nb.int64, frozen, frozen, floats, nb.boolean, nb.FunctionType(ABSTRACT_CODE), DATA, nb.boolean,
                   nb.DictType(nb.int64, nb.int64), vector, vector, floats, vector, vector, nb.int64, vector,
                   nb.int64, nb.int64, nb.int64)


@njit(inline="always")
def _terminal(utility, data, c, v, d, s):
    """Player 0's payoff, weighted by both reaches and chance; a terminal above the cut counts in shard 0 only."""
    if d < c[9] and c[10] != 0:
        return 0
    acc, reach0, reach1, chance = v[6], v[8], v[9], v[10]
    acc[0] += chance[d] * reach0[d] * reach1[d] * utility(data, s)
    return 0


@njit(inline="always")
def _enter(infoset_code, abstract_code, data, c, v, d, s, p, nxt, moves):
    """At a decision: its policy row, and the owner's reach times the row added to its set's sums, once per
    walk (`stamp`)."""
    if p < 0:
        return 0
    codes, first, probs, uniform, abstract_data, abstracted, error, key, walk_id = c[:9]
    index, set_codes, starts, sums, stamp, counts, acc, row, reach0, reach1, chance = v
    m = moves[d]
    if counts[0] + 2 > stamp.shape[0] or counts[1] + m > sums.shape[0]:
        return ROOM  # no room for one more set
    code, i = decision_set(infoset_code, abstract_code, data, s, p, m, codes, first, uniform, abstract_data,
                           abstracted, key, error)
    if i == FAILED:
        return 1
    row[d] = first[i] if i >= 0 else -1
    if code in index:
        j = index[code]
        if starts[j + 1] - starts[j] != m:
            error[0], error[1], error[2], error[3] = 2, code, starts[j + 1] - starts[j], m
            return 1
    else:
        j = counts[0]
        index[code] = j
        set_codes[j] = code
        starts[j + 1] = starts[j] + m
        counts[0] += 1
        counts[1] += m
    if stamp[j] != walk_id:
        stamp[j] = walk_id
        own = reach0[d] if p == 0 else reach1[d]
        for a in range(m):
            sums[starts[j] + a] += own * (probs[row[d] + a] if row[d] >= 0 else 1.0 / m)
    return 0


@njit(inline="always")
def _room(c, v, d, m):
    """The sets' arrays with room for one more set of m actions (doubled where full)."""
    index, set_codes, starts, sums, stamp, counts, acc, row, reach0, reach1, chance = v
    j = counts[0]
    if j + 2 > stamp.shape[0]:
        stamp = _grow(stamp, 2 * (j + 2))
        stamp[j:] = 0
        set_codes = _grow(set_codes, 2 * (j + 2))
        starts = _grow(starts, 2 * (j + 2) + 1)
    if counts[1] + m > sums.shape[0]:
        old = sums.shape[0]
        sums = _grow(sums, 2 * (counts[1] + m))
        sums[old:] = 0.0
    return index, set_codes, starts, sums, stamp, counts, acc, row, reach0, reach1, chance


@njit(inline="always")
def _descend(c, v, d, k):
    """Of the subtrees rooted at the cut (counted in walk order, as the evaluation's shards count them), only
    this shard's: numbers lo <= k < hi (``c[9:13]`` = cut, lo, hi, counter)."""
    if d + 1 == c[9]:
        seen = c[12]
        seen[0] += 1
        return c[10] < seen[0] <= c[11]
    return True


@njit(inline="always")
def _push(c, v, d, k, q, p, m):
    carry_reach(c[2], v[7], v[8], v[9], v[10], d, k, q, p, m)


@njit(inline="always")
def _deeper(c, v, cap):
    index, set_codes, starts, sums, stamp, counts, acc, row, reach0, reach1, chance = v
    return (index, set_codes, starts, sums, stamp, counts, acc, _grow(row, cap), _grow(reach0, cap),
            _grow(reach1, cap), _grow(chance, cap))


_plans_walk = depth_first(_terminal, _enter, _room, _descend, _push, _deeper)


@njit_on_first_call([_signature()], cache=True)
def _plans(initial, player, num_children, child, utility, infoset_code, data, width, codes, first, probs, uniform,
           abstract_code, abstract_data, abstracted, index, set_codes, starts, sums, stamp, counts, walk_id, error,
           cut, lo, hi):
    """Add one profile's plans to the per-set sums S (sets numbered by `index` as first met, set j's actions at
    ``sums[starts[j]:starts[j + 1]]``, ``counts = [sets, slots]``; `stamp` marks the sets credited in this walk,
    since a set's histories share its owner's reach), one walk of `rcfr.sources.walk`. Returns (player 0's expected
    payoff, set_codes, starts, sums, stamp), the arrays grown where needed. On a problem stops with
    ``error = (kind, code, a, b)`` (kinds: `evaluation.POLICY_ERRORS`). A shard enters the subtrees at depth
    `cut` numbered lo <= k < hi (``cut = -1``: the whole game)."""
    c = (codes, first, probs, uniform, abstract_data, abstracted, error, np.zeros(2, np.int64), walk_id, cut, lo, hi,
         np.zeros(1, np.int64))
    v = (index, set_codes, starts, sums, stamp, counts, np.zeros(1),
         np.zeros(DEPTH, np.int64),  # policy row start (-1: uniform) at a decision
         np.ones(DEPTH), np.ones(DEPTH), np.ones(DEPTH))
    status, v = _plans_walk(initial, player, num_children, child, utility, infoset_code, abstract_code, data, width,
                            True, c, v)
    return v[6][0], v[1], v[2], v[3], v[4]


@njit(cache=True)
def _index_add(index, codes, start):
    """Number the new sets `codes` start, start + 1, ... in the code index (no Python loop per set)."""
    for j in range(codes.shape[0]):
        index[codes[j]] = start + j


def _call_plans(fast, policy: CodePolicy, uniform: bool, state: tuple, walk_id: int, error: np.ndarray, task):
    """`_plans` of `policy` on the sums in `state` = (index, set_codes, starts, sums, stamp, counts)."""
    abstraction = policy.abstraction
    return _plans(fast.initial, fast.player, fast.num_children, fast.child, fast.utility, fast.infoset_code, fast.data,
                  fast.width, policy.codes, policy.first, policy.probs.astype(np.float64), uniform,
                  no_abstraction if abstraction is None else abstraction.code,
                  fast.data if abstraction is None else abstraction.data, abstraction is not None, *state, walk_id,
                  error, *task)


def _fresh_sums(sets: int = 1024) -> tuple:
    """An empty code index and sums with room for `sets` sets (they double as needed)."""
    return (Dict.empty(key_type=nb.int64, value_type=nb.int64), np.zeros(sets, np.int64),
            np.zeros(sets + 1, np.int64), np.zeros(4 * sets), np.zeros(sets, np.int64), np.zeros(2, np.int64))


def _plans_shard(common, task) -> dict:
    """One shard of a profile's plan walk (`task` = (cut, lo, hi)): the sets it met in order (codes, action
    offsets), their increments (the owner's reach times the row, once per set) and its share of the value.
    Module-level, so that Ray workers import it."""
    rules, policy, uniform = common
    error = np.zeros(4, np.int64)
    state = _fresh_sums()
    value, set_codes, starts, sums, _ = _call_plans(fast_game(rules), policy, uniform, state, 1, error, task)
    sets, slots = (int(c) for c in state[5])
    return {"value": value, "codes": set_codes[:sets], "starts": starts[:sets + 1], "sums": sums[:slots],
            "error": error}


def check_cut(cut):
    """None (the default cut) or a depth >= 1."""
    return None if cut is None else check_int("cut", cut, 1)


class RulesFullRegret:
    """Each player's average regret in the full game against the profiles it is shown (`CodePolicy`s of
    `rules`), as `rcfr.regrets.FullRegret` computes it on the compiled tree; see the module docstring.
    ``default="uniform"`` plays uniformly at sets a profile lacks (a solver's sets not met yet). ``workers``,
    ``shards``, ``cut``, ``ray_address``: the walk per profile and the best-response walk, split as
    `rcfr.evaluation.rules.walk` splits it (the sums equal one walk's bit for bit, the value to rounding)."""

    def __init__(self, rules: GameRules, default: str | None = "uniform", *, workers: int = 1,
                 shards: int | None = None, cut: int | None = None, ray_address: str | None = None):
        self.rules, self.fast = rules, fast_game(rules)
        self.default = check_default(default)
        self.sharding = dict(check_sharding(workers, shards, ray_address), cut=check_cut(cut))
        self._tasks: list | None = None  # the plan walk's shards, found at the first sharded add
        self.t, self.value = 0, 0.0
        self.index = Dict.empty(key_type=nb.int64, value_type=nb.int64)
        self.set_codes, self.starts = np.zeros(1024, np.int64), np.zeros(1025, np.int64)
        self.sums, self.stamp = np.zeros(4096), np.zeros(1024, np.int64)
        self.counts = np.zeros(2, np.int64)

    def add(self, policy: CodePolicy) -> None:
        """Count `policy` as the next profile σ^t (one walk of the whole game)."""
        if not isinstance(policy, CodePolicy):
            raise TypeError(f"RulesFullRegret counts CodePolicy objects, got {type(policy).__name__}")
        policy.check_rules(self.rules)
        uniform = self.default == "uniform"
        shards, cut = self.sharding["shards"], self.sharding["cut"]
        if shards == 1 and cut is None:
            error = np.zeros(4, np.int64)
            state = (self.index, self.set_codes, self.starts, self.sums, self.stamp, self.counts)
            value, self.set_codes, self.starts, self.sums, self.stamp = _call_plans(
                self.fast, policy, uniform, state, self.t + 1, error, (-1, 0, 1))
            raise_walk_error(self.rules, error, POLICY_ERRORS)
        else:
            if self._tasks is None:
                self._tasks = subtree_tasks(self.rules, shards, cut)
            parts = run_shards(_plans_shard, (self.rules, policy, uniform), self._tasks,
                               workers=self.sharding["workers"], ray_address=self.sharding["ray_address"])
            for part in parts:
                raise_walk_error(self.rules, part["error"], POLICY_ERRORS)
            value = self._reduce(parts)
        self.value += value
        self.t += 1

    def _reduce(self, parts: list[dict]) -> float:
        """Add the shards' increments (in shard order) to the sums, as one walk would: each set once, from the
        first shard that met it, new sets numbered in that order. Returns the value, summed in shard order."""
        codes = np.concatenate([p["codes"] for p in parts])
        sizes = np.concatenate([np.diff(p["starts"]) for p in parts])
        rows = np.concatenate([p["sums"] for p in parts])
        row_first = np.concatenate(([0], np.cumsum(sizes)))
        _, where, inverse = np.unique(codes, return_index=True, return_inverse=True)
        wrong = np.flatnonzero(sizes != sizes[where][inverse.ravel()])
        if len(wrong):
            j = wrong[0]
            error = np.array([2, codes[j], sizes[where][inverse.ravel()[j]], sizes[j]])
            raise_walk_error(self.rules, error, POLICY_ERRORS)
        met = np.sort(where)  # each set's first meeting, in the one walk's order
        met_codes, met_sizes = codes[met], sizes[met]
        within = np.arange(int(met_sizes.sum())) - np.repeat(np.cumsum(met_sizes) - met_sizes, met_sizes)
        increments = rows[np.repeat(row_first[met], met_sizes) + within]
        sets, slots = (int(c) for c in self.counts)
        known = self.set_codes[:sets]
        by_code = np.argsort(known, kind="stable")
        at = np.minimum(np.searchsorted(known[by_code], met_codes), max(sets - 1, 0))
        old = (known[by_code][at] == met_codes) if sets else np.zeros(len(met_codes), bool)
        j = by_code[at[old]]
        clash = self.starts[j + 1] - self.starts[j] != met_sizes[old]
        if clash.any():
            i = int(np.argmax(clash))
            error = np.array([2, met_codes[old][i], self.starts[j[i] + 1] - self.starts[j[i]], met_sizes[old][i]])
            raise_walk_error(self.rules, error, POLICY_ERRORS)
        slot_old = np.repeat(self.starts[j], met_sizes[old]) + within[np.repeat(old, met_sizes)]
        self.sums[slot_old] += increments[np.repeat(old, met_sizes)]
        new_codes, new_sizes = met_codes[~old], met_sizes[~old]
        grown_sets, grown_slots = sets + len(new_codes), slots + int(new_sizes.sum())
        if grown_sets + 1 > len(self.stamp):
            cap = 2 * (grown_sets + 1)
            self.set_codes, self.stamp = _grow(self.set_codes, cap), _grow(self.stamp, cap)
            self.stamp[sets:] = 0
            self.starts = _grow(self.starts, cap + 1)
        if grown_slots > len(self.sums):
            cap = 2 * grown_slots
            tail = len(self.sums)
            self.sums = _grow(self.sums, cap)
            self.sums[tail:] = 0.0
        self.set_codes[sets:grown_sets] = new_codes
        self.starts[sets + 1:grown_sets + 1] = slots + np.cumsum(new_sizes)
        self.sums[slots:grown_slots] += increments[np.repeat(~old, met_sizes)]
        _index_add(self.index, new_codes, sets)
        self.counts[:] = grown_sets, grown_slots
        return float(sum(p["value"] for p in parts))

    def average_policy(self) -> CodePolicy:
        """The behaviour strategy of the average plan of the profiles so far (uniform where a set was never
        reached), at every set of the full game."""
        sets, slots = (int(c) for c in self.counts)
        codes, starts = self.set_codes[:sets], self.starts[:sets + 1]
        order = np.argsort(codes, kind="stable")
        n = np.diff(starts)[order]
        first = np.zeros(sets + 1, np.int64)
        np.cumsum(n, out=first[1:])
        gather = np.repeat(starts[:-1][order] - first[:-1], n) + np.arange(slots)
        return CodePolicy(self.rules, codes[order], first, normalized(self.sums[gather], first, positive=False))

    def average_regrets(self) -> tuple[float, float]:
        """(R_1^T / T, R_2^T / T), unclipped."""
        if not self.t:
            raise ValueError("RulesFullRegret has no profiles yet: call add(policy) once per iteration first")
        best = evaluate(self.rules, self.average_policy(), **self.sharding).best_response_values
        own = (self.value / self.t, -self.value / self.t)
        return best[0] - own[0], best[1] - own[1]

    def positive_sum(self) -> float:
        """(R_1^{T,+} + R_2^{T,+}) / T."""
        return sum(max(r, 0.0) for r in self.average_regrets())

    # ---- checkpoints -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        sets, slots = (int(c) for c in self.counts)
        return {"t": np.array(self.t), "value": np.array(self.value), "codes": self.set_codes[:sets].copy(),
                "starts": self.starts[:sets + 1].copy(), "sums": self.sums[:slots].copy()}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        codes, starts, sums = (np.asarray(state[k]) for k in ("codes", "starts", "sums"))
        sets = len(codes)
        if (starts.shape != (sets + 1,) or starts[0] != 0 or np.any(np.diff(starts) < 1) or starts[-1] != len(sums)
                or len(np.unique(codes)) != sets):
            raise ValueError("full-regret checkpoint's sets are inconsistent (codes, starts, sums)")
        self.__init__(self.rules, self.default, **self.sharding)
        self.t, self.value = int(state["t"]), float(state["value"])
        self.set_codes, self.starts = np.zeros(max(sets, 1) * 2, np.int64), np.zeros(max(sets, 1) * 2 + 1, np.int64)
        self.stamp = np.zeros(max(sets, 1) * 2, np.int64)
        self.sums = np.zeros(max(len(sums), 1) * 2)
        self.set_codes[:sets], self.starts[:sets + 1], self.sums[:len(sums)] = codes, starts, sums
        for j, code in enumerate(codes.tolist()):
            self.index[code] = j
        self.counts[:] = (sets, len(sums))
