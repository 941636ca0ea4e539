"""Sequence-form quantities of a policy, for writing your own solver loop around any regressor.

Arrays are in global sequence order (player 0's sequences, then player 1's), the order of feature
rows (`features.make_features(game, name).matrix`), so a regressor fits them row for row. See
docs/own_loop.md for a complete RCFR loop in a few lines.
"""

from __future__ import annotations

import numpy as np

from . import kernels
from .policy import Policy
from .tree import Game


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
