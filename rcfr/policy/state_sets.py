"""The state path's information sets in the order first met (`InfosetTable`: OpenSpiel's information-state
strings to rows of flat regret and average arrays), and its key strings packed into one array for files."""

from __future__ import annotations

import sys
from array import array

import numpy as np


# ---- information sets as first met --------------------------------------------------------------
class InfosetTable:
    """Information sets in the order first met: ``index[player][key]`` is a set's row (OpenSpiel's strings
    do not name the player: Phantom Tic-Tac-Toe's first sets of both players read the same), ``players[row]``
    its player; its actions occupy slots
    ``first[row]`` .. ``first[row + 1]`` of the flat ``actions`` (OpenSpiel ids), ``regrets`` and ``avg``
    arrays (stdlib arrays: 8 bytes a slot, growing in place, read as numpy without a copy). Forced moves
    (one legal action) are not stored: as in the compiled tree, they are no decisions."""

    def __init__(self):
        self.index: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self.players = array("b")
        self.first = array("q", [0])
        self.actions, self.regrets, self.avg = array("q"), array("d"), array("d")

    def met(self, state, player: int) -> int | None:
        """The row of the set `player` acts at in pyspiel `state`, added the first time it is met (the arrays
        grow in place); None at a forced move, which it plays on `state` (no decision, as in the compiled
        tree). The walks of both samplers ask it at every decision."""
        key = state.information_state_string(player)
        row = self.index[player].get(key)
        if row is None:
            legal = state.legal_actions()
            if len(legal) == 1:
                state.apply_action(legal[0])
                return None
            row = self.add(player, key, legal)
        return row

    def add(self, player: int, key: str, legal) -> int:
        row = len(self.players)
        self.index[player][key] = row
        self.players.append(player)
        self.actions.extend(legal)
        zeros = [0.0] * len(legal)
        self.regrets.extend(zeros)
        self.avg.extend(zeros)
        self.first.append(len(self.actions))
        return row

    @property
    def num_sets(self) -> int:
        return len(self.players)

    def keys(self) -> list[tuple[int, str]]:
        """(player, information-state string) of each row, in row order."""
        keys = [None] * self.num_sets
        for player, index in enumerate(self.index):
            for key, row in index.items():
                keys[row] = (player, key)
        return keys

    def nbytes(self) -> int:
        """Bytes held: the dicts, their key strings and the arrays (what grows with the sets met)."""
        strings = sum(sys.getsizeof(k) for index in self.index for k in index)
        ints = sum(sys.getsizeof(v) for index in self.index for v in index.values() if v > 256)
        arrays = sum(a.buffer_info()[1] * a.itemsize
                     for a in (self.players, self.first, self.actions, self.regrets, self.avg))
        return sum(sys.getsizeof(index) for index in self.index) + strings + ints + arrays

    def state_dict(self) -> dict[str, np.ndarray]:
        keys = self.keys()
        blob, ends = pack_keys([k for _, k in keys])
        return {"keys": blob, "key_ends": ends, "players": np.array(self.players, np.int8),
                "first": np.array(self.first, np.int64),
                "actions": np.array(self.actions, np.int64), "regrets": np.array(self.regrets, np.float64),
                "avg": np.array(self.avg, np.float64)}

    @classmethod
    def from_state(cls, state: dict[str, np.ndarray]) -> "InfosetTable":
        table = cls()
        keys = unpack_keys(state["keys"], state["key_ends"])
        table.players = array("b", np.asarray(state["players"], np.int8).tolist())
        if len(table.players) != len(keys) or not set(table.players) <= {0, 1}:
            raise ValueError(f"checkpoint's information-set table has {len(keys)} keys and players "
                             f"{sorted(set(table.players))[:4]} for {len(table.players)} rows")
        for row, (player, key) in enumerate(zip(table.players, keys)):
            table.index[player][key] = row
        table.first = array("q", np.asarray(state["first"], np.int64).tolist())
        table.actions = array("q", np.asarray(state["actions"], np.int64).tolist())
        table.regrets = array("d", np.asarray(state["regrets"], np.float64).tobytes())
        table.avg = array("d", np.asarray(state["avg"], np.float64).tobytes())
        slots = len(table.actions)
        if (len(table.first) != len(keys) + 1 or table.first[-1] != slots or len(table.regrets) != slots
                or len(table.avg) != slots):
            raise ValueError(f"checkpoint's information-set table is inconsistent: {len(keys)} keys, "
                             f"{len(table.first)} offsets, {slots} actions, {len(table.regrets)} regrets")
        return table


def pack_keys(keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 byte array and the end offset of each (no pickling, any characters)."""
    encoded = [k.encode() for k in keys]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
    return np.frombuffer(b"".join(encoded), np.uint8).copy(), ends


def unpack_keys(blob: np.ndarray, ends: np.ndarray) -> list[str]:
    data, ends = np.asarray(blob, np.uint8).tobytes(), np.asarray(ends, np.int64).tolist()
    starts = [0] + ends[:-1]
    return [data[s:e].decode() for s, e in zip(starts, ends)]
