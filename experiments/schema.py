"""Structured configs for the experiment kit, and the validation that runs before any work.

Hydra checks the value types against these dataclasses while composing. Below the root the nodes
are open (not struct), so a mistyped key such as ``run.itertions=5`` or ``regressor.params.leafs=64``
reaches `validate`, which rejects every key the schema or the component does not know, naming the
allowed ones, and checks every name against the library's registries and every number's range, so a
typo fails at start with the field and the allowed values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Dict, Optional, get_type_hints

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from rcfr import SOLVERS, make_rules
from rcfr.options import check_float, check_int, did_you_mean
from rcfr.registry import check_choice, keyword_names
from rcfr.solvers.public_tree import PUBLIC_OPTIONS, PUBLIC_SOLVERS
from rcfr.solvers.rules_cfr import RULES_SOLVERS

from . import components, tracking
from .measures import MEASURES


@dataclass
class GameConfig:
    """`rcfr.load_game(name, compiled=compiled, **params)`: ``compiled`` null compiles a game within the
    compile limit and walks a larger one by its rules; true compiles or refuses; false walks the rules."""

    name: str = "leduc"
    params: Dict[str, Any] = field(default_factory=dict)
    compiled: Optional[bool] = None


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
    # > 0: stop after this many CPU seconds inside solver.run (compilation and evaluations excluded), evaluating at
    # log-spaced CPU times; the numbers then depend on the machine's speed, so such a run is not repeatable bit for bit
    max_cpu_seconds: float = 0.0
    checkpoint_every: int = 0  # also checkpoint every N iterations (0: only at evaluations and at the end)
    checkpoint_seconds: float = 60.0  # ... and whenever this much wall time passed since the last one
    resume: bool = True  # continue from checkpoint.npz in the run directory when its config matches
    progress: Optional[bool] = None  # None: a bar on a terminal, nothing in logs
    policy_format: str = "auto"  # json | npz | auto (npz above JSON_POLICY_LIMIT information sets)
    measure: str = "exploitability"  # exploitability | full_regret | approx_exploitability (rcfr.experiments.measures)
    # options of run.measure=approx_exploitability (rcfr.approx_exploitability): method, budget, seed, samples,
    # evaluation, eps
    approx: Dict[str, Any] = field(default_factory=dict)
    # > 0: the sweep's aggregate plays every pair of final policies of one game against each other, this
    # many play-outs per seating (rcfr.experiments.matches: matches.md, matches.csv); 0: no match table
    matches: int = 0
    # True: run exact evaluation points on a game walked by its rules even when each is estimated to take over
    # an hour (rcfr.budget.walk_estimate); False refuses them before any work, with the estimate
    long_evaluations: bool = False
    # > 1: exact evaluations, the full-regret measure and full-width CFR iterations run as that many shards on
    # Ray workers (rcfr.distributed; docs/distributed.md), the same numbers; ray_address: None = a local Ray
    workers: int = 1
    ray_address: Optional[str] = None
    # > 1: a sampled solver's traversal batches split into this many shards, each from a stream of its own, run on
    # run.workers Ray workers (sampled RCFR(+), dense or lean on the rules, and the Deep CFR family;
    # rcfr.solvers.distributed_sampled): part of the run's numbers, unlike run.workers; 1: the one-process run
    shards: int = 1


POLICY_FORMATS = ("auto", "json", "npz")
#: Above this many information sets `policy_format="auto"` writes the compact binary policy: a JSON
#: policy costs about 100 bytes per information set and seconds to parse per 100,000 sets.
JSON_POLICY_LIMIT = 100_000


@dataclass
class ExperimentConfig:
    game: GameConfig = field(default_factory=GameConfig)
    solver: SolverConfig = field(default_factory=SolverConfig)
    regressor: ComponentConfig = field(default_factory=ComponentConfig)
    features: ComponentConfig = field(default_factory=ComponentConfig)
    abstraction: ComponentConfig = field(default_factory=ComponentConfig)
    run: RunConfig = field(default_factory=RunConfig)
    label: Optional[str] = None  # the curve this run belongs to in tables and plots (default: solver name)
    # experiment tracking: logger name -> its options (configs/logger/, experiments.tracking); not the run's identity
    logger: Dict[str, Any] = field(default_factory=dict)


def register_configs() -> None:
    """Store the schema with every node below the root open, so that `validate` (not Hydra's struct
    error) reports an unknown key, with the allowed ones."""
    node = OmegaConf.structured(ExperimentConfig)

    def open_children(parent: DictConfig) -> None:
        for key in parent:
            child = parent._get_node(key)
            if isinstance(child, DictConfig):
                OmegaConf.set_struct(child, False)
                open_children(child)

    open_children(node)
    ConfigStore.instance().store(name="experiment_schema", node=node)


def check_group_options(config_dir: str, arguments: list[str]) -> None:
    """Refuse a command-line override that picks a config group option that does not exist
    (``solver=cfr++``, ``game=leduk``, ``+experiment=leduc_quik``, ``hydra/launcher=slurmm``) in one
    line naming the allowed options and the closest one, before Hydra composes anything (Hydra's own
    message is ~30 lines of search path). Anything this cannot read is left to Hydra."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra._internal.utils import create_config_search_path
    from hydra.core.override_parser.overrides_parser import OverridesParser

    texts = [a for a in arguments if not a.startswith("-") and "=" in a]
    if not texts:
        return
    try:
        overrides = OverridesParser.create().parse_overrides(texts)
    except Exception:  # noqa: BLE001  (a syntax error: Hydra reports it with its own pointer)
        return
    search_path = create_config_search_path(config_dir)
    for folder in _user_config_dirs(arguments):  # a user's own groups and options count too
        search_path.append("command-line", f"file://{Path(folder).resolve()}")
    loader = ConfigLoaderImpl(config_search_path=search_path)
    for override in overrides:
        group = override.key_or_group
        if override.is_delete() or not loader.repository.group_exists(group):
            continue  # a value such as run.seed=1, not a group choice
        try:
            if override.is_sweep_override():
                values = list(override.sweep_string_iterator())
            elif isinstance(override.value(), list):  # several options at once: logger=[mlflow,tensorboard]
                values = [str(v) for v in override.value()]
            else:
                values = [override.get_value_element_as_str()]
        except Exception:  # noqa: BLE001  (glob(...) and other sweeps Hydra expands itself)
            continue
        allowed = _group_options(loader, group)
        for value in values:
            if value not in allowed and value != "null":
                raise ConfigError(f"{override.input_line}: {group} has no option {value!r}"
                                  f"{did_you_mean(value, allowed)}; allowed: {', '.join(allowed)}")


