"""Exact evaluation over the rules (`FastGame` functions), without the compiled tree: expected value, best
responses, NashConv and exploitability of a `CodePolicy`, in `rcfr.evaluation`'s conventions and units.

One depth-first walk (`rcfr.sources.walk`, an explicit stack: memory O(depth) for the walk) computes everything. At each
terminal it adds the chance- and opponent-weighted payoff to each player's *last own sequence* on the way
there: the sequence form's terminal values, one float64 per sequence of the policy. It also records, per
information set of the policy, the owner's sequence leading to it (the same at every history of the set
under perfect recall, which the walk checks) and the order the sets were first met. A best response is
then one bottom-up pass over the sets in reverse order of first encounter (a set is met after the set
above it), adding each set's best action value to its parent sequence: exactly what the compiled path
does on its sequence form, and right for hidden actions (Goofspiel, Latent Tic-Tac-Toe), since the value of
a set sums its histories before the choice. Memory: O(depth + sequences), 8 bytes per sequence and
17 per set beside the policy itself, whatever the number of histories.

Information sets are found by binary search of their code in the policy (a set with a code the policy
lacks is an error, or, with ``default="uniform"``, uniform and numbered in a numba dictionary). A policy of an
abstraction (`CodePolicy.abstraction`) has rows per abstract set: a decision's row is found by its abstract
key (``2 * abstract code + player``), while its full information set, which the best response needs, is
numbered in the dictionary by its own code: the best responder still remembers everything.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import types as nb
from numba.typed import Dict

from ..budget import check_walk
from ..compiler import _grow
from ..distributed import check_sharding, run_shards
from ..errors import PolicyError
from ..games.base import GameRules
from ..games.fast import ABSTRACT_CODE, DATA, FUNCTION_TYPES
from ..numba_lazy import njit_on_first_call
from ..options import check_int
from ..policy.rules import CodePolicy, fast_game
from ..scores import Evaluation
from ..sources.abstraction import no_abstraction
from ..sources.walk import DEPTH, ROOM, carry_reach, depth_first
from .shards import merge

_FN = FUNCTION_TYPES
#: Fields of the walk's `out` array.
OUT_FIELDS = ("value", "br0", "br1", "histories", "depth", "infosets", "extra_infosets", "subtrees")
#: What `_walk` returns: terminal values per sequence (the policy's, then the extra sets'), per set the owner's
#: sequence above it (-1: empty, -2: not met) and owner, the sets in order of first meeting, the extra sets'
#: first sequences (offsets past the policy's) and codes.
SHARD_ARRAYS = ("tv", "above", "owner", "order", "extra_first", "extra_code")
#: What a walk that reads a `CodePolicy` may find wrong with it (error kinds shared by every such walk).
POLICY_ERRORS = {
    1: "an information set whose code {code} is not in the policy (pass default='uniform' to play uniformly "
       "at sets the policy lacks)",
    2: "the information set with code {code}: the policy has {a} actions, the rules {b}",
    3: "the information set with code {code}, reached after different own sequences (imperfect recall: "
       "a best response over the rules needs perfect recall)",
}
_ERRORS = {
    **POLICY_ERRORS,
    4: "the information set with code {code}, where players {a} and {b} both act: infoset_code must tell "
       "the players' sets apart",
}


FAILED = -2  # what `policy_set` returns after filing an error


@njit(cache=True, inline="always")
def policy_set(codes, first, look, m, uniform, error):
    """The policy's row index of the decision keyed `look` (m legal actions): -1 where the policy lacks it and
    plays uniformly, `FAILED` after filing ``error`` (kinds 1 and 2 of `POLICY_ERRORS`). Every walk that reads a
    `CodePolicy` finds its rows here."""
    i = np.searchsorted(codes, look)
    if i < codes.shape[0] and codes[i] == look:
        if first[i + 1] - first[i] != m:
            error[0], error[1], error[2], error[3] = 2, look, first[i + 1] - first[i], m
            return FAILED
        return i
    if not uniform:
        error[0], error[1] = 1, look
        return FAILED
    return -1


@njit(inline="always")
def decision_set(infoset_code, abstract_code, data, s, p, m, codes, first, uniform, abstract_data, abstracted, key,
                 error):
    """(code, `policy_set`) of player p's decision at state s: its row found by its code, or under an
    abstraction by its abstract key (``2 * abstract code + p``)."""
    code = infoset_code(data, s)
    look = code
    if abstracted:
        abstract_code(abstract_data, s, key)
        look = 2 * key[0] + p
    return code, policy_set(codes, first, look, m, uniform, error)


def _walk_signature(probs_dtype):
    """The policy's arrays are read-only (`CodePolicy` freezes them). Returns the arrays the best response
    needs (`SHARD_ARRAYS`)."""
    frozen = [nb.Array(t, 1, "C", readonly=True) for t in (nb.int64, nb.int64, probs_dtype)]
    vector = nb.int64[::1]
    returns = nb.Tuple((nb.float64[::1], vector, nb.int8[::1], vector, vector, vector))
    return returns(_FN["initial"], _FN["player"], _FN["num_children"], _FN["child"], _FN["utility"],
                   _FN["infoset_code"], DATA, nb.int64, *frozen, nb.boolean, nb.FunctionType(ABSTRACT_CODE), DATA,
                   nb.boolean, nb.float64[::1], vector, nb.int64, nb.int64, nb.int64)


@njit(inline="always")
def _count(c, v, d):
    """Counts the node at depth d (the prefix above the cut belongs to the first shard); whether it counted."""
    cut, lo = c[8], c[9]
    cnt = v[8]
    counted = d >= cut or lo == 0
    if counted:
        cnt[0] += 1
    if d > cnt[1]:
        cnt[1] = d
    return counted


@njit(inline="always")
def _terminal(utility, data, c, v, d, s):
    """Adds the chance- and opponent-weighted payoff to each player's last own sequence (or root)."""
    tv, acc, reach0, reach1, chance, seq0, seq1 = v[0], v[7], v[11], v[12], v[13], v[14], v[15]
    if not _count(c, v, d):
        return 0
    u = utility(data, s)
    w = chance[d]
    acc[0] += w * reach0[d] * reach1[d] * u
    if seq0[d] >= 0:
        tv[seq0[d]] += w * reach1[d] * u
    else:
        acc[1] += w * reach1[d] * u
    if seq1[d] >= 0:
        tv[seq1[d]] -= w * reach0[d] * u
    else:
        acc[2] -= w * reach0[d] * u
    return 0


