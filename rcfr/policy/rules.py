"""Policies keyed by information-set code (`FastGame.infoset_code`), for games walked through their rules.

A compiled `rcfr.Policy` addresses information sets by their position in one compiled tree, so it needs
that tree. A `CodePolicy` needs only the rules: sorted int64 ``codes`` (one per information set with at
least two actions: forced moves are no decisions, as in the compiled tree), ``first`` offsets
(``len(codes) + 1``) into a flat ``probs`` array, row ``i`` being ``probs[first[i]:first[i + 1]]`` in the
rules' action order. Numba looks a set up by binary search over ``codes``: no Python object per set.

``probs`` is float64, or float32 to halve the memory of a large game (the evaluation still sums in
float64; docs/large_games.md measures what float32 costs on an exploitability).

A policy computed on an information-set abstraction (`rcfr.sources.abstraction.CodeAbstraction`) has one row
per abstract set, keyed ``2 * abstract code + player``; ``abstraction`` is then that abstraction, which
finds every decision's row (evaluations, `to_policy`).

The binary file (``.npz``, written atomically) holds the fields ``format``, ``version``, ``game`` (the
rules' description), ``fingerprint`` (`rules_identity`), ``abstraction`` (its name and identity, or empty),
``codes``, ``first`` and ``probs``; loading checks the fingerprint against the rules it is given and the
abstraction against the one it is given.
"""

from __future__ import annotations

import os

import numpy as np
from numba import njit
from numba import types as nb

from ..compiler import _grow, _typed
from ..errors import ROW_TOLERANCE, PolicyError
from ..files import atomic_write
from ..games.base import TERMINAL, GameRules
from ..games.fast import DATA, FUNCTION_TYPES, FastGame
from ..numba_lazy import njit_on_first_call
from ..sources.walk import DEPTH, always, depth_first
from ..tree.fingerprint import CODES_VERSION, rules_identity
from . import npz_texts, read_npz, require_npz

FORMAT = "rcfr.code_policy"
VERSION = CODES_VERSION
NPZ_FIELDS = ("format", "version", "game", "fingerprint", "codes", "first", "probs")
ABSTRACTION_FIELD = "abstraction"  # "name identity"; absent or empty: no abstraction
DEFAULT_FIELD = "default"  # "uniform": the policy plays uniformly at sets it lacks; absent or empty: an error
#: dtypes `probs` may have.
PROB_DTYPES = (np.float64, np.float32)
#: What `to_policy` and the evaluation do at a code the policy lacks.
DEFAULTS = (None, "uniform")

_FN = FUNCTION_TYPES


def fast_game(rules: GameRules) -> FastGame:
    """The rules' `FastGame`, each function compiled for its role; an error if they have none (or if a
    subclass overrides a rule method the built-in encoder cannot see)."""
    from ..tree.enumeration import _speaks_for
    spec = rules.fast() if _speaks_for(rules, "fast") else None
    if spec is None:
        raise ValueError(f"{rules.description()} has no fast path (GameRules.fast); code-keyed policies and "
                         f"evaluation over the rules need one")
    return _typed(spec)


