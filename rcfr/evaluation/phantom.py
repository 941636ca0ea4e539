"""Exact evaluation of a `CodePolicy` of Phantom Tic-Tac-Toe: the numbers of `rcfr.evaluation.rules` (value,
best responses, NashConv, exploitability), for the full game in minutes instead of hours.

Why it is fast. A player's information set is its own tries, so each player's sets form a tree over its
own sequences that is known before any history is walked: `PlayerSets` builds it with the belief walk of
`rcfr.games.phantom_sizes` (seconds for the full game), each set with its legal squares, its actions'
probabilities and, per action and outcome (failed or placed), the player's next set. The history walk
then carries each player's current set and sequence as indices: a node is a few bit operations and
array reads, with no information-set code, no search of the policy and no game function called through
a pointer (what bounds `rcfr.evaluation.rules` at ~1.5e6 histories/s). What it computes is that walk's:
at each terminal the opponent-weighted payoff goes to each player's last sequence, then a best response
is one bottom-up pass over each player's sets (children after parents in the build, so reverse order).
It still visits every history: the opponent acts by its whole try sequence, so carrying its possible
states along one player's sequences (as the set count does) would carry one state per history.

Both cores: the histories are cut at `CUT` moves into items dealt round-robin to `workers` threads (the
walk releases the GIL), each summing into its own row of the sequence values; the rows are added in a
fixed order, so the result does not depend on scheduling (only, in the last bits, on `workers`).

Memory: per set of either player 32 bytes and per sequence 24 + 8 x workers (the full game: 6.0M sets,
12.2M sequences, about 0.7 GB with two workers), nothing per history.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit
from numba import types as nb

from ..compiler import _grow
from ..games.fast import ABSTRACT_CODE, DATA
from ..games.phantom import PhantomTicTacToe
from ..games.phantom_fast import BASE, CODE, KNOWN, PLAYER, WIDTH, WIN_MASKS
from ..games.phantom_sizes import FULL, _popcount, _root_belief, _try_square
from ..numba_lazy import njit_on_first_call
from ..options import check_choice, check_int, check_seed
from ..policy.rules import CodePolicy, check_default
from ..scores import Evaluation
from ..sources.abstraction import no_abstraction
from .bluff import overrides
from .rules import (
    FAILED,
    POLICY_ERRORS,
    evaluation_of,
    policy_set,
    raise_walk_error,
)

#: Fields of the walk's results.
OUT_FIELDS = ("value", "br0", "br1", "histories", "infosets", "defaulted")
_ERRORS = {kind: POLICY_ERRORS[kind] for kind in (1, 2)}
#: Moves walked before the histories are split into items (~650 items on the full game).
CUT = 3


def walks(rules) -> bool:
    """Whether this walk evaluates `rules`: the built-in Phantom Tic-Tac-Toe rules, no method overridden."""
    return isinstance(rules, PhantomTicTacToe) and not overrides(rules, PhantomTicTacToe)


# ---- each player's sets, built once ------------------------------------------------------------
@njit(cache=True)
def _player_sets(me, marks0, marks1, closed, to_move, masks):
    """Player `me`'s information sets (collapsed forced moves included, as one-action sets) in preorder:
    its tries' code (base `BASE`, as `phantom_fast`), the squares it may not try, the offsets of its
    sequences (one per legal square, in increasing order), the sequence above each set (-1: none) and
    ``child[2 * sequence + placed]``, the set it reaches next (-1: none). The walk is `_count_player`'s
    of `phantom_sizes`: a try sequence is a set where the opponent may still be in some state."""
    cap = 1024
    code = np.empty(cap, np.int64)
    known_of = np.empty(cap, np.int64)
    first = np.zeros(cap + 1, np.int64)
    parent = np.empty(cap, np.int64)
    child = np.full(2 * 9 * cap, -1, np.int64)
    n = 0
    pool = np.empty(1 << 22, np.int64)
    mark = np.zeros(1 << 18, np.int64)
    stamp = 2
    mine0, top = _root_belief(me, marks0, marks1, closed, to_move, masks, pool, mark)
    if top == 0:
        return code[:0], known_of[:0], first[:1], parent[:0], child[:0]
    f_mine = np.empty(32, np.int64)
    f_known = np.empty(32, np.int64)
    f_start = np.empty(32, np.int64)
    f_end = np.empty(32, np.int64)
    f_next = np.empty(32, np.int64)
    f_set = np.empty(32, np.int64)
    d = 0
    f_mine[0], f_known[0], f_start[0], f_end[0], f_next[0], f_set[0] = mine0, closed, 0, top, 0, 0
    code[0], known_of[0], parent[0], first[1] = 0, closed, -1, 9 - _popcount(closed)
    n = 1
    while d >= 0:
        k = f_next[d]
        if k == 18:  # every (square, outcome) tried: back to the set above
            d -= 1
            continue
        f_next[d] = k + 1
        q, placed = k >> 1, k & 1
        bit = 1 << q
        known = f_known[d]
        if known & bit:
            continue
        start = f_end[d]
        mine, top = _try_square(pool, f_start[d], start, f_mine[d], bit, placed, masks, stamp, mark)
        stamp += 1
        if top == start:
            continue
        if n == cap:
            cap *= 2
            code, known_of, parent = _grow(code, cap), _grow(known_of, cap), _grow(parent, cap)
            first = _grow(first, cap + 1)
            old = child.shape[0]
            child = _grow(child, 2 * 9 * cap)
            child[old:] = -1
        above = f_set[d]
        seq = first[above] + _popcount(~known & (bit - 1) & FULL)  # the rank of q among the legal squares
        child[2 * seq + placed] = n
        code[n] = code[above] * BASE + 2 * q + 1 + placed
        known_of[n] = known | bit
        parent[n] = seq
        first[n + 1] = first[n] + 9 - _popcount(known | bit)
        d += 1
        f_mine[d], f_known[d], f_start[d], f_end[d], f_next[d], f_set[d] = mine, known | bit, start, top, 0, n
        n += 1
    return code[:n], known_of[:n], first[:n + 1], parent[:n], child[:2 * first[n]]


def _probs_signature(probs_dtype):
    frozen = [nb.Array(t, 1, "C", readonly=True) for t in (nb.int64, nb.int64, probs_dtype)]
    return nb.void(nb.int64, nb.int64[::1], nb.int64[::1], nb.int64[::1], *frozen, nb.boolean,
                   nb.FunctionType(ABSTRACT_CODE), DATA, nb.boolean, nb.float64[::1], nb.int64[::1], nb.int64[::1])


@njit_on_first_call([_probs_signature(nb.float64), _probs_signature(nb.float32)], cache=True)
def _set_probs(p, code, known, first, codes, first_row, probs, uniform, abstract_code, abstract_data, abstracted,
               out, defaulted, error):
    """``out[sequence]``: each action's probability at player `p`'s sets (1 at a forced move; uniform where
    the policy lacks the set and `uniform`); on a problem stops with ``error = (kind, code, a, b)``."""
    state = np.zeros(WIDTH, np.int64)
    key = np.zeros(2, np.int64)
    state[PLAYER] = p
    for i in range(code.shape[0]):
        lo, hi = first[i], first[i + 1]
        m = hi - lo
        if m == 1:
            out[lo] = 1.0
            continue
        look = 2 * code[i] + p
        if abstracted:
            state[CODE + p], state[KNOWN + p] = code[i], known[i]
            abstract_code(abstract_data, state, key)
            look = 2 * key[0] + p
        r = policy_set(codes, first_row, look, m, uniform, error)
        if r == FAILED:
            return
        if r < 0:
            defaulted[0] += 1
            for t in range(lo, hi):
                out[t] = 1.0 / m
        else:
            for t in range(m):
                out[lo + t] = probs[first_row[r] + t]


class PlayerSets:
    """Both players' sets of `rules` (see `_player_sets`), player 1's numbered after player 0's (sets and
    sequences): one index space, so the walk needs no branch on the player. ``roots[p]`` is p's first set."""

    def __init__(self, rules: PhantomTicTacToe):
        self.opening = rules.opening
        marks = [0, 0]
        for i, q in enumerate(rules.opening):
            marks[i % 2] |= 1 << q
        closed = marks[0] | marks[1]
        parts = [_player_sets(me, marks[0], marks[1], closed, len(rules.opening) % 2, WIN_MASKS) for me in (0, 1)]
        self.sizes = [len(part[0]) for part in parts]
        self.sequences = [int(part[2][-1]) for part in parts]
        n0, s0 = self.sizes[0], self.sequences[0]
        self.code = np.concatenate([parts[0][0], parts[1][0]])
        self.known = np.concatenate([parts[0][1], parts[1][1]])
        self.first = np.concatenate([parts[0][2], parts[1][2][1:] + s0])
        self.parent = np.concatenate([parts[0][3], np.where(parts[1][3] >= 0, parts[1][3] + s0, -1)])
        self.child = np.concatenate([parts[0][4], np.where(parts[1][4] >= 0, parts[1][4] + n0, -1)])
        self.roots = np.array([0 if n0 else -1, n0 if self.sizes[1] else -1], np.int64)

    def owner(self, i: int) -> int:
        return int(i >= self.sizes[0])

    def probs(self, rules, policy: CodePolicy, uniform: bool) -> tuple[np.ndarray, int]:
        """Each sequence's probability under `policy` (float64), and how many sets played uniformly."""
        out = np.empty(int(self.first[-1]))
        error = np.zeros(4, np.int64)
        defaulted = np.zeros(1, np.int64)
        abstraction = policy.abstraction
        for p in (0, 1):
            part = slice(0, self.sizes[0]) if p == 0 else slice(self.sizes[0], len(self.code))
            _set_probs(p, self.code[part], self.known[part], np.ascontiguousarray(self.first[part.start:part.stop + 1]),
                       policy.codes, policy.first, policy.probs, uniform,
                       no_abstraction if abstraction is None else abstraction.code,
                       rules.fast().data if abstraction is None else abstraction.data, abstraction is not None,
                       out, defaulted, error)
            raise_walk_error(rules, error, _ERRORS)
        return out, int(defaulted[0])