@njit(inline="always")
def _enter(infoset_code, abstract_code, data, c, v, d, s, p, nxt, moves):
    """At a decision: its policy row, its set (numbered as met where the policy lacks it or is abstract), and
    the owner's sequence above the set, checked against the set's earlier histories."""
    codes, first, uniform, abstract_data, abstracted, error, key, n, nseq = (
        c[0], c[1], c[3], c[4], c[5], c[6], c[7], c[11], c[12])
    tv, above, extra_first, cnt = v[0], v[1], v[4], v[8]
    m = moves[d]
    if (uniform or abstracted) and p >= 0 and (n + cnt[3] + 1 > above.shape[0] or nseq + cnt[4] + m > tv.shape[0]):
        return ROOM  # no room for one more set
    _count(c, v, d)
    if p < 0:
        return 0
    owner, order, extra_code, extra, row, base, seq0, seq1 = v[2], v[3], v[5], v[6], v[9], v[10], v[14], v[15]
    code, i = decision_set(infoset_code, abstract_code, data, s, p, m, codes, first, uniform, abstract_data,
                           abstracted, key, error)
    if i == FAILED:
        return 1
    found = i >= 0
    row[d] = first[i] if found else -1
    if found and not abstracted:
        base[d] = first[i]
    else:  # the full set, numbered as met
        if code in extra:
            i = extra[code]
            if extra_first[i - n + 1] - extra_first[i - n] != m:
                error[0], error[1] = 2, code
                error[2], error[3] = extra_first[i - n + 1] - extra_first[i - n], m
                return 1
        else:
            extras = cnt[3] + 1
            i = n + extras - 1
            extra[code] = i
            cnt[3] = extras
            extra_first[extras] = extra_first[extras - 1] + m
            extra_code[extras - 1] = code
            cnt[4] += m
        base[d] = nseq + extra_first[i - n]
    mine = seq0[d] if p == 0 else seq1[d]
    if above[i] == -2:
        above[i] = mine
        owner[i] = p
        order[cnt[2]] = i
        cnt[2] += 1
    elif owner[i] != p:
        error[0], error[1], error[2], error[3] = 4, code, owner[i], p
        return 1
    elif above[i] != mine:
        error[0], error[1] = 3, code
        return 1
    return 0


