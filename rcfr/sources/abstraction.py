"""Information-set abstractions of a game walked by its rules, given by a compiled function of the state.

A compiled game's `rcfr.tree.abstraction.Abstraction` maps every information set to an abstract one; a game
walked by its rules has no list of sets to map. A `CodeAbstraction` instead carries the function that
computes a decision's abstract code from its state (signature `ABSTRACT_CODE`: ``code(data, state, out)``
writes out[0], the abstract code in [0, 2^62), and out[1], a signature of the legal actions), so a
sampling walk keys its regret table by the abstract set directly and an evaluation walk finds a merged
set's row the same way. Abstract sets are keyed ``2 * code + player`` (the players' sets never merge),
as `Abstraction.from_codes` keys them on a compiled game: one function, both paths.
`rcfr.abstraction.make_abstraction(rules_game, ...)` builds the recall abstractions of the large games.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit
from numba import types as nb

from ..compiler import replay
from ..games.base import GameRules
from ..games.fast import ABSTRACT_CODE, DATA, FUNCTION_TYPES
from ..numba_lazy import njit_on_first_call
from ..tree import Game
from ..tree.abstraction import Abstraction
from ..tree.fingerprint import rules_identity


@dataclass(frozen=True, eq=False)
class CodeAbstraction:
    """Abstraction `name` of `rules`: ``code`` (a numba function of signature `ABSTRACT_CODE`) with its `data`
    (a `DATA` tuple) gives each decision's abstract code."""

    name: str
    rules: GameRules
    code: object
    data: tuple

    @cached_property
    def identity(self) -> str:
        """A digest of the name, the rules, the function and its data: equal abstractions, equal identities."""
        digest = hashlib.sha256(f"{self.name}|{rules_identity(self.rules)}|{self.code.py_func.__module__}."
                                f"{self.code.py_func.__qualname__}".encode())
        for array in self.data:
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()[:16]

    def on(self, game: Game) -> Abstraction:
        """The same abstraction as a map of compiled `game`'s information sets (its code at each set's first
        history), for the solvers of compiled games."""
        self.check_rules(game.rules, f"abstraction of {game.name}")
        codes = abstract_codes(game, self.code, self.data)
        return Abstraction.from_codes(game, self.name, codes[:, 0], codes[:, 1])

    def keys(self, game: Game) -> np.ndarray:
        """The abstract key (``2 * code + player``) of each information set of compiled `game`."""
        self.check_rules(game.rules, f"abstraction of {game.name}")
        return 2 * abstract_codes(game, self.code, self.data)[:, 0] + game.infoset_player.astype(np.int64)

    def check_rules(self, rules: GameRules, what: str) -> None:
        """A ValueError unless this abstraction was built for `rules`."""
        if rules_identity(rules) != rules_identity(self.rules):
            raise ValueError(f"{what}: abstraction {self.name!r} was built for {self.rules.description()}, "
                             f"not {rules.description()}")

    def __repr__(self) -> str:
        return f"CodeAbstraction({self.name}, {self.rules.description()})"


@njit(ABSTRACT_CODE, cache=True)
def no_abstraction(data, s, out):
    """The stand-in where there is no abstraction (walks test ``out.shape[0] == 0`` and never call it)."""
    out[0] = 0


def _codes_signature(action):
    fn = FUNCTION_TYPES
    return nb.void(fn["initial"], fn["player"], fn["num_children"], fn["child"], nb.FunctionType(ABSTRACT_CODE), DATA,
                   DATA, nb.int64, nb.int32[::1], action[::1], nb.int64[::1], nb.int64[:, ::1])


@njit_on_first_call([_codes_signature(nb.int16), _codes_signature(nb.int32)], cache=True)
def _codes(initial, player, num_children, child, code, game_data, code_data, width, parent, action, infoset_history,
           out):
    state = np.empty(width, np.int64)
    tmp = np.empty(width, np.int64)
    path = np.empty(64, np.int64)
    for i in range(infoset_history.shape[0]):
        path = replay(initial, player, num_children, child, game_data, parent, action, infoset_history[i], state, tmp,
                      path)
        code(code_data, state, out[i])


def abstract_codes(game: Game, code, data) -> np.ndarray:
    """(information sets, 2) int64: ``code(data, state, out)`` (signature `ABSTRACT_CODE`) at the state of each
    compiled information set's first history (`Game.infoset_history`)."""
    fast = game.rules.fast()
    out = np.zeros((game.num_infosets, 2), np.int64)
    _codes(fast.initial, fast.player, fast.num_children, fast.child, code, fast.data, data, fast.width,
           np.ascontiguousarray(game.parent, np.int32), np.ascontiguousarray(game.action),
           np.ascontiguousarray(game.infoset_history, np.int64), out)
    return out
