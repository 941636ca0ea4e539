"""Run one configuration into a run directory, resumably.

Files (all written atomically, so a kill never leaves a torn file):

* ``config.yaml``   the resolved configuration
* ``metrics.csv``   one row per evaluation: iteration, solve seconds (evaluation excluded), wall
                    seconds, exploitability in chips and mbb/g, value, representation size and % of game,
                    nodes touched (solvers that count them)
* ``checkpoint.npz`` solver state + metrics so far; a new run in the same directory with the same
                    configuration continues from it, and reproduces an uninterrupted run bit for bit
* ``policy.json``   the final average policy (`rcfr.Policy` format; ``policy.npz`` for large games)
* ``summary.json``  status ("complete" or "interrupted"), sizes, the final numbers, and
                    ``compile_seconds``: the warm-up (numba compilation or cache loading, first use of
                    the regressor) kept out of the solve seconds; peak memory (`MEMORY`)

A run directory belongs to one configuration: while a run uses it, it is locked (``fcntl.flock`` on
``.lock``); a directory whose ``config.yaml`` is another configuration's is refused, and so is a
``run.iterations`` below the iterations already done there.
"""

from __future__ import annotations

import csv
import fcntl
import gc
import hashlib
import io
import inspect
import json
import logging
import signal
import time
import zipfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
from omegaconf import OmegaConf
from tqdm.auto import tqdm

from rcfr import evaluate
from rcfr.files import atomic_write, write_json

from . import build, memory
from .measures import make_measure
from .memory import MEMORY
from .schema import JSON_POLICY_LIMIT, ConfigError, ExperimentConfig, to_spec, validate

log = logging.getLogger("experiments")

METRICS = ["iteration", "seconds", "cpu_seconds", "wall_seconds", "exploitability", "exploitability_mbb", "value",
           "representation_size", "representation_pct", "nodes_touched"]
#: run settings that may change between an interrupted run and its resumption
_RESUMABLE_CHANGES = ("iterations", "eval_points", "max_nodes_touched", "checkpoint_every", "checkpoint_seconds",
                      "resume", "progress")
#: with a node budget, evaluations are log-spaced in nodes touched from this many to the budget
FIRST_NODE_MARK = 1000


class Interrupted(KeyboardInterrupt):
    """The run stopped early (Ctrl-C, SIGTERM or a stop hook) after saving a checkpoint."""

    def __init__(self, iteration: int, run_dir: Path):
        super().__init__(f"interrupted at iteration {iteration}; checkpoint saved in {run_dir}")
        self.iteration, self.run_dir = iteration, run_dir


def eval_schedule(iterations: int, points: int) -> list[int]:
    """About `points` log-spaced iterations from 1 to `iterations`, always including the last."""
    marks = np.unique(np.round(np.geomspace(1, iterations, max(min(points, iterations), 1))).astype(np.int64))
    return sorted(set(marks.tolist()) | {iterations})


def node_schedule(budget: int, points: int) -> list[float]:
    """About `points` log-spaced node counts from `FIRST_NODE_MARK` to `budget`, the budget included."""
    return sorted(set(np.geomspace(min(FIRST_NODE_MARK, budget), budget, max(points, 1)).tolist()) | {float(budget)})


def identity(spec: ExperimentConfig) -> str:
    """What a checkpoint must match to be resumed: everything but the run-length/IO settings."""
    data = asdict(spec)
    data.pop("label")
    for key in _RESUMABLE_CHANGES:
        data["run"].pop(key)
    return json.dumps(data, sort_keys=True, default=str)


def seedless_identity(spec: ExperimentConfig) -> str:
    """`identity` without the seed: runs that differ only in their seed (or length) share it, and
    the ``config_hash`` in their summaries by which aggregation pools seeds."""
    data = json.loads(identity(spec))
    data["run"].pop("seed")
    return json.dumps(data, sort_keys=True)


@contextmanager
def _stop_on_signals(flag: dict):
    """Turn SIGINT/SIGTERM into a request to stop after the current iteration."""
    def handler(signum, frame):
        if flag["stop"]:  # a second Ctrl-C stops at once
            raise KeyboardInterrupt
        flag["stop"] = True

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread: leave signals alone
            pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


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


