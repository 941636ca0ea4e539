"""The search app's Hydra configs (``pkg://rcfr.configs.search``)."""
