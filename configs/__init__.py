"""The experiment kit's Hydra configs, shipped as package data: Hydra finds them on its package search path
(``pkg://rcfr.configs``); `CONFIG_DIR` is the same folder on disk, for the kit's own listings of groups."""

from pathlib import Path

#: the kit's primary config folder (``config.yaml`` and its groups)
CONFIG_DIR = Path(__file__).resolve().parent
#: the search app's primary config folder
SEARCH_CONFIG_DIR = CONFIG_DIR / "search"
