"""Experiment tracking: optional loggers that receive what a run records, chosen in config.

``logger=mlflow``, ``logger=tensorboard`` or ``logger=[mlflow,tensorboard]`` (``configs/logger/``) adds
``logger.<name>`` nodes; the runner opens one `Logger` per node and calls `start` with the resolved
config, `log_row` with every metrics row as it is evaluated, `log_artifact` with each file the run ends
with (config, metrics.csv, summary.json, the policy) and `end` with the run's status. A sweep's aggregate
(tables, plots) goes to one more run, ``aggregate``, of the same experiment (`log_sweep`).

The experiment is the run directory's parent (a sweep's directory, or ``outputs/runs``), so ``mlflow ui``
shows a sweep as one experiment with a run per job. Loggers change nothing a run computes and are not
part of its identity. The packages are optional extras (``pip install "rcfr[mlflow]"``, ``"rcfr[tensorboard]"``);
`check_options` names a missing one, an unknown logger or an unwritable directory before any work.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import math
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Protocol

from rcfr.options import did_you_mean

#: logger name -> its options (the keys of ``logger.<name>``) and the package it needs (the extra's name)
OPTIONS = {"mlflow": ("dir", "uri"), "tensorboard": ("dir",)}
PACKAGES = {"mlflow": "mlflow", "tensorboard": "tensorboard"}
#: a run's status (summary.json's words, and "failed") -> MLflow's
MLFLOW_STATUS = {"complete": "FINISHED", "interrupted": "KILLED", "failed": "FAILED"}
STATE_FILE = "tracking.json"  # in the run directory: the ids of its tracking runs, so a resumed run continues them


class Logger(Protocol):
    """What the runner calls; rows are metrics.csv rows (``iteration`` is the step)."""

    def start(self, config: dict) -> None: ...
    def log_row(self, row: dict) -> None: ...
    def log_artifact(self, path: Path) -> None: ...
    def end(self, status: str) -> None: ...


def check_options(loggers: dict) -> None:
    """Refuse, with a ValueError naming the field, an unknown logger or option, a logger whose package is
    not installed, and a directory that cannot be written (checked without creating anything)."""

    for name, options in loggers.items():
        if name not in OPTIONS:
            raise ValueError(f"unknown logger {name!r}{did_you_mean(name, OPTIONS)}; allowed: {', '.join(OPTIONS)}")
        options = dict(options or {})
        unknown = sorted(set(options) - set(OPTIONS[name]))
        if unknown:
            raise ValueError(f"unknown logger.{name} key(s) {', '.join(map(repr, unknown))}; allowed: "
                             f"{', '.join(OPTIONS[name])}")
        if importlib.util.find_spec(PACKAGES[name]) is None:
            raise ValueError(f"logger={name} needs the {PACKAGES[name]} package: pip install \"rcfr[{name}]\"")
        if options.get("dir") is not None and not options.get("uri"):
            _check_writable(f"logger.{name}.dir", _absolute(options["dir"]))


def _check_writable(field: str, path: Path) -> None:
    """The directory exists and can be written, or its nearest existing ancestor can (so it can be made)."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"{field}={str(path)!r} is a file, not a directory")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{field}={str(path)!r} cannot be written ({existing} is not a writable directory); "
                         "choose another directory")


def _absolute(path: str | os.PathLike) -> Path:
    """A relative directory is taken from where the command was started (Hydra's ``runtime.cwd``, so a
    launcher whose workers run elsewhere still writes there)."""
    path = Path(path).expanduser()
    if path.is_absolute():
        return path
    from hydra.core.hydra_config import HydraConfig
    base = HydraConfig.get().runtime.cwd if HydraConfig.initialized() else os.getcwd()
    return Path(base) / path


def experiment_name(folder: Path) -> str:
    """A folder as an experiment name: relative to the working directory when inside it."""
    folder = Path(folder).resolve()
    try:
        return str(folder.relative_to(Path(os.getcwd()).resolve()))
    except ValueError:
        return str(folder)


