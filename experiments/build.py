"""The one place where a validated config becomes library objects.

Every run is `make_solver(solver.name, solve_game, **solver.options, **injected)`, where

* `injected` holds the regressor spec (``{"name": ..., **params}``, built by the solver once per
  player, with per-player seeds derived from the run seed: `rcfr.regressors.with_seed`), the feature
  matrix built from the features group (``features``) and the run seed (``seed``). Each is passed
  only to solvers whose constructor takes a keyword of that name: RCFR/RCFR+ take a regressor and a
  seed, sampling solvers take a seed. There is no list of special cases.
* the abstraction group picks what the solver runs on. A card abstraction (`rcfr.abstraction`:
  ranks, rank partitions, E[HS] buckets) runs the same solver on the full game with its regret store
  wrapped in `AbstractRegrets`. An action abstraction runs it on the abstract no-limit game, and its
  average policy is translated into the full game for evaluation.

Which components exist, and which parameters each takes, is read from the library's registries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from features import FEATURES as FEATURE_REGISTRY, make_features
from rcfr import SOLVERS, load_game, make_rules, make_solver  # noqa: F401  (make_rules: validation)
from rcfr.regressors import REGRESSORS as REGRESSOR_REGISTRY
from rcfr.policy import Policy
from rcfr.registry import keyword_names
from rcfr.solvers import CFRSolver
from rcfr.tree import Game

from .schema import ConfigError, ExperimentConfig

#: solver constructor keywords the kit fills from other config groups (never from solver.options)
INJECTED_OPTIONS = ("regressor", "features", "seed")


def _parameters(registry: dict, skip: int = 0) -> dict[str, list[str]]:
    """Component name -> the keyword parameters its factory accepts ("none": no component)."""
    return {"none": [], **{name: keyword_names(factory)[skip:] for name, factory in registry.items()}}


#: component name -> the parameters its factory accepts
REGRESSORS: dict[str, list[str]] = _parameters(REGRESSOR_REGISTRY)
FEATURES: dict[str, list[str]] = _parameters(FEATURE_REGISTRY, skip=1)  # extractors take the game first


def _abstractions() -> dict[str, list[str]]:
    from rcfr.abstraction import CARD_ABSTRACTIONS

    table = {"none": [], "card": ["partition"], "action": ["wagers"]}
    for name, factory in CARD_ABSTRACTIONS.items():  # ranks, ehs, ehs2 (identity is "none")
        if name != "identity":
            table[name] = keyword_names(factory)[1:]
    return table


#: ``card``: a rank partition such as "J.QK"; ``action``: no-limit wagers such as "HP"; the others
#: are `rcfr.abstraction.CARD_ABSTRACTIONS` with their keyword parameters
ABSTRACTIONS: dict[str, list[str]] = _abstractions()

def solver_registry() -> dict:
    return SOLVERS


def make_game(spec: ExperimentConfig) -> Game:
    return load_game(spec.game.name, **spec.game.params)


@dataclass
class Setup:
    """A solver, and how its average policy becomes a policy of the full game."""

    game: Game  # the full game, where every policy is evaluated
    solver: CFRSolver
    to_full: Callable[[Policy], Policy] = lambda policy: policy

    def policy(self) -> Policy:
        return self.to_full(self.solver.average_policy())

    def size(self) -> int | None:
        """Values the solver keeps to produce its strategy: table entries, abstract sequences, or the
        regressor's complexity, as reported by its regret store (or by the solver, for solvers
        without one, such as the MCCFR family); None for a regressor of unknown complexity."""
        store = getattr(self.solver, "store", None)
        size = store.size() if store is not None else self.solver.size()
        return None if size is None else int(size)


def make_setup(spec: ExperimentConfig, game: Game) -> Setup:
    """The solver of a validated config on `game` (or on its abstraction); value errors that only
    the constructors can find become `ConfigError`s, before any work."""
    from rcfr import abstraction as abstractions

    name, abstraction = spec.solver.name, spec.abstraction
    try:
        if abstraction.name == "action":
            abstract_game = abstractions.action_abstraction(game, **abstraction.params)
            solver = make_solver(name, abstract_game, **_options(spec, abstract_game))
            return Setup(game, solver, lambda policy: abstractions.translate(game, abstract_game, policy))
        options = _options(spec, game)
        if abstraction.name == "none":
            return Setup(game, make_solver(name, game, **options))
        takers = abstractions.card_abstraction_solvers()
        if name not in takers:
            raise ConfigError(f"solver {name!r} has no tabular regret store to run on a card abstraction; "
                              f"solvers that do: {', '.join(takers)} (action abstractions work with every solver)")
        params = dict(abstraction.params)
        kind = params.pop("partition") if abstraction.name == "card" else abstraction.name
        return Setup(game, abstractions.abstract_solver(
            name, game, abstractions.make_abstraction(game, kind, **params), **options))
    except (ValueError, TypeError) as err:  # a value only a constructor can check
        raise ConfigError(f"solver {name!r} with abstraction {abstraction.name!r}: {err}") from None


def _options(spec: ExperimentConfig, game: Game) -> dict:
    accepted = keyword_names(SOLVERS[spec.solver.name])
    options = dict(spec.solver.options)
    if "regressor" in accepted:  # a spec, not an object: the solver seeds each player's copy
        options["regressor"] = {"name": spec.regressor.name, **spec.regressor.params}
    if "features" in accepted:
        options["features"] = make_features(spec.features.name, game, **spec.features.params)
    if "seed" in accepted:
        options["seed"] = spec.run.seed
    return options
