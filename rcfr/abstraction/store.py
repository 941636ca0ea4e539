"""Solving an abstraction with the shared CFR loop: a regret store that ties merged information sets.

The counterfactual regret of an abstract information set is the sum of the counterfactual regrets of
the full-game sets merged into it (Lanctot 2013, ch. 5), so `AbstractRegrets` adds each iteration's
full-game regrets into abstract sequences, hands them to an inner store (a table, or anything else
that follows the `RegretStore` protocol) and broadcasts the inner store's strategy back to every
merged set. The solver, its exact full-game average and the evaluation stay unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import kernels
from ..options import AVERAGE_SPACES, check_choice
from ..policy import Policy
from ..solvers import RCFR, SOLVERS, CFRSolver, MCCFRSolver, RegressionRegrets, RegretStore, make_solver
from ..tree import Game
from ..tree.abstraction import Abstraction


@dataclass(frozen=True)
class _AbstractGame:
    """What an inner store sees: the abstract sequence forms in place of `game.views`."""

    views: tuple


class AbstractRegrets(RegretStore):
    """Regret store over the abstract sequences of `abstraction`, wrapping `inner`."""

    def __init__(self, inner: RegretStore, abstraction: Abstraction):
        if not isinstance(abstraction, Abstraction):
            raise TypeError(f"abstraction must be an Abstraction, got {type(abstraction).__name__}")
        self.inner, self.abstraction = inner, abstraction

    def bind(self, game: Game) -> None:
        if game is not self.abstraction.game:
            raise ValueError(f"abstraction {self.abstraction.name!r} was built for "
                             f"{self.abstraction.game.rules.description()}, not {game.rules.description()}")
        self.maps = self.abstraction.local
        self.inner.bind(_AbstractGame(self.maps))
        self._strategies = [np.empty(len(m.seq_map)) for m in self.maps]
        for p in (0, 1):
            self._broadcast(p)

    def _broadcast(self, player: int) -> None:
        np.take(self.inner.strategy(player), self.maps[player].seq_map, out=self._strategies[player])

    def strategy(self, player: int) -> np.ndarray:
        return self._strategies[player]

    def update(self, player: int, regrets: np.ndarray, iteration: int) -> None:
        m = self.maps[player]
        summed = np.bincount(m.seq_map, weights=regrets, minlength=m.num_sequences)
        summed[0] = 0.0
        self.inner.update(player, summed, iteration)
        self._broadcast(player)

    def size(self) -> int:
        return self.abstraction.num_sequences

    def state_dict(self) -> dict[str, np.ndarray]:
        return self.inner.state_dict()

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        self.inner.load_state_dict(state)
        for p in (0, 1):
            self._broadcast(p)


def card_abstraction_solvers() -> list[str]:
    """Names in `SOLVERS` that run on a card abstraction: full-width CFR loops with a tabular store and
    the Monte Carlo CFR solvers. Regression stores need features of the full game's sequences, which
    abstract sequences lack."""
    return [n for n, f in SOLVERS.items() if isinstance(f, type) and (
        issubclass(f, MCCFRSolver) or (issubclass(f, CFRSolver) and not issubclass(f, RCFR)))]


def abstract_solver(name: str, game: Game, abstraction: Abstraction, **options) -> CFRSolver | MCCFRSolver:
    """Solver `name` of the `SOLVERS` registry (e.g. "cfr+", "cscfr") run on the abstraction's information
    partition: full-width solvers get their regret store wrapped in `AbstractRegrets`, Monte Carlo CFR
    solvers take the abstraction itself (their kernels sum regrets into abstract sets)."""
    if isinstance(SOLVERS.get(name), type) and issubclass(SOLVERS[name], MCCFRSolver):
        return make_solver(name, game, abstraction=abstraction, **options)
    unsupported = ValueError(f"solver {name!r} cannot run on a card abstraction; solvers that can: "
                             f"{', '.join(card_abstraction_solvers())} (action abstractions work with every solver)")
    if isinstance(SOLVERS.get(name), type) and name not in card_abstraction_solvers():
        raise unsupported  # before building it (a regression solver computes the game's features)
    solver = make_solver(name, game, **options)
    if not isinstance(solver, CFRSolver) or isinstance(solver.store, RegressionRegrets):
        raise unsupported  # a registered factory's solver
    solver.store = AbstractRegrets(solver.store, abstraction)
    solver.store.bind(game)
    return solver



def average_policy(solver: CFRSolver, average_space: str = "full") -> Policy:
    """The solver's average policy, averaged in `average_space`:

    * ``"full"``: the exact full-game average (each full information set normalizes its own
      average realization plan), what `solver.average_policy()` returns;
    * ``"abstract"``: the average realization plans of merged sets are added up and normalized per
      abstract set, so every merged set plays the same average strategy (the abstract game's average).
    """
    check_choice("average_space", average_space, AVERAGE_SPACES)
    if isinstance(solver, MCCFRSolver):  # a sampled solver keeps the average in the space it was built with
        if average_space != solver.average_space:
            raise ValueError(f"this {type(solver).__name__} averages in the {solver.average_space} space; "
                             f"build it with average_space={average_space!r}")
        return solver.average_policy()
    if average_space == "full":
        return solver.average_policy()
    store = solver.store
    if not isinstance(store, AbstractRegrets):
        raise ValueError("average_space='abstract' needs a solver whose store is AbstractRegrets")
    return tie(store.abstraction, solver.average_plans)


def tie(abstraction: Abstraction, plans) -> Policy:
    """The policy that plays, in every merged set, the normalized sum of the merged sets' realization
    plans (`plans`: both players' local realization plans, possibly unnormalized)."""
    strategies = []
    for m, plan in zip(abstraction.local, plans):
        summed = np.bincount(m.seq_map, weights=plan, minlength=m.num_sequences)
        abstract = kernels.normalize_plan(summed, m.infoset_first, m.infoset_size, np.empty(m.num_sequences))
        strategies.append(abstract[m.seq_map])
    return Policy.from_local(abstraction.game, strategies)
