"""Exact evaluation of a `CodePolicy` of Liar's Dice / Bluff(D1, D2) on its public tree: the numbers of
`rcfr.evaluation.rules` (value, best responses, NashConv, exploitability), minutes instead of hours.

Why it is fast: Bluff's bids and calls are public, only the rolls are private, so an information set is
(own roll, bid sequence) and the histories sharing a bid sequence differ only in the two rolls. One
depth-first walk over the bid sequences (the public tree, never materialised: 2^bids nodes) carries each
player's reach as a vector over its own rolls and returns, per node, each player's counterfactual
values per own roll: the acting player's is the best of its actions roll by roll (a best response; the
set is the roll at this node), the other's is the sum over actions. At a call the payoff depends on the
rolls only through how many dice show the bid's face, so the opponent's weights are bucketed by that
count (O(rolls) per call instead of rolls^2).

Memory: the policy, plus O(bids x rolls x bids) for the walk. A policy's row of set (roll, mask) is found
by its position in a full policy (sorted codes: see `_index`), checked against `codes`, with a binary
search when the policy is partial. A policy of an abstraction (`CodePolicy.abstraction`, e.g. the last-r-bids
recall of `rcfr.abstraction.bluff_last_bids`) is looked up by the abstract key its code function gives
for the set's fast state (own roll, bids, mask, last bid; the opponent's roll left at 0, as a set does
not know it); the best responder still tells every set apart.
"""

from __future__ import annotations

from itertools import combinations_with_replacement

import numpy as np
from numba import njit
from numba import types as nb

from ..games import dice_bid_tree as bids
from ..games.dice import FACE_NAMES, Bluff
from ..games.dice_fast import ROLL0
from ..games.fast import ABSTRACT_CODE, DATA
from ..numba_lazy import njit_on_first_call
from ..policy.rules import CodePolicy
from ..scores import Evaluation
from ..sources.abstraction import no_abstraction
from ..tree.fingerprint import rules_identity
from .rules import POLICY_ERRORS, evaluation_of, raise_walk_error

#: Fields of the walk's `out` array.
OUT_FIELDS = ("value", "br0", "br1", "public_nodes", "infosets", "defaulted")
_ERRORS = {kind: POLICY_ERRORS[kind] for kind in (1, 2)}


def walks(rules) -> bool:
    """Whether this walk evaluates `rules`: the built-in Liar's Dice rules, no method overridden."""
    return isinstance(rules, Bluff) and not overrides(rules, Bluff)


def _check_bluff(rules) -> Bluff:
    if not walks(rules):
        raise TypeError(f"rules must be the built-in Liar's Dice rules (rcfr.make_rules('liars_dice', ...)), "
                        f"got {type(rules).__name__}")
    return rules


def overrides(rules, base: type) -> bool:
    """Whether `rules` (an instance of `base`) changes a rule method of `base`: then it is not the game a
    walk written for `base` knows."""
    from ..tree.enumeration import RULE_METHODS
    return any(name in vars(k) for k in type(rules).__mro__[:type(rules).__mro__.index(base)]
               for name in RULE_METHODS)


