"""Compiled game trees: a game enumerated once into flat NumPy arrays, cached on disk.

Histories are numbered in breadth-first order, so a parent always precedes its children and the
children of a node are contiguous. Information sets are numbered player 0's first, then player 1's,
each in order of first encounter, which is a topological order of each player's sequence tree.
A sequence (information set, action) has the global id ``infoset_first_seq[I] + a``; a player's
sequences are contiguous. Every solver, sampler and evaluator works on these arrays.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from . import kernels
from .files import atomic_write
from .games.base import CHANCE, TERMINAL, GameRules

FORMAT_VERSION = 1
#: Enumeration stops with a ValueError past this many histories (override with RCFR_MAX_HISTORIES
#: or the `max_histories` argument): a tree that large would not fit in memory or finish compiling.
MAX_HISTORIES = 5_000_000

_HISTORY_ARRAYS = ("player", "parent", "action", "depth", "chance_prob", "infoset", "utility",
                   "first_child", "num_children")
_INFOSET_ARRAYS = ("infoset_player", "infoset_first_seq", "infoset_num_actions", "infoset_parent_seq")


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
    action: np.ndarray  # int32: index of the action (or chance outcome) leading here, -1 at the root
    depth: np.ndarray  # int32
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
    infoset_keys: np.ndarray  # str
    # per sequence
    action_names: np.ndarray  # str
    chance_outcome_names: np.ndarray = field(repr=False)  # str, per history: the outcome leading here

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

    @property
    def num_sequences(self) -> int:
        """Number of (information set, action) pairs, empty sequences excluded."""
        return len(self.action_names)

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

    # ---- derived views -----------------------------------------------------------------------
    @cached_property
    def sequence_infoset(self) -> np.ndarray:
        """The information set of each global sequence."""
        return np.repeat(np.arange(self.num_infosets, dtype=np.int32), self.infoset_num_actions)

    @cached_property
    def infoset_index(self) -> dict[str, int]:
        return {str(k): i for i, k in enumerate(self.infoset_keys)}

    @cached_property
    def history_sequences(self) -> np.ndarray:
        """(histories, 2) int32: each player's last global sequence on the way to a history (-1 = empty)."""
        seqs = np.full((self.num_histories, 2), -1, dtype=np.int32)
        for level in _levels(self.depth)[1:]:
            parents = self.parent[level]
            seqs[level] = seqs[parents]
            acting = self.player[parents]
            mover = acting >= 0
            rows = level[mover]
            seqs[rows, acting[mover]] = (self.infoset_first_seq[self.infoset[parents[mover]]]
                                         + self.action[rows])
        return seqs

    @cached_property
    def chance_reach(self) -> np.ndarray:
        """Probability that chance's own moves lead to each history."""
        reach = np.ones(self.num_histories)
        for level in _levels(self.depth)[1:]:
            reach[level] = reach[self.parent[level]] * self.chance_prob[level]
        return reach

    @cached_property
    def views(self) -> tuple[PlayerView, PlayerView]:
        """Both players' sequence forms."""
        terminals = np.flatnonzero(self.player == TERMINAL)
        seqs = self.history_sequences[terminals]
        offsets = [0, int(self.sequences_per_player[0])]
        local = [np.where(seqs[:, p] < 0, 0, seqs[:, p] - offsets[p] + 1) for p in (0, 1)]
        sizes = [1 + n for n in self.sequences_per_player]
        values = self.chance_reach[terminals] * self.utility[terminals]
        import scipy.sparse as sp  # loaded with the first game, not by `import rcfr`
        payoff0 = sp.csr_matrix((values, (local[0], local[1])), shape=(sizes[0], sizes[1]))  # sums duplicates
        payoffs = (payoff0, sp.csr_matrix(-payoff0.T))
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

    # ---- readable names ----------------------------------------------------------------------
    def actions_of(self, infoset: int) -> list[str]:
        first = self.infoset_first_seq[infoset]
        return [str(a) for a in self.action_names[first:first + self.infoset_num_actions[infoset]]]

    def history_string(self, history: int) -> str:
        """Readable path from the root: chance outcomes and action names joined by spaces."""
        parts = []
        while self.parent[history] >= 0:
            up = self.parent[history]
            if self.player[up] == CHANCE:
                parts.append(str(self.chance_outcome_names[history]))
            else:
                parts.append(str(self.action_names[self.infoset_first_seq[self.infoset[up]] + self.action[history]]))
            history = up
        return " ".join(reversed(parts))

    # ---- persistence -------------------------------------------------------------------------
    def arrays(self) -> dict[str, np.ndarray]:
        names = _HISTORY_ARRAYS + _INFOSET_ARRAYS + ("infoset_keys", "action_names", "chance_outcome_names")
        return {n: getattr(self, n) for n in names}


