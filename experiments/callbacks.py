"""Hydra callbacks: validate every job of a sweep before the first one starts, and aggregate the
sweep directory (table + plots) when the multirun ends."""

from __future__ import annotations

from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

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


class ValidateSweep(Callback):
    """Compose, validate and build each job's solver before any job runs, so that a bad value — even
    one only a constructor can find — stops the whole sweep before any work. ``build_solvers: false``
    (presets over games of 1e8 histories, where building every job's solver is as costly as a run)
    validates the configs only; each job still builds its own solver before it starts."""

    def __init__(self, build_solvers: bool = True):
        self.build_solvers = build_solvers

    def on_multirun_start(self, config: DictConfig, **kwargs) -> None:
        if config.hydra.sweeper.get("_target_") != BASIC_SWEEPER:
            return  # other sweepers choose their jobs as they go; each job still validates itself
        from hydra import compose

        from . import build
        from .schema import ConfigError, validate

        jobs = sweep_jobs(config)
        for job in jobs:
            try:
                spec = validate(compose(config_name=config.hydra.job.config_name, overrides=job))
                if self.build_solvers:
                    build.make_setup(spec, build.make_game(spec))
            except ConfigError as err:
                raise SystemExit(f"config error in sweep job {' '.join(job)}: {err}") from None


class AggregateMultirun(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        from .aggregate import aggregate, report

        result = aggregate(Path(config.hydra.sweep.dir))
        if result is not None:
            print(report(result))
