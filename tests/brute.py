"""Independent reference implementations for tests: recursive walks over the *rules* (not the
compiled arrays), brute-force best responses over all pure strategies, and random small games with
hidden actions whose information sets span several depths."""

from __future__ import annotations

import itertools
import random

from rcfr.games.base import CHANCE, TERMINAL, GameRules


def walk_value(rules: GameRules, rows: dict[str, list[float]], state=None, chance=None) -> float:
    """Player 0's expected payoff when both play `rows` (key -> action probabilities). `chance(state,
    outcomes)`, if given, replaces the rules' chance probabilities with an independent model."""
    state = rules.initial_state() if state is None else state
    who = rules.player(state)
    if who == TERMINAL:
        return rules.utility(state)
    if who == CHANCE:
        outcomes = rules.chance_outcomes(state)
        probs = [p for _, p in outcomes] if chance is None else chance(state, outcomes)
        return sum(p * walk_value(rules, rows, rules.next_state(state, a), chance) for a, p in enumerate(probs))
    probs = rows[rules.infoset_key(state)]
    return sum(p * walk_value(rules, rows, rules.next_state(state, a), chance) for a, p in enumerate(probs) if p)


def policy_rows(policy) -> dict[str, list[float]]:
    return {key: list(row.values()) for key, row in policy.to_dict()["infosets"].items()}


def brute_force_best_response(game, policy, player: int, limit: int = 5000) -> float:
    """max over every pure strategy of `player` of its payoff against `policy`."""
    rows = policy_rows(policy)
    mine = [str(k) for k, p in zip(game.infoset_keys, game.infoset_player) if p == player]
    choices = [range(len(rows[k])) for k in mine]
    count = 1
    for c in choices:
        count *= len(c)
    if count > limit:
        raise ValueError(f"{count} pure strategies is too many for brute force")
    sign = 1.0 if player == 0 else -1.0
    best = -float("inf")
    for pure in itertools.product(*choices):
        trial = dict(rows)
        for key, a in zip(mine, pure):
            trial[key] = [1.0 if b == a else 0.0 for b in range(len(rows[key]))]
        best = max(best, sign * walk_value(game.rules, trial))
    return best


class RandomGame(GameRules):
    """A small random two-player zero-sum game with perfect recall.

    Each move is seen by the mover; every other move (chance or opponent) is seen by each other
    player only with probability 1/2, and otherwise may leave no trace at all, so information sets
    mix histories of different depths. Node kinds are drawn from the players' views, action counts
    from the information-set key (so all histories of a set share their actions), utilities from
    the full path.
    """

    name = "random_game"

    def __init__(self, seed: int = 0, depth: int = 4):
        self.seed, self.depth = seed, depth

    def _rng(self, *parts) -> random.Random:
        return random.Random(repr((self.seed,) + parts))

    def initial_state(self):
        return ()

    def player(self, state) -> int:
        if len(state) >= self.depth:
            return TERMINAL
        # Drawn from what the players see, so a move nobody sees leaves the next node's kind unchanged
        # and information sets span several depths.
        roll = self._rng("kind", self._view(state, 0), self._view(state, 1)).random()
        if len(state) >= 2 and roll < 0.2:
            return TERMINAL
        return CHANCE if roll < 0.35 else (0 if roll < 0.7 else 1)

    def _view(self, state, player: int) -> tuple:
        return tuple((who, a) if (who == player or seen[player]) else "?" if hint else None
                     for who, a, seen, hint in state if (who == player or seen[player] or hint))

    def infoset_key(self, state) -> str:
        p = self.player(state)
        return f"P{p}:{self._view(state, p)}"

    def actions(self, state):
        n = 2 + self._rng("width", self.infoset_key(state)).randrange(2)
        return [f"a{i}" for i in range(n)]

    def chance_outcomes(self, state):
        rng = self._rng("chance", state)
        weights = [rng.random() + 0.1 for _ in range(2 + rng.randrange(2))]
        return [(f"o{i}", w / sum(weights)) for i, w in enumerate(weights)]

    def next_state(self, state, action: int):
        who = self.player(state)
        rng = self._rng("seen", state, action)
        seen = tuple(rng.random() < 0.5 for _ in (0, 1))
        hint = rng.random() < 0.3  # the others learn that *something* happened, not what
        return state + ((who, action, seen, hint),)

    def utility(self, state) -> float:
        return round(self._rng("utility", state).uniform(-3, 3), 3)
