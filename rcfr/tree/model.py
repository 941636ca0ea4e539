"""The compiled game: a game enumerated once into flat NumPy arrays (`Game`), and each player's
sequence form over them (`PlayerView`). Built by `rcfr.tree.enumeration`, stored by `rcfr.tree.cache`.

Histories are numbered in breadth-first order, so a parent always precedes its children and the
children of a node are contiguous. Information sets are numbered player 0's first, then player 1's,
each in order of first encounter, which is a topological order of each player's sequence tree.
A sequence (information set, action) has the global id ``infoset_first_seq[I] + a``; a player's
sequences are contiguous. Every solver, sampler and evaluator works on these arrays.

A node with exactly one child (a forced move: one legal action, or one chance outcome) is not kept:
its child takes its place. Readable names (information-set keys, action and chance-outcome names)
are not stored: they are replayed from the rules along a history's path when first asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from .. import kernels
from ..games.base import CHANCE, TERMINAL, GameRules
from .fingerprint import game_fingerprint

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

    #: what this kind of game offers the solvers and builders that need it (`rcfr.solvers.base.require`): the
    #: compiled arrays (histories, sequences, information sets a map can merge)
    offers = frozenset({"arrays"})
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

    def as_abstraction(self, abstraction):
        """A `rcfr.sources.abstraction.CodeAbstraction` as this game's solvers take it: its map of the compiled
        sets (`CodeAbstraction.on`); a game walked by its rules takes it as it is (`RulesGame.as_abstraction`)."""
        return abstraction.on(self)

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
        for array in (m for payoff in payoffs for m in (payoff.data, payoff.indices, payoff.indptr)):
            array.setflags(write=False)  # game data: one numba type here and on Ray workers, shared with them
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
