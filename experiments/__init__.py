"""The rcfr experiment kit: Hydra configs in ``configs/``, one app (`rcfr.experiments.run`), aggregation
(`rcfr.experiments.aggregate`) into tables and plots. See docs/experiments.md."""
