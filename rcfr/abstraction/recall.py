"""Imperfect-recall abstractions of Lanctot's thesis, ch. 5, as information-set maps.

* ``drp-ir`` (Die-Roll Poker): in the second round a player remembers only the *sum* of its two dice
  (and the whole betting), not the first die; the first round is unchanged.
"""

from __future__ import annotations

from ..tree import Game
from .base import Abstraction


def drp_ir(game: Game) -> Abstraction:
    """DRP-IR: second-round information sets keyed by (sum of own dice, betting)."""
    if game.name != "dieroll":
        raise ValueError(f"drp-ir needs Die-Roll Poker (dieroll), not {game.name!r}")

    def key(k: str) -> str:
        dice, betting = k.split("|", 1)
        return f"sum{sum(int(d) for d in dice)}|{betting}" if len(dice) == 2 else k

    return Abstraction.from_keys(game, "drp-ir", key)


RECALL_ABSTRACTIONS = {"drp-ir": drp_ir}
