"""Atomic file writes: a reader never sees a half-written result, checkpoint or cache entry."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Read once at import: os.umask can only be read by setting it, which races with other threads.
_UMASK = _read_umask()


def atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], Any]) -> None:
    """Write through `write(fileobj)` into a temporary file beside `path`, then rename it into place. A
    failure of the file system (no permission, a directory in the way) names `path`, not the temporary file."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise _naming(err, path) from err
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())  # the data is on disk before the rename makes it visible
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are meant to be shared
        try:
            os.replace(tmp, path)
        except OSError as err:
            raise _naming(err, path) from err
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _naming(err: OSError, path: Path) -> OSError:
    """`err` (same type and errno) with a message naming the target `path`."""
    return type(err)(err.errno, f"cannot write {str(path)!r}: {err.strerror or err}", str(path))


def write_json(path: str | os.PathLike, data: Any) -> None:
    text = json.dumps(data, indent=1, sort_keys=False) + "\n"
    atomic_write(path, lambda f: f.write(text.encode()))
