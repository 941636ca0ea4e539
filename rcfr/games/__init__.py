"""Game rules and the registry behind `rcfr.load_game`."""

from __future__ import annotations

import inspect

from ..registry import build
from .base import CHANCE, TERMINAL, GameRules
from .dice import Bluff, DieRollPoker
from .goofspiel import Goofspiel
from .latent import LatentTicTacToe
from .matrix import MatrixGame
from .openspiel import OpenSpielRules
from .phantom import PhantomTicTacToe
from .poker import Kuhn, Leduc, LimitPoker, NoLimitOneCardPoker, OneCardPoker
from .pursuit import PrincessAndMonster
from .wagers import NoLimitWagers

GAMES: dict[str, type[GameRules]] = {
    "kuhn": Kuhn,
    "leduc": Leduc,
    "ocp": OneCardPoker,
    "nlocp": NoLimitOneCardPoker,
    "liars_dice": Bluff,
    "goofspiel": Goofspiel,
    "dieroll": DieRollPoker,
    "openspiel": OpenSpielRules,  # needs the optional extra rcfr[openspiel]
    "pam": PrincessAndMonster,
    "latent_ttt": LatentTicTacToe,
    "phantom_ttt": PhantomTicTacToe,
    "nlocp_wagers": NoLimitWagers,  # an action abstraction of nlocp (rcfr.abstraction.action)
}


def register_game(name: str, rules_class: type[GameRules]) -> None:
    """Make `load_game(name, ...)` build `rules_class(...)`."""
    if not (isinstance(rules_class, type) and issubclass(rules_class, GameRules)):
        raise TypeError(f"register_game needs a GameRules subclass, got {rules_class!r}")
    signature = inspect.signature(rules_class.__init__)
    if all(p.default is not p.empty for n, p in signature.parameters.items() if n != "self"):
        rules_class().params()  # fails now, naming the parameters not kept as attributes
    GAMES[name] = rules_class


def make_rules(name: str, /, **params) -> GameRules:
    """Instantiate the rules of game `name`, naming the allowed games or parameters on a mistake.
    ``"openspiel:<game string>"`` is short for ``("openspiel", name="<game string>")``."""
    if isinstance(name, str) and name.startswith("openspiel:"):
        if "name" in params:
            raise ValueError(f"game {name!r} already names the OpenSpiel game; drop the parameter 'name'")
        return build("game", GAMES, "openspiel", name.partition(":")[2], **params)
    return build("game", GAMES, name, **params)


__all__ = ["CHANCE", "TERMINAL", "GAMES", "Bluff", "DieRollPoker", "GameRules", "Goofspiel", "Kuhn",
           "LatentTicTacToe", "Leduc", "LimitPoker", "MatrixGame", "NoLimitOneCardPoker", "OneCardPoker", "OpenSpielRules",
           "PhantomTicTacToe", "PrincessAndMonster", "make_rules", "register_game"]
