"""Sequence-form quantities of a policy, for writing your own solver loop around any regressor.

Arrays are in global sequence order (player 0's sequences, then player 1's), the order of feature
rows (`features.make_features(game, name).matrix`), so a regressor fits them row for row. See
docs/own_loop.md for a complete RCFR loop in a few lines. The full-game regret on a game walked by its rules is
`rules.RulesFullRegret`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import kernels
from ..distributed import check_sharding
from ..evaluation import _best_response, _plans, terminal_values
from ..policy import Policy
from ..tree import Game

if TYPE_CHECKING:
    from .rules import RulesFullRegret


def _players(player) -> tuple[int, ...]:
    if player is None:
        return (0, 1)
    if player not in (0, 1) or isinstance(player, bool):
        raise ValueError(f"player must be 0, 1 or None (both), got {player!r}")
    return (int(player),)


def _check_policy(game: Game, policy: Policy) -> None:
    if not isinstance(policy, Policy) or policy.game is not game:
        raise ValueError(f"policy must be a Policy of {game.rules.description()}, got {policy!r}")


def realization_plan(game: Game, policy: Policy) -> np.ndarray:
    """Each sequence's probability under its own player's part of `policy` (the product of that
    player's action probabilities along it). Sums of t-weighted plans normalize to the average policy
    (`Policy.from_plan`)."""
    _check_policy(game, policy)
    return np.concatenate([v.plan(policy.local(p))[1:] for p, v in enumerate(game.views)])


def counterfactual_regrets(game: Game, policy: Policy, player: int | None = None) -> np.ndarray:
    """Instantaneous counterfactual regret of every sequence of `player` (both when None) when both
    play `policy`: the counterfactual value of the sequence minus that of its information set. The
    other player's entries are zero when `player` is given."""
    _check_policy(game, policy)
    regrets = np.zeros(game.num_sequences)
    for p in _players(player):
        view, other = game.views[p], game.views[1 - p]
        values = view.terminal_values(other.plan(policy.local(1 - p)))
        local = np.zeros(view.num_sequences)
        kernels.counterfactual_regrets(values, policy.local(p), view.infoset_first, view.infoset_size,
                                       view.infoset_parent, local)
        regrets[view.offset:view.offset + view.num_sequences - 1] = local[1:]
    return regrets


class FullRegret:
    """Each player's average regret in the full game against the profiles σ^1..σ^T it is shown:
    R_i^T / T = max_σ' (1/T) Σ_t u_i(σ', σ^t_-i) - (1/T) Σ_t u_i(σ^t). The first term is player i's
    best-response value against the uniform average of the opponent's realization plans (u_i is linear in
    them), so summing plans and values over t gives it exactly.

    ``workers``, ``shards``, ``ray_address``: the terminal values, split as `rcfr.evaluate` splits them (the
    same numbers bit for bit)."""

    def __init__(self, game, *, workers: int = 1, shards: int | None = None, ray_address: str | None = None):
        self.game, self.t, self.value = game, 0, 0.0
        self.plans = [np.zeros(v.num_sequences) for v in game.views]
        self.sharding = check_sharding(workers, shards, ray_address)

    def add(self, policy: Policy) -> None:
        """Count `policy` as the next profile σ^t."""
        if policy.game is not self.game:
            raise ValueError(f"FullRegret measures {self.game.rules.description()}; the policy is of "
                             f"{policy.game.rules.description()}")
        plans = _plans(self.game, policy)
        self.value += float(plans[0] @ terminal_values(self.game, {0: plans[1]}, **self.sharding)[0])
        for total, plan in zip(self.plans, plans):
            total += plan
        self.t += 1

    def average_regrets(self) -> tuple[float, float]:
        """(R_1^T / T, R_2^T / T), unclipped."""
        if not self.t:
            raise ValueError("FullRegret has no profiles yet: call add(policy) once per iteration first")
        own = (self.value / self.t, -self.value / self.t)
        plans = [plan / self.t for plan in self.plans]
        values = terminal_values(self.game, {0: plans[1], 1: plans[0]}, **self.sharding)
        return (_best_response(self.game, 0, plans[1], values[0])[0] - own[0],
                _best_response(self.game, 1, plans[0], values[1])[0] - own[1])

    def positive_sum(self) -> float:
        """(R_1^{T,+} + R_2^{T,+}) / T."""
        return sum(max(r, 0.0) for r in self.average_regrets())

    # ---- checkpoints -----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, np.ndarray]:
        return {"t": np.array(self.t), "value": np.array(self.value), "plan0": self.plans[0], "plan1": self.plans[1]}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        for p in (0, 1):
            if state[f"plan{p}"].shape != self.plans[p].shape:
                raise ValueError(f"full_regret plan of player {p} has shape {state[f'plan{p}'].shape}, "
                                 f"the game {self.plans[p].shape}")
        self.t, self.value = int(state["t"]), float(state["value"])
        for p in (0, 1):
            self.plans[p][:] = state[f"plan{p}"]


def full_regret(game, **sharding) -> FullRegret | RulesFullRegret:
    """The full-regret tracker of either kind of game `rcfr.load_game` returns: `FullRegret` on the sequence form
    of a compiled game, else `rcfr.regrets.rules.RulesFullRegret` (one walk of the whole game per profile, sets a
    profile lacks played uniformly; a RulesPathWarning says how long where the game is beyond the compile limit).
    Both count profiles with ``add`` and checkpoint with ``state_dict``/``load_state_dict``; `sharding` as they
    take it (``workers``, ``shards``, ``ray_address``)."""
    if isinstance(game, Game):
        return FullRegret(game, **sharding)
    from .rules import RulesFullRegret
    _warn_whole_walks(game)
    return RulesFullRegret(game.rules, **sharding)


def _warn_whole_walks(game) -> None:
    """Each profile of the full regret is one walk of the whole game: say how long for a game beyond the compile
    limit (walked by its rules at about 1e6 histories per second)."""
    import warnings

    from ..budget import max_histories
    from ..errors import RulesPathWarning

    histories = game.rules.estimate_histories()
    if histories is not None and histories > max_histories():
        warnings.warn(f"full regret on {game.name} walked by its rules: each iteration's profile is one walk of all "
                      f"{histories:,} histories (about {histories / 3.6e9:,.1f} hours at 1e6 histories per second)",
                      RulesPathWarning, stacklevel=3)
