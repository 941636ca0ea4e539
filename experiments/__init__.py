"""The rcfr experiment kit: Hydra configs in ``configs/``, one app (`experiments.run`), aggregation
(`experiments.aggregate`) into tables and plots. See docs/experiments.md."""
