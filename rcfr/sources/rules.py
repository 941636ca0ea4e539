"""A game walked through its rules: the `FastGame` functions and the bounds a walk's scratch needs.

`RulesGame` is what `rcfr.load_game(name, compiled=False)` returns, and what a game above the compile
limit becomes: no history arrays, only the rules object, its typed fast functions, the deepest path and
the widest node (so a depth-first walk's scratch, depth x widest states, is allocated once).
"""

from __future__ import annotations

from ..budget import max_histories
from ..compiler import _typed, count_fast
from ..games.base import GameRules
from ..tree.fingerprint import rules_identity


class RulesGame:
    """A game without its compiled tree. ``fast`` is the rules' `FastGame` (functions compiled for their
    signatures); ``depth`` bounds the moves on any path (forced moves collapsed) and ``widest`` the moves
    of any node. Games that do not declare them (`GameRules.walk_bounds`) get them by counting
    the game level by level, which needs it to be within the compile limit."""

    compiled = False
    #: what this kind of game offers the solvers and builders that need it (`rcfr.solvers.base.require`): the
    #: rules walked as met (sets numbered as met, keyed by code; no compiled arrays)
    offers = frozenset({"rules"})
    #: sequences and information sets: not counted on this path (`rcfr.sources.sizes` counts them where it can), so
    #: callers that size by them (a share of the game, the policy file's format) ask these rather than the kind
    num_sequences: int | None = None
    num_infosets: int | None = None
    #: information sets a sampling solver's arrays start with (they double when half used); chance-sampled
    #: CFR, whose walk may meet every set in its first iteration, starts with the game's `max_infosets`
    initial_sets = 1 << 16

    def __init__(self, rules: GameRules):
        if not isinstance(rules, GameRules):
            raise TypeError(f"RulesGame needs a GameRules object, got {type(rules).__name__}")
        fast = rules.fast()
        if fast is None:
            raise ValueError(f"{rules.description()} has no fast path (GameRules.fast), so it cannot be walked "
                             f"by its rules; compile it instead: rcfr.load_game(...)")
        self.rules, self.fast = rules, _typed(fast)
        bounds = rules.walk_bounds()
        if bounds is not None:
            self.depth, self.widest = map(int, bounds)
        else:
            limit = max_histories()
            total, _, levels, widest = count_fast(self.fast, limit)
            if total > limit:
                raise ValueError(f"{rules.description()} declares no walk bounds (GameRules.walk_bounds) "
                                 f"and has over {limit:,} histories, too many to find them by counting")
            self.depth, self.widest = len(levels) - 1, max(int(widest), 1)

    @property
    def name(self) -> str:
        return self.rules.description()

    @property
    def fingerprint(self) -> str:
        """The rules' identity, as `CodePolicy` records it."""
        return rules_identity(self.rules)

    def as_abstraction(self, abstraction):
        """A `CodeAbstraction` as this game's solvers take it: itself (its sets keyed by abstract code as met); a
        compiled game takes its map of the compiled sets (`Game.as_abstraction`)."""
        return abstraction

    def check_fingerprint(self, what: str, fingerprint: str, description: str) -> None:
        if fingerprint != self.fingerprint:
            raise ValueError(f"{what} belongs to {description}, not to {self.name}")

    def __repr__(self) -> str:
        return f"RulesGame({self.name}, depth={self.depth}, widest={self.widest})"
