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

The parts: `rcfr.experiments.schedule` (when to evaluate and stop), `rcfr.experiments.checkpoints` (the run's
progress and its checkpoint), `rcfr.experiments.metrics` (one evaluation, metrics.csv); here, the run
directory, the warm-up and the loop (`_solve`) that drives them.

A run directory belongs to one configuration: while a run uses it, it is locked (``fcntl.flock`` on
``.lock``); a directory whose ``config.yaml`` is another configuration's is refused, and so is a
``run.iterations`` below the iterations already done there.
"""

from __future__ import annotations

import fcntl
import gc
import hashlib
import inspect
import json
import logging
import signal
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from omegaconf import OmegaConf
from tqdm.auto import tqdm

from rcfr.files import atomic_write, write_json

from . import build, memory, tracking
from .checkpoints import Checkpoints, Progress
from .measures import make_measure
from .metrics import METRICS, evaluate_average, metrics_row, write_metrics
from .schedule import FIRST_NODE_MARK, Schedule, eval_schedule, node_schedule  # noqa: F401  (old names)
from .schema import JSON_POLICY_LIMIT, ConfigError, ExperimentConfig, to_spec, validate

log = logging.getLogger("rcfr.experiments")

#: run settings that may change between an interrupted run and its resumption
_RESUMABLE_CHANGES = ("iterations", "eval_points", "max_nodes_touched", "max_cpu_seconds", "checkpoint_every",
                      "checkpoint_seconds",
                      "long_evaluations", "resume", "progress", "matches", "workers", "ray_address")


class Interrupted(KeyboardInterrupt):
    """The run stopped early (Ctrl-C, SIGTERM or a stop hook) after saving a checkpoint."""

    def __init__(self, iteration: int, run_dir: Path):
        super().__init__(f"interrupted at iteration {iteration}; checkpoint saved in {run_dir}")
        self.iteration, self.run_dir = iteration, run_dir


def identity(spec: ExperimentConfig) -> str:
    """What a checkpoint must match to be resumed: everything but the run-length/IO settings."""
    data = asdict(spec)
    data.pop("label")
    data.pop("logger")  # where a run is tracked changes nothing it computes
    for key in _RESUMABLE_CHANGES:
        data["run"].pop(key)
    if not data["run"]["approx"]:  # runs from before run.approx keep their identity
        data["run"].pop("approx")
    if data["game"]["compiled"] is None:  # the default: identities from before the option are unchanged
        data["game"].pop("compiled")
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


def default_label(spec: ExperimentConfig) -> str:
    """Solver, then each component that is not "none": runs that differ in method never share a curve."""
    parts = [spec.solver.name] + [c.name for c in (spec.regressor, spec.features, spec.abstraction)
                                  if c.name != "none"]
    if spec.abstraction.name == "card":
        parts[-1] = str(spec.abstraction.params.get("partition"))
    return " ".join(parts)


def _warm_up(spec: ExperimentConfig, setup: build.Setup) -> float:
    """Seconds to run one iteration and one evaluation of a throwaway solver made like the run's:
    numba compilation (or loading its cache) and first-use costs, kept out of the solve seconds."""
    spare = setup.spare()
    started = time.perf_counter()
    measure = make_measure(spec.run.measure, spare, spec.run.approx)
    measure.observe(spare)
    spare.solver.run(1)
    measure.value(evaluate_average(spare))
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


def _run_locked(spec: ExperimentConfig, game, setup: build.Setup, run_dir: Path,
                should_stop: Callable[[int], bool] | None) -> dict:
    key = identity(spec)
    check_owner(run_dir, key)
    label = spec.label or default_label(spec)
    checkpoints = Checkpoints(run_dir, key, spec.run)
    measure = make_measure(spec.run.measure, setup, spec.run.approx)
    meta = checkpoints.load(setup.solver, measure) if spec.run.resume else None
    if meta is None and setup.solver.iteration:  # a checkpoint that failed half-way through loading
        setup = setup.spare()
        measure = make_measure(spec.run.measure, setup, spec.run.approx)
    solver = setup.solver
    if solver.iteration > spec.run.iterations:
        raise ConfigError(f"run.iterations={spec.run.iterations} is below the {solver.iteration} iterations already "
                          f"done in {run_dir}; set run.iterations >= {solver.iteration}, or choose another directory")
    text = OmegaConf.to_yaml(OmegaConf.structured(spec))
    atomic_write(run_dir / "config.yaml", lambda f: f.write(text.encode()))
    progress = Progress.resumed(meta, solver.iteration)
    if meta:
        log.info("resuming %s from iteration %d", run_dir, solver.iteration)
    schedule = Schedule(spec.run, solver, progress)
    if solver.iteration < spec.run.iterations:
        progress.compile_seconds += _warm_up(spec, setup)
    gc.collect()  # the warm-up's throwaway solver is not this run's memory
    memory.reset_peak()
    progress.started, checkpoints.last = time.perf_counter(), time.monotonic()
    policy = policy_file_name(spec, game)
    with tracking.tracked(spec.logger, run_dir, f"{run_dir.name} {label}", asdict(spec)) as loggers:
        _solve(spec, setup, measure, schedule, checkpoints, progress, label, run_dir, should_stop, loggers.log_row)
        write_metrics(run_dir / "metrics.csv", progress.rows)
        setup.policy().save(run_dir / policy)
        checkpoints.save(solver, progress, measure)
        summary = _summary(run_dir, spec, label, setup, progress, "complete")
        loggers.log_artifacts(run_dir / name for name in ("config.yaml", "metrics.csv", "summary.json", policy))
    return summary


def _solve(spec: ExperimentConfig, setup: build.Setup, measure, schedule: Schedule, checkpoints: Checkpoints,
           progress: Progress, label: str, run_dir: Path, should_stop: Callable[[int], bool] | None,
           on_row: Callable[[dict], None]) -> None:
    """Advance the solver batch by batch to the end of the schedule, evaluating and checkpointing on the
    way (each metrics row also to `on_row`, the loggers); a stop request (signal or `should_stop`)
    checkpoints and raises `Interrupted`."""
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
                progress.rows.append(metrics_row(setup, it, progress, schedule.nodes(), measure))
                write_metrics(run_dir / "metrics.csv", progress.rows)
                checkpoints.save(solver, progress, measure)
                on_row(progress.rows[-1])
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
        sets = game.num_infosets  # None where not counted: a game walked by its rules writes a `CodePolicy`
        fmt = "npz" if sets is None or sets > JSON_POLICY_LIMIT else "json"
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
        "max_nodes_touched": spec.run.max_nodes_touched, "max_cpu_seconds": spec.run.max_cpu_seconds,
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