@njit(inline="always")
def _room(c, v, d, m):
    """The sets' arrays with room for one more set of m actions (doubled where full)."""
    n, nseq = c[11], c[12]
    tv, above, owner, order, extra_first, extra_code, extra, acc, cnt, row, base, r0, r1, ch, seq0, seq1 = v
    if n + cnt[3] + 1 > above.shape[0]:
        cap_sets = 2 * above.shape[0]
        above = _grow(above, cap_sets)
        above[n + cnt[3]:] = -2
        owner = _grow(owner, cap_sets)
        order = _grow(order, cap_sets)
        extra_first = _grow(extra_first, cap_sets - n + 1)
        extra_code = _grow(extra_code, cap_sets - n)
    if nseq + cnt[4] + m > tv.shape[0]:
        old = tv.shape[0]
        tv = _grow(tv, 2 * (nseq + cnt[4] + m))
        tv[old:] = 0.0
    return tv, above, owner, order, extra_first, extra_code, extra, acc, cnt, row, base, r0, r1, ch, seq0, seq1


@njit(inline="always")
def _descend(c, v, d, k):
    """Of the subtrees rooted at the cut, only the shard's own."""
    cut, lo, hi = c[8], c[9], c[10]
    cnt = v[8]
    if d + 1 == cut:
        cnt[5] += 1
        if cnt[5] <= lo or cnt[5] > hi:  # another shard's subtree
            return False
    return True


@njit(inline="always")
def _push(c, v, d, k, q, p, m):
    """Reaches, chance and each player's last own sequence, one move down."""
    base, seq0, seq1 = v[10], v[14], v[15]
    carry_reach(c[2], v[9], v[11], v[12], v[13], d, k, q, p, m)
    e = d + 1
    seq0[e], seq1[e] = seq0[d], seq1[d]
    if p == 0:
        seq0[e] = base[d] + k
    elif p == 1:
        seq1[e] = base[d] + k


@njit(inline="always")
def _deeper(c, v, cap):
    tv, above, owner, order, extra_first, extra_code, extra, acc, cnt, row, base, r0, r1, ch, seq0, seq1 = v
    return (tv, above, owner, order, extra_first, extra_code, extra, acc, cnt, _grow(row, cap), _grow(base, cap),
            _grow(r0, cap), _grow(r1, cap), _grow(ch, cap), _grow(seq0, cap), _grow(seq1, cap))


_evaluation_walk = depth_first(_terminal, _enter, _room, _descend, _push, _deeper)


@njit_on_first_call([_walk_signature(nb.float64), _walk_signature(nb.float32)], cache=True)
def _walk(initial, player, num_children, child, utility, infoset_code, data, width, codes, first, probs,
          uniform, abstract_code, abstract_data, abstracted, out, error, cut, lo, hi):
    """The depth-first walk (`rcfr.sources.walk`), see the module docstring, without the bottom-up pass
    (`_best_responses`): writes `OUT_FIELDS` (``br0``, ``br1``: the terminals reached with an empty own
    sequence) into `out` and returns `SHARD_ARRAYS`; on a problem stops with ``error = (kind, code, a, b)``
    (kinds: `_ERRORS`).

    A shard of the walk: of the subtrees rooted at depth `cut` (counted in walk order) it enters those numbered
    lo <= k < hi, and counts the histories above the cut only when ``lo == 0`` (``cut = -1``: the whole walk)."""
    n = codes.shape[0]
    nseq = probs.shape[0]
    # per information set: its owner's sequence above it (-1: the empty one; -2: not met yet), owner,
    # row start in `tv`; sets the policy lacks (default uniform) get ids n, n + 1, ... as met
    cap_sets = n + (16 if uniform or abstracted else 0)
    cap_seq = nseq + (64 if uniform or abstracted else 0)
    c = (codes, first, probs, uniform, abstract_data, abstracted, error, np.zeros(2, np.int64), cut, lo, hi, n, nseq)
    v = (np.zeros(cap_seq), np.full(cap_sets, -2, np.int64), np.zeros(cap_sets, np.int8), np.empty(cap_sets, np.int64),
         np.zeros(cap_sets - n + 1, np.int64), np.zeros(cap_sets - n, np.int64),
         Dict.empty(key_type=nb.int64, value_type=nb.int64),
         np.zeros(3),  # value, root0, root1
         np.zeros(6, np.int64),  # visits, deepest, sets met, extra sets, extra sequences, subtrees
         np.zeros(DEPTH, np.int64),  # policy row start (-1: uniform) at a decision
         np.zeros(DEPTH, np.int64),  # first sequence (index into tv) of the set at a decision
         np.ones(DEPTH), np.ones(DEPTH), np.ones(DEPTH), np.full(DEPTH, -1, np.int64), np.full(DEPTH, -1, np.int64))
    status, v = _evaluation_walk(initial, player, num_children, child, utility, infoset_code, abstract_code, data, width,
                                 True, c, v)
    acc, cnt = v[7], v[8]
    if status == 0:
        out[0], out[1], out[2] = acc[0], acc[1], acc[2]
        out[3], out[4], out[5], out[6], out[7] = cnt[0], cnt[1], cnt[2], cnt[3], cnt[5]
    return v[0], v[1], v[2], v[3], v[4], v[5]


