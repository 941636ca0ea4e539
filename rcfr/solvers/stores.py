"""Regret stores: the one seam every solver shares.

A store receives each iteration's instantaneous counterfactual regrets for one player's sequences
and answers with that player's next current strategy. A table (CFR and its discounted and clipped
variants), an abstraction, and a regressor (RCFR) are all regret stores; the solver loop is the same.
"""

from __future__ import annotations

import numpy as np

from .. import kernels
from ..options import REGRET_MATCHING, check_choice, check_discount
from ..tree import Game


class RegretStore:
    """Protocol. Strategies and regrets are local arrays of a `PlayerView` (entry 0 unused)."""

    def bind(self, game: Game) -> None:
        """Allocate state for `game`; called once by the solver."""
        raise NotImplementedError

    def strategy(self, player: int) -> np.ndarray:
        """The current strategy (local array, entry 0 = 1)."""
        raise NotImplementedError

    def update(self, player: int, regrets: np.ndarray, iteration: int) -> None:
        """Take iteration `iteration`'s (1-based) instantaneous regrets for `player`."""
        raise NotImplementedError

    def size(self) -> int:
        """Representation size: the number of values the store keeps per player pair."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        raise NotImplementedError


class RegretTable(RegretStore):
    """Cumulative regrets per sequence with optional discounting and clipping.

    * ``regret_matching="rm+"`` keeps regrets non-negative after each update (regret-matching+, CFR+);
      ``"rm"`` (default) is plain regret matching.
    * ``alpha`` / ``beta``: after iteration t, positive cumulative regrets are multiplied by
      t^alpha / (t^alpha + 1) and negative ones by t^beta / (t^beta + 1) (Discounted CFR;
      alpha = beta = 1 is Linear CFR). ``None`` means no discounting.
    """

    def __init__(self, regret_matching: str = "rm", alpha: float | None = None, beta: float | None = None):
        self.regret_matching = check_choice("regret_matching", regret_matching, REGRET_MATCHING)
        self.alpha, self.beta = check_discount("alpha", alpha), check_discount("beta", beta)

    def bind(self, game: Game) -> None:
        self.views = game.views
        self.regrets = [np.zeros(v.num_sequences) for v in self.views]
        self._strategies = [self._match(p) for p in (0, 1)]

    def _match(self, player: int, out: np.ndarray | None = None) -> np.ndarray:
        # `views` may be an abstraction's LocalMap: only the information-set layout is used
        view = self.views[player]
        out = np.empty(view.num_sequences) if out is None else out
        return kernels.regret_matching(self.regrets[player], view.infoset_first, view.infoset_size, out)

    def strategy(self, player: int) -> np.ndarray:
        return self._strategies[player]

    def update(self, player: int, regrets: np.ndarray, iteration: int) -> None:
        total = self.regrets[player]
        total += regrets
        if self.alpha is not None or self.beta is not None:
            total *= np.where(total > 0, _discount(iteration, self.alpha), _discount(iteration, self.beta))
        if self.regret_matching == "rm+":
            np.maximum(total, 0.0, out=total)
        self._match(player, self._strategies[player])

    def size(self) -> int:
        return sum(v.num_sequences - 1 for v in self.views)

    def state_dict(self) -> dict[str, np.ndarray]:
        return {f"regrets{p}": self.regrets[p].copy() for p in (0, 1)}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        for p in (0, 1):
            self.regrets[p][:] = state[f"regrets{p}"]
            self._match(p, self._strategies[p])


def _discount(t: int, power: float | None) -> float:
    return 1.0 if power is None else t ** power / (t ** power + 1.0)