def _levels(depth: np.ndarray) -> list[np.ndarray]:
    """History ids grouped by depth (ids are breadth-first, so each group is a contiguous range)."""
    bounds = np.flatnonzero(np.diff(depth)) + 1
    return np.split(np.arange(len(depth)), bounds)


def max_histories(limit: int | None = None) -> int:
    """The enumeration limit: `limit` if given, else ``$RCFR_MAX_HISTORIES``, else `MAX_HISTORIES`."""
    if limit is None:
        text = os.environ.get("RCFR_MAX_HISTORIES", "").strip()
        if not text:
            return MAX_HISTORIES
        try:
            limit = int(text)
        except ValueError:
            raise ValueError(f"RCFR_MAX_HISTORIES must be a positive integer, got {text!r}") from None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise ValueError(f"max_histories must be a positive integer, got {limit!r}")
    return int(limit)


def _enumerate(rules: GameRules, limit: int | None = None) -> dict[str, np.ndarray]:
    """Breadth-first enumeration of the rules into history arrays and first-encounter infosets.

    Stops once more than `max_histories(limit)` histories have been generated, so a game too large
    to compile fails in seconds with a message instead of exhausting memory."""
    limit = max_histories(limit)
    player, parent, action, depth, prob, infoset, utility, outcome = [], [], [], [], [], [], [], []
    first_child, num_children = [], []
    keys: dict[str, int] = {}
    infoset_player: list[int] = []
    infoset_actions: list[list[str]] = []
    queue = deque([(rules.initial_state(), -1, -1, 0, 1.0, "")])
    count = 1
    while queue:
        state, up, act, d, p_edge, name = queue.popleft()
        me = len(player)
        who = rules.player(state)
        player.append(who); parent.append(up); action.append(act); depth.append(d)
        prob.append(p_edge); outcome.append(name)
        children: list[tuple[str, float]] = []
        if who == TERMINAL:
            utility.append(float(rules.utility(state))); infoset.append(-1)
        elif who == CHANCE:
            utility.append(0.0); infoset.append(-1)
            children = [(str(n), float(q)) for n, q in rules.chance_outcomes(state)]
            total = sum(q for _, q in children)
            if not children or abs(total - 1.0) > 1e-9 or min(q for _, q in children) < 0:
                raise ValueError(f"{rules.name}: chance outcomes at {state!r} must be a distribution, "
                                 f"got {children!r}")
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
            i = keys[key]
            if infoset_player[i] != who or infoset_actions[i] != names:
                raise ValueError(f"{rules.name}: information set {key!r} mixes states with different "
                                 f"players or actions ({infoset_actions[i]} vs {names})")
            infoset.append(i)
            children = [(n, 1.0) for n in names]
        else:
            raise ValueError(f"{rules.name}: player() returned {who!r}; expected 0, 1, CHANCE or TERMINAL")
        first_child.append(count if children else -1)
        num_children.append(len(children))
        for a, (n, q) in enumerate(children):
            queue.append((rules.next_state(state, a), me, a, d + 1, q if who == CHANCE else 1.0,
                          n if who == CHANCE else ""))
        count += len(children)
        if count > limit:
            raise ValueError(f"{rules.description()} has more than {limit:,} histories, too many to compile; "
                             "choose smaller game parameters (or raise the limit with RCFR_MAX_HISTORIES "
                             "or max_histories=)")
    return dict(player=np.array(player, np.int8), parent=np.array(parent, np.int32),
                action=np.array(action, np.int32), depth=np.array(depth, np.int32),
                chance_prob=np.array(prob, np.float64), infoset=np.array(infoset, np.int32),
                utility=np.array(utility, np.float64), first_child=np.array(first_child, np.int32),
                num_children=np.array(num_children, np.int32),
                chance_outcome_names=np.array(outcome, dtype=str),
                keys=list(keys), infoset_player=np.array(infoset_player, np.int8),
                infoset_actions=infoset_actions)