def roll_tables(rules: Bluff) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each player's roll probabilities (in the rules' outcome order) and, per roll and face, the dice that
    count for a bid on that face (the face or a star; a star bid counts stars)."""
    faces = len(FACE_NAMES)
    star = faces - 1
    out = []
    for p, dice in enumerate((rules.dice1, rules.dice2)):
        state = rules.initial_state() if p == 0 else rules.next_state(rules.initial_state(), 0)
        probs = np.array([q for _, q in rules.chance_outcomes(state)], np.float64)
        rolls = list(combinations_with_replacement(range(faces), dice))
        counts = np.array([[sum(d == f or d == star for d in roll) for f in range(faces)] for roll in rolls],
                          np.int64)
        out += [probs, counts]
    return out[0], out[2], out[1], out[3]


@njit(cache=True)
def _index(codes, code, r, m, rmin, half):
    """The row of set ``(roll r, mask m)``: where a whole policy has it (`whole_policy_row`), checked; else a
    binary search. Returns -1 if the policy lacks the code."""
    n = codes.shape[0]
    i = bids.whole_policy_row(r, m, rmin, half)
    if i < n and codes[i] == code:
        return i
    i = np.searchsorted(codes, code)
    if i < n and codes[i] == code:
        return i
    return -1


@njit(cache=True)
def _at_least(q, p, counts, face, buckets):
    """Fill ``buckets[k]`` with the weight ``q * p`` of the rolls showing `face` (stars included in
    `counts`) at least k times; return the total weight."""
    buckets[:] = 0.0
    total = 0.0
    for r in range(q.shape[0]):
        w = q[r] * p[r]
        buckets[counts[r, face]] += w
        total += w
    for k in range(buckets.shape[0] - 2, -1, -1):
        buckets[k] += buckets[k + 1]
    return total


@njit(cache=True)
def _call(caller, bid, faces, qa, qb, ca, cb, pa, pb, ta, tb, buckets):
    """Counterfactual values at the call of `bid` by `caller`: ``ta`` (player 0, per own roll) and ``tb``
    (player 1); returns player 0's expected payoff there. Player 0 gets +1 if player 1 loses: the caller
    loses when at least `quantity` dice show the face (or a star)."""
    face = bid % faces
    quantity = bid // faces + 1
    sign = -1.0 if caller == 0 else 1.0  # player 0's payoff when the claim holds
    total = _at_least(qb, pb, cb, face, buckets)  # player 1's weights by its count of the face
    ev = 0.0
    for r in range(qa.shape[0]):
        need = quantity - ca[r, face]
        hold = total if need <= 0 else (buckets[need] if need < buckets.shape[0] else 0.0)
        ta[r] = qa[r] * sign * (2.0 * hold - total)
        ev += pa[r] * ta[r]
    total = _at_least(qa, pa, ca, face, buckets)
    for r in range(qb.shape[0]):
        need = quantity - cb[r, face]
        hold = total if need <= 0 else (buckets[need] if need < buckets.shape[0] else 0.0)
        tb[r] = -qb[r] * sign * (2.0 * hold - total)
    return ev


@njit(cache=True, inline="always")
def finish(out, ev, val, n0, n1):
    """A bid-tree walk's first `OUT_FIELDS`: player 0's value and each player's value summed over its rolls."""
    out[0] = ev[0]
    out[1] = val[0, 0, :n0].sum()
    out[2] = val[1, 0, :n1].sum()


def _walk_signature(probs_dtype):
    frozen = [nb.Array(t, 1, "C", readonly=True) for t in (nb.int64, nb.int64, probs_dtype)]
    return nb.void(nb.int64, nb.int64, nb.float64[::1], nb.float64[::1], nb.int64[:, ::1], nb.int64[:, ::1],
                   *frozen, nb.boolean, nb.FunctionType(ABSTRACT_CODE), DATA, nb.boolean, nb.float64[::1],
                   nb.int64[::1])


@njit_on_first_call([_walk_signature(nb.float64), _walk_signature(nb.float32)], cache=True)
def _walk(nb, faces, q0, q1, c0, c1, codes, first, probs, uniform, abstract_code, abstract_data, abstracted, out,
          error):
    """Depth first over bid sequences (depth = bids made), see the module docstring. Writes `OUT_FIELDS`
    into `out`; on a problem stops with ``error = (kind, code, a, b)`` (kinds: `_ERRORS`)."""
    nrolls = (q0.shape[0], q1.shape[0])
    rmax = max(nrolls[0], nrolls[1])
    rmin, half = bids.row_layout(nb, nrolls[0], nrolls[1])
    depth = nb + 1
    last, mask, _, nxt = bids.bid_path(nb)
    reach = np.ones((2, depth, rmax))
    val = np.zeros((2, depth, rmax))
    ev = np.zeros(depth)
    sig = np.empty((depth, rmax, nb + 1))
    t = np.zeros((2, rmax))
    buckets = np.zeros(max(c0.max(), c1.max()) + 2)
    state = bids.rolled_state()  # a set's fast state, for an abstraction's code function
    key = np.zeros(2, np.int64)
    nodes = 0
    sets = 0
    defaulted = 0
    d = 0
    fresh = True
    while True:
        p, o, L, nact = bids.at_node(nb, last, d)
        k = nb - 1 - L  # bids left
        if fresh:  # enter the node: the acting player's rows, empty accumulators
            fresh = False
            nodes += 1
            m = bids.node_state(state, last, mask, d)
            for r in range(nrolls[p]):
                if abstracted:
                    state[ROLL0 + p] = r
                    abstract_code(abstract_data, state, key)
                    code = 2 * key[0] + p
                    i = np.searchsorted(codes, code)
                    if i == codes.shape[0] or codes[i] != code:
                        i = -1
                else:
                    code = 2 * ((np.int64(r) << nb) + m) + p
                    i = _index(codes, code, r, m, rmin, half)
                sets += 1
                if i < 0:
                    if not uniform:
                        error[0], error[1] = 1, code
                        return
                    defaulted += 1
                    for a in range(nact):
                        sig[d, r, a] = 1.0 / nact
                else:
                    if first[i + 1] - first[i] != nact:
                        error[0], error[1], error[2], error[3] = 2, code, first[i + 1] - first[i], nact
                        return
                    for a in range(nact):
                        sig[d, r, a] = probs[first[i] + a]
                val[p, d, r] = -np.inf
            for r in range(nrolls[o]):
                val[o, d, r] = 0.0
            ev[d] = 0.0
        a = bids.next_action(nxt, d, nact)
        if a >= 0:
            for r in range(nrolls[p]):  # the reaches after action a, in the child's row
                reach[p, d + 1, r] = reach[p, d, r] * sig[d, r, a]
            for r in range(nrolls[o]):
                reach[o, d + 1, r] = reach[o, d, r]
            if a == k:  # the acting player calls
                e = _call(p, L, faces, q0, q1, c0, c1, reach[0, d + 1], reach[1, d + 1], t[0], t[1], buckets)
            else:
                b = L + 1 + a
                if b < nb - 1:  # a decision node: go down
                    d = bids.down(last, mask, nxt, d, b)
                    fresh = True
                    continue
                # the top bid: the next player's call is forced (collapsed, as in the compiled tree)
                e = _call(o, b, faces, q0, q1, c0, c1, reach[0, d + 1], reach[1, d + 1], t[0], t[1], buckets)
            for r in range(nrolls[p]):
                if t[p, r] > val[p, d, r]:
                    val[p, d, r] = t[p, r]
            for r in range(nrolls[o]):
                val[o, d, r] += t[o, r]
            ev[d] += e
            continue
        if d == 0:
            break
        # node done: fold its values into the parent (whose acting player is the other one)
        d -= 1
        p, o = o, p
        for r in range(nrolls[p]):
            if val[p, d + 1, r] > val[p, d, r]:
                val[p, d, r] = val[p, d + 1, r]
        for r in range(nrolls[o]):
            val[o, d, r] += val[o, d + 1, r]
        ev[d] += ev[d + 1]
    finish(out, ev, val, nrolls[0], nrolls[1])
    out[3], out[4], out[5] = nodes, sets, defaulted


def walk(rules: Bluff, policy: CodePolicy, default: str | None = None) -> dict[str, float]:
    """The raw results of the walk (`OUT_FIELDS`), after checking that `policy` belongs to `rules`."""
    rules = _check_bluff(rules)
    if not isinstance(policy, CodePolicy):
        raise TypeError(f"policy must be a CodePolicy, got {type(policy).__name__}")
    default = policy.default_for(default)
    policy.check_rules(rules)
    q0, q1, c0, c1 = roll_tables(rules)
    out = np.zeros(len(OUT_FIELDS))
    error = np.zeros(4, np.int64)
    abstraction = policy.abstraction
    _walk(rules.num_bids, c0.shape[1], q0, q1, c0, c1, policy.codes, policy.first, policy.probs,
          default == "uniform", no_abstraction if abstraction is None else abstraction.code,
          rules.fast().data if abstraction is None else abstraction.data, abstraction is not None, out, error)
    raise_walk_error(rules, error, _ERRORS)
    return dict(zip(OUT_FIELDS, out.tolist()))


def evaluate(rules: Bluff, policy: CodePolicy, default: str | None = None) -> Evaluation:
    """Value, best-response values, NashConv and exploitability, as `rcfr.evaluate` gives them."""
    return evaluation_of(rules, walk(rules, policy, default))


# ---- whole policies, built without a Python object per set -------------------------------------
@njit(cache=True)
def _fill_codes(nb, r0, r1, codes, first):
    """Every decision set's code in increasing order (see `_index`) and its row offsets."""
    j = 0
    top = np.int64(1) << (nb - 1)
    for r in range(max(r0, r1)):
        for m in range(top):
            p = 0
            x = m
            while x:
                p ^= 1
                x &= x - 1
            if r >= (r0 if p == 0 else r1):
                continue
            codes[j] = 2 * ((np.int64(r) << nb) + m) + p
            high = -1
            x = m
            while x:
                high += 1
                x >>= 1
            first[j + 1] = first[j] + nb - 1 - high + (1 if m else 0)
            j += 1
    return j


@njit(cache=True)
def _fill_probs(first, probs, seed):
    """Rows uniform (seed < 0) or drawn uniformly from the simplex (exponential weights, normalised)."""
    if seed >= 0:
        np.random.seed(seed)
    for i in range(first.shape[0] - 1):
        lo, hi = first[i], first[i + 1]
        if seed < 0:
            for j in range(lo, hi):
                probs[j] = 1.0 / (hi - lo)
        else:
            total = 0.0
            w = np.empty(hi - lo)
            for j in range(hi - lo):
                w[j] = -np.log(1.0 - np.random.random())
                total += w[j]
            for j in range(hi - lo):
                probs[lo + j] = w[j] / total


def num_decision_sets(rules: Bluff) -> int:
    """Sets with a choice: per roll, the bid sequences of the player's parity not ending in the top bid."""
    q0, q1, _, _ = roll_tables(rules)
    return (len(q0) + len(q1)) * 2 ** (rules.num_bids - 2)


def bluff_policy(rules: Bluff, kind: str = "uniform", seed: int = 0, dtype=np.float64) -> CodePolicy:
    """A whole `CodePolicy` of Bluff(D1, D2): ``kind="uniform"`` or ``"random"`` (each row uniform on the
    simplex, from `seed`), probabilities in `dtype` (float64 or float32). Built in numba and handed to
    the policy without its row checks (which would copy the ~5-7 GB of Bluff(2,2) twice): the rows are
    correct by construction, which `tests/test_bluff_evaluation.py` checks against the checked path."""
    rules = _check_bluff(rules)
    if kind not in ("uniform", "random"):
        raise ValueError(f"kind must be 'uniform' or 'random', got {kind!r}")
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}")
    codes, first = decision_sets(rules)
    probs = np.empty(int(first[-1]), dtype)
    _fill_probs(first, probs, -1 if kind == "uniform" else int(seed))
    return whole_policy(rules, codes, first, probs)


def decision_sets(rules: Bluff) -> tuple[np.ndarray, np.ndarray]:
    """Every decision set's code, in increasing order, and its row offsets (a whole policy's layout)."""
    q0, q1, _, _ = roll_tables(rules)
    n = num_decision_sets(rules)
    codes = np.empty(n, np.int64)
    first = np.zeros(n + 1, np.int64)
    if _fill_codes(rules.num_bids, len(q0), len(q1), codes, first) != n:
        raise AssertionError("Bluff's decision sets miscounted")
    return codes, first


def whole_policy(rules: Bluff, codes: np.ndarray, first: np.ndarray, probs: np.ndarray) -> CodePolicy:
    """The `CodePolicy` of rows built in the layout of `decision_sets`, without the row checks (correct by
    construction; they would copy Bluff(2,2)'s gigabytes twice). The arrays become read-only."""
    policy = CodePolicy.__new__(CodePolicy)
    policy.description, policy.fingerprint = rules.description(), rules_identity(rules)
    for array in (codes, first, probs):
        array.setflags(write=False)
    policy.codes, policy.first, policy.probs = codes, first, probs
    return policy