def default_label(spec: ExperimentConfig) -> str:
    """Solver, then each component that is not "none": runs that differ in method never share a curve."""
    parts = [spec.solver.name] + [c.name for c in (spec.regressor, spec.features, spec.abstraction)
                                  if c.name != "none"]
    if spec.abstraction.name == "card":
        parts[-1] = str(spec.abstraction.params.get("partition"))
    return " ".join(parts)


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


def _write_metrics(path: Path, rows: list[dict]) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=METRICS + [k for k in (rows[:1] or [{}])[0] if k not in METRICS],
                            lineterminator="\n")  # + the run's measure (`experiments.measures`)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, lambda f: f.write(text.getvalue().encode()))


def _warm_up(spec: ExperimentConfig, setup: build.Setup) -> float:
    """Seconds to run one iteration and one evaluation of a throwaway solver made like the run's:
    numba compilation (or loading its cache) and first-use costs, kept out of the solve seconds."""
    spare = setup.spare()
    started = time.perf_counter()
    measure = make_measure(spec.run.measure, spare)
    measure.observe(spare)
    spare.solver.run(1)
    measure.value(evaluate(spare.game, spare.policy()))
    return time.perf_counter() - started


@contextmanager
def _locked(run_dir: Path):
    """Hold an exclusive OS lock on the run directory (released when the process ends, even on a kill)."""
    with (run_dir / ".lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(f"run directory {run_dir} is in use by another run; wait for it, or choose "
                              "another directory (hydra.run.dir=...)") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _differences(a: dict, b: dict, prefix: str = "") -> list[str]:
    """``key: a -> b`` for each leaf where two nested dicts differ."""
    out = []
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        if isinstance(x, dict) and isinstance(y, dict):
            out += _differences(x, y, f"{prefix}{k}.")
        elif x != y:
            out.append(f"{prefix}{k}: {x!r} -> {y!r}")
    return out


def check_owner(run_dir: Path, key: str) -> None:
    """Refuse a directory that holds another configuration's run (its ``config.yaml`` differs in
    anything but the run-length and IO settings)."""
    path = run_dir / "config.yaml"
    if not path.exists():
        return
    try:
        previous = identity(to_spec(OmegaConf.load(path)))
    except Exception as err:  # a config this kit cannot read is another configuration too
        raise ConfigError(f"run directory {run_dir} holds a config.yaml this kit cannot read ({err}); "
                          "choose another directory (hydra.run.dir=...) or delete it") from None
    if previous != key:
        changes = "; ".join(_differences(json.loads(previous), json.loads(key)))
        raise ConfigError(f"run directory {run_dir} holds the results of another configuration ({changes}); "
                          "choose another directory (hydra.run.dir=...) or delete it")


def run_experiment(cfg, run_dir: str | Path, *,
                   should_stop: Callable[[int], bool] | None = None) -> dict:
    """Run (or resume) one configuration in `run_dir`; return the summary.

    The solver advances in its own batches (`solver.chunk` iterations, e.g. 16 for full-width CFR,
    4096 for compiled MCCFR), cut at evaluations and checkpoints. `should_stop(iteration)` is checked
    after every batch, like a Ctrl-C; on a stop the run checkpoints and raises `Interrupted`.
    """
    spec = validate(cfg)
    game = build.make_game(spec)
    setup = build.make_setup(spec, game)  # constructors check the values validate cannot
    solver = setup.solver
    if spec.run.max_nodes_touched and not hasattr(solver, "nodes_touched"):
        raise ConfigError(f"run.max_nodes_touched needs a solver that counts nodes touched; "
                          f"{spec.solver.name!r} does not")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with _locked(run_dir):  # the setup (and its game) is this call's only: a sweep's next job does not hold it
        return _run_locked(spec, game, setup, run_dir, should_stop)