def _user_config_dirs(arguments: list[str]) -> list[str]:
    """The folders given by Hydra's ``--config-dir DIR`` / ``-cd DIR`` / ``--config-dir=DIR``."""
    folders = []
    for i, argument in enumerate(arguments):
        if argument.startswith("--config-dir="):
            folders.append(argument.partition("=")[2])
        elif argument in ("--config-dir", "-cd") and i + 1 < len(arguments):
            folders.append(arguments[i + 1])
    return folders


def _group_options(loader, group: str) -> list[str]:
    """The options of `group`, with those of its subfolders as ``folder/name`` (``+arm=large_rcfr/...``)."""
    from hydra.core.object_type import ObjectType

    options = list(loader.get_group_options(group))
    for folder in loader.get_group_options(group, results_filter=ObjectType.GROUP):
        options += [f"{folder}/{name}" for name in _group_options(loader, f"{group}/{folder}")]
    return options


class ConfigError(ValueError):
    """A configuration that names something unknown or holds a value out of range."""


#: upper bounds of the run settings: the evaluation schedule is held in memory, iteration counts
#: stay float64-exact in the log-spaced schedule, derived per-player seeds (2 * seed + player) must
#: fit the 32-bit seeds of scikit-learn and LightGBM
RUN_LIMITS = {"iterations": 10 ** 12, "seed": 2 ** 30 - 1, "eval_points": 10_000, "checkpoint_every": 10 ** 12,
              "max_nodes_touched": 10 ** 15, "matches": 10 ** 9, "workers": 10 ** 6,
              "shards": 10 ** 6}


def _check_int(field_name: str, value, low: int, high: int | None = None) -> int:
    try:
        return check_int(field_name, value, low, high)
    except ValueError as err:
        raise ConfigError(str(err)) from None


def _check_keys(node, schema: type, path: str = "") -> None:
    """Every key of `node` must be a field of the dataclass `schema`, recursively (the free-form
    ``params``/``options`` dicts are checked against their component later)."""
    hints = get_type_hints(schema)
    allowed = [f.name for f in fields(schema)]
    unknown = sorted(str(k) for k in node if k not in allowed and not (k == "hydra" and not path))
    if unknown:
        keys = ", ".join(repr(f"{path}{k}") for k in unknown)
        raise ConfigError(f"unknown key(s) {keys}; allowed {'in ' + path[:-1] if path else 'at the top level'}: "
                          f"{', '.join(allowed)}")
    for name in allowed:
        if is_dataclass(hints[name]) and isinstance(node.get(name), (dict, DictConfig)):
            _check_keys(node[name], hints[name], f"{path}{name}.")


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


