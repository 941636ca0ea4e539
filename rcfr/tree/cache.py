"""The disk cache of compiled games: one memory-mapped file per game and fingerprint."""

from __future__ import annotations

import json
import os
import warnings
import zlib
from pathlib import Path

import numpy as np

from ..files import atomic_write
from ..games.base import GameRules
from .enumeration import compile_game
from .fingerprint import FORMAT_VERSION, game_fingerprint
from .model import _HISTORY_ARRAYS, _INFOSET_ARRAYS, Game


def cache_dir() -> Path | None:
    """Where compiled trees are cached; ``RCFR_CACHE=off`` (or none/0/false/no) disables the cache,
    ``RCFR_CACHE=/some/dir`` (``~`` expanded) moves it. Default: ``$XDG_CACHE_HOME/rcfr`` or
    ``~/.cache/rcfr``."""
    setting = os.environ.get("RCFR_CACHE", "").strip()
    if setting.lower() in OFF:
        return None
    if setting:
        return Path(setting).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "rcfr"


#: Values of ``RCFR_CACHE`` that turn the cache off (case-insensitive).
OFF = ("0", "off", "none", "false", "no")

# The cache file: MAGIC, the header's length (8 bytes, little-endian), a JSON header (format version,
# fingerprint, each array's dtype, shape and offset, and a CRC-32 checksum), then the raw arrays, each
# 64-byte aligned, so that they are memory-mapped rather than read. The checksum covers the array
# table of the header and every byte after it, so one flipped bit anywhere that shapes the arrays is
# seen on open, and the entry is rebuilt.
MAGIC = b"RCFRGAME"
_ALIGN = 64
#: Version of the file layout (not of the arrays, which `FORMAT_VERSION` and the fingerprint cover):
#: files without a checksum (layout 1) are rebuilt once.
LAYOUT = 2
_CHUNK = 1 << 24  # bytes read at a time while verifying


class DamagedEntry(Exception):
    """A cache file that cannot be this game's: why, in words (the entry is then rebuilt)."""


def _cache_path(rules: GameRules, directory: Path) -> Path:
    return directory / f"{rules.name}-{game_fingerprint(rules)}.game"


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _table_bytes(entries) -> bytes:
    """The array table as the checksum sees it (canonical JSON)."""
    return json.dumps(entries, separators=(",", ":")).encode()


def _layout(arrays: dict[str, np.ndarray]) -> list:
    """Each array's [name, dtype, shape, offset from the data start], in the order they are written."""
    entries, offset = [], 0
    for name, a in arrays.items():
        entries.append([name, a.dtype.str, list(a.shape), offset])
        offset += _aligned(a.nbytes)
    return entries


def save_game(game: Game, path: Path) -> None:
    """Write the game's arrays with its fingerprint and their checksum, atomically."""
    arrays = {name: np.ascontiguousarray(a) for name, a in game.arrays().items()}
    entries = _layout(arrays)
    crc = zlib.crc32(_table_bytes(entries))
    for a in arrays.values():
        crc = zlib.crc32(memoryview(a).cast("B") if a.nbytes else b"", crc)
        crc = zlib.crc32(b"\0" * (-a.nbytes % _ALIGN), crc)
    header = json.dumps({"format": FORMAT_VERSION, "layout": LAYOUT, "fingerprint": game.fingerprint,
                         "game": game.rules.description(), "arrays": entries, "crc32": crc}).encode()
    start = _aligned(len(MAGIC) + 8 + len(header))

    def write(f):
        f.write(MAGIC + len(header).to_bytes(8, "little") + header)
        f.write(b"\0" * (start - len(MAGIC) - 8 - len(header)))
        for a in arrays.values():
            f.write(memoryview(a).cast("B") if a.nbytes else b"")
            f.write(b"\0" * (-a.nbytes % _ALIGN))

    atomic_write(path, write)


