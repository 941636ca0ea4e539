"""Policies: action probabilities for every information set of a compiled game.

Two file forms, chosen by the suffix (`Policy.save` / `Policy.load`):

* ``.json``, readable and keyed by names (``Policy.to_dict``)::

    {"format": "rcfr.policy", "version": 1,
     "game": "leduc(ranks=3, suits=2, ...)",
     "infosets": {"Qh||": {"c": 0.75, "r": 0.25}, ...}}

  Every information set of the game must appear once, with every legal action;
* ``.npz``, compact: the fields ``format``, ``version``, ``game`` (its description), ``fingerprint``
  (`Game.fingerprint`) and ``probs`` (float64, one per sequence in the game's order). Positions only
  mean something in the game that wrote them, so the fingerprint must match.

Probabilities must be non-negative and sum to one per information set (within 1e-6). Loading never
renormalizes: a wrong row is an error.

This package holds one policy per path: this module the compiled game's, `rules` the code-keyed policy of a game
walked by its rules (`CodePolicy`), `state` the state path's (`StatePolicy`).
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from pathlib import Path

import numpy as np

from ..errors import ROW_TOLERANCE, PolicyError  # noqa: F401  (the names stay public here)
from ..files import atomic_write, write_json
from ..tree import Game

FORMAT = "rcfr.policy"
VERSION = 1
SUFFIXES = (".json", ".npz")
JSON_FIELDS = ("format", "version", "game", "infosets")
NPZ_FIELDS = ("format", "version", "game", "fingerprint", "probs")


class Policy:
    """Probabilities for all sequences of `game`, stored flat in global sequence order. ``probs`` is read-only
    once checked (a copy of what was given; ``copy=False`` takes over, and freezes, an array that owns its
    memory, and copies a view, whose base would stay writable)."""

    def __init__(self, game: Game, probs: np.ndarray, *, copy: bool = True):
        if not isinstance(game, Game):
            raise TypeError(f"game must be a compiled rcfr.Game, got {type(game).__name__}")
        probs = np.array(probs, dtype=np.float64, copy=True) if copy else np.asarray(probs, dtype=np.float64)
        if probs.base is not None:  # a view: freezing it would leave its base writable
            probs = probs.copy()
        if probs.shape != (game.num_sequences,):
            raise ValueError(f"a policy of {game.name} needs {game.num_sequences} probabilities, "
                             f"got shape {probs.shape}")
        _check_rows(game, probs)
        probs.setflags(write=False)
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
        strategies = [np.asarray(s, dtype=np.float64) for s in strategies]
        sizes = tuple(v.num_sequences for v in game.views)
        if tuple(s.shape for s in strategies) != tuple((n,) for n in sizes):
            raise ValueError(f"local strategies of {game.rules.description()} need shapes {[(n,) for n in sizes]} "
                             f"(the empty sequence included), got {[s.shape for s in strategies]}")
        return cls(game, np.concatenate([s[1:] for s in strategies]), copy=False)

    @classmethod
    def from_regrets(cls, game: Game, regrets) -> "Policy":
        """Regret matching: probabilities proportional to the positive entries of a per-sequence
        (global order) regret array, uniform at information sets with none positive."""
        regrets = _per_sequence(game, "regrets", regrets)
        return cls.from_local(game, [v.regret_matching(v.localize(regrets)) for v in game.views])

    @classmethod
    def from_plan(cls, game: Game, plan) -> "Policy":
        """The behavioural policy of a (possibly unnormalized, e.g. summed) per-sequence realization
        plan, uniform where it is all zero: how an average policy is read off summed plans."""
        plan = _per_sequence(game, "plan", plan)
        return cls.from_local(game, [v.normalize(v.localize(plan)) for v in game.views])

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
        """Write atomically, as JSON (``.json``) or in the compact binary form (``.npz``)."""
        if policy_suffix(path) == ".json":
            write_json(path, self.to_dict())
            return
        arrays = {"format": np.array(FORMAT), "version": np.array(VERSION),
                  "game": np.array(self.game.rules.description()), "fingerprint": np.array(self.game.fingerprint),
                  "probs": self.probs}
        atomic_write(path, lambda f: np.savez(f, **arrays))  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, game: Game, data: dict, *, require_game: bool = True) -> "Policy":
        """Validate and read the JSON format; every problem names the information set and action. The
        ``game`` field must name `game` (keys alone do not tell Leduc(ante=2) from Leduc(ante=1));
        ``require_game=False`` accepts a hand-written policy without the field (one that has it must match)."""
        if not isinstance(data, dict):
            raise PolicyError(f"a policy must be a JSON object, got {type(data).__name__}")
        unknown = [k for k in data if k not in JSON_FIELDS]
        if unknown:
            raise PolicyError(f"unknown field {_short(unknown[0])}; allowed: {', '.join(JSON_FIELDS)}")
        if data.get("format", FORMAT) != FORMAT:
            raise PolicyError(f"field 'format' must be {FORMAT!r}, got {_short(data.get('format'))}")
        version = data.get("version", VERSION)
        if type(version) is not int or version != VERSION:  # noqa: E721  (True and 1.0 equal 1)
            raise PolicyError(f"field 'version' must be the integer {VERSION}, got {_short(version)}")
        if "game" not in data and require_game:
            raise PolicyError(f"policy has no 'game' field, so it could belong to any game with the same "
                              f"information-set keys; add \"game\": {game.rules.description()!r}, or load a "
                              f"hand-written policy with require_game=False")
        if "game" in data and data["game"] != game.rules.description():
            raise PolicyError(f"policy is for game {_short(data['game'])}, not {game.rules.description()!r}")
        rows = data.get("infosets")
        if not isinstance(rows, dict):
            raise PolicyError("field 'infosets' must map information-set keys to {action: probability}")
        unknown = [k for k in rows if k not in game.infoset_index]
        if unknown:
            raise PolicyError(f"unknown information set {_short(unknown[0])} ({len(unknown)} unknown in all)")
        missing = [str(k) for k in game.infoset_keys if str(k) not in rows]
        if missing:
            raise PolicyError(f"missing information set {missing[0]!r} ({len(missing)} missing in all)")
        probs = np.empty(game.num_sequences)
        for key, row in rows.items():
            i = game.infoset_index[key]
            probs[game.infoset_first_seq[i]:game.infoset_first_seq[i] + game.infoset_num_actions[i]] = \
                _read_row(key, row, game.actions_of(i))
        return cls(game, probs, copy=False)

    def to_openspiel(self, os_game=None):
        """This policy as an OpenSpiel `TabularPolicy` (see `rcfr.interop.openspiel.to_tabular`)."""
        from ..interop.openspiel import to_tabular  # loads OpenSpiel: on first use
        return to_tabular(self, os_game)

    @classmethod
    def from_openspiel(cls, game: Game, tabular) -> "Policy":
        """Read an OpenSpiel `TabularPolicy`, as strictly as `from_dict` (see `rcfr.interop.openspiel`)."""
        from ..interop.alignment import align
        from ..interop.openspiel import tabular_rows  # loads OpenSpiel: on first use
        compiled, rows = tabular_rows(game, tabular)
        policy = cls.from_dict(compiled, {"game": compiled.rules.description(), "infosets": rows})
        return policy if compiled is game else align(compiled, game).translate(policy)

    @classmethod
    def load(cls, game: Game, path: str | os.PathLike, *, require_game: bool = True) -> "Policy":
        """Read a policy file of `game` (the suffix says which form, see the module docstring);
        `require_game`: see `from_dict` (the binary form always carries its game)."""
        if policy_suffix(path) == ".npz":
            return cls._from_arrays(game, path, read_npz(path))
        try:
            data = json.loads(Path(path).read_bytes().decode("utf-8"))
        except UnicodeDecodeError as err:
            raise PolicyError(f"{path}: not UTF-8 text (byte {err.start})") from None
        except json.JSONDecodeError as err:
            raise PolicyError(f"{path}: not valid JSON ({err})") from None
        except RecursionError:
            raise PolicyError(f"{path}: JSON nested too deeply") from None
        except ValueError as err:  # e.g. an integer with more digits than Python converts
            raise PolicyError(f"{path}: not valid JSON ({_cut(str(err))})") from None
        return cls.from_dict(game, data, require_game=require_game)

    @classmethod
    def _from_arrays(cls, game: Game, path, arrays: dict[str, np.ndarray]) -> "Policy":
        """Validate the fields of the binary form."""
        texts = npz_texts(path, arrays, "a binary policy", NPZ_FIELDS, FORMAT, VERSION)
        try:
            game.check_fingerprint(f"policy file {path}", _cut(texts["fingerprint"]), _cut(texts["game"], 200))
        except ValueError as err:
            raise PolicyError(str(err)) from None
        probs = arrays["probs"]
        if probs.dtype.kind != "f" or probs.shape != (game.num_sequences,):
            raise PolicyError(f"{path}: field 'probs' must hold {game.num_sequences} floats, "
                              f"got {probs.dtype}{list(probs.shape)}")
        return cls(game, probs)


def policy_suffix(path: str | os.PathLike) -> str:
    """The form a policy file at `path` takes, from its suffix; anything but .json and .npz is an error."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"policy file {str(path)!r}: the suffix must be .json (readable) or .npz (compact "
                         f"binary), got {suffix or 'none'!r}")
    return suffix