def compile_game(rules: GameRules, max_histories: int | None = None) -> Game:
    """Enumerate `rules` into a `Game` and check that both players have perfect recall.

    `max_histories` bounds the tree size (default `MAX_HISTORIES`, or ``$RCFR_MAX_HISTORIES``)."""
    raw = _enumerate(rules, max_histories)
    # Renumber information sets: player 0's first, each player's in first-encounter order.
    order = np.argsort(raw["infoset_player"], kind="stable")
    renumber = np.empty_like(order)
    renumber[order] = np.arange(len(order))
    infoset = np.where(raw["infoset"] >= 0, renumber[np.maximum(raw["infoset"], 0)], -1).astype(np.int32)
    actions = [raw["infoset_actions"][i] for i in order]
    num_actions = np.array([len(a) for a in actions], np.int32)
    first_seq = (np.cumsum(num_actions) - num_actions).astype(np.int32)
    game = Game(rules=rules, player=raw["player"], parent=raw["parent"], action=raw["action"],
                depth=raw["depth"], chance_prob=raw["chance_prob"], infoset=infoset,
                utility=raw["utility"], first_child=raw["first_child"], num_children=raw["num_children"],
                infoset_player=raw["infoset_player"][order], infoset_first_seq=first_seq,
                infoset_num_actions=num_actions,
                infoset_parent_seq=np.full(len(order), -1, np.int32),
                infoset_keys=np.array([raw["keys"][i] for i in order], dtype=str),
                action_names=np.array([a for names in actions for a in names], dtype=str),
                chance_outcome_names=raw["chance_outcome_names"])
    _attach_parent_sequences(game)
    return game


def _attach_parent_sequences(game: Game) -> None:
    """Fill `infoset_parent_seq`, failing if some player forgets its own earlier actions."""
    decisions = np.flatnonzero(game.player >= 0)
    sets = game.infoset[decisions]
    own = game.history_sequences[decisions, game.player[decisions]]
    parent_seq = game.infoset_parent_seq
    parent_seq[sets] = own
    broken = np.flatnonzero(parent_seq[sets] != own)
    if broken.size:
        key = game.infoset_keys[sets[broken[0]]]
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


def rules_fingerprint(cls: type) -> str:
    """Hash of the source of the modules defining `cls` and its bases up to `GameRules` (whole modules,
    so that helpers such as a deck's showdown count too): editing the rules invalidates their cached
    trees. A class whose source is unavailable (defined in a REPL or by exec) contributes its name only."""
    digest = hashlib.sha256()
    seen = set()
    for klass in cls.__mro__:
        if klass is GameRules or klass is object:
            break
        try:
            module = inspect.getmodule(klass)
            source = inspect.getsource(module if module is not None and module.__name__ != "__main__" else klass)
        except (OSError, TypeError):
            source = f"<no source: {klass.__module__}.{klass.__qualname__}>"
        if source not in seen:
            seen.add(source)
            digest.update(source.encode())
    return digest.hexdigest()[:16]


def game_fingerprint(rules: GameRules) -> str:
    """Hash of the compiled format version, the rules class, its source and its parameters."""
    ident = (f"v{FORMAT_VERSION}:{type(rules).__module__}.{type(rules).__qualname__}:"
             f"{rules_fingerprint(type(rules))}:{rules.description()}")
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


def _cache_path(rules: GameRules, directory: Path) -> Path:
    return directory / f"{rules.name}-{game_fingerprint(rules)}.npz"


def load_compiled(rules: GameRules, cache: bool = True) -> Game:
    """Compile `rules`, reusing the on-disk cache when allowed."""
    directory = cache_dir() if cache else None
    if directory is None:
        return compile_game(rules)
    path = _cache_path(rules, directory)
    if path.exists():
        try:
            with np.load(path, allow_pickle=False) as data:
                return Game(rules=rules, **{k: data[k] for k in data.files})
        except Exception:  # noqa: BLE001  (BadZipFile, EOFError, OSError, ValueError, KeyError, ...)
            pass  # a stale, truncated or damaged cache entry is rebuilt below
    game = compile_game(rules)
    try:
        atomic_write(path, lambda f: np.savez(f, **game.arrays()))
    except OSError:
        pass  # a read-only cache is not an error: the game is simply not cached
    return game