# ---- the history walk ---------------------------------------------------------------------------
_WINS = np.array([any(m & w == w for w in WIN_MASKS.tolist()) for m in range(512)])
_INT_FIELDS = 6  # a frame's integers: player to move, its set, X's marks, O's marks, X's and O's last sequence


@njit(cache=True, nogil=True)
def _walk_from(frame_i, frame_r, cut, known, first, child, prob, roots, wins, tv, items_i, items_r, count):
    """Depth first below the frame (`_INT_FIELDS` integers, the two players' reaches), adding each terminal's
    opponent-weighted payoff to the players' last sequences in `tv`; returns (value, what goes to each
    player's empty sequence, histories, status). Frames `cut` moves below the start (-1: none) are not
    walked but appended to `items_i`/`items_r` (``count[0]`` of them). Status -1: a set the build did not
    make (the sets and the rules disagree)."""
    cap = 24
    who = np.empty(cap, np.int64)
    at = np.empty(cap, np.int64)
    marks = np.empty((cap, 2), np.int64)
    seq = np.empty((cap, 2), np.int64)
    reach = np.empty((cap, 2))
    nq = np.empty(cap, np.int64)
    nk = np.empty(cap, np.int64)
    who[0], at[0] = frame_i[0], frame_i[1]
    marks[0, 0], marks[0, 1], seq[0, 0], seq[0, 1] = frame_i[2], frame_i[3], frame_i[4], frame_i[5]
    reach[0, 0], reach[0, 1] = frame_r[0], frame_r[1]
    nq[0], nk[0] = 0, 0
    value, roots_v0, roots_v1, visits = 0.0, 0.0, 0.0, 0
    d = 0
    while d >= 0:
        i = at[d]
        kn = known[i]
        q = nq[d]
        while q < 9 and (kn >> q) & 1:
            q += 1
        if q == 9:
            d -= 1
            continue
        nq[d] = q + 1
        k = nk[d]
        nk[d] = k + 1
        p = who[d]
        o = 1 - p
        s = first[i] + k
        rp = reach[d, p] * prob[s]
        ro = reach[d, o]
        bit = 1 << q
        mo = marks[d, o]
        if mo & bit:  # the try fails: p tries again from its next set
            j = child[2 * s]
            nxt_who, nxt_marks_p = p, marks[d, p]
        else:
            mp = marks[d, p] | bit
            if wins[mp]:  # p wins: +1 to p's sequence, -1 to o's last one
                visits += 1
                u = 1.0 if p == 0 else -1.0
                value += rp * ro * u
                tv[s] += ro
                so = seq[d, o]
                if so >= 0:
                    tv[so] -= rp
                elif o == 0:
                    roots_v0 -= rp
                else:
                    roots_v1 -= rp
                continue
            if mp | mo == FULL:  # a draw: nothing to add
                visits += 1
                continue
            so = seq[d, o]
            j = roots[o] if so < 0 else child[2 * so + 1]
            nxt_who, nxt_marks_p = o, mp
        if j < 0:
            return value, roots_v0, roots_v1, visits, -1
        if first[j + 1] - first[j] > 1:  # a forced move is collapsed, not counted
            visits += 1
        e = d + 1
        if e == cut:  # (at most 9^cut items: the caller's arrays hold them)
            n = count[0]
            items_i[n, 0], items_i[n, 1] = nxt_who, j
            items_i[n, 2 + p], items_i[n, 2 + o] = nxt_marks_p, mo
            items_i[n, 4 + p], items_i[n, 4 + o] = s, seq[d, o]
            items_r[n, p], items_r[n, o] = rp, ro
            count[0] = n + 1
            continue
        if e == cap:
            cap *= 2
            who, at, marks, seq, reach = _grow(who, cap), _grow(at, cap), _grow(marks, cap), _grow(seq, cap), _grow(reach, cap)
            nq, nk = _grow(nq, cap), _grow(nk, cap)
        who[e], at[e] = nxt_who, j
        marks[e, p], marks[e, o] = nxt_marks_p, mo
        seq[e, p], seq[e, o] = s, seq[d, o]
        reach[e, p], reach[e, o] = rp, ro
        nq[e], nk[e] = 0, 0
        d = e
    return value, roots_v0, roots_v1, visits, 0


