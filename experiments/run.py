"""The Hydra app: ``rcfr-run [overrides]`` runs one configuration into its run
directory; ``-m`` (or an experiment preset) sweeps, and the multirun's results are aggregated."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from rcfr import configs

from .arms import register_arms
from .runner import Interrupted, run_experiment
from .schema import ConfigError, check_group_options, register_configs
from .tuning import is_optuna

register_configs()
register_arms()
log = logging.getLogger("rcfr.experiments")
CONFIG_DIR = str(configs.CONFIG_DIR)


@hydra.main(version_base="1.3", config_path="pkg://rcfr.configs", config_name="config")
def main(cfg: DictConfig) -> float:
    hydra_cfg = HydraConfig.get()
    run_dir = Path(hydra_cfg.runtime.output_dir)
    try:
        summary = run_experiment(cfg, run_dir)
    except ConfigError as err:
        if is_optuna(hydra_cfg.sweeper):
            raise  # an Optuna trial with a bad value: the sweeper records it as failed and goes on
        raise SystemExit(f"config error: {err}") from None
    except Interrupted as stop:
        if hydra_cfg.mode.name == "MULTIRUN":
            hint = f"rerun the same command with hydra.sweep.dir={hydra_cfg.sweep.dir}"
        else:
            hint = f"rcfr-run {' '.join(hydra_cfg.overrides.task)} hydra.run.dir={run_dir}"
        print(f"\n{stop}\nresume: {hint}", file=sys.stderr)
        sys.exit(130)
    if hydra_cfg.mode.name != "MULTIRUN":
        print(f"{summary['label']}: exploitability {summary['exploitability']:.6g} chips "
              f"({summary['exploitability_mbb']:.4g} mbb/g) after {summary['iteration']} iterations, "
              f"{summary['seconds']:.3g} s solving (+ {summary['compile_seconds']:.2g} s warm-up: compilation or "
              f"its cache); results in {run_dir}")
    return summary["exploitability"]


def cli() -> None:
    """`main` behind a check of the command line's config group choices (one line, not Hydra's 30)."""
    try:
        check_group_options(CONFIG_DIR, sys.argv[1:])
    except ConfigError as err:
        raise SystemExit(f"config error: {err}") from None
    main()


if __name__ == "__main__":
    cli()
