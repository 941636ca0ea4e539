"""Information-set abstractions: a many-to-one map from a game's information sets to abstract ones.
It lives beside the compiled game (solvers and samplers take one); `rcfr.abstraction` builds and solves them.

An abstraction never changes the compiled tree: the full game stays perfect recall and is scored
exactly; merged information sets only share one strategy (and one regret vector while solving).
Merged sets must belong to the same player and have the same legal actions. Abstract sets are
numbered player 0's first, then player 1's, each in order of first appearance.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from ..files import write_json
from .model import Game


@dataclass(eq=False)
class Abstraction:
    """`infoset_map[i]` is the abstract information set of full-game information set i."""

    game: Game
    name: str
    infoset_map: np.ndarray  # int64 per full information set
    abstract_keys: np.ndarray  # str per abstract information set
    #: optional int64 per full information set, equal exactly when two sets' legal actions are (so that
    #: large games need not materialize every action name to check the merge); None: compare the names
    action_signature: np.ndarray | None = None

    @classmethod
    def from_keys(cls, game: Game, name: str, key: Callable[[str], str]) -> "Abstraction":
        """Merge the information sets whose readable keys `key` sends to the same abstract key.

        The abstract key is prefixed with the player, so the players' sets never merge."""
        keys = [f"{p}:{key(str(k))}" for p, k in zip(game.infoset_player.tolist(), game.infoset_keys)]
        order = np.argsort(game.infoset_player, kind="stable")
        ids: dict[str, int] = {}
        for i in order.tolist():
            ids.setdefault(keys[i], len(ids))
        infoset_map = np.array([ids[k] for k in keys], dtype=np.int64)
        return cls(game, name, infoset_map, np.array([k.split(":", 1)[1] for k in ids], dtype=str))

    @classmethod
    def from_codes(cls, game: Game, name: str, codes: np.ndarray, action_signature: np.ndarray) -> "Abstraction":
        """Merge the information sets of equal integer `codes` (one per set, below 2^62), as `from_keys`
        does with keys (the players' sets never merge; the same numbering), without readable keys: an
        abstract set's key is its code. `action_signature` per set: see the field."""
        codes = np.asarray(codes, dtype=np.int64)
        if codes.shape != (game.num_infosets,) or (codes.size and (codes.min() < 0 or codes.max() >= 1 << 62)):
            raise ValueError(f"abstraction {name!r}: codes need one integer in [0, 2^62) per information set")
        player = game.infoset_player.astype(np.int64)
        order = np.argsort(player, kind="stable")
        unique, first, inverse = np.unique((codes * 2 + player)[order], return_index=True, return_inverse=True)
        by_appearance = np.argsort(first)
        rank = np.empty(len(unique), np.int64)
        rank[by_appearance] = np.arange(len(unique))
        infoset_map = np.empty(game.num_infosets, np.int64)
        infoset_map[order] = rank[inverse.reshape(-1)]
        return cls(game, name, infoset_map, (unique[by_appearance] >> 1).astype(str),
                   np.asarray(action_signature, dtype=np.int64))

    def __post_init__(self):
        game, m = self.game, np.asarray(self.infoset_map, dtype=np.int64)
        if m.shape != (game.num_infosets,) or (m.size and (m.min() < 0 or m.max() >= len(self.abstract_keys))):
            raise ValueError(f"abstraction {self.name!r}: infoset_map needs one id in "
                             f"[0, {len(self.abstract_keys)}) per information set of {game.name}")
        self.infoset_map = m
        first = np.full(len(self.abstract_keys), -1, dtype=np.int64)
        first[m[::-1]] = np.arange(game.num_infosets)[::-1]  # a representative full set per abstract set
        if np.any(first < 0):
            raise ValueError(f"abstraction {self.name!r}: some abstract information sets are empty")
        self._representative = first
        rep = first[m]
        bad = np.flatnonzero((game.infoset_player[rep] != game.infoset_player)
                             | (game.infoset_num_actions[rep] != game.infoset_num_actions))
        if not bad.size and self.action_signature is not None:
            signature = self.action_signature
            if signature.shape != (game.num_infosets,):
                raise ValueError(f"abstraction {self.name!r}: action_signature needs one integer per information set")
            bad = np.flatnonzero(signature[rep] != signature)
        elif not bad.size:
            names = game.action_names
            seq_rep = game.infoset_first_seq[rep][game.sequence_infoset] + _action_index(game)
            bad = np.unique(game.sequence_infoset[np.flatnonzero(names[seq_rep] != names)])
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"abstraction {self.name!r} merges information sets {game.infoset_key(i)!r} and "
                             f"{game.infoset_key(int(rep[i]))!r}, which differ in player or legal actions")
        players = game.infoset_player[first]
        if np.any(np.diff(players) < 0):
            raise ValueError(f"abstraction {self.name!r}: abstract sets must list player 0's before player 1's")

    # ---- sizes ---------------------------------------------------------------------------------
    @property
    def num_infosets(self) -> int:
        return len(self.abstract_keys)

    @cached_property
    def abstract_num_actions(self) -> np.ndarray:
        return self.game.infoset_num_actions[self._representative].astype(np.int64)

    @property
    def num_sequences(self) -> int:
        """Representation size: abstract (information set, action) pairs."""
        return int(self.abstract_num_actions.sum())

    def fraction_of(self, sequences: int | None = None) -> float:
        """Size as a fraction of `sequences` (default: the game's own sequence count)."""
        return self.num_sequences / (sequences or self.game.num_sequences)

    def __repr__(self) -> str:
        return (f"Abstraction({self.name!r} of {self.game.rules.description()}: {self.num_infosets} "
                f"information sets, {self.num_sequences} sequences, "
                f"{100 * self.fraction_of():.1f}% of the game)")

    def to_dict(self) -> dict:
        """Plain export: each full information-set key with its abstract key (readable, for other tools)."""
        return {"format": "rcfr.abstraction", "version": 1, "name": self.name,
                "game": self.game.rules.description(),
                "infosets": {str(k): str(self.abstract_keys[a]) for k, a in zip(self.game.infoset_keys, self.infoset_map)}}

    def save(self, path) -> None:
        """Write `to_dict()` as JSON, atomically."""
        write_json(path, self.to_dict())

    # ---- local sequence maps (see `PlayerView`) -------------------------------------------------
    @cached_property
    def local(self) -> tuple["LocalMap", "LocalMap"]:
        """Each player's map from full local sequences to abstract local sequences."""
        game, out = self.game, []
        for p, view in enumerate(game.views):
            mine = np.flatnonzero(self.game.infoset_player[self._representative] == p)
            sizes = self.abstract_num_actions[mine]
            first = 1 + np.cumsum(sizes) - sizes
            abstract_of = np.full(len(self.abstract_keys), -1, dtype=np.int64)
            abstract_of[mine] = np.arange(len(mine))
            full_sets = view.infoset_offset + np.arange(view.num_infosets)
            target = first[abstract_of[self.infoset_map[full_sets]]]
            seq_map = np.zeros(view.num_sequences, dtype=np.int64)
            offsets = np.arange(view.num_sequences - 1) - np.repeat(view.infoset_first - 1, view.infoset_size)
            seq_map[1:] = np.repeat(target, view.infoset_size) + offsets
            out.append(LocalMap(seq_map, first.astype(np.int64), sizes.astype(np.int64), int(1 + sizes.sum())))
        return tuple(out)


@dataclass(frozen=True)
class LocalMap:
    """One player's abstract sequence form: `seq_map[s]` is the abstract local sequence of full local
    sequence s (0 -> 0); abstract information set j owns sequences first[j] .. first[j] + size[j] - 1."""

    seq_map: np.ndarray
    infoset_first: np.ndarray
    infoset_size: np.ndarray
    num_sequences: int

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_first)


def _action_index(game: Game) -> np.ndarray:
    """Each global sequence's action index within its information set."""
    return np.arange(game.num_sequences) - game.infoset_first_seq[game.sequence_infoset]


def identity(game: Game) -> Abstraction:
    """The trivial abstraction (every information set is its own)."""
    return Abstraction(game, "identity", np.arange(game.num_infosets), game.infoset_keys.copy())
