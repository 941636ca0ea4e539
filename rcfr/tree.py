"""Compiled game trees: a game enumerated once into flat NumPy arrays, cached on disk.

Histories are numbered in breadth-first order, so a parent always precedes its children and the
children of a node are contiguous. Information sets are numbered player 0's first, then player 1's,
each in order of first encounter, which is a topological order of each player's sequence tree.
A sequence (information set, action) has the global id ``infoset_first_seq[I] + a``; a player's
sequences are contiguous. Every solver, sampler and evaluator works on these arrays.

A node with exactly one child (a forced move: one legal action, or one chance outcome) is not kept:
its child takes its place. Readable names (information-set keys, action and chance-outcome names)
are not stored: they are replayed from the rules along a history's path when first asked for.
Games with a fast path (`GameRules.fast`, see `rcfr.compiler`) compile in numba; the others through
the rule methods, into identical arrays.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys
from collections import deque
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from . import kernels
from .files import atomic_write
from .games.base import CHANCE, TERMINAL, GameRules

FORMAT_VERSION = 2
#: Measured peak bytes per history while compiling, by path; the default history limit is the
#: available memory divided by these (see docs/large_games.md).
COMPILE_BYTES = {"fast": 120, "python": 600}
#: Bytes per history of a compiled game and its sequence-form views, as measured.
RESIDENT_BYTES = 60

_HISTORY_ARRAYS = ("player", "parent", "action", "depth", "chance_prob", "infoset", "utility",
                   "first_child", "num_children")
_INFOSET_ARRAYS = ("infoset_player", "infoset_first_seq", "infoset_num_actions", "infoset_parent_seq",
                   "infoset_history")
#: dtypes of the history arrays; `action` is int16 when every node has fewer than 32768 children.
_DTYPES = dict(player=np.int8, parent=np.int32, action=np.int32, depth=np.int16, chance_prob=np.float64,
               infoset=np.int32, utility=np.float64, first_child=np.int32, num_children=np.int32)


@dataclass(frozen=True)
class PlayerView:
    """One player's sequence form, in *local* sequence ids: 0 is the empty sequence and global
    sequence ``offset + j`` is local ``1 + j``. Infosets are local too (global ``infoset_offset + i``).

    ``payoff`` is this player's payoff matrix: rows are its own local sequences, columns the
    opponent's, entries the chance-weighted utility of the terminals they lead to, so that the
    counterfactual value of each own sequence against the opponent's realization plan y is
    ``payoff @ y`` (before adding the values of the information sets below it).
    """

    player: int
    offset: int
    infoset_offset: int
    infoset_first: np.ndarray
    infoset_size: np.ndarray
    infoset_parent: np.ndarray
    payoff: sp.csr_matrix

    @property
    def num_sequences(self) -> int:
        """Local sequence count, the empty sequence included."""
        return self.payoff.shape[0]

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_first)

    def plan(self, strategy: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Realization plan of a local behavioural strategy."""
        out = np.empty(self.num_sequences) if out is None else out
        return kernels.realization_plan(strategy, self.infoset_first, self.infoset_size,
                                        self.infoset_parent, out)

    def localize(self, values: np.ndarray) -> np.ndarray:
        """This player's slice of a per-global-sequence array, as a local array (entry 0 = 1)."""
        return np.concatenate(([1.0], values[self.offset:self.offset + self.num_sequences - 1]))

    def regret_matching(self, regrets: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Strategy proportional to positive regrets (uniform where none is positive)."""
        out = np.empty(self.num_sequences) if out is None else out
        return kernels.regret_matching(regrets, self.infoset_first, self.infoset_size, out)

    def normalize(self, plan: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Behavioural strategy of an unnormalized realization plan (uniform where it is all zero)."""
        out = np.empty(self.num_sequences) if out is None else out
        return kernels.normalize_plan(plan, self.infoset_first, self.infoset_size, out)

    def terminal_values(self, opponent_plan: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Each own sequence's chance- and opponent-weighted value of the terminals it ends in."""
        out = np.empty(self.num_sequences) if out is None else out
        m = self.payoff
        return kernels.csr_matvec(m.indptr, m.indices, m.data, opponent_plan, out)


@dataclass(eq=False)
class Game:
    """A compiled two-player zero-sum game. Build one with `rcfr.load_game` or `compile_game`."""

    rules: GameRules
    # per history
    player: np.ndarray  # int8: 0, 1, CHANCE or TERMINAL
    parent: np.ndarray  # int32, -1 at the root
    action: np.ndarray  # int16 (int32 past 32767 children): index of the action or outcome leading here, -1 at the root
    depth: np.ndarray  # int16
    chance_prob: np.ndarray  # float64: probability of the chance outcome leading here, else 1
    infoset: np.ndarray  # int32: information set at decision histories, else -1
    utility: np.ndarray  # float64: player 0's payoff at terminals, else 0
    first_child: np.ndarray  # int32
    num_children: np.ndarray  # int32
    # per information set
    infoset_player: np.ndarray  # int8
    infoset_first_seq: np.ndarray  # int32
    infoset_num_actions: np.ndarray  # int32
    infoset_parent_seq: np.ndarray  # int32: the player's last sequence before the set, -1 = empty
    infoset_history: np.ndarray  # int64: the set's first history (breadth-first), where names are replayed

    # ---- identity and sizes -----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.rules.name

    def __repr__(self) -> str:
        return (f"Game({self.rules.description()}: {self.num_histories} histories, "
                f"{self.num_infosets} information sets, {self.num_sequences} sequences)")

    @cached_property
    def fingerprint(self) -> str:
        """Identity of the game: rules class, parameters and a hash of the rules' source. Two compiled
        games with equal fingerprints have identical arrays; policies, checkpoints and cache files
        carry it so that they meet only their own game."""
        return game_fingerprint(self.rules)

    def check_same(self, what: str, other: "Game") -> None:
        """Raise a ValueError naming both games unless `other` is this game (the same compiled object
        or an equal fingerprint): `what` (a policy, an abstraction...) meets only its own game."""
        if other is not self:
            self.check_fingerprint(what, other.fingerprint, other.rules.description())

    def check_fingerprint(self, what: str, fingerprint: str, description: str) -> None:
        """Raise a ValueError naming both games unless `fingerprint` (of the game `description`) is ours."""
        if fingerprint == self.fingerprint:
            return
        ours = self.rules.description()
        detail = (f" (fingerprint {fingerprint}, this game's is {self.fingerprint}: its rules or the compiled "
                  f"format changed since)" if description == ours else "")
        raise ValueError(f"{what} belongs to the game {description}, not to {ours}{detail}")

    @property
    def big_blind(self) -> float:
        return self.rules.big_blind

    @property
    def num_histories(self) -> int:
        return len(self.player)

    @property
    def num_terminals(self) -> int:
        return int(np.count_nonzero(self.player == TERMINAL))

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_player)

    @cached_property
    def num_sequences(self) -> int:
        """Number of (information set, action) pairs, empty sequences excluded."""
        return int(self.infoset_num_actions.sum())

    @property
    def infosets_per_player(self) -> tuple[int, int]:
        return tuple(int(np.count_nonzero(self.infoset_player == p)) for p in (0, 1))

    @property
    def sequences_per_player(self) -> tuple[int, int]:
        return tuple(int(self.infoset_num_actions[self.infoset_player == p].sum()) for p in (0, 1))

    def sizes(self) -> dict[str, object]:
        return {"histories": self.num_histories, "terminal_histories": self.num_terminals,
                "infosets": self.num_infosets, "infosets_per_player": self.infosets_per_player,
                "sequences": self.num_sequences, "sequences_per_player": self.sequences_per_player}

    def nbytes(self) -> int:
        """Bytes held by the stored arrays (memory-mapped ones included)."""
        return sum(a.nbytes for a in self.arrays().values())

    # ---- derived views -----------------------------------------------------------------------
    @cached_property
    def sequence_infoset(self) -> np.ndarray:
        """The information set of each global sequence."""
        return np.repeat(np.arange(self.num_infosets, dtype=np.int32), self.infoset_num_actions)

    @cached_property
    def history_sequences(self) -> np.ndarray:
        """(histories, 2) int32: each player's last global sequence on the way to a history (-1 = empty)."""
        return _history_sequences(self)

    @cached_property
    def chance_reach(self) -> np.ndarray:
        """Probability that chance's own moves lead to each history."""
        return _chance_reach(self)

    @cached_property
    def views(self) -> tuple[PlayerView, PlayerView]:
        """Both players' sequence forms."""
        terminals = np.flatnonzero(self.player == TERMINAL)
        seqs = self.__dict__.get("history_sequences")
        seqs = (_history_sequences(self) if seqs is None else seqs)[terminals]
        reach = self.__dict__.get("chance_reach")
        reach = (_chance_reach(self) if reach is None else reach)[terminals]
        offsets = [0, int(self.sequences_per_player[0])]
        local = [np.where(seqs[:, p] < 0, 0, seqs[:, p] - offsets[p] + 1) for p in (0, 1)]
        del seqs
        sizes = [1 + n for n in self.sequences_per_player]
        values = reach * self.utility[terminals]
        del reach, terminals
        import scipy.sparse as sp  # loaded with the first game, not by `import rcfr`
        payoff0 = sp.csr_matrix((values, (local[0], local[1])), shape=(sizes[0], sizes[1]))  # sums duplicates
        del values, local
        payoff0.indptr, payoff0.indices = _narrow(payoff0.indptr), _narrow(payoff0.indices)
        payoff1 = payoff0.T.tocsr()
        payoff1.data *= -1.0
        payoff1.indptr, payoff1.indices = _narrow(payoff1.indptr), _narrow(payoff1.indices)
        payoffs = (payoff0, payoff1)
        views = []
        infoset_offset = 0
        for p in (0, 1):
            mine = np.flatnonzero(self.infoset_player == p)
            parent = self.infoset_parent_seq[mine]
            views.append(PlayerView(
                player=p, offset=offsets[p], infoset_offset=infoset_offset,
                infoset_first=(self.infoset_first_seq[mine] - offsets[p] + 1).astype(np.int64),
                infoset_size=self.infoset_num_actions[mine].astype(np.int64),
                infoset_parent=np.where(parent < 0, 0, parent - offsets[p] + 1).astype(np.int64),
                payoff=payoffs[p]))
            infoset_offset += len(mine)
        return tuple(views)

    # ---- readable names, replayed from the rules on demand ---------------------------------------
    def states(self, histories) -> dict[int, object]:
        """The rule states of these histories (and of their ancestors), replayed from the root."""
        need = set()
        for h in np.asarray(histories, dtype=np.int64).ravel().tolist():
            while h >= 0 and h not in need:
                need.add(h)
                h = int(self.parent[h])
        found: dict[int, object] = {}
        for h in sorted(need):
            up = int(self.parent[h])
            state = self.rules.initial_state() if up < 0 else self.rules.next_state(found[up], int(self.action[h]))
            found[h] = settle(self.rules, state)[0]
        return found

    def state(self, history: int):
        """The rule state of one history."""
        return self.states([history])[int(history)]

    def infoset_key(self, infoset: int) -> str:
        """Readable key of one information set, without materializing all keys."""
        keys = self.__dict__.get("infoset_keys")
        if keys is not None:
            return str(keys[infoset])
        return str(self.rules.infoset_key(self.state(int(self.infoset_history[infoset]))))

    def infoset_id(self, key: str) -> int:
        """The information set with this readable key (builds `infoset_index` on first use)."""
        try:
            return self.infoset_index[str(key)]
        except KeyError:
            raise KeyError(f"{self.name}: no information set {key!r}") from None

    def actions_of(self, infoset: int) -> list[str]:
        names = self.__dict__.get("action_names")
        if names is not None:
            first = self.infoset_first_seq[infoset]
            return [str(a) for a in names[first:first + self.infoset_num_actions[infoset]]]
        return [str(a) for a in self.rules.actions(self.state(int(self.infoset_history[infoset])))]

    @cached_property
    def infoset_keys(self) -> np.ndarray:
        """Readable key of every information set (materialized on first use)."""
        found = self.states(self.infoset_history)
        return np.array([str(self.rules.infoset_key(found[int(h)])) for h in self.infoset_history], dtype=str)

    @cached_property
    def infoset_index(self) -> dict[str, int]:
        return {str(k): i for i, k in enumerate(self.infoset_keys)}

    @cached_property
    def action_names(self) -> np.ndarray:
        """Name of every global sequence's action (materialized on first use)."""
        found = self.states(self.infoset_history)
        return np.array([str(a) for h in self.infoset_history for a in self.rules.actions(found[int(h)])],
                        dtype=str)

    def chance_outcome_name(self, history: int) -> str:
        """Name of the chance outcome leading to `history` ('' if a player's action led there)."""
        up = int(self.parent[history])
        if up < 0 or self.player[up] != CHANCE:
            return ""
        return str(self.rules.chance_outcomes(self.state(up))[int(self.action[history])][0])

    @cached_property
    def chance_outcome_names(self) -> np.ndarray:
        """Per history, the chance outcome leading to it, else '' (materialized on first use)."""
        chance = np.flatnonzero(self.player == CHANCE)
        found = self.states(chance)
        names = np.zeros(self.num_histories, dtype=object)
        names[:] = ""
        for h in chance.tolist():
            first = int(self.first_child[h])
            outcomes = self.rules.chance_outcomes(found[h])
            names[first:first + len(outcomes)] = [str(n) for n, _ in outcomes]
        return names.astype(str)

    def history_string(self, history: int) -> str:
        """Readable path from the root: chance outcomes and action names joined by spaces (forced
        moves, which are not histories, are left out)."""
        path = []
        while self.parent[history] >= 0:
            path.append(int(history))
            history = int(self.parent[history])
        found = self.states(path) if path else {}
        parts = []
        for h in reversed(path):
            state, a = found[int(self.parent[h])], int(self.action[h])
            if self.player[self.parent[h]] == CHANCE:
                parts.append(str(self.rules.chance_outcomes(state)[a][0]))
            else:
                parts.append(str(self.rules.actions(state)[a]))
        return " ".join(parts)

    # ---- persistence -------------------------------------------------------------------------
    def arrays(self) -> dict[str, np.ndarray]:
        return {n: getattr(self, n) for n in _HISTORY_ARRAYS + _INFOSET_ARRAYS}


def _narrow(index: np.ndarray) -> np.ndarray:
    """int32 copy of a sparse index array when its values fit (scipy defaults to int64 when large)."""
    return index.astype(np.int32) if index.size == 0 or index.max() < 2**31 - 1 else index


def _levels(depth: np.ndarray) -> list[np.ndarray]:
    """History ids grouped by depth (ids are breadth-first, so each group is a contiguous range)."""
    bounds = np.flatnonzero(np.diff(depth)) + 1
    return np.split(np.arange(len(depth)), bounds)


def _history_sequences(game: Game) -> np.ndarray:
    return kernels.history_sequences(game.player, game.parent, game.action, game.infoset, game.infoset_first_seq,
                                     np.empty((game.num_histories, 2), np.int32))


def _chance_reach(game: Game) -> np.ndarray:
    reach = np.ones(game.num_histories)
    for level in _levels(game.depth)[1:]:
        reach[level] = reach[game.parent[level]] * game.chance_prob[level]
    return reach


def settle(rules: GameRules, state) -> tuple[object, int]:
    """Skip forced moves: while `state` has exactly one action or chance outcome, take it.
    Returns the state reached and its player."""
    while True:
        who = rules.player(state)
        if who == CHANCE:
            count = len(rules.chance_outcomes(state))
        elif who in (0, 1):
            count = len(rules.actions(state))
        else:
            return state, who
        if count != 1:
            return state, who
        state = rules.next_state(state, 0)


# ---- size before work ----------------------------------------------------------------------------
def available_memory() -> int:
    """Bytes of memory available to a new allocation (MemAvailable of /proc/meminfo; 8 GiB if unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 8 << 30


def max_histories(limit: int | None = None, bytes_per_history: int = COMPILE_BYTES["fast"]) -> int:
    """The enumeration limit: `limit` if given, else ``$RCFR_MAX_HISTORIES``, else as many histories
    as the available memory holds while compiling at `bytes_per_history`."""
    if limit is None:
        text = os.environ.get("RCFR_MAX_HISTORIES", "").strip()
        if not text:
            return max(1, available_memory() // bytes_per_history)
        try:
            limit = int(text)
        except ValueError:
            raise ValueError(f"RCFR_MAX_HISTORIES must be a positive integer, got {text!r}") from None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise ValueError(f"max_histories must be a positive integer, got {limit!r}")
    return int(limit)


history_limit = max_histories  # for functions whose `max_histories` argument hides the name


def _too_large(rules: GameRules, histories: int, limit: int, bytes_per_history: int, exact: bool) -> ValueError:
    size = f"{histories:,} histories (estimated)" if exact else f"more than {histories:,} histories"
    return ValueError(
        f"{rules.description()} has more than {limit:,} histories, too many to compile: {size}, about "
        f"{histories * bytes_per_history / 2**30:.2f} GiB to compile and "
        f"{histories * RESIDENT_BYTES / 2**30:.2f} GiB to hold, with "
        f"{available_memory() / 2**30:.1f} GiB available; choose smaller game parameters (or raise "
        "the limit with RCFR_MAX_HISTORIES or max_histories=)")


def _enumerate(rules: GameRules, limit: int) -> dict:
    """Breadth-first enumeration of the rules into history arrays and first-encounter infosets,
    forced moves collapsed. Stops once more than `limit` histories have been generated, so a game
    too large to compile fails in seconds with a message instead of exhausting memory."""
    player, parent, action, depth, prob, infoset, utility = [], [], [], [], [], [], []
    first_child, num_children = [], []
    keys: dict[str, int] = {}
    infoset_player: list[int] = []
    infoset_actions: list[list[str]] = []
    infoset_history: list[int] = []
    queue = deque([(rules.initial_state(), -1, -1, 0, 1.0)])
    count = 1
    while queue:
        state, up, act, d, p_edge = queue.popleft()
        state, who = settle(rules, state)
        me = len(player)
        player.append(who); parent.append(up); action.append(act); depth.append(d); prob.append(p_edge)
        children: list[float] = []
        if who == TERMINAL:
            utility.append(float(rules.utility(state))); infoset.append(-1)
        elif who == CHANCE:
            utility.append(0.0); infoset.append(-1)
            outcomes = [(str(n), float(q)) for n, q in rules.chance_outcomes(state)]
            children = [q for _, q in outcomes]
            if not children or abs(sum(children) - 1.0) > 1e-9 or min(children) < 0:
                raise ValueError(f"{rules.name}: chance outcomes at {state!r} must be a distribution, "
                                 f"got {outcomes!r}")
        elif who in (0, 1):
            utility.append(0.0)
            key = str(rules.infoset_key(state))
            names = [str(a) for a in rules.actions(state)]
            if not names:
                raise ValueError(f"{rules.name}: decision state {state!r} has no legal action")
            if key not in keys:
                keys[key] = len(infoset_player)
                infoset_player.append(who)
                infoset_actions.append(names)
                infoset_history.append(me)
            i = keys[key]
            if infoset_player[i] != who or infoset_actions[i] != names:
                raise ValueError(f"{rules.name}: information set {key!r} mixes states with different "
                                 f"players or actions ({infoset_actions[i]} vs {names})")
            infoset.append(i)
            children = [1.0] * len(names)
        else:
            raise ValueError(f"{rules.name}: player() returned {who!r}; expected 0, 1, CHANCE or TERMINAL")
        first_child.append(count if children else -1)
        num_children.append(len(children))
        for a, q in enumerate(children):
            queue.append((rules.next_state(state, a), me, a, d + 1, q))
        count += len(children)
        if count > limit:
            raise _too_large(rules, count, limit, COMPILE_BYTES["python"], exact=False)
    arrays = dict(player=player, parent=parent, action=action, depth=depth, chance_prob=prob, infoset=infoset,
                  utility=utility, first_child=first_child, num_children=num_children)
    _check_depth(rules, depth[-1])
    arrays = {k: np.array(v, _DTYPES[k]) for k, v in arrays.items()}
    return dict(arrays=arrays, infoset_player=np.array(infoset_player, np.int8),
                infoset_size=np.array([len(a) for a in infoset_actions], np.int64),
                infoset_history=np.array(infoset_history, np.int64), keys=list(keys),
                action_names=infoset_actions)


def _check_depth(rules: GameRules, depth: int) -> None:
    if depth >= 2**15:
        raise ValueError(f"{rules.description()} is {depth} moves deep; compiled games allow {2**15 - 1}")


def _enumerate_fast(rules: GameRules, fast, limit: int) -> dict:
    from . import compiler  # compiled on first use, not at import
    total, decisions, levels, widest = compiler.count_fast(fast, limit)
    if total > limit:
        raise _too_large(rules, total, limit, COMPILE_BYTES["fast"], exact=False)
    _check_depth(rules, len(levels) - 1)
    arrays = {k: np.empty(total, _DTYPES[k]) for k in _HISTORY_ARRAYS}
    if widest < 2**15:
        arrays["action"] = np.empty(total, np.int16)
    raw = compiler.enumerate_fast(fast, total, decisions, arrays)
    return dict(arrays=arrays, **raw)


RULE_METHODS = ("initial_state", "player", "actions", "chance_outcomes", "next_state", "utility", "infoset_key")


def _speaks_for(rules: GameRules, method: str) -> bool:
    """Whether the rules' `method` (a fast encoder or a size estimate) describes these rules: true unless a
    class below the one defining it overrides a rule method. A user's subclass that changes, say, the
    chance outcomes of a built-in game must not be compiled by the built-in encoder it cannot see."""
    mro = type(rules).__mro__
    owner = next(k for k in mro if method in vars(k))
    return not any(name in vars(k) for k in mro[:mro.index(owner)] for name in RULE_METHODS)


def compile_game(rules: GameRules, max_histories: int | None = None, fast: bool = True) -> Game:
    """Enumerate `rules` into a `Game` and check that both players have perfect recall.

    Uses the rules' fast path when they have one (``fast=False`` forces the rule methods).
    `max_histories` bounds the tree size (default: what the available memory holds, or
    ``$RCFR_MAX_HISTORIES``); a game whose `estimate_histories` exceeds it fails before any work."""
    path = "fast" if fast and type(rules).fast is not GameRules.fast and _speaks_for(rules, "fast") else "python"
    limit = history_limit(max_histories, COMPILE_BYTES[path])
    estimate = rules.estimate_histories() if _speaks_for(rules, "estimate_histories") else None
    if estimate is not None and estimate > limit:
        raise _too_large(rules, int(estimate), limit, COMPILE_BYTES[path], exact=True)
    spec = rules.fast() if path == "fast" else None
    raw = _enumerate_fast(rules, spec, limit) if spec is not None else _enumerate(rules, limit)
    arrays = raw["arrays"]
    if arrays["action"].dtype != np.int16 and int(arrays["num_children"].max()) < 2**15:
        arrays["action"] = arrays["action"].astype(np.int16)
    # Renumber information sets: player 0's first, each player's in first-encounter order.
    order = np.argsort(raw["infoset_player"], kind="stable")
    renumber = np.empty(len(order), np.int32)
    renumber[order] = np.arange(len(order), dtype=np.int32)
    kernels.renumber_infosets(arrays["infoset"], renumber)
    num_actions = raw["infoset_size"][order].astype(np.int32)
    first_seq = (np.cumsum(num_actions) - num_actions).astype(np.int32)
    game = Game(rules=rules, **arrays, infoset_player=raw["infoset_player"][order], infoset_first_seq=first_seq,
                infoset_num_actions=num_actions, infoset_parent_seq=np.full(len(order), -1, np.int32),
                infoset_history=raw["infoset_history"][order])
    if "keys" in raw:  # the rule methods gave the names already
        game.__dict__["infoset_keys"] = np.array([raw["keys"][i] for i in order], dtype=str)
        game.__dict__["action_names"] = np.array([a for i in order for a in raw["action_names"][i]], dtype=str)
    _attach_parent_sequences(game)
    return game


def _attach_parent_sequences(game: Game) -> None:
    """Fill `infoset_parent_seq`, failing if some player forgets its own earlier actions."""
    parent_seq = game.infoset_parent_seq
    broken = kernels.attach_parent_sequences(game.player, game.infoset, _history_sequences(game), parent_seq)
    if broken >= 0:
        key = game.infoset_key(int(game.infoset[broken]))
        raise ValueError(f"{game.rules.name}: information set {key!r} is reached after different own "
                         "actions (imperfect recall); use an abstraction over a perfect-recall game instead")
    if np.any(parent_seq >= game.infoset_first_seq):
        raise ValueError(f"{game.rules.name}: information sets are not in a topological order")


# ---- disk cache ---------------------------------------------------------------------------------
def cache_dir() -> Path | None:
    """Where compiled trees are cached; ``RCFR_CACHE=off`` (or 0/false/no) disables the cache,
    ``RCFR_CACHE=/some/dir`` moves it. Default: ``$XDG_CACHE_HOME/rcfr`` or ``~/.cache/rcfr``."""
    setting = os.environ.get("RCFR_CACHE", "")
    if setting.lower() in ("0", "off", "false", "no"):
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if base else Path.home() / ".cache") / "rcfr"


def _source_modules(cls: type) -> list:
    """Modules whose source defines the rules of `cls`: those of its classes up to `GameRules`, and
    the modules of the same package they take functions or classes from (a game's fast path)."""
    modules = []
    for klass in cls.__mro__:
        if klass is GameRules or klass is object:
            break
        module = inspect.getmodule(klass)
        if module is None or module.__name__ == "__main__":
            modules.append(klass)
            continue
        modules.append(module)
        package = module.__name__.rpartition(".")[0]
        for value in vars(module).values():
            home = getattr(value, "__module__", None)
            if (package and isinstance(home, str) and home != module.__name__ and home.startswith(package + ".")
                    and (inspect.isfunction(value) or inspect.isclass(value))):
                modules.append(sys.modules.get(home, value))
    return modules


def rules_fingerprint(cls: type) -> str:
    """Hash of the source of the modules defining `cls` and its bases up to `GameRules` (whole modules,
    so that helpers such as a deck's showdown count too, and the sibling modules they import from, such
    as a fast path): editing the rules invalidates their cached trees. A class whose source is
    unavailable (defined in a REPL or by exec) contributes its name only."""
    digest = hashlib.sha256()
    seen = set()
    for item in _source_modules(cls):
        try:
            source = inspect.getsource(item)
        except (OSError, TypeError):
            source = f"<no source: {getattr(item, '__module__', '')}.{getattr(item, '__qualname__', item)}>"
        if source not in seen:
            seen.add(source)
            digest.update(source.encode())
    return digest.hexdigest()[:16]


def game_fingerprint(rules: GameRules) -> str:
    """Hash of the compiled format version, the rules class, its source and its parameters."""
    ident = (f"v{FORMAT_VERSION}:{type(rules).__module__}.{type(rules).__qualname__}:"
             f"{rules_fingerprint(type(rules))}:{rules.description()}")
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


# The cache file: MAGIC, the header's length (8 bytes, little-endian), a JSON header (format version,
# fingerprint, and each array's dtype, shape and offset), then the raw arrays, each 64-byte aligned,
# so that they are memory-mapped rather than read.
MAGIC = b"RCFRGAME"
_ALIGN = 64


def _cache_path(rules: GameRules, directory: Path) -> Path:
    return directory / f"{rules.name}-{game_fingerprint(rules)}.game"


def save_game(game: Game, path: Path) -> None:
    """Write the game's arrays with its fingerprint, atomically."""
    arrays = game.arrays()
    entries, offset = [], 0
    for name, a in arrays.items():
        entries.append([name, a.dtype.str, list(a.shape), offset])
        offset += -(-a.nbytes // _ALIGN) * _ALIGN
    header = json.dumps({"format": FORMAT_VERSION, "fingerprint": game.fingerprint,
                         "game": game.rules.description(), "arrays": entries}).encode()
    start = -(-(len(MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN

    def write(f):
        f.write(MAGIC + len(header).to_bytes(8, "little") + header)
        f.write(b"\0" * (start - len(MAGIC) - 8 - len(header)))
        for a in arrays.values():
            data = np.ascontiguousarray(a)
            f.write(memoryview(data).cast("B") if data.nbytes else b"")
            f.write(b"\0" * (-data.nbytes % _ALIGN))

    atomic_write(path, write)


def open_game(rules: GameRules, path: Path) -> Game | None:
    """The cached game at `path`, memory-mapped (copy-on-write), or None unless the file is complete and
    carries this rules' fingerprint (a file copied under another game's name is refused)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                return None
            length = int.from_bytes(f.read(8), "little")
            if length > size:
                return None
            header = json.loads(f.read(length))
        if header.get("format") != FORMAT_VERSION or header.get("fingerprint") != game_fingerprint(rules):
            return None
        start = -(-(len(MAGIC) + 8 + length) // _ALIGN) * _ALIGN
        arrays = {}
        for name, dtype, shape, offset in header["arrays"]:
            dtype = np.dtype(dtype)
            count = int(np.prod(shape))
            if start + offset + count * dtype.itemsize > size:
                return None
            # copy-on-write: pages are shared with the file until written (the file never changes),
            # and the arrays have the same (writeable) type as freshly compiled ones for numba
            arrays[name] = (np.asarray(np.memmap(path, dtype=dtype, mode="c", offset=start + offset, shape=tuple(shape)))
                            if count else np.empty(shape, dtype))
        if set(arrays) != set(_HISTORY_ARRAYS + _INFOSET_ARRAYS):
            return None
        return Game(rules=rules, **arrays)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None  # a damaged entry is rebuilt


def load_compiled(rules: GameRules, cache: bool = True, max_histories: int | None = None) -> Game:
    """Compile `rules`, reusing the on-disk cache when allowed."""
    directory = cache_dir() if cache else None
    if directory is None:
        return compile_game(rules, max_histories)
    path = _cache_path(rules, directory)
    if path.exists():
        game = open_game(rules, path)
        if game is not None:
            return game
    game = compile_game(rules, max_histories)
    try:
        save_game(game, path)
    except OSError:
        pass  # a read-only cache is not an error: the game is simply not cached
    return game