@njit(cache=True, nogil=True)
def _walk_items(items_i, items_r, w, workers, known, first, child, prob, roots, wins, tv, acc):
    """Worker `w`'s share: items ``w, w + workers, ...`` in order into its `tv` and `acc` rows (value,
    empty-sequence values of X and O, histories, status). Without the GIL: workers run as threads."""
    none_i = np.empty((0, _INT_FIELDS), np.int64)
    none_r = np.empty((0, 2))
    count = np.zeros(1, np.int64)
    for j in range(w, items_i.shape[0], workers):
        v, r0, r1, h, status = _walk_from(items_i[j], items_r[j], -1, known, first, child, prob, roots, wins, tv,
                                          none_i, none_r, count)
        acc[0] += v
        acc[1] += r0
        acc[2] += r1
        acc[3] += h
        if status < 0:
            acc[4] = status
            return


@njit(cache=True)
def _best_responses(lo, hi, first, parent, tv):
    """Player's best-response value at its empty sequence from the sequence values `tv` of its sets
    ``lo..hi-1`` (children after parents: reverse order is bottom-up); `tv` is summed into in place."""
    root = 0.0
    for i in range(hi - 1, lo - 1, -1):
        best = tv[first[i]]
        for t in range(first[i] + 1, first[i + 1]):
            best = max(best, tv[t])
        if parent[i] >= 0:
            tv[parent[i]] += best
        else:
            root += best
    return root


