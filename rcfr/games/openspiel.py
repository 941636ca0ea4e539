"""Any two-player zero-sum OpenSpiel game as rules: ``rcfr.load_game("openspiel:<game string>")``.

The adapter walks pyspiel states, so the compiled game has OpenSpiel's information-state strings as
keys, OpenSpiel's action strings as action names and its chance probabilities; utilities are
player 0's returns. pyspiel is imported only when such a game is asked for (the optional extra
``rcfr[openspiel]``). Simultaneous-move games are compiled through pyspiel's turn-based
transformation. A game that is not two-player, not zero-sum, has sampled (not explicit) chance or
is far too large fails before the walk; a game without perfect recall fails in `compile_game`.
"""

from __future__ import annotations

import numpy as np

from .base import CHANCE, TERMINAL, GameRules

INSTALL = "pip install 'rcfr[openspiel]'"
#: Random probes used to estimate the tree size before compiling (Knuth's estimator; 256 take milliseconds).
SIZE_PROBES = 256
#: A game is refused when the probes' mean (unbiased) passes this multiple of the limit, even if their median does not.
MEAN_MARGIN = 1.0


def pyspiel_module():
    """The pyspiel module, or an ImportError saying how to install it."""
    try:
        import pyspiel
    except ImportError:
        raise ImportError(f"OpenSpiel games need the optional OpenSpiel extra: {INSTALL}") from None
    return pyspiel


def openspiel_version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("open-spiel")
    except PackageNotFoundError:  # pyspiel built from source
        return "unknown"


def load_openspiel_game(name: str):
    """The pyspiel game of game string `name`, turn-based, checked to be one rcfr can solve."""
    pyspiel = pyspiel_module()
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"game parameter 'name' must be an OpenSpiel game string such as 'kuhn_poker' or "
                         f"'liars_dice(numdice=1)', got {name!r}")
    try:
        game = pyspiel.load_game(name.strip())
    except pyspiel.SpielError as err:
        first = str(err).splitlines()[0]
        raise ValueError(f"OpenSpiel cannot load game {name!r}: {first} (see pyspiel.registered_names())") from None
    kind = game.get_type()
    problem = None
    if game.num_players() != 2:
        problem = f"has {game.num_players()} players; rcfr solves two-player games"
    elif kind.utility != pyspiel.GameType.Utility.ZERO_SUM:
        problem = f"has utility {kind.utility.name}; rcfr solves zero-sum games"
    elif kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        problem = "has sampled chance (no explicit outcome probabilities)"
    elif kind.dynamics not in (pyspiel.GameType.Dynamics.SEQUENTIAL, pyspiel.GameType.Dynamics.SIMULTANEOUS):
        problem = f"has {kind.dynamics.name} dynamics; rcfr solves sequential or simultaneous-move games"
    elif not kind.provides_information_state_string:
        problem = "provides no information-state strings"
    if problem:
        raise ValueError(f"OpenSpiel game {name!r} {problem}")
    if kind.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    return game


def canonical_name(game) -> str:
    """The game string of pyspiel game `game` with every parameter spelled out, defaults included,
    in OpenSpiel's order: one string per game, whatever string loaded it (the game's identity)."""
    params = dict(game.get_parameters())
    params["name"] = game.get_type().short_name
    return pyspiel_module().game_parameters_to_string(params)


def estimated_histories(game, probes: int = SIZE_PROBES, cap: float = float("inf"), seed: int = 0
                        ) -> tuple[float, float]:
    """(median, mean) of Knuth's unbiased tree-size estimates from `probes` random root-to-leaf walks.

    The estimator is right-skewed: its median rarely exceeds the true size, so a median above the limit
    means a game too large in all likelihood; but in games whose long lines are rare (Liar's Dice with two
    dice: most random bids are called at once) the median is far below the true size and only the mean
    sees the long lines. A walk stops early once its estimate passes `cap`."""
    rng = np.random.default_rng(seed)
    estimates = []
    for _ in range(probes):
        state, width, total = game.new_initial_state(), 1.0, 1.0
        while not state.is_terminal() and total <= cap:
            actions = state.legal_actions()
            width *= len(actions)
            total += width
            state.apply_action(actions[rng.integers(len(actions))])
        estimates.append(total)
    return float(np.median(estimates)), float(np.mean(estimates))