def require_npz(path: str | os.PathLike, what: str) -> None:
    """A binary-only policy file (`what`: "code policy", "state policy") must end in .npz."""
    if Path(path).suffix.lower() != ".npz":
        raise ValueError(f"{what} file {str(path)!r}: the suffix must be .npz, got {Path(path).suffix or 'none'!r}")


def read_npz(path, what: str = "policy file") -> dict[str, np.ndarray]:
    """Every field of the .npz archive at `path`; a truncated or damaged file, or a single array, is a
    `PolicyError` naming the file and `what` it should have been. Every binary policy form reads through
    here."""
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError("a single array, not an archive of fields")
        with data:
            return {k: data[k] for k in data.files}
    except (ValueError, EOFError, OSError, KeyError, zipfile.BadZipFile) as err:  # truncated or damaged
        raise PolicyError(f"{path}: not a readable .npz {what} ({_cut(str(err))})") from None


def npz_texts(path, arrays: dict[str, np.ndarray], what: str, fields: tuple[str, ...], format: str,
              version: int) -> dict[str, str]:
    """Check what every binary policy file holds (exactly `fields`; ``format`` and ``version`` equal to
    these; ``game`` and ``fingerprint`` strings) and return the three strings."""
    missing = [k for k in fields if k not in arrays]
    unknown = [k for k in arrays if k not in fields]
    if missing or unknown:
        raise PolicyError(f"{path}: {what} has the fields {', '.join(fields)}; "
                          f"missing {missing}, unknown {[_cut(k) for k in unknown[:3]]}")
    texts = {}
    for name in ("format", "game", "fingerprint"):
        if arrays[name].dtype.kind != "U" or arrays[name].shape != ():
            raise PolicyError(f"{path}: field {name!r} must be a string")
        texts[name] = str(arrays[name])
    if texts["format"] != format:
        raise PolicyError(f"{path}: field 'format' must be {format!r}, got {_short(texts['format'])}")
    found = arrays["version"]
    if found.dtype.kind not in "iu" or found.shape != () or int(found) != version:
        raise PolicyError(f"{path}: field 'version' must be the integer {version}, got {_short(found)}")
    return texts


