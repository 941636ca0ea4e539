"""Regret stores: the one seam every solver shares.

A store receives each iteration's instantaneous counterfactual regrets for one player's sequences
and answers with that player's next current strategy. A table (CFR and its discounted and clipped
variants), an abstraction, and a regressor (RCFR) are all regret stores; the solver loop is the same.
"""

from __future__ import annotations

import numpy as np

from .. import kernels
from ..options import (
    ASYMMETRY_MAX,
    MAX_POWER,
    REGRET_MATCHING,
    Linear,
    check_asymmetry,
    check_bool,
    check_choice,
    check_discount,
    check_float,
)
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


def value_at(parameter: float | Linear | None, index: int) -> float | None:
    """A constant, or a schedule's value at 0-based iteration `index`."""
    return parameter(index) if isinstance(parameter, Linear) else parameter


def weight(index: int, power: float | None) -> float:
    """s^power / (s^power + 1) at s = `index` (1.0 when `power` is None: no discounting; 0.0 at s = 0)."""
    if power is None:
        return 1.0
    if index == 0:
        return 0.0
    scaled = float(index) ** power
    return scaled / (scaled + 1.0)


class DiscountedTable(RegretStore):
    """Cumulative regrets discounted *before* each addition, optionally clipped, with an optional
    prediction: the regret update of DCFR+, PCFR+, PDCFR+ and the hyperparameter schedules.

    On iteration t with instantaneous regrets r^t (d(s) = s^a / (s^a + 1), a = `alpha` for positive
    entries and `beta` for negative ones, d = 1 where the power is None, d(0) = 0):

    * R^t = R^{t-1} * d(t-1) + r^t, clipped at 0 when ``plus`` (regret-matching+);
    * the next strategy is regret matching on R^t when not ``predictive``, and on the prediction
      R^t * d(t) + r^t / (1 + a) (the last regrets predict the next ones: Farina et al. 2021, Xu et al.
      2024) when it is. The prediction's step 1 / (1 + a) is 1 when ``asymmetry`` is None; a fixed a
      (SAPCFR+: 2) damps it; ``"adaptive"`` learns a per information set I (APCFR+, Meng et al. 2026):
      a_I = min(sqrt(E_I / S_I), ASYMMETRY_MAX), E_I the sum over iterations of ||r^t - r^{t-1}||^2 (the
      prediction's errors, r^0 = 0) and S_I that of ||R^t - R^{t-1}||^2 (the steps of the stored regrets),
      ASYMMETRY_MAX where S_I = 0.

    ``alpha`` / ``beta`` may be a `Linear` schedule; its value for d(s) is taken at index s.
    """

    def __init__(self, *, alpha: float | Linear | None = None, beta: float | Linear | None = None,
                 plus: bool = True, predictive: bool = False, asymmetry: float | str | None = None):
        self.alpha = alpha if isinstance(alpha, Linear) else _check_power("alpha", alpha)
        self.beta = beta if isinstance(beta, Linear) else _check_power("beta", beta, negative=True)
        self.plus, self.predictive = check_bool("plus", plus), check_bool("predictive", predictive)
        self.asymmetry = check_asymmetry("asymmetry", asymmetry)
        if self.asymmetry is not None and not self.predictive:
            raise ValueError(f"asymmetry={asymmetry!r} damps a prediction: it needs predictive=True")

    @property
    def adaptive(self) -> bool:
        return self.asymmetry == "adaptive"

    def bind(self, game: Game) -> None:
        self.views = game.views
        self.regrets = [np.zeros(v.num_sequences) for v in self.views]
        self._strategies = [self._match(r, v) for r, v in zip(self.regrets, self.views)]
        self._prediction = [np.zeros(v.num_sequences) for v in self.views] if self.predictive else []
        if self.adaptive:  # the last regrets, and per information set the sums E_I and S_I
            self._last = [np.zeros(v.num_sequences) for v in self.views]
            self._before = [np.zeros(v.num_sequences) for v in self.views]  # the stored regrets before an update
            self._errors = [np.zeros(len(v.infoset_first)) for v in self.views]
            self._steps = [np.zeros(len(v.infoset_first)) for v in self.views]

    @staticmethod
    def _match(regrets: np.ndarray, view, out: np.ndarray | None = None) -> np.ndarray:
        out = np.empty(view.num_sequences) if out is None else out
        return kernels.regret_matching(regrets, view.infoset_first, view.infoset_size, out)

    def _discount(self, values: np.ndarray, index: int) -> None:
        """values *= d(index), by sign."""
        positive = weight(index, value_at(self.alpha, index))
        negative = weight(index, value_at(self.beta, index))
        if positive == negative or self.plus:  # "+" tables hold no negative entries
            if positive != 1.0:
                values *= positive
        else:
            values *= np.where(values > 0, positive, negative)

    def strategy(self, player: int) -> np.ndarray:
        return self._strategies[player]

    def update(self, player: int, regrets: np.ndarray, iteration: int) -> None:
        total = self.regrets[player]
        before = None
        if self.adaptive:
            before = self._before[player]
            before[:] = total
        self._discount(total, iteration - 1)
        total += regrets
        if self.plus:
            np.maximum(total, 0.0, out=total)
        source = total
        if self.predictive:
            source = self._prediction[player]
            source[:] = total
            self._discount(source, iteration)
            if self.asymmetry is None:
                source += regrets
            elif not self.adaptive:
                source += regrets / (1.0 + float(self.asymmetry))
            else:
                view = self.views[player]
                kernels.adaptive_prediction(regrets, total, before, self._last[player], self._errors[player],
                                            self._steps[player], view.infoset_first, view.infoset_size,
                                            ASYMMETRY_MAX, source)
        self._match(source, self.views[player], self._strategies[player])

    def size(self) -> int:
        return sum(v.num_sequences - 1 for v in self.views)

    def state_dict(self) -> dict[str, np.ndarray]:
        # the current strategy is stored: a predictive one depends on the last regrets and iteration
        state = {f"regrets{p}": self.regrets[p].copy() for p in (0, 1)}
        state.update({f"strategy{p}": self._strategies[p].copy() for p in (0, 1)})
        for name, arrays in self._adaptive_state().items():
            state.update({f"{name}{p}": arrays[p].copy() for p in (0, 1)})
        return state

    def _adaptive_state(self) -> dict[str, list[np.ndarray]]:
        return {"last_regrets": self._last, "errors": self._errors, "steps": self._steps} if self.adaptive else {}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        for p in (0, 1):
            self.regrets[p][:] = state[f"regrets{p}"]
            self._strategies[p][:] = state[f"strategy{p}"]
            for name, arrays in self._adaptive_state().items():
                arrays[p][:] = state[f"{name}{p}"]


def _check_power(name: str, value, negative: bool = False) -> float | None:
    """A discount power (None: no discounting); `negative` admits the schedules' negative betas."""
    if value is None:
        return None
    try:
        return check_float(name, value, -MAX_POWER if negative else 0.0, MAX_POWER)
    except ValueError:
        raise ValueError(f"{name} must be a finite number in [{-MAX_POWER if negative else 0.0:g}, {MAX_POWER:g}] "
                         f"or None (no discounting), got {value!r}") from None


def _discount(t: int, power: float | None) -> float:
    return 1.0 if power is None else t ** power / (t ** power + 1.0)
