"""The disk cache of compiled games: one memory-mapped file per game and fingerprint."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..files import atomic_write
from ..games.base import GameRules
from .enumeration import compile_game
from .fingerprint import FORMAT_VERSION, game_fingerprint
from .model import _HISTORY_ARRAYS, _INFOSET_ARRAYS, Game


def cache_dir() -> Path | None:
    """Where compiled trees are cached; ``RCFR_CACHE=off`` (or 0/false/no) disables the cache,
    ``RCFR_CACHE=/some/dir`` moves it. Default: ``$XDG_CACHE_HOME/rcfr`` or ``~/.cache/rcfr``."""
    setting = os.environ.get("RCFR_CACHE", "")
    if setting.lower() in ("0", "off", "false", "no"):
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if base else Path.home() / ".cache") / "rcfr"


# The cache file: MAGIC, the header's length (8 bytes, little-endian), a JSON header (format version,
# fingerprint, and each array's dtype, shape and offset), then the raw arrays, each 64-byte aligned,
# so that they are memory-mapped rather than read.
MAGIC = b"RCFRGAME"
_ALIGN = 64


def _cache_path(rules: GameRules, directory: Path) -> Path:
    return directory / f"{rules.name}-{game_fingerprint(rules)}.game"


def save_game(game: Game, path: Path) -> None:
    """Write the game's arrays with its fingerprint, atomically."""
    arrays = game.arrays()
    entries, offset = [], 0
    for name, a in arrays.items():
        entries.append([name, a.dtype.str, list(a.shape), offset])
        offset += -(-a.nbytes // _ALIGN) * _ALIGN
    header = json.dumps({"format": FORMAT_VERSION, "fingerprint": game.fingerprint,
                         "game": game.rules.description(), "arrays": entries}).encode()
    start = -(-(len(MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN

    def write(f):
        f.write(MAGIC + len(header).to_bytes(8, "little") + header)
        f.write(b"\0" * (start - len(MAGIC) - 8 - len(header)))
        for a in arrays.values():
            data = np.ascontiguousarray(a)
            f.write(memoryview(data).cast("B") if data.nbytes else b"")
            f.write(b"\0" * (-data.nbytes % _ALIGN))

    atomic_write(path, write)


def open_game(rules: GameRules, path: Path) -> Game | None:
    """The cached game at `path`, memory-mapped (copy-on-write), or None unless the file is complete and
    carries this rules' fingerprint (a file copied under another game's name is refused)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                return None
            length = int.from_bytes(f.read(8), "little")
            if length > size:
                return None
            header = json.loads(f.read(length))
        if header.get("format") != FORMAT_VERSION or header.get("fingerprint") != game_fingerprint(rules):
            return None
        start = -(-(len(MAGIC) + 8 + length) // _ALIGN) * _ALIGN
        arrays = {}
        for name, dtype, shape, offset in header["arrays"]:
            dtype = np.dtype(dtype)
            count = int(np.prod(shape))
            if start + offset + count * dtype.itemsize > size:
                return None
            # copy-on-write: pages are shared with the file until written (the file never changes),
            # and the arrays have the same (writeable) type as freshly compiled ones for numba
            arrays[name] = (np.asarray(np.memmap(path, dtype=dtype, mode="c", offset=start + offset, shape=tuple(shape)))
                            if count else np.empty(shape, dtype))
        if set(arrays) != set(_HISTORY_ARRAYS + _INFOSET_ARRAYS):
            return None
        return Game(rules=rules, **arrays)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None  # a damaged entry is rebuilt


def load_compiled(rules: GameRules, cache: bool = True, max_histories: int | None = None) -> Game:
    """Compile `rules`, reusing the on-disk cache when allowed."""
    directory = cache_dir() if cache else None
    if directory is None:
        return compile_game(rules, max_histories)
    path = _cache_path(rules, directory)
    if path.exists():
        game = open_game(rules, path)
        if game is not None:
            return game
    game = compile_game(rules, max_histories)
    try:
        save_game(game, path)
    except OSError:
        pass  # a read-only cache is not an error: the game is simply not cached
    return game
