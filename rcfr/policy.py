"""Policies: action probabilities for every information set of a compiled game.

JSON format (``Policy.to_dict`` / ``Policy.save``)::

    {"format": "rcfr.policy", "version": 1,
     "game": "leduc(ranks=3, suits=2, ...)",
     "infosets": {"Qh||": {"c": 0.75, "r": 0.25}, ...}}

Every information set of the game must appear once, with every legal action, non-negative
probabilities summing to one (within 1e-6). Loading never renormalizes: a wrong row is an error.

Binary format (a path ending in ``.npz``; for large games, where JSON would take gigabytes): the
flat probabilities in global sequence order with the game's fingerprint, checked on loading.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from .files import atomic_write, write_json
from .tree import Game

FORMAT = "rcfr.policy"
VERSION = 1
ROW_TOLERANCE = 1e-6


class PolicyError(ValueError):
    """A policy file or dictionary that does not describe a valid policy of the game."""


class Policy:
    """Probabilities for all sequences of `game`, stored flat in global sequence order."""

    def __init__(self, game: Game, probs: np.ndarray):
        probs = np.asarray(probs, dtype=np.float64)
        if probs.shape != (game.num_sequences,):
            raise ValueError(f"a policy of {game.name} needs {game.num_sequences} probabilities, "
                             f"got shape {probs.shape}")
        _check_rows(game, probs)
        self.game, self.probs = game, probs

    # ---- construction ------------------------------------------------------------------------
    @classmethod
    def uniform(cls, game: Game) -> "Policy":
        return cls(game, 1.0 / game.infoset_num_actions[game.sequence_infoset])

    @classmethod
    def random(cls, game: Game, seed: int | None = None) -> "Policy":
        """Each information set's row drawn uniformly from the probability simplex."""
        weights = np.random.default_rng(seed).exponential(size=game.num_sequences)
        totals = np.bincount(game.sequence_infoset, weights, minlength=game.num_infosets)
        return cls(game, weights / totals[game.sequence_infoset])

    @classmethod
    def from_local(cls, game: Game, strategies) -> "Policy":
        """Join two per-player local strategy arrays (see `PlayerView`) into one policy."""
        return cls(game, np.concatenate([np.asarray(s, dtype=np.float64)[1:] for s in strategies]))

    def local(self, player: int) -> np.ndarray:
        """This player's probabilities in local sequence ids (entry 0, the empty sequence, is 1)."""
        return self.game.views[player].localize(self.probs)

    # ---- reading ---------------------------------------------------------------------------
    def __getitem__(self, key: str) -> dict[str, float]:
        """Action probabilities at the information set with this readable key."""
        try:
            i = self.game.infoset_index[key]
        except KeyError:
            raise KeyError(f"no information set {key!r} in {self.game.name}") from None
        first = self.game.infoset_first_seq[i]
        return dict(zip(self.game.actions_of(i), self.probs[first:first + self.game.infoset_num_actions[i]].tolist()))

    def __repr__(self) -> str:
        return f"Policy({self.game.rules.description()}, {self.game.num_infosets} information sets)"

    # ---- export and import -------------------------------------------------------------------
    def to_dict(self) -> dict:
        game = self.game
        return {"format": FORMAT, "version": VERSION, "game": game.rules.description(),
                "infosets": {str(key): self[str(key)] for key in game.infoset_keys}}

    def save(self, path: str | os.PathLike) -> None:
        """Write atomically: the binary format if `path` ends in ``.npz``, else JSON."""
        if Path(path).suffix == ".npz":
            game = self.game
            atomic_write(path, lambda f: np.savez(f, format=FORMAT, version=VERSION, game=game.rules.description(),
                                                  fingerprint=game.fingerprint, probs=self.probs))
        else:
            write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, game: Game, data: dict) -> "Policy":
        """Validate and read the JSON format; every problem names the information set and action."""
        if not isinstance(data, dict):
            raise PolicyError(f"a policy must be a JSON object, got {type(data).__name__}")
        if data.get("format", FORMAT) != FORMAT:
            raise PolicyError(f"field 'format' must be {FORMAT!r}, got {data.get('format')!r}")
        if data.get("version", VERSION) != VERSION:
            raise PolicyError(f"field 'version' must be {VERSION}, got {data.get('version')!r}")
        if "game" in data and data["game"] != game.rules.description():
            raise PolicyError(f"policy is for game {data['game']!r}, not {game.rules.description()!r}")
        rows = data.get("infosets")
        if not isinstance(rows, dict):
            raise PolicyError("field 'infosets' must map information-set keys to {action: probability}")
        unknown = [k for k in rows if k not in game.infoset_index]
        if unknown:
            raise PolicyError(f"unknown information set {unknown[0]!r} ({len(unknown)} unknown in all)")
        missing = [str(k) for k in game.infoset_keys if str(k) not in rows]
        if missing:
            raise PolicyError(f"missing information set {missing[0]!r} ({len(missing)} missing in all)")
        probs = np.empty(game.num_sequences)
        for key, row in rows.items():
            i = game.infoset_index[key]
            probs[game.infoset_first_seq[i]:game.infoset_first_seq[i] + game.infoset_num_actions[i]] = \
                _read_row(key, row, game.actions_of(i))
        return cls(game, probs)

    @classmethod
    def load(cls, game: Game, path: str | os.PathLike) -> "Policy":
        if Path(path).suffix == ".npz":
            return cls._load_binary(game, path)
        try:
            data = json.loads(Path(path).read_text())
        except json.JSONDecodeError as err:
            raise PolicyError(f"{path}: not valid JSON ({err})") from None
        return cls.from_dict(game, data)


    @classmethod
    def _load_binary(cls, game: Game, path: str | os.PathLike) -> "Policy":
        try:
            with np.load(path, allow_pickle=False) as data:
                fields = {k: data[k] for k in ("format", "version", "game", "fingerprint", "probs")}
        except (OSError, ValueError, KeyError, EOFError) as err:
            raise PolicyError(f"{path}: not a binary rcfr policy ({err})") from None
        if str(fields["format"]) != FORMAT or int(fields["version"]) != VERSION:
            raise PolicyError(f"{path}: format {str(fields['format'])!r} version {int(fields['version'])}, "
                              f"expected {FORMAT!r} version {VERSION}")
        if str(fields["fingerprint"]) != game.fingerprint:
            raise PolicyError(f"{path}: policy is for game {str(fields['game'])!r} (fingerprint "
                              f"{str(fields['fingerprint'])}), not {game.rules.description()!r} ({game.fingerprint})")
        return cls(game, fields["probs"])