def check_workers(workers) -> int:
    """Threads for the walk: 1 to the machine's cores (default: numba's thread count, which
    ``NUMBA_NUM_THREADS`` sets, e.g. to 1 where jobs already run in parallel)."""
    if workers is None:  # numba's setting, read without launching numba's own thread pool: the walk runs on
        return max(1, int(numba.config.NUMBA_NUM_THREADS))  # Python threads (launching it pins its size for good)
    return check_int("workers", workers, 1, os.cpu_count() or 1)


def walk(rules: PhantomTicTacToe, policy: CodePolicy, default: str | None = None, workers: int | None = None,
         sets: PlayerSets | None = None) -> dict[str, float]:
    """The raw results of the walk (`OUT_FIELDS`), after checking that `policy` belongs to `rules`. `sets`:
    the players' sets built once (`PlayerSets(rules)`) for several policies of one game."""
    if not walks(rules):
        raise TypeError(f"rules must be the built-in Phantom Tic-Tac-Toe rules (rcfr.make_rules('phantom_ttt', "
                        f"...)), got {type(rules).__name__}")
    if not isinstance(policy, CodePolicy):
        raise TypeError(f"policy must be a CodePolicy, got {type(policy).__name__}")
    default = check_default(default)
    workers = check_workers(workers)
    policy.check_rules(rules)
    if sets is None:
        sets = PlayerSets(rules)
    elif not isinstance(sets, PlayerSets) or sets.opening != rules.opening:
        raise ValueError(f"sets must be PlayerSets of {rules.description()}")
    prob, defaulted = sets.probs(rules, policy, default == "uniform")
    tv = np.zeros((workers, len(prob)))
    acc = np.zeros((workers, 5))
    p = len(rules.opening) % 2
    marks = [0, 0]
    for i, q in enumerate(rules.opening):
        marks[i % 2] |= 1 << q
    root = np.array([p, sets.roots[p], marks[0], marks[1], -1, -1], np.int64)
    items_i = np.empty((9 ** CUT, _INT_FIELDS), np.int64)
    items_r = np.empty((9 ** CUT, 2))
    count = np.zeros(1, np.int64)
    top = _walk_from(root, np.ones(2), CUT, sets.known, sets.first, sets.child, prob, sets.roots, _WINS, tv[0],
                     items_i, items_r, count)
    n = int(count[0])
    args = (items_i[:n], items_r[:n])
    shared = (sets.known, sets.first, sets.child, prob, sets.roots, _WINS)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda w: _walk_items(*args, w, workers, *shared, tv[w], acc[w]), range(workers)))
    if top[4] < 0 or np.any(acc[:, 4] < 0):
        raise AssertionError(f"{rules.description()}: a history reached a set the belief walk did not build")
    totals = np.array(top[:4]) + acc[:, :4].sum(axis=0)  # rows added in worker order: a fixed sum
    values = tv.sum(axis=0)
    visits = totals[3] + (sets.first[sets.roots[p] + 1] - sets.first[sets.roots[p]] > 1)  # the root
    n0 = sets.sizes[0]
    br0 = totals[1] + _best_responses(0, n0, sets.first, sets.parent, values)
    br1 = totals[2] + _best_responses(n0, len(sets.code), sets.first, sets.parent, values)
    decisions = int(np.count_nonzero(np.diff(sets.first) > 1))
    return dict(zip(OUT_FIELDS, [float(totals[0]), float(br0), float(br1), float(visits), float(decisions),
                                 float(defaulted)]))


