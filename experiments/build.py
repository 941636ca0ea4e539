"""The one place where a validated config becomes library objects.

Every run is `make_solver(solver.name, game, **solver.options, **injected)` where `injected` holds
the objects built from the other groups, passed only to solvers whose constructor takes them:
``regressor`` and ``features`` (regression solvers, RCFR/RCFR+), ``abstraction`` (solvers over a
static abstraction) and ``seed`` (sampling solvers). Which components exist, and which parameters
each takes, is listed below; the factories are looked up in the library modules that provide them.
"""

from __future__ import annotations

import importlib

from rcfr import SOLVERS, load_game, make_rules, make_solver  # noqa: F401  (make_rules: validation)
from rcfr.solvers import CFRSolver
from rcfr.tree import Game
from rcfr.registry import keyword_names

from .schema import ConfigError, ExperimentConfig

#: solver constructor keywords the kit fills from other config groups (never from solver.options)
INJECTED_OPTIONS = ("regressor", "features", "abstraction", "seed")

#: component name -> the parameters its factory accepts (size parameters first)
REGRESSORS: dict[str, list[str]] = {
    "none": [],
    "table": [],
    "best_first": ["max_leaves", "min_samples_leaf"],
    "recursive": ["max_depth", "min_samples_leaf"],
    "lightgbm": ["num_leaves", "n_estimators", "learning_rate", "min_child_samples"],
    "mlp": ["hidden", "epochs", "learning_rate", "batch_size"],
    "linear": ["alpha"],
}
FEATURES: dict[str, list[str]] = {
    "none": [],
    "indicator": [],
    "poker": ["history"],
    "generic": [],
}
ABSTRACTIONS: dict[str, list[str]] = {
    "none": [],
    "card": ["groups"],  # rank groups merged into one abstract card, e.g. ["JQ", "K"]
    "ehs": ["buckets"],  # expected-hand-strength buckets per betting round
    "action": ["fractions", "allin"],  # no-limit bet sizes kept, as pot fractions, plus all-in
}

#: where each component's factory `make_<kind>(name, ...)` lives once its issue is merged
FACTORIES = {
    "regressor": ("rcfr.regressors", "make_regressor"),
    "features": ("features", "make_features"),
    "abstraction": ("rcfr.abstraction", "make_abstraction"),
}


class NotAvailable(RuntimeError):
    """A configured component whose library module is not part of this checkout yet."""


def solver_registry() -> dict:
    return SOLVERS


def _factory(kind: str):
    module_name, attr = FACTORIES[kind]
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        raise NotAvailable(f"{kind} components need {module_name}.{attr}, which this checkout does not "
                           f"provide yet (wire it in experiments/build.py)") from None


def make_game(spec: ExperimentConfig) -> Game:
    return load_game(spec.game.name, **spec.game.params)


def make_component(kind: str, name: str, params: dict, game: Game):
    """A regressor (`make_regressor(name, **params)`), or a feature matrix / abstraction of `game`
    (`make_features(name, game, **params)`, `make_abstraction(name, game, **params)`)."""
    factory = _factory(kind)
    return factory(name, **params) if kind == "regressor" else factory(name, game, **params)


def make_run_solver(spec: ExperimentConfig, game: Game) -> CFRSolver:
    """The solver of a validated config, with its injected components."""
    accepted = keyword_names(SOLVERS[spec.solver.name])
    options = dict(spec.solver.options)
    if "regressor" in accepted:
        options["regressor"] = make_component("regressor", spec.regressor.name, spec.regressor.params, game)
    if "features" in accepted:
        options["features"] = make_component("features", spec.features.name, spec.features.params, game)
    if "abstraction" in accepted and spec.abstraction.name != "none":
        options["abstraction"] = make_component("abstraction", spec.abstraction.name,
                                                spec.abstraction.params, game)
    if "seed" in accepted:
        options["seed"] = spec.run.seed
    try:
        return make_solver(spec.solver.name, game, **options)
    except (ValueError, TypeError) as err:  # a value only the constructor can check
        raise ConfigError(f"solver {spec.solver.name!r}: {err}") from None


def representation_size(solver: CFRSolver) -> int:
    """Values the solver keeps to produce its strategy: table entries, abstract sequences, or the
    regressor's complexity, as reported by its regret store."""
    return int(solver.store.size())
