"""Compiled game trees: a game enumerated once into flat NumPy arrays, cached on disk.

One job per module: `model` (the `Game` arrays and each player's sequence form), `enumeration`
(rules into arrays; its numba fast path is `rcfr.compiler`, its size limit `rcfr.budget`),
`fingerprint` (a game's identity) and `cache` (the file format and the disk cache). This package
hands their public names on (``rcfr.tree.Game``); private helpers stay in their modules.
"""

from ..budget import COMPILE_BYTES, RESIDENT_BYTES, available_memory, history_limit, max_histories
from .cache import LAYOUT, MAGIC, DamagedEntry, cache_dir, load_compiled, open_game, read_game, save_game
from .enumeration import RULE_METHODS, compile_game
from .fingerprint import FORMAT_VERSION, game_fingerprint, rules_fingerprint
from .model import Game, PlayerView, settle

__all__ = ["COMPILE_BYTES", "FORMAT_VERSION", "LAYOUT", "MAGIC", "RESIDENT_BYTES", "RULE_METHODS", "DamagedEntry",
           "Game", "PlayerView", "available_memory", "cache_dir", "compile_game", "game_fingerprint",
           "history_limit", "load_compiled", "max_histories", "open_game", "read_game", "rules_fingerprint",
           "save_game", "settle"]
