"""The one place where a validated config becomes library objects.

Every run is `make_solver(solver.name, solve_game, **solver.options, **injected)`, where

* `injected` holds the objects built from the regressor and features groups (``regressor``,
  ``features``) and the run seed (``seed``). Each is passed only to solvers whose constructor takes a
  keyword of that name: RCFR/RCFR+ take a regressor, sampling solvers take a seed. There is no list
  of special cases.
* the abstraction group picks what the solver runs on. A card abstraction (`rcfr.abstraction`:
  ranks, rank partitions, E[HS] buckets) runs the same solver on the full game with its regret store
  wrapped in `AbstractRegrets`. An action abstraction runs it on the abstract no-limit game, and its
  average policy is translated into the full game for evaluation.

Which components exist, and which parameters each takes, is `experiments.components`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from features import make_features
from rcfr import SOLVERS, load_game, make_rules, make_solver  # noqa: F401  (make_rules: validation)
from rcfr.regressors import make_regressor
from rcfr.policy import Policy
from rcfr.registry import keyword_names
from rcfr.solvers import CFRSolver
from rcfr.tree import Game

from .schema import ConfigError, ExperimentConfig, resolve_shares

def make_game(spec: ExperimentConfig) -> Game:
    return load_game(spec.game.name, **spec.game.params)


def make_component(kind: str, name: str, params: dict, game: Game):
    """A regressor (`make_regressor(name, **params)`) or the feature matrix of `game`
    (`make_features(game, name, **params)`)."""
    return make_regressor(name, **params) if kind == "regressor" else make_features(game, name, **params)


@dataclass
class Setup:
    """A solver, and how its average policy becomes a policy of the full game."""

    game: Game  # the full game, where every policy is evaluated
    solver: CFRSolver
    to_full: Callable[[Policy], Policy] = lambda policy: policy
    average_space: str = "full"  # on an abstraction, "abstract" ties the merged sets' averages

    def policy(self) -> Policy:
        from rcfr.abstraction import average_policy
        return self.to_full(average_policy(self.solver, self.average_space))

    def current_policy(self) -> Policy:
        """The profile the solver plays in its next iteration, in the full game."""
        return self.to_full(self.solver.current_policy())

    def size(self) -> int | None:
        """Values the solver keeps to produce its strategy (`solver.size()`: table entries, abstract
        sequences, or the regressors' sizes); None for a regressor of unknown size."""
        size = self.solver.size()
        return None if size is None else int(size)


def make_setup(spec: ExperimentConfig, game: Game) -> Setup:
    """The solver of a validated config on `game` (or on its abstraction); value errors that only
    the constructors can find become `ConfigError`s, before any work."""
    from rcfr import abstraction as abstractions

    name, abstraction = spec.solver.name, spec.abstraction
    try:
        if abstraction.name == "action":
            abstract_game = abstractions.action_abstraction(game, **abstraction.params)
            solver = make_solver(name, abstract_game, **_options(spec, abstract_game, game.num_sequences))
            return Setup(game, solver, lambda policy: abstractions.translate(game, abstract_game, policy))
        options = _options(spec, game, game.num_sequences)
        if abstraction.name == "none":
            return Setup(game, make_solver(name, game, **options))
        takers = abstractions.card_abstraction_solvers()
        if name not in takers:
            raise ConfigError(f"solver {name!r} has no tabular regret store to run on a card abstraction; "
                              f"solvers that do: {', '.join(takers)} (action abstractions work with every solver)")
        params = dict(abstraction.params)
        kind = params.pop("partition") if abstraction.name == "card" else abstraction.name
        space = spec.solver.options.get("average_space", "full")
        return Setup(game, abstractions.abstract_solver(name, game, _abstraction(game, kind, params), **options),
                     average_space=space)
    except (ValueError, TypeError) as err:  # a value only a constructor can check
        raise ConfigError(f"solver {name!r} with abstraction {abstraction.name!r}: {err}") from None


_LAST_ABSTRACTION: list = []  # [(game, kind, params, abstraction)]: at most the last one built


def _abstraction(game: Game, kind: str, params: dict):
    """`make_abstraction(game, kind, **params)`, reusing the last one built for this very game object: a
    run's warm-up builds its setup twice, and on a game of millions of information sets an abstraction
    takes seconds to minutes to build."""
    from rcfr.abstraction import make_abstraction

    if _LAST_ABSTRACTION:
        last_game, last_kind, last_params, last = _LAST_ABSTRACTION[0]
        if last_game is game and last_kind == kind and last_params == params:
            return last
    _LAST_ABSTRACTION.clear()
    abstraction = make_abstraction(game, kind, **params)
    _LAST_ABSTRACTION.append((game, kind, params, abstraction))
    return abstraction


def forget() -> None:
    """Drop the abstraction kept by `_abstraction` (and with it its game)."""
    _LAST_ABSTRACTION.clear()


def _options(spec: ExperimentConfig, game: Game, sequences: int) -> dict:
    """The solver's keywords; counts given as shares ("1%") are of the full game's `sequences`."""
    accepted = keyword_names(SOLVERS[spec.solver.name])
    options = resolve_shares("solver.options", spec.solver.options, sequences)
    if "average_space" not in accepted:  # the kit's option (components.KIT_OPTIONS), applied by `Setup.policy`
        options.pop("average_space", None)
    if "regressor" in accepted:
        params = resolve_shares("regressor.params", spec.regressor.params, sequences)
        options["regressor"] = make_component("regressor", spec.regressor.name, params, game)
    if "features" in accepted and options.get("features_on_demand"):  # the solver's encoder computes rows
        options["features"] = {"name": spec.features.name, **spec.features.params}
    elif "features" in accepted:
        options["features"] = make_component("features", spec.features.name, spec.features.params, game)
    if "seed" in accepted:
        options["seed"] = spec.run.seed
    return options
