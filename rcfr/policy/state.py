"""Policies of the state path keyed by (player, information-state string) (`StatePolicy`): rows from a run's
sums, saved as ``.npz`` with the game string and OpenSpiel version as identity, played by OpenSpiel's tools
(`openspiel_policy`; uniform at sets the run never met)."""

from __future__ import annotations

import os

import numpy as np

from ..errors import PolicyError
from ..files import atomic_write
from ..games.openspiel import canonical_name, load_openspiel_game, openspiel_version, pyspiel_module
from . import read_npz, require_npz
from .state_sets import pack_keys, unpack_keys

POLICY_FORMAT = "rcfr.state_policy"
POLICY_VERSION = 1
POLICY_FIELDS = ("format", "version", "game", "open_spiel", "players", "keys", "key_ends", "first", "actions",
                 "probs")


def rows(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Each row ``values[first[k]:first[k + 1]]`` over its sum, uniform where the sum is zero."""
    n = np.diff(first)
    if len(n) == 0:
        return np.zeros(0)
    totals = np.repeat(np.add.reduceat(values, first[:-1]), n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0.0, values / totals, np.repeat(1.0 / n, n))



# ---- policies keyed by information-state string ------------------------------------------------
class StatePolicy:
    """A policy of an OpenSpiel game keyed by (player, information-state string): sorted ``keys``, ``first``
    offsets (``len(keys) + 1``) into flat ``actions`` (OpenSpiel ids) and float64 ``probs``; ``policy[player,
    string]`` is a row as {action id: probability}. Identity: the game's canonical string and the OpenSpiel
    version (information-state strings may change between versions)."""

    def __init__(self, game: str, version: str, keys: list[tuple[int, str]], first, actions, probs):
        self.game_string, self.version, self.keys = game, version, keys
        self.first = np.asarray(first, np.int64)
        self.actions, self.probs = np.asarray(actions, np.int64), np.asarray(probs, np.float64)
        self.row = ({}, {})
        for i, (player, key) in enumerate(keys):
            self.row[player][key] = i

    @classmethod
    def from_rows(cls, game, version, keys, first, actions, probs) -> "StatePolicy":
        """A policy from rows in any order (sorted here by key)."""
        order = np.array(sorted(range(len(keys)), key=keys.__getitem__), np.int64)
        n = np.diff(first)[order]
        start = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
        slots = np.arange(start[-1]) - np.repeat(start[:-1], n) + np.repeat(np.asarray(first)[order], n)
        return cls(game, version, [keys[i] for i in order], start, actions[slots], probs[slots])

    @property
    def num_sets(self) -> int:
        return len(self.keys)

    def __getitem__(self, item: tuple[int, str]) -> dict[int, float]:
        """Action id -> probability at player `item[0]`'s information set of string `item[1]`."""
        player, key = item
        i = self.row[player][key]
        s, e = self.first[i], self.first[i + 1]
        return dict(zip(self.actions[s:e].tolist(), self.probs[s:e].tolist()))

    def __contains__(self, item: tuple[int, str]) -> bool:
        return item[1] in self.row[item[0]]

    def save(self, path: str | os.PathLike) -> None:
        """Write the ``.npz`` file atomically (a reader never sees half a file)."""
        require_npz(path, "state policy")
        blob, ends = pack_keys([k for _, k in self.keys])
        arrays = {"format": np.array(POLICY_FORMAT), "version": np.array(POLICY_VERSION),
                  "game": np.array(self.game_string), "open_spiel": np.array(self.version),
                  "players": np.array([p for p, _ in self.keys], np.int8), "keys": blob,
                  "key_ends": ends, "first": self.first, "actions": self.actions, "probs": self.probs}
        atomic_write(path, lambda f: np.savez(f, **arrays))

    @classmethod
    def load(cls, path: str | os.PathLike, game: str) -> "StatePolicy":
        """Read a file `save` wrote for OpenSpiel game string `game` (checked against the file's game and
        OpenSpiel version)."""
        require_npz(path, "state policy")
        arrays = read_npz(path, "state policy")
        if sorted(arrays) != sorted(POLICY_FIELDS):
            raise PolicyError(f"{path}: a state policy has the fields {', '.join(POLICY_FIELDS)}; "
                              f"got {', '.join(sorted(arrays))[:200]}")
        if str(arrays["format"]) != POLICY_FORMAT or int(arrays["version"]) != POLICY_VERSION:
            raise PolicyError(f"{path}: format {str(arrays['format'])[:40]!r} version {arrays['version']}, "
                              f"expected {POLICY_FORMAT!r} version {POLICY_VERSION}")
        want = {"game": canonical_name(load_openspiel_game(game)), "open_spiel": openspiel_version()}
        for field, value in want.items():
            if str(arrays[field]) != value:
                raise PolicyError(f"{path}: field {field!r} is {str(arrays[field])[:200]!r}, expected {value!r}")
        keys = unpack_keys(arrays["keys"], arrays["key_ends"])
        players = arrays["players"].tolist()
        if len(players) != len(keys) or not set(players) <= {0, 1}:
            raise PolicyError(f"{path}: 'players' must hold 0 or 1 for each of the {len(keys)} keys")
        policy = cls(want["game"], want["open_spiel"], list(zip(players, keys)), arrays["first"], arrays["actions"],
                     arrays["probs"])
        _check_rows(path, policy)
        return policy

    def to_openspiel(self, game=None):
        """This policy as an OpenSpiel `open_spiel.python.policy.Policy` (default: of a freshly loaded game)."""
        return openspiel_policy(self, game)


def _check_rows(path, policy: StatePolicy) -> None:
    """Offsets that cut ``actions``/``probs`` into rows, sorted unique keys, rows summing to one."""
    first, n = policy.first, len(policy.probs)
    if (len(first) != len(policy.keys) + 1 or first[0] != 0 or first[-1] != n or np.any(np.diff(first) < 1)
            or len(policy.actions) != n):
        raise PolicyError(f"{path}: 'first' must rise from 0 to {n} in {len(policy.keys) + 1} steps")
    if any(a >= b for a, b in zip(policy.keys, policy.keys[1:])):
        raise PolicyError(f"{path}: 'keys' must be sorted and unique")
    sums = np.add.reduceat(policy.probs, first[:-1]) if n else np.zeros(0)
    if not (np.all(np.isfinite(policy.probs)) and np.all(policy.probs >= 0) and np.allclose(sums, 1.0, atol=1e-9)):
        raise PolicyError(f"{path}: every row of 'probs' must be non-negative and sum to one")


def openspiel_policy(policy: StatePolicy, game=None):
    """`policy` as an instance of OpenSpiel's `Policy` class for `game` (a pyspiel game of the same string)."""
    pyspiel_module()
    from open_spiel.python.policy import Policy as OpenSpielPolicy

    class _StatePolicy(OpenSpielPolicy):
        """Looks each state's information-state string up in a `StatePolicy`; uniform over the legal
        actions where the run never met the set (counted in ``unmet``)."""

        def __init__(self, os_game, table):
            super().__init__(os_game, list(range(os_game.num_players())))
            self.table, self.unmet = table, 0

        def action_probabilities(self, state, player_id=None):
            player = state.current_player() if player_id is None else player_id
            key = (player, state.information_state_string(player))
            if key in self.table:
                return self.table[key]
            self.unmet += 1
            legal = state.legal_actions(player)
            return {a: 1.0 / len(legal) for a in legal}

    os_game = load_openspiel_game(policy.game_string) if game is None else game
    if canonical_name(os_game) != policy.game_string:
        raise ValueError(f"policy of {policy.game_string!r} cannot play {canonical_name(os_game)!r}")
    return _StatePolicy(os_game, policy)