def _short(value, limit: int = 80) -> str:
    """`repr(value)`, cut to `limit` characters: a message never echoes a whole megabyte of input."""
    return _cut(repr(value), limit)


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[:limit - 20]}... ({len(text)} characters)"


def _per_sequence(game: Game, name: str, values) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (game.num_sequences,) or not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be {game.num_sequences} finite numbers (one per sequence of "
                         f"{game.name}), got shape {values.shape}")
    return values


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
        raise PolicyError(f"information set {key!r}: expected {{action: probability}}, got {_short(row)}")
    extra = [a for a in row if a not in actions]
    if extra:
        raise PolicyError(f"information set {key!r}: unknown action {_short(extra[0])}; legal actions: {actions}")
    absent = [a for a in actions if a not in row]
    if absent:
        raise PolicyError(f"information set {key!r}: missing action {absent[0]!r}; legal actions: {actions}")
    values = []
    for action in actions:
        p = row[action]
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(_float(p)):  # JSON values
            raise PolicyError(f"information set {key!r}, action {action!r}: {_short(p)} is not a finite number")
        if p < 0:
            raise PolicyError(f"information set {key!r}, action {action!r}: negative probability {p}")
        values.append(float(p))
    if abs(sum(values) - 1.0) > ROW_TOLERANCE:
        raise PolicyError(f"information set {key!r}: probabilities sum to {sum(values)!r}, not 1")
    return values


def _float(x: int | float) -> float:
    """`float(x)`, or inf for an integer too large for a float (10**400)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf
