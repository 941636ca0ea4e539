"""Compile rate (histories per second) of OpenSpiel games through `OpenSpielRules`, and of the
alternatives it was chosen over: children by ``clone() + apply_action`` instead of ``child()``, states
kept as action histories and replayed from the root, and action strings read at every node instead of
once per information set. Also the time pyspiel itself needs to list the game's states.

    PYTHONPATH=. python -m benchmarks.speed.openspiel_compile [game string ...]
"""

from __future__ import annotations

import sys
import time

from rcfr.games.openspiel import OpenSpielRules, _Node, action_names, pyspiel_module
from rcfr.tree import compile_game

GAMES = ["leduc_poker", "liars_dice(numdice=1)", "goofspiel(imp_info=True,num_cards=5,points_order=descending)"]


class CloneApply(OpenSpielRules):
    def next_state(self, node, action):
        self._read(node)
        state = node.state.clone()
        state.apply_action(node.actions[action])
        return _Node(state)


class NamesEveryNode(OpenSpielRules):
    def actions(self, node):
        self._read(node)
        return action_names(node.state, node.who, node.actions)


class ReplayHistory(OpenSpielRules):
    """States are tuples of action ids; every question replays the tuple from the root."""

    def _state(self, history):
        state = self.game.new_initial_state()
        for a in history:
            state.apply_action(a)
        return state

    def initial_state(self):
        return ()

    def player(self, history):
        state = self._state(history)
        if state.is_terminal():
            return -2
        return -1 if state.is_chance_node() else state.current_player()

    def infoset_key(self, history):
        state = self._state(history)
        return state.information_state_string(state.current_player())

    def actions(self, history):
        state = self._state(history)
        return action_names(state, state.current_player(), state.legal_actions())

    def chance_outcomes(self, history):
        state = self._state(history)
        return [(state.action_to_string(-1, a), p) for a, p in state.chance_outcomes()]

    def next_state(self, history, action):
        return history + (self._state(history).legal_actions()[action],)

    def utility(self, history):
        return float(self._state(history).returns()[0])


def rate(rules, repeats: int = 3) -> tuple[float, int]:
    """Best of `repeats` compiles (the machine is shared: the best run is the least disturbed)."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        game = compile_game(rules)
        seconds.append(time.perf_counter() - start)
    return game.num_histories / min(seconds), game.num_histories


def main(games: list[str]) -> None:
    from open_spiel.python.algorithms import get_all_states
    pyspiel = pyspiel_module()
    print(f"{'game':64s} {'histories':>10} {'child()':>9} {'clone+apply':>11} {'names/node':>10} "
          f"{'replay':>9} {'pyspiel get_all_states':>22}")
    for name in games:
        best, histories = rate(OpenSpielRules(name))
        others = [rate(cls(name))[0] for cls in (CloneApply, NamesEveryNode)]
        replay = rate(ReplayHistory(name))[0] if histories < 100_000 else float("nan")
        game = OpenSpielRules(name).game
        start = time.perf_counter()
        states = get_all_states.get_all_states(game, include_terminals=True, include_chance_states=True,
                                               to_string=lambda s: s.history_str())
        listing = len(states) / (time.perf_counter() - start)
        print(f"{name:64s} {histories:>10,} {best:>9,.0f} {others[0]:>11,.0f} {others[1]:>10,.0f} "
              f"{replay:>9,.0f} {listing:>22,.0f}")
    print(f"(histories per second; pyspiel {pyspiel.__name__}; replay skipped above 100,000 histories)")


if __name__ == "__main__":
    main(sys.argv[1:] or GAMES)
