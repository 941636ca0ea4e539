"""Hydra callback: when a multirun ends, aggregate its directory and print the table and plot paths."""

from __future__ import annotations

from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig


class AggregateMultirun(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        from .aggregate import aggregate, report

        sweep_dir = Path(config.hydra.sweep.dir)
        result = aggregate(sweep_dir)
        if result is not None:
            print(report(result))