def evaluate(rules: PhantomTicTacToe, policy: CodePolicy, default: str | None = None,
             workers: int | None = None) -> Evaluation:
    """Value, best-response values, NashConv and exploitability, as `rcfr.evaluate` gives them."""
    return evaluation_of(rules, walk(rules, policy, default, workers))


def phantom_policy(rules: PhantomTicTacToe, kind: str = "uniform", seed: int = 0, sets: PlayerSets | None = None,
                   dtype=np.float64) -> CodePolicy:
    """A whole `CodePolicy` of `rules` (every set with a choice, from `PlayerSets`): ``kind="uniform"`` or
    ``"random"`` (each row uniform on the simplex, from `seed`), probabilities in `dtype`."""
    if not walks(rules):
        raise TypeError(f"rules must be the built-in Phantom Tic-Tac-Toe rules, got {type(rules).__name__}")
    kind = check_choice("kind", kind, ("uniform", "random"))
    seed = check_seed("seed", seed)
    sets = PlayerSets(rules) if sets is None else sets
    owner = (np.arange(len(sets.code)) >= sets.sizes[0]).astype(np.int64)
    sizes = np.diff(sets.first)
    choice = sizes > 1
    codes = 2 * sets.code[choice] + owner[choice]
    order = np.argsort(codes)
    sizes = sizes[choice][order]
    first = np.zeros(len(codes) + 1, np.int64)
    np.cumsum(sizes, out=first[1:])
    if kind == "uniform":
        probs = np.repeat(1.0 / sizes, sizes)
    else:
        weights = np.random.default_rng(seed).exponential(size=int(first[-1]))
        probs = weights / np.repeat(np.add.reduceat(weights, first[:-1]), sizes)
    return CodePolicy(rules, codes[order], first, probs.astype(dtype))
