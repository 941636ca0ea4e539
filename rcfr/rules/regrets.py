"""The full-game regret of played profiles over the rules: `RulesFullRegret`, `rcfr.regrets.FullRegret` without the
compiled tree.

(R_1^T + R_2^T) / T needs two sums over the profiles σ^1..σ^T a solver played: their values, and each player's
realization plans, whose average is the strategy the opponent's best response is measured against (u is linear
in a plan, so max_σ' (1/T) Σ_t u(σ', σ^t_-i) is a best response to the average plan). Per information set of the
full game the plan sums are S(I, a) = Σ_t π_i^t(I) σ^t(I, a) (π_i^t(I): the owner's reach, the same at every
history of I under perfect recall); normalized per set they are the behaviour strategy whose plan is the average
plan (the ratios telescope), a `CodePolicy` that `rcfr.rules.evaluation` best-responds to.

Each profile costs one depth-first walk of the whole game (`rcfr.rules.walk`, as the evaluation's): every
history, so only games whose full walk is affordable; memory is the sums, 8 bytes per (set, action) of the full
game, plus the code index. Played profiles may be abstract (`CodePolicy.abstraction`): their rows are found by
abstract key while the sums are kept per full set, so the regret is the full game's, as Lanctot's Figure 5.4
measures it.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import types as nb
from numba.typed import Dict

from ..compiler import _grow
from ..distributed import check_sharding
from ..games.base import GameRules
from ..games.fast import ABSTRACT_CODE, DATA, FUNCTION_TYPES
from ..numba_lazy import njit_on_first_call
from .abstraction import no_abstraction
from .evaluation import FAILED, POLICY_ERRORS, decision_set, evaluate, raise_walk_error
from .policy import CodePolicy, check_default, fast_game, normalized
from .walk import DEPTH, ROOM, always, carry_reach, depth_first


def _signature():
    """One compiled walk for every game (its functions are pointers of their roles' types, as in the evaluation
    walk), cached on disk."""
    fn, frozen = FUNCTION_TYPES, nb.Array(nb.int64, 1, "C", readonly=True)
    vector, floats = nb.int64[::1], nb.float64[::1]
    returns = nb.Tuple((nb.float64, vector, vector, floats, vector))
    return returns(fn["initial"], fn["player"], fn["num_children"], fn["child"], fn["utility"], fn["infoset_code"], DATA,
                   nb.int64, frozen, frozen, floats, nb.boolean, nb.FunctionType(ABSTRACT_CODE), DATA, nb.boolean,
                   nb.DictType(nb.int64, nb.int64), vector, vector, floats, vector, vector, nb.int64, vector)


@njit(inline="always")
def _terminal(utility, data, c, v, d, s):
    acc, reach0, reach1, chance = v[6], v[8], v[9], v[10]
    acc[0] += chance[d] * reach0[d] * reach1[d] * utility(data, s)
    return 0


@njit(inline="always")
def _enter(infoset_code, abstract_code, data, c, v, d, s, p, nxt, moves):
    """At a decision: its policy row, and the owner's reach times the row added to its set's sums, once per
    walk (`stamp`)."""
    if p < 0:
        return 0
    codes, first, probs, uniform, abstract_data, abstracted, error, key, walk_id = c
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
def _push(c, v, d, k, q, p, m):
    carry_reach(c[2], v[7], v[8], v[9], v[10], d, k, q, p, m)


@njit(inline="always")
def _deeper(c, v, cap):
    index, set_codes, starts, sums, stamp, counts, acc, row, reach0, reach1, chance = v
    return (index, set_codes, starts, sums, stamp, counts, acc, _grow(row, cap), _grow(reach0, cap),
            _grow(reach1, cap), _grow(chance, cap))


_plans_walk = depth_first(_terminal, _enter, _room, always, _push, _deeper)


@njit_on_first_call([_signature()], cache=True)
def _plans(initial, player, num_children, child, utility, infoset_code, data, width, codes, first, probs, uniform,
           abstract_code, abstract_data, abstracted, index, set_codes, starts, sums, stamp, counts, walk_id, error):
    """Add one profile's plans to the per-set sums S (sets numbered by `index` as first met, set j's actions at
    ``sums[starts[j]:starts[j + 1]]``, ``counts = [sets, slots]``; `stamp` marks the sets credited in this walk,
    since a set's histories share its owner's reach), one walk of `rcfr.rules.walk`. Returns (player 0's expected
    payoff, set_codes, starts, sums, stamp), the arrays grown where needed. On a problem stops with
    ``error = (kind, code, a, b)`` (kinds: `evaluation.POLICY_ERRORS`)."""
    c = (codes, first, probs, uniform, abstract_data, abstracted, error, np.zeros(2, np.int64), walk_id)
    v = (index, set_codes, starts, sums, stamp, counts, np.zeros(1),
         np.zeros(DEPTH, np.int64),  # policy row start (-1: uniform) at a decision
         np.ones(DEPTH), np.ones(DEPTH), np.ones(DEPTH))
    status, v = _plans_walk(initial, player, num_children, child, utility, infoset_code, abstract_code, data, width,
                            True, c, v)
    return v[6][0], v[1], v[2], v[3], v[4]


class RulesFullRegret:
    """Each player's average regret in the full game against the profiles it is shown (`CodePolicy`s of
    `rules`), as `rcfr.regrets.FullRegret` computes it on the compiled tree; see the module docstring.
    ``default="uniform"`` plays uniformly at sets a profile lacks (a solver's sets not met yet). ``workers``,
    ``shards``, ``cut``, ``ray_address``: the best-response walk, split as `rcfr.rules.evaluation.walk` splits it;
    the walk per profile stays one walk here."""

    def __init__(self, rules: GameRules, default: str | None = "uniform", *, workers: int = 1,
                 shards: int | None = None, cut: int | None = None, ray_address: str | None = None):
        self.rules, self.fast = rules, fast_game(rules)
        self.default = check_default(default)
        self.sharding = dict(check_sharding(workers, shards, ray_address), cut=cut)
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
        f, abstraction, error = self.fast, policy.abstraction, np.zeros(4, np.int64)
        value, self.set_codes, self.starts, self.sums, self.stamp = _plans(
            f.initial, f.player, f.num_children, f.child, f.utility, f.infoset_code, f.data, f.width, policy.codes,
            policy.first, policy.probs.astype(np.float64), self.default == "uniform",
            no_abstraction if abstraction is None else abstraction.code,
            f.data if abstraction is None else abstraction.data, abstraction is not None, self.index, self.set_codes,
            self.starts, self.sums, self.stamp, self.counts, self.t + 1, error)
        raise_walk_error(self.rules, error, POLICY_ERRORS)
        self.value += value
        self.t += 1

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
