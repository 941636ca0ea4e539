"""Static abstractions, solved with the shared CFR loop and scored exactly in the full game.

>>> import rcfr
>>> from rcfr.abstraction import make_abstraction, abstract_solver
>>> game = rcfr.load_game("leduc")
>>> abstraction = make_abstraction(game, "J.QK")
>>> solver = abstract_solver("cfr+", game, abstraction).run(100)
>>> rcfr.exploitability(game, solver.average_policy()) > 0
True
"""

from __future__ import annotations

from ..games.hand_strength import HandStrength, hand_strength
from ..policy import Policy
from ..registry import build
from ..regrets import FullRegret  # noqa: F401  (a measure, in the evaluation layer; the old name stays)
from ..solvers import make_solver
from ..solvers.base import require
from ..sources.abstraction import CodeAbstraction
from ..sources.rules import RulesGame
from ..tree import Game, load_compiled
from ..tree.abstraction import Abstraction, identity
from . import card
from .action import ACTION_ABSTRACTIONS, NoLimitWagers, parse_wagers, read_wager, translate
from .recall import CODE_ABSTRACTIONS, RECALL_ABSTRACTIONS, bluff_counters
from .store import AbstractRegrets, abstract_solver, average_policy, card_abstraction_solvers, tie


def _ehs2(game: Game, buckets=3, method: str = "kmeans", recall: str = "perfect", seed: int = 0) -> Abstraction:
    """E[HS^2] bucketing (see `card.ehs`)."""
    return card.ehs(game, buckets=buckets, metric="ehs2", method=method, recall=recall, seed=seed)


#: Information-set abstractions by name: card abstractions (card.py) and the imperfect-recall
#: abstractions of the dice games (recall.py).
INFOSET_ABSTRACTIONS = {"identity": identity, "ranks": card.ranks, "ehs": card.ehs, "ehs2": _ehs2,
                        **RECALL_ABSTRACTIONS}


def make_abstraction(game: Game | RulesGame, name: str, **options) -> Abstraction | CodeAbstraction:
    """Information-set abstraction `name` of `game`: one of `INFOSET_ABSTRACTIONS` ("ehs"/"ehs2" take buckets,
    method, recall, seed; "ehs" also metric; "drp_ir" and "bluff_last_bids" (r=) for the dice games; "goofspiel_last_turns" (r=, lead=) and
    "latent_ttt_last_moves" (r=), "phantom_ttt_forget" (forget=)) or a rank partition such as "J.QK". For a game
    walked by its rules, one of `CODE_ABSTRACTIONS`, as a `CodeAbstraction`."""
    if name not in CODE_ABSTRACTIONS:
        require(game, "arrays", f"abstraction {name!r}", f"it needs the compiled game; the abstractions on the rules "
                                                          f"are: {', '.join(CODE_ABSTRACTIONS)}")
    if name in INFOSET_ABSTRACTIONS:
        return build("abstraction", INFOSET_ABSTRACTIONS, name, game, **options)
    ranks = getattr(getattr(game.rules, "deck", None), "rank_chars", None)
    if isinstance(name, str) and ranks and set(name) <= set(ranks) | {"."}:
        return build("card abstraction", {name: card.partition}, name, game, name, **options)
    if not ranks:
        raise ValueError(f"card abstraction {name!r}: card abstractions need a poker game of rcfr.games.poker, "
                         f"not {game.name!r} (only 'identity' works on every game)")
    raise ValueError(f"unknown card abstraction {name!r}; allowed: {', '.join(INFOSET_ABSTRACTIONS)}, or a "
                     f"partition of the ranks {ranks!r} such as {'.'.join(ranks)!r}")


def action_abstraction(game: Game, wagers: str) -> Game:
    """The compiled abstract game of no-limit `game` with the wagers named by `wagers` ("null", "HP", ...)."""
    rules = game.rules
    if not hasattr(rules, "stack"):
        raise ValueError(f"action abstractions need a no-limit game (nlocp), not {game.name!r}")
    return load_compiled(NoLimitWagers(cards=rules.cards, stack=rules.stack, ante=rules.ante, wagers=wagers))


def solve_action_abstraction(game: Game, wagers: str, iterations: int, solver: str = "cfr+") -> Policy:
    """Solve the action abstraction `wagers` with `solver` and translate its average policy into `game`."""
    abstract = action_abstraction(game, wagers)
    return translate(game, abstract, make_solver(solver, abstract).run(iterations).average_policy())


__all__ = ["ACTION_ABSTRACTIONS", "AbstractRegrets", "Abstraction", "CODE_ABSTRACTIONS", "CodeAbstraction", "INFOSET_ABSTRACTIONS", "FullRegret", "HandStrength",
           "NoLimitWagers", "RECALL_ABSTRACTIONS", "abstract_solver", "action_abstraction", "average_policy",
           "bluff_counters",
           "card_abstraction_solvers", "hand_strength",
           "identity", "make_abstraction", "parse_wagers", "read_wager", "solve_action_abstraction", "tie",
           "translate"]