class CodePolicy:
    """Action probabilities per information-set code of one game's rules (see the module docstring).
    The arrays are read-only once checked."""

    abstraction = None  # or the `CodeAbstraction` whose abstract sets the rows are
    default = None  # what it plays at a set it lacks: None (refuse) or "uniform"

    def __init__(self, rules: GameRules, codes, first, probs, abstraction=None, default: str | None = None):
        self.fingerprint = rules_identity(rules)  # checks that `rules` are rules
        self.description = rules.description()
        if abstraction is not None:
            if not callable(getattr(abstraction, "check_rules", None)):
                raise TypeError(f"abstraction must be a CodeAbstraction (rcfr.abstraction.make_abstraction on a game "
                                f"walked by its rules) or None, got {type(abstraction).__name__}")
            abstraction.check_rules(rules, "code policy")
        self.abstraction = abstraction
        self.default = check_default(default)
        self.codes, self.first, self.probs = _checked(codes, first, probs, self.description)

    @classmethod
    def _trusted(cls, description: str, fingerprint: str, codes, first, probs, abstraction=None,
                 default: str | None = None) -> "CodePolicy":
        """A policy read from a file whose identity has been checked against the rules."""
        policy = cls.__new__(cls)
        policy.description, policy.fingerprint, policy.abstraction = description, fingerprint, abstraction
        policy.default = check_default(default)
        policy.codes, policy.first, policy.probs = _checked(codes, first, probs, description)
        return policy

    @property
    def abstraction_label(self) -> str:
        """``"name identity"`` of the abstraction, or "" without one (as the file stores it)."""
        a = self.abstraction
        return "" if a is None else f"{a.name} {a.identity}"

    # ---- identity -------------------------------------------------------------------------------
    def check_rules(self, rules: GameRules, what: str = "code policy") -> None:
        """A ValueError naming both games unless this policy belongs to `rules`."""
        theirs = rules_identity(rules)
        if theirs == self.fingerprint:
            return
        ours = rules.description()
        detail = (f" (fingerprint {self.fingerprint}, the rules' is {theirs}: their source changed since)"
                  if ours == self.description else "")
        raise ValueError(f"{what} belongs to the game {self.description}, not to {ours}{detail}")

    def default_for(self, default: str | None) -> str | None:
        """What an evaluation plays at a set this policy lacks: the caller's `default` ("uniform"), else the
        policy's own (a solver's policy plays uniformly at the sets it never met, as on the compiled path)."""
        return check_default(default) or self.default

    @property
    def num_infosets(self) -> int:
        return len(self.codes)

    def nbytes(self) -> int:
        return self.codes.nbytes + self.first.nbytes + self.probs.nbytes

    def __repr__(self) -> str:
        on = "" if self.abstraction is None else f" of abstraction {self.abstraction.name}"
        return f"CodePolicy({self.description}{on}, {self.num_infosets} information sets, {self.probs.dtype})"

    def row(self, code: int) -> np.ndarray:
        """The probabilities at the set with this code (a KeyError if it has none)."""
        i = int(np.searchsorted(self.codes, code))
        if i == len(self.codes) or self.codes[i] != code:
            raise KeyError(f"no information set with code {code} in this policy of {self.description}")
        return self.probs[self.first[i]:self.first[i + 1]]

    def astype(self, dtype) -> "CodePolicy":
        """The same policy with `probs` in float32 or float64."""
        return CodePolicy._trusted(self.description, self.fingerprint, self.codes, self.first,
                                   np.asarray(self.probs, dtype=_prob_dtype(dtype)), self.abstraction, self.default)

    # ---- conversions for compilable games ----------------------------------------------------
    @classmethod
    def from_policy(cls, policy, dtype=np.float64) -> "CodePolicy":
        """The code-keyed form of a compiled `rcfr.Policy`."""
        from . import Policy
        if not isinstance(policy, Policy):
            raise TypeError(f"policy must be an rcfr.Policy, got {type(policy).__name__}")
        game = policy.game
        code_of = infoset_codes(game)
        order = np.argsort(code_of, kind="stable")
        sizes = game.infoset_num_actions[order].astype(np.int64)
        first = np.zeros(len(order) + 1, np.int64)
        np.cumsum(sizes, out=first[1:])
        source = np.repeat(game.infoset_first_seq[order].astype(np.int64) - first[:-1], sizes)
        source += np.arange(first[-1], dtype=np.int64)
        return cls(game.rules, code_of[order], first, policy.probs[source].astype(_prob_dtype(dtype)))

    def to_policy(self, game, default: str | None = None):
        """The compiled `rcfr.Policy` of `game` (compiled from this policy's rules). A compiled set
        whose code this policy lacks is an error, or uniform with ``default="uniform"``."""
        from ..tree import Game
        from . import Policy
        if not isinstance(game, Game):
            raise TypeError(f"game must be a compiled rcfr.Game, got {type(game).__name__}")
        self.check_rules(game.rules)
        default = self.default_for(default)
        code_of = infoset_codes(game) if self.abstraction is None else self.abstraction.keys(game)
        at = np.searchsorted(self.codes, code_of)
        inside = at < len(self.codes)
        found = inside.copy()
        found[inside] = self.codes[at[inside]] == code_of[inside]
        sizes = game.infoset_num_actions.astype(np.int64)
        if not found.all():
            if default is None:
                i = int(np.argmin(found))
                raise PolicyError(f"information set {game.infoset_key(i)!r} (code {int(code_of[i])}) of "
                                  f"{self.description} is not in this code policy ({int((~found).sum())} of "
                                  f"{len(found)} missing); pass default='uniform' to play uniformly there")
        used = np.zeros(len(self.codes), bool)
        used[at[found]] = True
        if not used.all():
            raise PolicyError(f"{int((~used).sum())} of the {len(used)} rows of this code policy of "
                              f"{self.description} match no information set of the game (first: code "
                              f"{int(self.codes[np.argmin(used)])}); the policy was built for other codes")
        mine = np.where(found, self.first[np.minimum(at, len(self.codes) - 1)] if len(self.codes) else 0, -1)
        theirs = np.where(found, np.diff(self.first)[np.minimum(at, len(self.codes) - 1)]
                          if len(self.codes) else 0, sizes)
        wrong = found & (theirs != sizes)
        if wrong.any():
            i = int(np.argmax(wrong))
            raise PolicyError(f"information set {game.infoset_key(i)!r} (code {int(code_of[i])}): the code "
                              f"policy has {int(theirs[i])} actions, the game {int(sizes[i])}")
        probs = np.empty(game.num_sequences)
        starts = game.infoset_first_seq.astype(np.int64)
        position = np.repeat(mine - starts, sizes) + np.arange(game.num_sequences, dtype=np.int64)
        taken = np.repeat(found, sizes)
        probs[taken] = self.probs[position[taken]]
        probs[~taken] = np.repeat(1.0 / sizes, sizes)[~taken]
        return Policy(game, probs, copy=False)

    # ---- files -------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write the ``.npz`` form atomically (a reader never sees half a file)."""
        require_npz(path, "code policy")
        arrays = {"format": np.array(FORMAT), "version": np.array(VERSION), "game": np.array(self.description),
                  "fingerprint": np.array(self.fingerprint), ABSTRACTION_FIELD: np.array(self.abstraction_label),
                  DEFAULT_FIELD: np.array(self.default or ""), "codes": self.codes, "first": self.first,
                  "probs": self.probs}
        atomic_write(path, lambda f: np.savez(f, **arrays))

    @classmethod
    def load(cls, rules: GameRules, path: str | os.PathLike, abstraction=None) -> "CodePolicy":
        """Read a file written by `save`; it must belong to `rules` (the error names both games) and to
        `abstraction` (the `CodeAbstraction` it was computed on, or None)."""
        require_npz(path, "code policy")
        arrays = read_npz(path, "code policy")
        fields = NPZ_FIELDS + tuple(f for f in (ABSTRACTION_FIELD, DEFAULT_FIELD) if f in arrays)  # optional
        texts = npz_texts(path, arrays, "a code policy", fields, FORMAT, VERSION)
        stored = arrays.get(ABSTRACTION_FIELD, np.array(""))
        if stored.dtype.kind != "U" or stored.shape != ():
            raise PolicyError(f"{path}: field {ABSTRACTION_FIELD!r} must be a string")
        stored = str(stored)
        given = "" if abstraction is None else f"{abstraction.name} {abstraction.identity}"
        if stored != given:
            raise PolicyError(f"code policy file {path} was computed on abstraction "
                              f"{stored.rsplit(' ', 1)[0] if stored else 'none'!r}; it was loaded with "
                              f"{abstraction.name if abstraction is not None else 'none'!r}: pass the same "
                              f"abstraction= (rcfr.abstraction.make_abstraction on the rules game)")
        default = arrays.get(DEFAULT_FIELD, np.array(""))
        if default.dtype.kind != "U" or default.shape != () or str(default) not in ("", "uniform"):
            raise PolicyError(f"{path}: field {DEFAULT_FIELD!r} must be the string '' or 'uniform'")
        policy = cls._trusted(texts["game"][:300], texts["fingerprint"][:300], arrays["codes"], arrays["first"],
                              arrays["probs"], abstraction, str(default) or None)
        try:
            policy.check_rules(rules, f"code policy file {path}")
        except ValueError as err:
            raise PolicyError(str(err)) from None
        return policy