def _check_approx(run: RunConfig) -> None:
    """``run.approx``: options of ``approx_exploitability`` only, and only for that measure."""
    from rcfr.evaluation.approx import APPROX_OPTIONS, check_approx_options

    if run.approx and run.measure != "approx_exploitability":
        raise ConfigError(f"run.approx sets options of run.measure=approx_exploitability, but run.measure is "
                          f"{run.measure!r}")
    unknown = sorted(set(run.approx) - set(APPROX_OPTIONS))
    if unknown:
        raise ConfigError(f"unknown run.approx key(s) {', '.join(map(repr, unknown))}; allowed: "
                          f"{', '.join(APPROX_OPTIONS)}")
    try:
        check_approx_options(**run.approx)
    except ValueError as err:
        raise ConfigError(f"run.approx: {err}") from None


def validate(cfg) -> ExperimentConfig:
    """Check names, options and ranges without compiling a game or building anything heavy."""
    if not isinstance(cfg, ExperimentConfig):
        _check_keys(cfg, ExperimentConfig)
    try:
        spec = to_spec(cfg)
    except Exception as err:  # omegaconf's messages already carry the full key
        raise ConfigError(str(err)) from None
    run = spec.run
    for name, low in (("iterations", 1), ("seed", 0), ("eval_points", 1), ("checkpoint_every", 0),
                      ("max_nodes_touched", 0), ("matches", 0), ("workers", 1), ("shards", 1)):
        _check_int(f"run.{name}", getattr(run, name), low, RUN_LIMITS[name])
    if run.policy_format not in POLICY_FORMATS:
        raise ConfigError(f"run.policy_format must be one of {', '.join(POLICY_FORMATS)}, got {run.policy_format!r}")
    if run.measure not in MEASURES:
        raise ConfigError(f"run.measure must be one of {', '.join(MEASURES)}, got {run.measure!r}")
    _check_approx(run)
    try:
        tracking.check_options(spec.logger)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    for name in ("checkpoint_seconds", "max_cpu_seconds"):
        try:
            check_float(f"run.{name}", getattr(run, name), 0.0)
        except ValueError:
            raise ConfigError(f"run.{name} must be a finite number >= 0, got {getattr(run, name)!r}") from None
    if run.max_cpu_seconds and run.max_nodes_touched:
        raise ConfigError("run.max_cpu_seconds and run.max_nodes_touched are two budgets for one run: set one of them "
                          "(the other 0)")

    try:  # game rules are cheap to build and check their own parameter values
        make_rules(spec.game.name, **spec.game.params)
    except ValueError as err:
        raise ConfigError(f"game: {err}") from None

    if spec.game.compiled is False:
        check_rules_path(spec)
    solvers = SOLVERS
    check = _choice("solver.name", solvers)
    check(spec.solver.name)
    accepted = keyword_names(solvers[spec.solver.name])[1:]
    if spec.solver.name in PUBLIC_SOLVERS:  # `make_solver` may take Bluff's public-tree walk for these
        accepted += ["walk", *PUBLIC_OPTIONS]
    if spec.game.compiled is False and spec.solver.name in RULES_SOLVERS:  # CFR over the rules: its own options
        accepted += [k for k in keyword_names(RULES_SOLVERS[spec.solver.name])[1:] if k not in accepted]
    injected = [k for k in components.INJECTED_OPTIONS if k in accepted]
    kit_options = [k for k in components.KIT_OPTIONS if k not in accepted]
    _check_params("solver.options", "solver", spec.solver.name, spec.solver.options,
                  [k for k in accepted if k not in injected] + kit_options)
    _check_average_space(spec, kit_options)

    for group, table in (("regressor", components.REGRESSORS), ("features", components.FEATURES),
                         ("abstraction", components.ABSTRACTIONS)):
        component = getattr(spec, group)
        _choice(f"{group}.name", table)(component.name)
        _check_params(f"{group}.params", group, component.name, component.params, table[component.name])

    needs_regressor = "regressor" in accepted
    if needs_regressor and spec.regressor.name == "none":
        raise ConfigError(f"solver {spec.solver.name!r} needs a regressor; set regressor to one of: "
                          f"{', '.join(k for k in components.REGRESSORS if k != 'none')}")
    if not needs_regressor and (spec.regressor.name != "none" or spec.features.name != "none"):
        takers = [n for n, f in solvers.items() if "regressor" in keyword_names(f)]
        raise ConfigError(f"solver {spec.solver.name!r} takes no regressor or features (set regressor=none "
                          f"features=none); solvers that do: {', '.join(takers) or 'none available yet'}")
    if needs_regressor and spec.features.name == "none":
        raise ConfigError(f"solver {spec.solver.name!r} needs features; set features to one of: "
                          f"{', '.join(k for k in components.FEATURES if k != 'none')}")
    for field_name, params in (("regressor.params", spec.regressor.params), ("solver.options", spec.solver.options)):
        for key, value in params.items():
            parse_share(f"{field_name}.{key}", value)
    for kind, key in (("card", "partition"), ("action", "wagers")):
        if spec.abstraction.name == kind and key not in spec.abstraction.params:
            raise ConfigError(f"abstraction {kind!r} needs abstraction.params.{key}")
    return spec