@njit(cache=True)
def _best_responses(order, above, owner, first, extra_first, tv, out):
    """The bottom-up pass over the sets met (`order`, `n` = the policy's sets first, then the extra ones):
    a set is met after the set above it, so reverse order of first meeting is children first. Adds each set's
    best action value to the sequence above it (`tv`, in place) and the roots to ``out[1]``, ``out[2]``."""
    n = first.shape[0] - 1
    nseq = first[n]
    root0 = out[1]
    root1 = out[2]
    for j in range(order.shape[0] - 1, -1, -1):
        i = order[j]
        if i < n:
            lo, hi = first[i], first[i + 1]
        else:
            lo, hi = nseq + extra_first[i - n], nseq + extra_first[i - n + 1]
        best = tv[lo]
        for t in range(lo + 1, hi):
            if tv[t] > best:
                best = tv[t]
        if above[i] >= 0:
            tv[above[i]] += best
        elif owner[i] == 0:
            root0 += best
        else:
            root1 += best
    out[1], out[2] = root0, root1


def walk(rules: GameRules, policy: CodePolicy, default: str | None = None, *, workers: int = 1,
         shards: int | None = None, cut: int | None = None, ray_address: str | None = None) -> dict[str, float]:
    """The raw results of the walk (`OUT_FIELDS`), after checking that `policy` belongs to `rules`.

    ``shards > 1`` (by default `workers`) splits the walk at depth `cut` (by default the shallowest with at
    least `SUBTREES_PER_SHARD` subtrees per shard) into contiguous runs of subtrees, walked in this process
    (``workers=1``) or on Ray workers (`rcfr.distributed.run_shards`), and reduced in shard order: the same
    numbers for a given shard count wherever the shards ran, equal across shard counts to rounding."""
    if not isinstance(policy, CodePolicy):
        from ..policy import Policy
        if not isinstance(policy, Policy):
            raise TypeError(f"policy must be a CodePolicy (or a compiled rcfr.Policy), got {type(policy).__name__}")
        policy = CodePolicy.from_policy(policy)
    default = policy.default_for(default)
    policy.check_rules(rules)
    check_walk(rules, "an exact evaluation")
    workers, shards, ray_address = check_sharding(workers, shards, ray_address).values()
    cut = None if cut is None else check_int("cut", cut, 1)
    common = (rules, policy, default == "uniform")
    if shards == 1 and cut is None:
        arrays = _shard(common, (-1, 0, 1))
        out, error = arrays["out"], arrays["error"]
    else:
        tasks = subtree_tasks(rules, shards, cut, common)
        parts = run_shards(_shard, common, tasks, workers=workers, ray_address=ray_address)
        for part in parts:
            raise_walk_error(rules, part["error"], _ERRORS)
        arrays, out, error = merge(parts, policy.first, policy.codes)
    raise_walk_error(rules, error, _ERRORS)
    _best_responses(arrays["order"], arrays["above"], arrays["owner"], policy.first, arrays["extra_first"],
                    arrays["tv"], out)
    raw = dict(zip(OUT_FIELDS, out.tolist()))
    unmatched = len(policy.codes) - int(raw["infosets"] - raw["extra_infosets"])
    if policy.abstraction is None and unmatched:  # rows whose codes the walk never met: not this game's sets
        raise PolicyError(f"{unmatched} of the {len(policy.codes)} rows of this code policy of "
                          f"{rules.description()} match no information set of the game (codes the rules never "
                          f"give); the policy was built for other codes")
    return raw


#: The default cut: the shallowest depth with at least this many subtrees per shard (contiguous runs of many
#: subtrees balance the shards' work when subtrees differ in size).
SUBTREES_PER_SHARD = 32


def _cut(common, shards: int, cut: int | None) -> tuple[int, int]:
    """(cut depth, subtrees there): `cut` as given, else the default; each count walks only the prefix."""
    if cut is not None:
        return cut, int(_shard(common, (cut, 0, 0))["out"][7])
    best = (1, 0)
    for depth in range(1, 1 << 10):
        subtrees = int(_shard(common, (depth, 0, 0))["out"][7])
        if subtrees == 0:  # past the deepest history
            return best
        best = max(best, (depth, subtrees), key=lambda c: c[1])
        if subtrees >= SUBTREES_PER_SHARD * shards:
            return depth, subtrees
    return best


