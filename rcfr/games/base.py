"""The rule-object protocol: the only thing a game must provide to be compiled.

A rule object describes a two-player zero-sum game through immutable states. It is used once,
to enumerate the game into flat arrays (`rcfr.tree.compile_game`); nothing solves on it.
"""

from __future__ import annotations

import inspect
from typing import Any, Hashable, Sequence

CHANCE = -1
TERMINAL = -2


class GameRules:
    """Base class for game rules.

    Subclasses implement the state methods below; states are any hashable values. Player ids are
    0 (the first to act, "player 1" in the literature) and 1; chance is `CHANCE`.
    Utilities are for player 0; player 1 receives the negation.
    """

    name: str = "game"
    #: chips per "big blind"; exploitability in mbb/g is 1000 * chips / big_blind.
    big_blind: float = 1.0

    # -- state protocol ------------------------------------------------------------------
    def initial_state(self) -> Hashable:
        raise NotImplementedError

    def player(self, state) -> int:
        """0, 1, CHANCE, or TERMINAL."""
        raise NotImplementedError

    def actions(self, state) -> Sequence[str]:
        """Names of the legal actions at a decision state, in a fixed order."""
        raise NotImplementedError

    def chance_outcomes(self, state) -> Sequence[tuple[str, float]]:
        """(name, probability) of each outcome at a chance state."""
        raise NotImplementedError

    def next_state(self, state, action: int):
        """The state after taking the action with this index (decision or chance)."""
        raise NotImplementedError

    def utility(self, state) -> float:
        """Player 0's payoff at a terminal state."""
        raise NotImplementedError

    def infoset_key(self, state) -> str:
        """Readable key of the acting player's information set."""
        raise NotImplementedError

    # -- optional: size and the fast path -------------------------------------------------
    #: False when the game has no chance events (Goofspiel, Phantom Tic-Tac-Toe): a chance-sampled CFR
    #: iteration then walks every history, which on a game beyond the compiled tree warns of its hours.
    has_chance: bool | None = None

    def estimate_histories(self) -> int | None:
        """The number of histories once compiled (forced moves collapsed), or an upper bound, computed
        without enumerating; None if unknown. Lets a request too large to compile fail at once."""
        return None

    def walk_bounds(self) -> tuple[int, int] | None:
        """(deepest path, widest node) in moves, forced moves collapsed, computed without enumerating; None
        if unknown. A game too large to count declares them so it can be walked by its rules
        (`rcfr.rules.RulesGame` allocates a walk's scratch, depth x widest states, once)."""
        return None

    def fast(self):
        """An `rcfr.compiler.FastGame` describing the same game with numba functions over integer
        states, or None to compile through the methods above (see docs/compiler.md)."""
        return None

    # -- identity --------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        """Constructor parameters, used for the cache key and to describe the game."""
        if type(self).__init__ is object.__init__:
            return {}
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        missing = [n for n in names if not hasattr(self, n)]
        if missing:
            raise TypeError(f"{type(self).__qualname__}.__init__ must store each parameter as an attribute of "
                            f"the same name (they identify the game and its cached tree); missing: "
                            f"{', '.join(missing)}")
        return {n: getattr(self, n) for n in names}

    def description(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{self.name}({args})"

    def __repr__(self) -> str:
        return self.description()
