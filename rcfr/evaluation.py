"""Exact evaluation in the full game: expected value, best responses, NashConv, exploitability.

Everything runs on the sequence form: a best response for player i is one bottom-up pass over i's
own sequences that takes the best action's counterfactual value at each information set. This is
exact for any game where the best-responding player has perfect recall (which `compile_game`
checks), whatever the depths of an information set's histories or which actions are hidden.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import kernels
from .policy import Policy
from .tree import Game


@dataclass(frozen=True)
class Evaluation:
    """Exact scores of a policy profile. Values are for player 0, in chips."""

    value: float
    best_response_values: tuple[float, float]
    nash_conv: float
    exploitability: float  # (BR_0 + BR_1) / 2 = NashConv / 2, chips
    exploitability_mbb: float  # milli-big-blinds per game


def _plans(game: Game, policy: Policy) -> list[np.ndarray]:
    if not isinstance(game, Game):
        raise TypeError(f"game must be a compiled rcfr.Game, got {type(game).__name__} {game!r:.60}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be an rcfr.Policy (e.g. solver.average_policy()), "
                        f"got {type(policy).__name__} {policy!r:.60}")
    game.check_same("policy", policy.game)  # another game's arrays would be read past their ends
    return [game.views[p].plan(policy.local(p)) for p in (0, 1)]


def expected_value(game: Game, policy: Policy) -> float:
    """Player 0's expected payoff when both players follow `policy`."""
    plans = _plans(game, policy)
    return float(plans[0] @ game.views[0].terminal_values(plans[1]))


def _best_response(game: Game, player: int, opponent_plan: np.ndarray) -> tuple[float, np.ndarray]:
    view = game.views[player]
    values = view.terminal_values(opponent_plan)
    choice = np.empty(view.num_infosets, dtype=np.int64)
    value = kernels.best_response(values, view.infoset_first, view.infoset_size, view.infoset_parent, choice)
    return float(value), choice


def best_response(game: Game, policy: Policy, player: int) -> tuple[float, Policy]:
    """Player `player`'s best-response value (its own payoff) against the other's part of `policy`,
    and the profile where `player` plays a pure best response and the other player keeps `policy`."""
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    value, choice = _best_response(game, player, _plans(game, policy)[1 - player])
    view = game.views[player]
    probs = policy.probs.copy()
    mine = slice(view.offset, view.offset + view.num_sequences - 1)
    probs[mine] = 0.0
    probs[view.offset + choice - 1] = 1.0
    return value, Policy(game, probs)


def evaluate(game: Game, policy: Policy) -> Evaluation:
    plans = _plans(game, policy)
    value = float(plans[0] @ game.views[0].terminal_values(plans[1]))
    br = tuple(_best_response(game, p, plans[1 - p])[0] for p in (0, 1))
    nash_conv = br[0] + br[1]
    return Evaluation(value=value, best_response_values=br, nash_conv=nash_conv,
                      exploitability=nash_conv / 2,
                      exploitability_mbb=1000.0 * nash_conv / 2 / game.big_blind)


def nash_conv(game: Game, policy: Policy) -> float:
    return evaluate(game, policy).nash_conv


def exploitability(game: Game, policy: Policy, unit: str = "chips") -> float:
    """(BR_0 + BR_1) / 2, in chips (``unit="chips"``) or milli-big-blinds per game (``"mbb"``)."""
    if unit not in ("chips", "mbb"):
        raise ValueError(f"unit must be 'chips' or 'mbb', got {unit!r}")
    result = evaluate(game, policy)
    return result.exploitability if unit == "chips" else result.exploitability_mbb