def _check_rows(game: Game, probs: np.ndarray) -> None:
    """Every row finite, non-negative and summing to one: one vectorized pass, so that a broken
    strategy fails where it is made rather than as a wrong exploitability later."""
    bad = ~np.isfinite(probs) | (probs < 0)
    if bad.any():
        j = int(np.argmax(bad))
        i = int(game.sequence_infoset[j])
        key, action = game.infoset_key(i), game.actions_of(i)[j - int(game.infoset_first_seq[i])]
        raise PolicyError(f"information set {key!r}, action {action!r}: "
                          f"probability {float(probs[j])!r} is not a finite non-negative number")
    sums = np.bincount(game.sequence_infoset, probs, minlength=game.num_infosets)
    off = np.abs(sums - 1.0) > ROW_TOLERANCE
    if off.any():
        i = int(np.argmax(off))
        key = game.infoset_key(i)
        raise PolicyError(f"information set {key!r}: probabilities sum to {float(sums[i])!r}, not 1 "
                          f"({int(off.sum())} of {game.num_infosets} rows are off by more than {ROW_TOLERANCE})")


def _read_row(key: str, row, actions: list[str]) -> list[float]:
    if not isinstance(row, dict):
        raise PolicyError(f"information set {key!r}: expected {{action: probability}}, got {row!r}")
    extra = [a for a in row if a not in actions]
    if extra:
        raise PolicyError(f"information set {key!r}: unknown action {extra[0]!r}; legal actions: {actions}")
    absent = [a for a in actions if a not in row]
    if absent:
        raise PolicyError(f"information set {key!r}: missing action {absent[0]!r}; legal actions: {actions}")
    values = []
    for action in actions:
        p = row[action]
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p):
            raise PolicyError(f"information set {key!r}, action {action!r}: {p!r} is not a finite number")
        if p < 0:
            raise PolicyError(f"information set {key!r}, action {action!r}: negative probability {p}")
        values.append(float(p))
    if abs(sum(values) - 1.0) > ROW_TOLERANCE:
        raise PolicyError(f"information set {key!r}: probabilities sum to {sum(values)!r}, not 1")
    return values
