"""Structured configs for the experiment kit, and the validation that runs before any work.

Hydra checks the shape (known keys, value types) against these dataclasses while composing;
`validate` then checks every name against the library's registries and every option against the
options its target accepts, so a typo fails at start with the field and the allowed values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from rcfr.registry import check_choice, keyword_names


@dataclass
class GameConfig:
    """`rcfr.load_game(name, **params)`."""

    name: str = "leduc"
    params: Dict[str, Any] = field(default_factory=dict)


@dataclass
class SolverConfig:
    """`rcfr.make_solver(name, game, **options)`; regressor/features/abstraction objects are added."""

    name: str = "cfr+"
    options: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ComponentConfig:
    """A named component with parameters: a regressor, a feature extractor or an abstraction."""

    name: str = "none"
    params: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RunConfig:
    """How one run is driven: length, seed, evaluation schedule, checkpoints, progress bar."""

    iterations: int = 1000
    seed: int = 0
    eval_points: int = 20  # log-spaced evaluation iterations (the last iteration is always evaluated)
    max_nodes_touched: int = 0  # > 0: stop at this many nodes touched, evaluating at log-spaced node counts
    checkpoint_every: int = 0  # also checkpoint every N iterations (0: only at evaluations and at the end)
    checkpoint_seconds: float = 60.0  # ... and whenever this much wall time passed since the last one
    resume: bool = True  # continue from checkpoint.npz in the run directory when its config matches
    progress: Optional[bool] = None  # None: a bar on a terminal, nothing in logs


@dataclass
class ExperimentConfig:
    game: GameConfig = field(default_factory=GameConfig)
    solver: SolverConfig = field(default_factory=SolverConfig)
    regressor: ComponentConfig = field(default_factory=ComponentConfig)
    features: ComponentConfig = field(default_factory=ComponentConfig)
    abstraction: ComponentConfig = field(default_factory=ComponentConfig)
    run: RunConfig = field(default_factory=RunConfig)
    label: Optional[str] = None  # the curve this run belongs to in tables and plots (default: solver name)


def register_configs() -> None:
    ConfigStore.instance().store(name="experiment_schema", node=ExperimentConfig)


class ConfigError(ValueError):
    """A configuration that names something unknown or holds a value out of range."""


def _check_int(field_name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{field_name} must be an integer >= {low}, got {value!r}")
    return value


def _check_params(field_name: str, kind: str, name: str, params: dict, allowed: list[str]) -> None:
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ConfigError(f"unknown {field_name} key(s) {', '.join(map(repr, unknown))} for {kind} {name!r}; "
                          f"allowed: {', '.join(allowed) or 'none'}")


def to_spec(cfg: DictConfig | ExperimentConfig | dict) -> ExperimentConfig:
    """The composed config as a plain, resolved `ExperimentConfig` (shape errors name the key)."""
    if isinstance(cfg, ExperimentConfig):
        return cfg
    base = OmegaConf.structured(ExperimentConfig)
    merged = OmegaConf.merge(base, cfg if isinstance(cfg, DictConfig) else OmegaConf.create(cfg))
    return OmegaConf.to_object(merged)


def validate(cfg) -> ExperimentConfig:
    """Check names, options and ranges without compiling a game or building anything heavy."""
    from . import build  # the registries the kit knows about

    try:
        spec = to_spec(cfg)
    except Exception as err:  # omegaconf's messages already carry the full key
        raise ConfigError(str(err)) from None
    run = spec.run
    _check_int("run.iterations", run.iterations, 1)
    _check_int("run.seed", run.seed, 0)
    _check_int("run.eval_points", run.eval_points, 1)
    _check_int("run.max_nodes_touched", run.max_nodes_touched, 0)
    _check_int("run.checkpoint_every", run.checkpoint_every, 0)
    if not isinstance(run.checkpoint_seconds, (int, float)) or run.checkpoint_seconds < 0:
        raise ConfigError(f"run.checkpoint_seconds must be a number >= 0, got {run.checkpoint_seconds!r}")

    try:  # game rules are cheap to build and check their own parameter values
        build.make_rules(spec.game.name, **spec.game.params)
    except ValueError as err:
        raise ConfigError(f"game: {err}") from None

    solvers = build.solver_registry()
    check = _choice("solver.name", solvers)
    check(spec.solver.name)
    accepted = keyword_names(solvers[spec.solver.name])[1:]
    injected = [k for k in build.INJECTED_OPTIONS if k in accepted]
    _check_params("solver.options", "solver", spec.solver.name, spec.solver.options,
                  [k for k in accepted if k not in injected])

    for group, table in (("regressor", build.REGRESSORS), ("features", build.FEATURES),
                         ("abstraction", build.ABSTRACTIONS)):
        component = getattr(spec, group)
        _choice(f"{group}.name", table)(component.name)
        _check_params(f"{group}.params", group, component.name, component.params, table[component.name])

    needs_regressor = "regressor" in accepted
    if needs_regressor and spec.regressor.name == "none":
        raise ConfigError(f"solver {spec.solver.name!r} needs a regressor; set regressor to one of: "
                          f"{', '.join(k for k in build.REGRESSORS if k != 'none')}")
    if not needs_regressor and (spec.regressor.name != "none" or spec.features.name != "none"):
        takers = [n for n, f in solvers.items() if "regressor" in keyword_names(f)]
        raise ConfigError(f"solver {spec.solver.name!r} takes no regressor or features (set regressor=none "
                          f"features=none); solvers that do: {', '.join(takers) or 'none available yet'}")
    if needs_regressor and spec.features.name == "none":
        raise ConfigError(f"solver {spec.solver.name!r} needs features; set features to one of: "
                          f"{', '.join(k for k in build.FEATURES if k != 'none')}")
    for kind, key in (("card", "partition"), ("action", "wagers")):
        if spec.abstraction.name == kind and key not in spec.abstraction.params:
            raise ConfigError(f"abstraction {kind!r} needs abstraction.params.{key}")
    return spec


def _choice(field_name: str, table):
    def check(value):
        try:
            return check_choice(field_name, value, list(table))
        except ValueError as err:
            raise ConfigError(str(err)) from None
    return check
