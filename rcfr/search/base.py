"""The search-game protocol: perfect information, stochastic, searched online (never compiled).

A game alternates decisions and chance: after every action a chance event picks the next state
(a deterministic action has one outcome of probability 1). Chance outcomes are small integers so
that searches can share them (common random numbers), remap them (antithetic variates) or draw
them ahead in batches. States are small immutable tuples, hashable for tables of sampled outcomes.

Player 0 (Max) maximizes `utility`, player 1 (Min) minimizes it; a one-player (solitaire) game only
has player 0. Every value lies in ``[vmin, vmax]``.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np
from numba import njit

State = Hashable


@njit(cache=True)
def draw_chance(draws, rpos, use_draws, u, upos, n):
    """A compiled rollout's next raw chance outcome: draws[rpos] when `use_draws`, else floor(n u[upos]).
    Returns (outcome, rpos, upos), outcome -1 when the array ran out."""
    if use_draws:
        if rpos >= len(draws):
            return -1, rpos, upos
        return draws[rpos], rpos + 1, upos
    if upos >= len(u):
        return -1, rpos, upos
    return int(u[upos] * n), rpos, upos + 1


class SearchGame:
    """Base class; subclasses implement the methods below on tuple states."""

    name = "search_game"
    num_players = 2
    vmin = -100.0
    vmax = 100.0
    #: number of raw chance outcomes that `sample` draws from (uniformly); see `raw_outcome`.
    num_raw_outcomes = 1

    def initial(self, rng: np.random.Generator) -> State:
        raise NotImplementedError

    def is_terminal(self, state: State) -> bool:
        raise NotImplementedError

    def player(self, state: State) -> int:
        """0 (Max) or 1 (Min) at a non-terminal state."""
        raise NotImplementedError

    def actions(self, state: State) -> Sequence[int]:
        """Legal actions, best guess first (Star2 probes the first one)."""
        raise NotImplementedError

    def chance(self, state: State, action: int) -> tuple[Sequence[int], Sequence[float]]:
        """The distinct outcomes after `action` (one representative raw outcome per distinct next
        state) and their probabilities, which sum to one."""
        raise NotImplementedError

    def apply(self, state: State, action: int, outcome: int) -> State:
        """The state after `action` and the raw chance outcome `outcome`."""
        raise NotImplementedError

    def utility(self, state: State) -> float:
        raise NotImplementedError

    def evaluate(self, state: State) -> float:
        """Heuristic value for player 0 at a non-terminal state, in ``[vmin, vmax]``."""
        raise NotImplementedError

    def check_state(self, state: State) -> None:
        """Raise a ValueError naming what is wrong unless `state` could be one of this game's states: the
        searches call it before any work (the rules themselves may run on nonsense, such as a negative
        count). Default: no check beyond what the rules refuse."""

    # -- shared helpers -------------------------------------------------------------------
    def value(self, state: State) -> float:
        """Utility at a terminal state, the heuristic elsewhere."""
        return self.utility(state) if self.is_terminal(state) else self.evaluate(state)

    def sample(self, state: State, action: int, rng: np.random.Generator) -> int:
        """A raw outcome drawn with the right probability. Default: uniform raw outcomes, which every
        game here has (dice); override for other distributions."""
        return int(rng.integers(self.num_raw_outcomes))

    def ranked_outcome(self, state: State, action: int, rank: int) -> int:
        """The raw outcome of luck rank `rank` (a bijection of raw outcomes, so a uniform rank gives a
        correctly distributed outcome). Antithetic variates pair rank r with `antithetic(r)`; games
        whose luck is state-independent (Pig) rank raw outcomes by their id."""
        return rank

    def step(self, state: State, action: int, rng: np.random.Generator) -> State:
        return self.apply(state, action, self.sample(state, action, rng))