def subtree_tasks(rules: GameRules, shards: int, cut: int | None, common=None) -> list[tuple[int, int, int]]:
    """Each shard's (cut, lo, hi): contiguous runs of the subtrees at depth `cut` (the default as `_cut`) in walk
    order. Refuses more shards than subtrees. `common` is the walk's (rules, policy, uniform); by default an
    empty policy played uniformly (the subtrees are the game's, whatever the policy), so walks of other visitors
    (the full regret's plans, CFR iterations) split where the evaluation does."""
    if common is None:
        common = (rules, CodePolicy(rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0)), True)
    cut, subtrees = _cut(common, shards, cut)
    if shards > subtrees:
        raise ValueError(f"shards={shards} is more than the {subtrees:,} subtrees at cut depth {cut} of "
                         f"{rules.description()}; pass fewer shards or a deeper cut")
    return [(cut, k * subtrees // shards, (k + 1) * subtrees // shards) for k in range(shards)]


def _shard(common, task) -> dict:
    """One shard of the walk (`task` = (cut, lo, hi)): its `OUT_FIELDS`, error and `SHARD_ARRAYS`, trimmed.
    Module-level, so that Ray workers import it."""
    rules, policy, uniform = common
    cut, lo, hi = task
    fast = fast_game(rules)
    out = np.zeros(len(OUT_FIELDS))
    error = np.zeros(4, np.int64)
    abstraction = policy.abstraction
    tv, above, owner, order, extra_first, extra_code = _walk(
        fast.initial, fast.player, fast.num_children, fast.child, fast.utility, fast.infoset_code, fast.data,
        fast.width, policy.codes, policy.first, policy.probs, uniform,
        no_abstraction if abstraction is None else abstraction.code,
        fast.data if abstraction is None else abstraction.data, abstraction is not None, out, error, cut, lo, hi)
    n, met, extras = len(policy.codes), int(out[5]), int(out[6])
    return {"out": out, "error": error, "tv": tv[:len(policy.probs) + extra_first[extras]],
            "above": above[:n + extras], "owner": owner[:n + extras], "order": order[:met],
            "extra_first": extra_first[:extras + 1], "extra_code": extra_code[:extras]}


def raise_walk_error(rules: GameRules, error: np.ndarray, messages: dict[int, str]) -> None:
    """The ValueError a walk's ``error = (kind, code, a, b)`` stands for (none if kind is 0), naming the game."""
    if error[0]:
        detail = messages[int(error[0])].format(code=int(error[1]), a=int(error[2]), b=int(error[3]))
        raise ValueError(f"evaluating a code policy of {rules.description()}: {detail}")


def evaluation_of(rules: GameRules, raw: dict[str, float]) -> Evaluation:
    """The `Evaluation` of a walk's raw results (``value``, ``br0``, ``br1``)."""
    br = (raw["br0"], raw["br1"])
    nash_conv = br[0] + br[1]
    return Evaluation(value=raw["value"], best_response_values=br, nash_conv=nash_conv,
                      exploitability=nash_conv / 2, exploitability_mbb=1000.0 * nash_conv / 2 / rules.big_blind)


def evaluate(rules: GameRules, policy: CodePolicy, default: str | None = None, **sharding) -> Evaluation:
    """Value, best-response values, NashConv and exploitability, as `rcfr.evaluate` gives them; `sharding`:
    `walk`'s ``workers``, ``shards``, ``cut``, ``ray_address``."""
    return evaluation_of(rules, walk(rules, policy, default, **sharding))


def expected_value(rules: GameRules, policy: CodePolicy, default: str | None = None) -> float:
    """Player 0's expected payoff when both players follow `policy`."""
    return walk(rules, policy, default)["value"]


def best_response_value(rules: GameRules, policy: CodePolicy, player: int, default: str | None = None) -> float:
    """Player `player`'s best-response value (its own payoff) against the other's part of `policy`."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    return walk(rules, policy, default)[f"br{player}"]


def nash_conv(rules: GameRules, policy: CodePolicy, default: str | None = None, **sharding) -> float:
    """BR_0 + BR_1, chips."""
    return evaluate(rules, policy, default, **sharding).nash_conv


def exploitability(rules: GameRules, policy: CodePolicy, unit: str = "chips", default: str | None = None,
                   **sharding) -> float:
    """(BR_0 + BR_1) / 2, in chips (``unit="chips"``) or milli-big-blinds per game (``"mbb"``)."""
    if unit not in ("chips", "mbb"):
        raise ValueError(f"unit must be 'chips' or 'mbb', got {unit!r}")
    result = evaluate(rules, policy, default, **sharding)
    return result.exploitability if unit == "chips" else result.exploitability_mbb