def _read_header(rules: GameRules, f, size: int) -> tuple[list, int, int]:
    """The array table, the checksum and the data's start, checked against this game and the file's size."""
    if f.read(len(MAGIC)) != MAGIC:
        raise DamagedEntry("not a compiled game")
    length = int.from_bytes(f.read(8), "little")
    if length > size:
        raise DamagedEntry("truncated header")
    try:
        header = json.loads(f.read(length))
    except (ValueError, UnicodeDecodeError):
        raise DamagedEntry("unreadable header") from None
    if not isinstance(header, dict):
        raise DamagedEntry("header is not a JSON object")
    if header.get("format") != FORMAT_VERSION or header.get("layout") != LAYOUT:
        raise DamagedEntry("written by another version")
    if header.get("fingerprint") != game_fingerprint(rules):
        raise DamagedEntry("another game's file")
    entries, crc = header.get("arrays"), header.get("crc32")
    if not isinstance(crc, int) or not isinstance(entries, list):
        raise DamagedEntry("header lacks the array table or the checksum")
    names = [e[0] if isinstance(e, list) and len(e) == 4 else None for e in entries]
    if sorted(map(str, names)) != sorted(_HISTORY_ARRAYS + _INFOSET_ARRAYS):
        raise DamagedEntry("header names other arrays")
    start = _aligned(len(MAGIC) + 8 + length)
    try:
        rebuilt = [[name, np.dtype(dtype).str, [int(n) for n in shape], offset] for name, dtype, shape, offset in entries]
        end = start + sum(_aligned(np.dtype(d).itemsize * int(np.prod(s))) for _, d, s, _ in rebuilt)
    except (TypeError, ValueError):
        raise DamagedEntry("header describes arrays that cannot be") from None
    if rebuilt != entries or _layout_of(rebuilt) != entries or end != size:
        raise DamagedEntry("header's array table does not match the file")
    return rebuilt, crc, start


def _layout_of(entries: list) -> list:
    """The table `_layout` would write for arrays of these names, dtypes and shapes."""
    table, offset = [], 0
    for name, dtype, shape, _ in entries:
        table.append([name, dtype, shape, offset])
        offset += _aligned(np.dtype(dtype).itemsize * int(np.prod(shape)))
    return table


def _verify(f, entries: list, crc: int, start: int) -> None:
    """Raise DamagedEntry unless the CRC-32 of the array table and of the data matches the header's.
    Reads the file (not the mapping), so the game's pages stay unmapped until a solver touches them."""
    expected, crc = crc, zlib.crc32(_table_bytes(entries))
    remaining = f.seek(0, os.SEEK_END) - start
    f.seek(start)
    buffer = bytearray(min(_CHUNK, remaining))  # a small game reads in one small buffer
    view = memoryview(buffer)
    while True:
        n = f.readinto(buffer)
        if not n:
            break
        crc = zlib.crc32(view[:n], crc)
    if crc != expected:
        raise DamagedEntry("checksum mismatch: the data changed after it was written")


def read_game(rules: GameRules, path: Path, verify: bool = True) -> Game:
    """The cached game at `path`, memory-mapped (copy-on-write); raises DamagedEntry, saying why, unless
    the file is complete, carries this rules' fingerprint and (with `verify`) its checksum matches."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        entries, crc, start = _read_header(rules, f, size)
        if verify:
            _verify(f, entries, crc, start)
    arrays = {}
    for name, dtype, shape, offset in entries:
        # copy-on-write: pages are shared with the file until written (the file never changes),
        # and the arrays have the same (writeable) type as freshly compiled ones for numba
        arrays[name] = (np.asarray(np.memmap(path, dtype=dtype, mode="c", offset=start + offset, shape=tuple(shape)))
                        if int(np.prod(shape)) else np.empty(shape, dtype))
    game = Game(rules=rules, **arrays)
    n, m = game.num_histories, game.num_infosets
    if any(len(getattr(game, k)) != n for k in _HISTORY_ARRAYS) or any(
            len(getattr(game, k)) != m for k in _INFOSET_ARRAYS):
        raise DamagedEntry("arrays of unequal lengths")
    return game


def open_game(rules: GameRules, path: Path, verify: bool = True) -> Game | None:
    """The cached game at `path` (see `read_game`), or None if the file cannot be this game's."""
    try:
        return read_game(rules, path, verify)
    except (OSError, DamagedEntry):
        return None


def load_compiled(rules: GameRules, cache: bool = True, max_histories: int | None = None) -> Game:
    """Compile `rules`, reusing the on-disk cache when allowed; a damaged entry is rebuilt, with a warning."""
    directory = cache_dir() if cache else None
    if directory is None:
        return compile_game(rules, max_histories)
    path = _cache_path(rules, directory)
    if path.exists():
        try:
            return read_game(rules, path)
        except DamagedEntry as why:
            if str(why) != "written by another version":
                warnings.warn(f"rebuilding the cached game {path} ({why})", stacklevel=2)
        except OSError:
            pass
    game = compile_game(rules, max_histories)
    try:
        save_game(game, path)
    except OSError:
        pass  # a read-only cache is not an error: the game is simply not cached
    return game