def flatten(config: dict, prefix: str = "") -> dict[str, str]:
    """``{"run": {"seed": 0}}`` -> ``{"run.seed": "0"}`` (empty dicts kept as ``{}``)."""
    out = {}
    for key, value in config.items():
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = json.dumps(value, default=str) if isinstance(value, (dict, list)) else str(value)
    return out


def numbers(row: dict) -> dict[str, float]:
    """The finite numeric columns of a metrics row, but its step (``iteration``)."""
    out = {}
    for key, value in row.items():
        if key != "iteration" and isinstance(value, (int, float)) and not isinstance(value, bool) \
                and math.isfinite(value):
            out[key] = float(value)
    return out


@contextmanager
def _lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` across processes: a sweep's workers share one store."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class _State:
    """The tracking ids a run directory keeps (``tracking.json``)."""

    def __init__(self, home: Path):
        self.path = home / STATE_FILE

    def get(self, key: str):
        try:
            return json.loads(self.path.read_text()).get(key)
        except (OSError, ValueError):
            return None

    def set(self, key: str, value) -> None:
        from rcfr.files import write_json
        data = json.loads(self.path.read_text()) if self.path.exists() else {}
        write_json(self.path, {**data, key: value})


class MLflowLogger:
    """A run of an MLflow experiment. The local store is ``<dir>/mlflow.db`` (SQLite; MLflow 3 refuses
    its old file store) with artifacts in ``<dir>/artifacts``; ``uri`` names any other tracking store.
    A resumed run continues its MLflow run (id in ``tracking.json``); its parameters stay those it
    started with (the current config is its ``config.yaml`` artifact)."""

    def __init__(self, options: dict, experiment: str, run_name: str, home: Path):
        self.experiment, self.run_name, self.state = experiment, run_name, _State(home)
        self.root = _absolute(options.get("dir") or "outputs/mlruns")
        self.local = not options.get("uri")
        self.uri = f"sqlite:///{self.root / 'mlflow.db'}" if self.local else options["uri"]
        self.run_id = None

    def _client(self):
        from mlflow.tracking import MlflowClient
        return MlflowClient(tracking_uri=self.uri)

    def experiment_id(self) -> str:
        """The experiment's id, made once under a lock (workers of one sweep would race to make it)."""
        with _lock(self.root) if self.local else nullcontext():
            client = self._client()
            found = client.get_experiment_by_name(self.experiment)
            if found is not None:
                return found.experiment_id
            location = (self.root / "artifacts").as_uri() if self.local else None
            return client.create_experiment(self.experiment, artifact_location=location)

    def start(self, config: dict) -> None:
        client = self._client()
        experiment_id = self.experiment_id()
        previous = self.state.get("mlflow")
        if previous and previous.get("uri") == self.uri and _mlflow_run_exists(client, previous["run_id"]):
            self.run_id = previous["run_id"]
            client.update_run(self.run_id, status="RUNNING")
            return
        from mlflow.entities import Param
        run = client.create_run(experiment_id, run_name=self.run_name, tags={"rcfr.label": str(config.get("label"))})
        self.run_id = run.info.run_id
        params = [Param(k, v[:6000]) for k, v in flatten(config).items()]
        for i in range(0, len(params), 100):  # MLflow takes at most 100 parameters per batch
            client.log_batch(self.run_id, params=params[i:i + 100])
        self.state.set("mlflow", {"uri": self.uri, "run_id": self.run_id})

    def log_row(self, row: dict) -> None:
        from mlflow.entities import Metric
        stamp, step = int(time.time() * 1000), int(row["iteration"])
        self._client().log_batch(self.run_id, metrics=[Metric(k, v, stamp, step) for k, v in numbers(row).items()])

    def log_artifact(self, path: Path) -> None:
        self._client().log_artifact(self.run_id, str(path))

    def end(self, status: str) -> None:
        if self.run_id is not None:
            self._client().set_terminated(self.run_id, MLFLOW_STATUS[status])


def _mlflow_run_exists(client, run_id: str) -> bool:
    from mlflow.exceptions import MlflowException
    try:
        return client.get_run(run_id).info.lifecycle_stage == "active"
    except MlflowException:
        return False


class TensorBoardLogger:
    """Event files of one run: ``<run dir>/tensorboard`` (``tensorboard --logdir <sweep dir>`` shows a
    sweep), or ``<dir>/<experiment>/<run name>``. Each metrics column is a scalar against the iteration,
    the config a text; of the artifacts, plots become images and Markdown tables texts (TensorBoard keeps
    no other files)."""

    def __init__(self, options: dict, experiment: str, run_name: str, home: Path):
        root = options.get("dir")
        self.folder = home / "tensorboard" if root is None else _absolute(root) / experiment / run_name
        self.writer = None

    def start(self, config: dict) -> None:
        from torch.utils.tensorboard import SummaryWriter
        self.writer = SummaryWriter(log_dir=str(self.folder))
        text = "\n".join(f"    {k}: {v}" for k, v in flatten(config).items())  # indented: a code block
        self.writer.add_text("config", text)

    def log_row(self, row: dict) -> None:
        for key, value in numbers(row).items():
            self.writer.add_scalar(key, value, int(row["iteration"]))
        self.writer.flush()

    def log_artifact(self, path: Path) -> None:
        path = Path(path)
        if path.suffix == ".png":
            from matplotlib.image import imread
            self.writer.add_image(path.stem, imread(path)[..., :3], dataformats="HWC")
        elif path.suffix == ".md":
            self.writer.add_text(path.stem, path.read_text())

    def end(self, status: str) -> None:
        if self.writer is not None:
            self.writer.add_text("status", status)
            self.writer.close()


LOGGERS = {"mlflow": MLflowLogger, "tensorboard": TensorBoardLogger}


class Loggers:
    """Every chosen logger, called together (none chosen: does nothing and imports nothing)."""

    def __init__(self, loggers: dict, experiment: str, run_name: str, home: Path):
        self.members = [LOGGERS[name](dict(options or {}), experiment, run_name, Path(home))
                        for name, options in loggers.items()]

    def start(self, config: dict) -> None:
        for member in self.members:
            member.start(config)

    def log_row(self, row: dict) -> None:
        for member in self.members:
            member.log_row(row)

    def log_artifacts(self, paths: Iterable[Path]) -> None:
        for path in paths:
            for member in self.members:
                member.log_artifact(Path(path))

    def end(self, status: str) -> None:
        for member in self.members:
            member.end(status)


def prepare(loggers: dict, folder: Path) -> None:
    """Make the stores the runs under `folder` will write to (MLflow's database and experiment), once, in
    the launching process: a store that cannot be made fails here, before any job starts."""
    for name, options in loggers.items():
        if name == "mlflow":
            MLflowLogger(dict(options or {}), experiment_name(folder), "", Path(folder)).experiment_id()


@contextmanager
def tracked(loggers: dict, home: Path, run_name: str, config: dict) -> Iterator[Loggers]:
    """Open the loggers of the run in `home` (experiment: its parent folder), start them with `config`,
    and end them with the run's status: "complete", "interrupted" (Ctrl-C, a stop) or "failed"."""
    opened = Loggers(loggers, experiment_name(Path(home).parent), run_name, home)
    opened.start(config)
    try:
        yield opened
    except KeyboardInterrupt:
        opened.end("interrupted")
        raise
    except BaseException:
        opened.end("failed")
        raise
    opened.end("complete")


def log_sweep(loggers: dict, sweep_dir: Path, files: list[Path]) -> None:
    """The sweep's aggregate (tables, plots) as the run ``aggregate`` of the sweep's experiment."""
    if not loggers:
        return
    home = Path(sweep_dir) / "aggregate"
    home.mkdir(parents=True, exist_ok=True)
    with tracked(loggers, home, "aggregate", {"sweep": str(sweep_dir)}) as opened:
        opened.log_artifacts(files)
