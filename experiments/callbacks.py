"""Hydra callbacks: validate a run, or every job of a sweep and its launcher, before anything starts
(and before Hydra creates a run directory), and aggregate the sweep directory (table + plots) when
the multirun ends."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"


def sweep_jobs(config: DictConfig) -> list[list[str]]:
    """The override lists of the jobs the basic sweeper will launch, expanded the way it does
    (sweeper params first, then the command line, which wins on the same key)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    params = config.hydra.sweeper.get("params") or {}
    arguments = [f"{k}={v}" for k, v in params.items()] + list(config.hydra.overrides.task)
    parser = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
    jobs = []
    for batch in BasicSweeper.split_arguments(parser.parse_overrides(arguments), None):
        jobs.extend(batch)
    return jobs


def launcher_problem(config: DictConfig) -> str | None:
    """Why the configured launcher cannot start here, in one line (None: nothing known against it).
    Checked before the sweep, so that a missing plugin or cluster is a message, not a traceback."""
    launcher = config.hydra.launcher
    target = str(launcher.get("_target_", ""))
    choice = config.hydra.runtime.choices.get("hydra/launcher", target)
    module = target.rsplit(".", 1)[0]
    try:
        importlib.import_module(module)
    except ImportError:
        package = module.split(".")[1].replace("_", "-") if module.startswith("hydra_plugins.") else module
        return f"hydra/launcher={choice} needs the {package} plugin: pip install {package}"
    if target.endswith(".SlurmLauncher") and shutil.which("srun") is None:
        return (f"hydra/launcher={choice} submits to Slurm, and there is no Slurm here (no 'srun' on PATH): "
                "run it on a Slurm login node, or try the same path locally with hydra/launcher=submitit_local")
    if target.endswith(".RayLauncher") and launcher.ray.init.get("address"):
        import ray
        address = launcher.ray.init.address
        try:
            ray.init(address=address, log_to_driver=False)
        except ConnectionError:
            return (f"hydra/launcher={choice} connects to a running Ray cluster (address {address!r}) and found "
                    "none: start one (ray start --head), or use hydra/launcher=ray for a local Ray instance")
        finally:
            ray.shutdown()
    return None


def _task_config(config: DictConfig) -> DictConfig:
    """The job's own config: everything but the ``hydra`` node."""
    return OmegaConf.masked_copy(config, [k for k in config if k != "hydra"])


def _check(cfg: DictConfig, where: str = "", run_dir: str | None = None, build_solver: bool = True) -> None:
    """Validate `cfg` and build its solver (constructors find the values validation cannot; skipped with
    ``build_solver=False``, for presets over games so large that building is as costly as a run); with
    `run_dir`, also refuse a directory that holds another configuration's run."""
    from . import build
    from .runner import check_owner, identity
    from .schema import ConfigError, validate

    try:
        spec = validate(cfg)
        if build_solver:
            build.make_setup(spec, build.make_game(spec))
        if run_dir is not None:
            check_owner(Path(run_dir), identity(spec))
    except ConfigError as err:
        raise SystemExit(f"config error{where}: {err}") from None


class Validate(Callback):
    """Compose, validate and build each job's solver before any job runs (and, for a single run,
    before Hydra creates its directory or writes its own files into it), so that a bad value — even
    one only a constructor can find — or another configuration's directory stops the whole run or
    sweep before any work and leaves no empty run folder behind. ``build_solvers: false`` (presets
    over games of 1e8 histories) validates a sweep's configs only; each job still builds its own
    solver before it starts."""

    def __init__(self, build_solvers: bool = True):
        self.build_solvers = build_solvers

    def on_run_start(self, config: DictConfig, **kwargs) -> None:
        _check(_task_config(config), run_dir=config.hydra.run.dir)  # before Hydra writes .hydra/ there
        _prepare_tracking(config, Path(config.hydra.run.dir).parent)

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        problem = launcher_problem(config)
        if problem:
            raise SystemExit(f"launcher error: {problem}")
        _prepare_tracking(config, Path(config.hydra.sweep.dir))
        if config.hydra.sweeper.get("_target_") != BASIC_SWEEPER:
            _check_search_space(config)
            return  # other sweepers choose their jobs as they go; each job still validates itself
        from hydra import compose

        for job in sweep_jobs(config):
            _check(compose(config_name=config.hydra.job.config_name, overrides=job),
                   f" in sweep job {' '.join(job)}", build_solver=self.build_solvers)


def _check_search_space(config: DictConfig) -> None:
    """An Optuna search space with an empty range stops the sweep before its first trial."""
    from .tuning import check_search_space, is_optuna, search_space

    if is_optuna(config.hydra.sweeper):
        try:
            check_search_space(search_space(config))
        except ValueError as err:
            raise SystemExit(f"config error: {err}") from None


def _loggers(config: DictConfig) -> dict:
    """The chosen loggers and their options, as plain data (none: an empty dict)."""
    node = config.get("logger")
    return OmegaConf.to_container(node, resolve=True) if node else {}


def _prepare_tracking(config: DictConfig, folder: Path) -> None:
    """Make the chosen loggers' stores once, here, before any job (`experiments.tracking.prepare`)."""
    loggers = _loggers(config)
    if loggers:
        from .tracking import check_options, prepare
        try:
            check_options(loggers)
        except ValueError as err:
            raise SystemExit(f"config error: {err}") from None
        try:
            prepare(loggers, folder)
        except Exception as err:  # noqa: BLE001  (a store that cannot be made: one line, before any work)
            raise SystemExit(f"config error: logger: cannot open the tracking store for {folder}: {err}") from None


class AggregateMultirun(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        from .aggregate import aggregate, report
        from .matches import write_requested
        from .tracking import log_sweep
        from .tuning import is_optuna
        from .tuning import report as study_report

        result = aggregate(Path(config.hydra.sweep.dir))
        if result is not None:
            print(report(result))
            log_sweep(_loggers(config), result.directory, [p for p in result.files if p.suffix != ".svg"])
            for path in write_requested(Path(config.hydra.sweep.dir)):
                print(f"matches: {path}")
        if is_optuna(config.hydra.sweeper):
            print(study_report(config))
