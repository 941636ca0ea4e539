"""Policies to and from OpenSpiel's `TabularPolicy`, for OpenSpiel games and for the built-in games
that are the same game as an OpenSpiel one (see `openspiel_equivalent` and docs/openspiel.md).

A policy of a compiled OpenSpiel game (``load_game("openspiel:...")``) maps row by row: its keys are
OpenSpiel's information-state strings and its action names OpenSpiel's action strings. A policy of
a built-in game goes through the compiled OpenSpiel game, matched history by history (`align`).
This adapter sits below the policies: it reads and writes rows, and `Policy.to_openspiel` and
`Policy.from_openspiel` call it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..errors import ROW_TOLERANCE, PolicyError
from ..games import Bluff, Goofspiel, Kuhn, Leduc
from ..games.openspiel import OpenSpielRules, action_names, canonical_name, pyspiel_module
from ..tree import Game, load_compiled
from .alignment import align


def openspiel_equivalent(game: Game) -> str:
    """The OpenSpiel game string of the same game as built-in `game` (a ValueError for the others)."""
    rules = game.rules
    if isinstance(rules, OpenSpielRules):
        return rules.game_string
    if type(rules) is Kuhn:
        return "kuhn_poker"
    if type(rules) is Leduc and rules.params() == Leduc().params():
        return "leduc_poker"
    if type(rules) is Bluff and rules.dice1 == rules.dice2 == 1:
        return "liars_dice(numdice=1,dice_sides=6,bidding_rule=reset-face)"  # OpenSpiel's defaults
    if type(rules) is Goofspiel and rules.returns == "win_loss":  # OpenSpiel's point_difference pays half ours
        return (f"turn_based_simultaneous_game(game=goofspiel(imp_info=True,num_cards={rules.cards},"
                "points_order=descending,returns_type=win_loss))")
    raise ValueError(f"{rules.description()} has no OpenSpiel equivalent; built-in games with one: kuhn, "
                     "leduc (default parameters), liars_dice(dice1=1, dice2=1), goofspiel(returns='win_loss')")


def _check_os_game(os_game):
    """`os_game` if it is None, a game string or a pyspiel game, else a TypeError saying so."""
    if os_game is None or isinstance(os_game, str):
        return os_game
    pyspiel = pyspiel_module()
    if not isinstance(os_game, pyspiel.Game):
        raise TypeError(f"os_game must be an OpenSpiel game (pyspiel.load_game(...)), a game string or None, "
                        f"got {type(os_game).__name__} {os_game!r:.60}")
    return os_game


def _openspiel_game(os_game) -> Game:
    """Our compiled version of pyspiel game (or game string) `os_game`."""
    pyspiel = pyspiel_module()
    os_game = pyspiel.load_game(os_game) if isinstance(os_game, str) else _check_os_game(os_game)
    if os_game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        raise ValueError(f"{os_game} is a simultaneous-move game; rcfr's policies are policies of its turn-based "
                         "form: pass pyspiel.convert_to_turn_based(game), or omit the game")
    return _compiled(canonical_name(os_game))


@lru_cache(maxsize=8)
def _compiled(game_string: str) -> Game:
    return load_compiled(OpenSpielRules(game_string))


def _same(game: Game, os_game) -> bool:
    rules = game.rules
    return isinstance(rules, OpenSpielRules) and (os_game is None or canonical_name(os_game) == rules.game_string)


def _rows(tabular):
    """(key, state, player, legal action ids, probability row) of each information state."""
    for key, index in tabular.state_lookup.items():
        state = tabular.states[index]
        player = state.current_player()
        yield key, state, player, state.legal_actions(player), tabular.action_probability_array[index]


def _forced(key: str, legal, compiled: Game) -> bool:
    """Whether an OpenSpiel information state is missing from `compiled` because it is a forced move
    (a compiler that collapses forced moves drops them); any other missing state is an error."""
    if key in compiled.infoset_index:
        return False
    if len(legal) == 1:
        return True
    raise PolicyError(f"OpenSpiel information state {key!r} is not an information set of {compiled!r}")


def to_tabular(policy, os_game=None):
    """`policy` as an OpenSpiel `TabularPolicy` of `os_game` (default: the policy's own OpenSpiel
    game, or the OpenSpiel equivalent of its built-in game)."""
    pyspiel_module()
    from open_spiel.python.policy import TabularPolicy
    if not (hasattr(policy, "game") and hasattr(policy, "probs")):  # the adapter sits below rcfr.Policy
        raise TypeError(f"policy must be an rcfr.Policy, got {type(policy).__name__}")
    os_game = _check_os_game(os_game)
    game = policy.game
    if _same(game, os_game):
        compiled = game
        os_game = game.rules.game
    else:
        compiled = _openspiel_game(os_game if os_game is not None else openspiel_equivalent(game))
        os_game = compiled.rules.game if os_game is None else os_game
        policy = align(game, compiled).translate(policy)
    tabular = TabularPolicy(os_game)
    for key, state, player, legal, row in _rows(tabular):
        row[:] = 0.0
        if _forced(key, legal, compiled):
            row[legal[0]] = 1.0
        else:
            probs = policy[key]
            row[legal] = [probs[name] for name in action_names(state, player, legal)]
    return tabular


def tabular_rows(game: Game, tabular) -> tuple[Game, dict]:
    """The rows of OpenSpiel `TabularPolicy` `tabular` as a policy dictionary's ``infosets`` and the
    compiled game they are keyed for (`game`, or the compiled OpenSpiel game matched to it):
    probability on an action that is not legal is an error here; the rest is checked as strictly as a
    JSON policy when `Policy.from_openspiel` reads them (every information set, every legal action,
    rows summing to one)."""
    pyspiel_module()
    from open_spiel.python.policy import TabularPolicy
    if not isinstance(tabular, TabularPolicy):
        raise TypeError(f"tabular must be an OpenSpiel TabularPolicy (open_spiel.python.policy), "
                        f"got {type(tabular).__name__} {tabular!r:.60}")
    if not isinstance(game, Game):
        raise TypeError(f"game must be a compiled rcfr.Game, got {type(game).__name__}")
    os_game = tabular.game
    compiled = game if _same(game, os_game) else _openspiel_game(os_game)
    rows = {}
    for key, state, player, legal, row in _rows(tabular):
        illegal = np.flatnonzero(row != 0)
        illegal = illegal[~np.isin(illegal, legal)]
        if illegal.size:
            raise PolicyError(f"information set {key!r}: probability {row[illegal[0]]!r} on action "
                              f"{int(illegal[0])}, which is not legal there")
        if not _forced(key, legal, compiled):
            rows[key] = dict(zip(action_names(state, player, legal), row[legal].tolist()))
        elif not abs(row[legal[0]] - 1.0) <= ROW_TOLERANCE:  # implied by the compiled game, still checked
            raise PolicyError(f"information set {key!r}: probability {row[legal[0]]!r} on its only legal action")
    return compiled, rows
