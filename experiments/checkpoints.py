"""A run's progress and its checkpoint file: what a resumed run needs to continue bit for bit."""

from __future__ import annotations

import json
import logging
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rcfr.files import atomic_write

from . import memory
from .memory import MEMORY

log = logging.getLogger("rcfr.experiments")


def _rng_of(solver):
    rng = getattr(solver, "rng", None)
    return rng if isinstance(rng, np.random.Generator) else None


def _save_checkpoint(path: Path, solver, meta: dict, measure) -> None:
    state = {f"solver.{k}": np.asarray(v) for k, v in solver.state_dict().items()}
    state.update({f"measure.{k}": np.asarray(v) for k, v in measure.state_dict().items()})
    rng = _rng_of(solver)
    if rng is not None:
        meta = {**meta, "rng": rng.bit_generator.state}
    state["meta"] = np.array(json.dumps(meta))
    atomic_write(path, lambda f: np.savez(f, **state))


def _load_checkpoint(path: Path, solver, key: str, measure) -> dict | None:
    """Restore `solver` (and the running sums of `measure`) from `path` when the checkpoint belongs to
    this configuration."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            if meta.get("identity") != key:
                log.warning("checkpoint %s is for another configuration; starting over", path)
                return None
            solver.load_state_dict({k[7:]: data[k] for k in data.files if k.startswith("solver.")})
            measure.load_state_dict({k[8:]: data[k] for k in data.files if k.startswith("measure.")},
                                    solver.iteration)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:  # truncated or damaged
        log.warning("cannot read checkpoint %s (%s); starting over", path, err)
        return None
    rng = _rng_of(solver)
    if rng is not None and "rng" in meta:
        rng.bit_generator.state = meta["rng"]
    return meta


@dataclass
class Progress:
    """What a run has done, kept in its checkpoint: metrics rows, seconds and memory peaks (`MEMORY`)."""

    rows: list = field(default_factory=list)
    solve_seconds: float = 0.0  # wall seconds inside solver.run
    cpu_seconds: float = 0.0  # process CPU seconds inside solver.run
    compile_seconds: float = 0.0
    wall_before: float = 0.0  # wall seconds of the runs this one resumes
    peaks: dict = field(default_factory=lambda: dict.fromkeys(MEMORY))
    started: float = field(default_factory=time.perf_counter)

    @classmethod
    def resumed(cls, meta: dict | None, iteration: int) -> "Progress":
        if not meta:
            return cls()
        return cls(rows=[r for r in meta["rows"] if r["iteration"] <= iteration],
                   solve_seconds=meta["solve_seconds"], cpu_seconds=meta.get("cpu_seconds", 0.0),
                   compile_seconds=meta.get("compile_seconds", 0.0), wall_before=meta["wall_seconds"],
                   peaks=dict.fromkeys(MEMORY) | (meta.get("memory") or {}))

    def wall(self) -> float:
        return self.wall_before + time.perf_counter() - self.started

    def note_memory(self, solving: bool) -> None:
        """Fold the peak since the last reset into the run's numbers."""
        values = {"peak_rss_mib": memory.peak_mib()}
        if solving:
            values.update(solve_peak_rss_mib=values["peak_rss_mib"], anon_rss_mib=memory.anon_mib())
        for name, value in values.items():
            if value is not None:
                self.peaks[name] = max(value, self.peaks[name] or 0.0)

    def meta(self, key: str) -> dict:
        return {"identity": key, "rows": self.rows, "solve_seconds": self.solve_seconds, "wall_seconds": self.wall(),
                "compile_seconds": self.compile_seconds, "cpu_seconds": self.cpu_seconds, "memory": self.peaks}


class Checkpoints:
    """The run's ``checkpoint.npz``: written at each evaluation, at multiples of ``run.checkpoint_every``,
    after ``run.checkpoint_seconds`` without one, and on a stop."""

    def __init__(self, run_dir: Path, key: str, run):
        self.path, self.key = run_dir / "checkpoint.npz", key
        self.every, self.seconds = run.checkpoint_every, run.checkpoint_seconds
        self.last = time.monotonic()

    def load(self, solver, measure) -> dict | None:
        return _load_checkpoint(self.path, solver, self.key, measure) if self.path.exists() else None

    def save(self, solver, progress: Progress, measure) -> None:
        _save_checkpoint(self.path, solver, progress.meta(self.key), measure)
        self.last = time.monotonic()

    def due(self, it: int) -> bool:
        return bool(self.every and it % self.every == 0) or time.monotonic() - self.last >= self.seconds