class Schedule:
    """When a run evaluates and when it ends: at log-spaced iterations up to ``run.iterations``, or,
    with a node budget (``run.max_nodes_touched``), at log-spaced counts of nodes touched up to it."""

    def __init__(self, run, solver):
        self.total, self.budget, self.every = run.iterations, run.max_nodes_touched, run.checkpoint_every
        self.nodes = (lambda: solver.nodes_touched) if hasattr(solver, "nodes_touched") else (lambda: None)
        if self.budget:
            self.iterations, self.marks = [], [m for m in node_schedule(self.budget, run.eval_points) if m > self.nodes()]
        else:
            self.iterations = [i for i in eval_schedule(self.total, run.eval_points) if i > solver.iteration]
            self.marks = []

    def running(self, it: int) -> bool:
        return it < self.total and not (self.budget and self.nodes() >= self.budget)

    def stop_at(self, it: int, chunk: int) -> int:
        """Where the next batch of at most `chunk` iterations ends: at the next evaluation or
        ``checkpoint_every`` multiple, or, with a budget, about at the next node mark (from the nodes
        per iteration so far)."""
        stop_at = min([self.total, it + chunk] + self.iterations[:1]
                      + ([(it // self.every + 1) * self.every] if self.every else []))
        if self.budget:
            nodes = self.nodes()
            stop_at = min(stop_at, it + (max(1, int(np.ceil((self.marks[0] - nodes) * it / nodes)))
                                         if it and nodes else 1))
        return stop_at

    def evaluation_due(self, it: int) -> bool:
        """Whether the run evaluates at iteration `it`; passes the marks reached."""
        due_by_nodes = self.budget and (self.nodes() >= self.marks[0] or it == self.total)
        if not ((self.iterations and it == self.iterations[0]) or due_by_nodes):
            return False
        if self.iterations:
            self.iterations.pop(0)
        while self.marks and self.marks[0] <= self.nodes():
            self.marks.pop(0)
        return True


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


def _metrics_row(setup: build.Setup, it: int, progress: Progress, nodes, measure) -> dict:
    """Evaluate the average policy at iteration `it` into one metrics.csv row (the evaluation's memory
    is counted in the run's peak, not in the solve's)."""
    game = setup.game
    progress.note_memory(True)
    size = setup.size()
    result = evaluate(game, setup.policy())
    progress.note_memory(False)
    memory.reset_peak()
    log.info("iteration %d: exploitability %.6g chips (%.4g mbb/g), %.3g s",
             it, result.exploitability, result.exploitability_mbb, progress.solve_seconds)
    return {"iteration": it, "seconds": progress.solve_seconds, "cpu_seconds": progress.cpu_seconds,
            "wall_seconds": progress.wall(), "exploitability": result.exploitability,
            "exploitability_mbb": result.exploitability_mbb, "value": result.value, "representation_size": size,
            "representation_pct": None if size is None else 100.0 * size / game.num_sequences, "nodes_touched": nodes,
            **({} if measure.name == "exploitability" else {measure.name: measure.value(result)})}


def _run_locked(spec: ExperimentConfig, game, setup: build.Setup, run_dir: Path,
                should_stop: Callable[[int], bool] | None) -> dict:
    key = identity(spec)
    check_owner(run_dir, key)
    label = spec.label or default_label(spec)
    checkpoints = Checkpoints(run_dir, key, spec.run)
    measure = make_measure(spec.run.measure, setup)
    meta = checkpoints.load(setup.solver, measure) if spec.run.resume else None
    if meta is None and setup.solver.iteration:  # a checkpoint that failed half-way through loading
        setup = setup.spare()
        measure = make_measure(spec.run.measure, setup)
    solver = setup.solver
    if solver.iteration > spec.run.iterations:
        raise ConfigError(f"run.iterations={spec.run.iterations} is below the {solver.iteration} iterations already "
                          f"done in {run_dir}; set run.iterations >= {solver.iteration}, or choose another directory")
    text = OmegaConf.to_yaml(OmegaConf.structured(spec))
    atomic_write(run_dir / "config.yaml", lambda f: f.write(text.encode()))
    progress = Progress.resumed(meta, solver.iteration)
    if meta:
        log.info("resuming %s from iteration %d", run_dir, solver.iteration)
    schedule = Schedule(spec.run, solver)
    if solver.iteration < spec.run.iterations:
        progress.compile_seconds += _warm_up(spec, setup)
    gc.collect()  # the warm-up's throwaway solver is not this run's memory
    memory.reset_peak()
    progress.started, checkpoints.last = time.perf_counter(), time.monotonic()
    _solve(spec, setup, measure, schedule, checkpoints, progress, label, run_dir, should_stop)
    _write_metrics(run_dir / "metrics.csv", progress.rows)
    setup.policy().save(run_dir / policy_file_name(spec, game))
    checkpoints.save(solver, progress, measure)
    return _summary(run_dir, spec, label, setup, progress, "complete")


def _solve(spec: ExperimentConfig, setup: build.Setup, measure, schedule: Schedule, checkpoints: Checkpoints,
           progress: Progress, label: str, run_dir: Path, should_stop: Callable[[int], bool] | None) -> None:
    """Advance the solver batch by batch to the end of the schedule, evaluating and checkpointing on the
    way; a stop request (signal or `should_stop`) checkpoints and raises `Interrupted`."""
    solver = setup.solver
    flag = {"stop": False}
    with _stop_on_signals(flag), tqdm(total=spec.run.iterations, initial=min(solver.iteration, spec.run.iterations),
                                      unit="it", desc=label, disable=None if spec.run.progress is None
                                      else not spec.run.progress, leave=False) as bar:
        # the solver's own batch (MCCFR: compiled loops), or one iteration for a measure that sees each one
        chunk = 1 if measure.steps else max(1, int(getattr(solver, "chunk", 1)))
        while schedule.running(solver.iteration):
            it = solver.iteration
            stop_at = schedule.stop_at(it, chunk)
            if measure.steps:
                measure.observe(setup)
            t0, c0 = time.perf_counter(), time.process_time()
            solver.run(stop_at - it)
            progress.solve_seconds += time.perf_counter() - t0
            progress.cpu_seconds += time.process_time() - c0
            bar.update(stop_at - it)
            it = solver.iteration
            if schedule.evaluation_due(it):
                progress.rows.append(_metrics_row(setup, it, progress, schedule.nodes(), measure))
                _write_metrics(run_dir / "metrics.csv", progress.rows)
                checkpoints.save(solver, progress, measure)
            elif checkpoints.due(it):
                checkpoints.save(solver, progress, measure)
            if flag["stop"] or (should_stop is not None and should_stop(it)):
                checkpoints.save(solver, progress, measure)
                _summary(run_dir, spec, label, setup, progress, "interrupted")
                raise Interrupted(it, run_dir)


def _summary(run_dir: Path, spec: ExperimentConfig, label: str, setup: build.Setup, progress: Progress,
             status: str) -> dict:
    progress.note_memory(False)
    return _write_summary(run_dir, spec, label, setup.game, progress.rows, setup.solver.iteration, status,
                          progress.compile_seconds, progress.peaks)


def policy_file_name(spec: ExperimentConfig, game) -> str:
    """``policy.json``, or ``policy.npz`` when asked for or when JSON would be too large to be useful."""
    fmt = spec.run.policy_format
    if fmt == "auto":
        fmt = "npz" if game.num_infosets > JSON_POLICY_LIMIT else "json"
    return f"policy.{fmt}"


def short_game_name(spec: ExperimentConfig) -> str:
    """``leduc``, or ``leduc(merge_suits=True)`` for the parameters that differ from the defaults."""
    rules = build.make_rules(spec.game.name, **spec.game.params)
    defaults = {k: p.default for k, p in inspect.signature(type(rules).__init__).parameters.items()
                if p.default is not p.empty}
    changed = ", ".join(f"{k}={v!r}" for k, v in rules.params().items() if k not in defaults or defaults[k] != v)
    return f"{spec.game.name}({changed})" if changed else spec.game.name


def _write_summary(run_dir: Path, spec: ExperimentConfig, label: str, game, rows: list[dict],
                   iteration: int, status: str, compile_seconds: float, peaks: dict) -> dict:
    final = rows[-1] if rows else {}
    summary = {
        "status": status, "label": label, "iteration": iteration, "iterations": spec.run.iterations,
        "max_nodes_touched": spec.run.max_nodes_touched,
        "seed": spec.run.seed, "game": short_game_name(spec), "game_rules": game.rules.description(),
        "solver": spec.solver.name,
        "solver_options": spec.solver.options, "regressor": spec.regressor.name,
        "regressor_params": spec.regressor.params, "features": spec.features.name,
        "abstraction": spec.abstraction.name, "abstraction_params": spec.abstraction.params,
        "game_sequences": game.num_sequences, "game_infosets": game.num_infosets,
        **{k: final.get(k) for k in METRICS if k != "iteration"}, "compile_seconds": compile_seconds,
        "measure": spec.run.measure, "measure_value": final.get(spec.run.measure),
        **peaks, "config_hash": hashlib.sha1(seedless_identity(spec).encode()).hexdigest()[:12],
    }
    write_json(run_dir / "summary.json", summary)
    return summary