def normalized(values: np.ndarray, first: np.ndarray, positive: bool) -> np.ndarray:
    """Per-set rows ``values[first[k]:first[k + 1]]`` as probabilities: each row over its sum (of its positive
    part with `positive`, regret matching), uniform where that sum is zero."""
    x = np.maximum(values, 0.0) if positive else np.asarray(values, np.float64)
    n = np.diff(first)
    if len(n) == 0:
        return x.copy()
    totals = np.repeat(np.add.reduceat(x, first[:-1]), n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0.0, x / totals, np.repeat(1.0 / n, n))


def check_default(default):
    if default not in DEFAULTS:
        raise ValueError(f"default must be None (an unknown information-set code is an error) or 'uniform', "
                         f"got {default!r}")
    return default


def _prob_dtype(dtype) -> type:
    dtype = np.dtype(dtype)
    if dtype not in [np.dtype(t) for t in PROB_DTYPES]:
        raise ValueError(f"probs dtype must be float64 or float32, got {dtype}")
    return dtype.type


def _checked(codes, first, probs, description: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read-only copies of the three arrays, after checking their types, shapes and rows."""
    codes, first = np.asarray(codes), np.asarray(first)
    probs = np.asarray(probs)
    for name, array in (("codes", codes), ("first", first)):
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise ValueError(f"code policy of {description}: field {name!r} must be a 1-D integer array, "
                             f"got {array.dtype}{list(array.shape)}")
    if probs.ndim != 1 or probs.dtype not in [np.dtype(t) for t in PROB_DTYPES]:
        raise ValueError(f"code policy of {description}: field 'probs' must be a 1-D float64 or float32 array, "
                         f"got {probs.dtype}{list(probs.shape)}")
    codes = np.array(codes, dtype=np.int64)
    first = np.array(first, dtype=np.int64)
    probs = np.array(probs, dtype=probs.dtype)
    n = len(codes)
    if len(first) != n + 1 or first[0] != 0 or first[-1] != len(probs):
        raise ValueError(f"code policy of {description}: field 'first' must hold {n + 1} offsets from 0 to "
                         f"len(probs) = {len(probs)}, got {len(first)} from {first[:1].tolist()} to {first[-1:].tolist()}")
    if n and (codes[0] < 0 or np.any(np.diff(codes) <= 0)):
        raise ValueError(f"code policy of {description}: field 'codes' must be non-negative and strictly "
                         f"increasing (one row per information set)")
    sizes = np.diff(first)
    if np.any(sizes < 2):
        i = int(np.argmax(sizes < 2))
        raise ValueError(f"code policy of {description}: code {int(codes[i])} has {int(sizes[i])} actions; every "
                         f"row needs at least 2 (a forced move is no decision)")
    bad = ~np.isfinite(probs) | (probs < 0)
    if bad.any():
        j = int(np.argmax(bad))
        i = int(np.searchsorted(first, j, side="right")) - 1
        raise PolicyError(f"code policy of {description}: code {int(codes[i])}, action {j - int(first[i])}: "
                          f"probability {float(probs[j])!r} is not a finite non-negative number")
    if n:
        sums = np.add.reduceat(probs.astype(np.float64), first[:-1])
        off = np.abs(sums - 1.0) > ROW_TOLERANCE
        if off.any():
            i = int(np.argmax(off))
            raise PolicyError(f"code policy of {description}: code {int(codes[i])}: probabilities sum to "
                              f"{float(sums[i])!r}, not 1 ({int(off.sum())} of {n} rows off by more than "
                              f"{ROW_TOLERANCE})")
    for array in (codes, first, probs):
        array.setflags(write=False)
    return codes, first, probs


# ---- the compiled tree and the rules in lockstep ------------------------------------------------
@njit(inline="always")
def _terminal(utility, data, c, v, d, s):
    g_player, error, hist = c[0], c[5], v[0]
    if g_player[hist[d]] != TERMINAL:
        error[0] = hist[d]
        return 1
    return 0


@njit(inline="always")
def _enter(infoset_code, aux, data, c, v, d, s, p, nxt, moves):
    g_player, g_infoset, g_first_child, g_num_children, code_of, error = c
    h = v[0][d]
    if p != g_player[h]:
        error[0] = h
        return 1
    if moves[d] != g_num_children[h]:
        error[0] = h
        return 2
    if p >= 0:
        i = g_infoset[h]
        code = infoset_code(data, s)
        if code_of[i] < 0:
            code_of[i] = code
        elif code_of[i] != code:
            error[0] = h
            return 3
    return 0


@njit(inline="always")
def _room(c, v, d, m):
    return v


@njit(inline="always")
def _push(c, v, d, k, q, p, m):
    hist = v[0]
    hist[d + 1] = c[2][hist[d]] + k


@njit(inline="always")
def _deeper(c, v, cap):
    return (_grow(v[0], cap),)


_codes_walk = depth_first(_terminal, _enter, _room, always, _push, _deeper)


@njit_on_first_call(nb.int64(_FN["initial"], _FN["player"], _FN["num_children"], _FN["child"], _FN["utility"],
                             _FN["infoset_code"], DATA, nb.int64, nb.int8[::1], nb.int32[::1], nb.int32[::1],
                             nb.int32[::1], nb.int64[::1], nb.int64[::1]), cache=True)
def _tree_codes(initial, player, num_children, child, utility, infoset_code, data, width,
                g_player, g_infoset, g_first_child, g_num_children, code_of, error):
    """Depth first (`rcfr.sources.walk`) over the rules' states and the compiled tree side by side (history h's
    children are ``first_child[h] + k``), forced moves settled as the compiler does: ``code_of[I]`` receives
    the code of compiled information set I. Returns 0, or a kind with ``error[0]`` the history: 1, another
    player; 2, another number of children; 3, two codes in one compiled set."""
    hist = np.zeros(DEPTH, np.int64)  # the compiled history at each depth (the root: 0)
    status, v = _codes_walk(initial, player, num_children, child, utility, infoset_code, infoset_code, data, width,
                            True, (g_player, g_infoset, g_first_child, g_num_children, code_of, error), (hist,))
    return status


def infoset_codes(game) -> np.ndarray:
    """The `infoset_code` of each compiled information set of `game` (int64, in the game's set order),
    found by walking the compiled tree and the rules together; an error if they disagree or if two sets
    share a code."""
    fast = fast_game(game.rules)
    code_of = np.full(game.num_infosets, -1, np.int64)
    error = np.zeros(1, np.int64)
    kind = _tree_codes(fast.initial, fast.player, fast.num_children, fast.child, fast.utility, fast.infoset_code,
                       fast.data, fast.width, game.player, game.infoset, game.first_child, game.num_children, code_of, error)
    if kind:
        problem = {1: "another player", 2: "another number of children",
                   3: "another information-set code than an earlier history of its set"}[kind]
        raise ValueError(f"{game.rules.description()}: compiled history {int(error[0])} has {problem} in the "
                         f"rules' fast path: the tree was not compiled from these rules")
    if np.any(code_of < 0):
        raise ValueError(f"{game.rules.description()}: information set {int(np.argmax(code_of < 0))} was never "
                         f"met walking the tree (negative infoset_code?)")
    ordered = np.sort(code_of)
    same = np.flatnonzero(ordered[1:] == ordered[:-1])
    if same.size:
        code = int(ordered[same[0]])
        sets = np.flatnonzero(code_of == code)[:2].tolist()
        raise ValueError(f"{game.rules.description()}: information sets {game.infoset_key(sets[0])!r} and "
                         f"{game.infoset_key(sets[1])!r} share the code {code}: infoset_code must tell sets apart")
    return code_of