def check_rules_path(spec: ExperimentConfig) -> None:
    """What a game walked by its rules (``game.compiled=false``, or a game above the compile limit) cannot do:
    abstractions other than the code-keyed recall ones (`rcfr.abstraction.CODE_ABSTRACTIONS`) need the
    compiled tree, a share ("1%") needs the game's sequence count, which the rules path never takes, and
    solvers that read the compiled arrays, or options a walk of the rules cannot serve, are refused as the solvers
    refuse them (`rcfr.solvers.capabilities`)."""
    from rcfr.abstraction import CODE_ABSTRACTIONS
    if spec.abstraction.name not in ("none", *CODE_ABSTRACTIONS):
        raise ConfigError(f"abstraction {spec.abstraction.name!r} needs the compiled game, and this game is walked by "
                          f"its rules; set abstraction to none or one of {', '.join(CODE_ABSTRACTIONS)}, or "
                          f"game.compiled=true for a game within the compile limit")
    if spec.run.policy_format == "json":
        raise ConfigError("run.policy_format='json' is for compiled games; a game walked by its rules writes its policy "
                          "by information-set code: use run.policy_format=npz (or auto)")
    for field_name, params in (("regressor.params", spec.regressor.params), ("solver.options", spec.solver.options)):
        for key, value in params.items():
            if parse_share(f"{field_name}.{key}", value) is not None:
                raise ConfigError(f"{field_name}.{key}={value!r} is a share of the game's sequences, which a game "
                                  f"walked by its rules does not count; give a number")
    name = spec.solver.name
    from rcfr.solvers.capabilities import rules_refusal  # the table the solvers refuse by
    why = rules_refusal(name, spec.solver.options, _defaults(SOLVERS[name]), prefix="solver.options.")
    if why is not None:
        raise ConfigError(f"solver {name!r} on a game walked by its rules: {why}, or game.compiled=true for a game "
                          f"within the compile limit")


def _defaults(solver) -> dict:
    """The keyword defaults of a solver's signature."""
    import inspect
    return {k: p.default for k, p in inspect.signature(solver).parameters.items() if p.default is not p.empty}


def _check_average_space(spec: ExperimentConfig, kit_options: list[str]) -> None:
    """``solver.options.average_space`` of a full-width solver is the kit's (the sampled solvers check
    their own): full or abstract, and abstract only on an information-set abstraction."""
    if "average_space" not in kit_options or "average_space" not in spec.solver.options:
        return
    space = spec.solver.options["average_space"]
    _choice("solver.options.average_space", components.AVERAGE_SPACES)(space)
    if space == "abstract" and spec.abstraction.name in ("none", "action"):
        raise ConfigError(f"solver.options.average_space='abstract' averages over merged information sets, so it "
                          f"needs an information-set abstraction (abstraction={spec.abstraction.name!r} has none); "
                          f"choose one of: {', '.join(k for k in components.ABSTRACTIONS if k not in ('none', 'action'))}")


#: a count written as a share of the game: "1%", "0.1 %"
_SHARE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*%\s*$")


def parse_share(field_name: str, value) -> float | None:
    """The fraction a value like ``"1%"`` names (0.01); None for a value that is not a string ending in
    "%". A count given so is `share` x the game's sequences, both players together (`resolve_shares`)."""
    if not (isinstance(value, str) and value.strip().endswith("%")):
        return None
    match = _SHARE.match(value)
    share = float(match.group(1)) / 100 if match else None
    if share is None or not 0.0 < share <= 1.0:
        raise ConfigError(f"{field_name} must be a share of the game's sequences in (0%, 100%] such as '1%', "
                          f"got {value!r}")
    return share


def resolve_shares(field_name: str, params: dict, num_sequences: int) -> dict:
    """`params` with each share (``"1%"``) replaced by that share of the game's `num_sequences`, split
    evenly between the two players: the solver builds one component per player from these parameters,
    so a best-first tree with ``max_leaves: "1%"`` gives both players' trees 1% of the sequences together."""
    out = dict(params)
    for key, value in params.items():
        share = parse_share(f"{field_name}.{key}", value)
        if share is not None:
            out[key] = max(1, round(share * num_sequences / 2))
    return out


def _choice(field_name: str, table):
    def check(value):
        try:
            return check_choice(field_name, value, list(table))
        except ValueError as err:
            raise ConfigError(str(err)) from None
    return check