def action_names(state, player: int, actions) -> list[str]:
    """OpenSpiel's strings of `actions` at `state`; a string shared by several actions gets ``@id``
    appended, so that names identify actions within an information set."""
    names = [state.action_to_string(player, a) for a in actions]
    if len(set(names)) < len(names):
        names = [f"{n}@{a}" if names.count(n) > 1 else n for n, a in zip(names, actions)]
    return names


class _Node:
    """A pyspiel state and what the walk asks about it, each read from pyspiel once."""

    __slots__ = ("state", "who", "actions", "probs", "key")

    def __init__(self, state):
        self.state = state
        self.who = None


class OpenSpielRules(GameRules):
    """The rules of OpenSpiel game string `name` (e.g. ``"leduc_poker"``,
    ``"goofspiel(imp_info=True,num_cards=4,points_order=descending)"``). Identity (cache key, policy
    files) is the game's canonical string (`canonical_name`) and the installed OpenSpiel version."""

    name = "openspiel"

    def __init__(self, name: str):
        from ..budget import max_histories  # the limit compile_game enforces
        self.game = load_openspiel_game(name)
        self.game_string = canonical_name(self.game)
        self.version = openspiel_version()
        self._names: dict[tuple, list[str]] = {}
        limit = max_histories()
        median, mean = estimated_histories(self.game, cap=100.0 * limit)
        if median > limit or mean > MEAN_MARGIN * limit:
            raise ValueError(f"OpenSpiel game {self.game_string!r} has about {max(median, mean):.3g} histories "
                             f"({SIZE_PROBES} random probes: median {median:.3g}, mean {mean:.3g}), more than the "
                             f"limit of {limit:,}; sample it through OpenSpiel's "
                             f"state API instead (no compiling, slower per node): rcfr.solve_openspiel("
                             f"{self.game_string!r}, sampler='external'|'outcome', iterations=...), or choose "
                             "smaller game parameters (or raise the limit with RCFR_MAX_HISTORIES)")

    def params(self) -> dict:
        return {"name": self.game_string, "open_spiel": self.version}

    # -- state protocol ------------------------------------------------------------------
    def _read(self, node: _Node) -> int:
        if node.who is None:
            state = node.state
            if state.is_terminal():
                node.who = TERMINAL
            elif state.is_chance_node():
                node.who = CHANCE
                outcomes = state.chance_outcomes()
                node.actions = [a for a, _ in outcomes]
                node.probs = [p for _, p in outcomes]
            else:
                node.who = state.current_player()
                node.actions = state.legal_actions()
                node.key = None
        return node.who

    def initial_state(self):
        return _Node(self.game.new_initial_state())

    def player(self, node: _Node) -> int:
        return self._read(node)

    def infoset_key(self, node: _Node) -> str:
        self._read(node)
        if node.key is None:
            node.key = node.state.information_state_string(node.who)
        return node.key

    def actions(self, node: _Node):
        # Names are read once per (information set, legal actions): pyspiel's strings cost a call each.
        signature = (self.infoset_key(node), tuple(node.actions))
        names = self._names.get(signature)
        if names is None:
            names = self._names[signature] = action_names(node.state, node.who, node.actions)
        return names

    def chance_outcomes(self, node: _Node):
        self._read(node)
        return [(node.state.action_to_string(CHANCE, a), p) for a, p in zip(node.actions, node.probs)]

    def next_state(self, node: _Node, action: int):
        self._read(node)
        return _Node(node.state.child(node.actions[action]))

    def utility(self, node: _Node) -> float:
        returns = node.state.returns()
        if abs(returns[0] + returns[1]) > 1e-9 * (1.0 + abs(returns[0])):
            raise ValueError(f"OpenSpiel game {self.game_string!r} is declared zero-sum but pays {returns} "
                             f"after {node.state.history()}")
        return float(returns[0])
