"""Experiment tracking (experiments/tracking.py): what a run logs is read back from MLflow's store and
TensorBoard's event files and compared with the run's own files; bad logger choices fail before any work."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hydra import compose
from test_experiments_config import hydra_ctx  # noqa: F401  (the fixture: Hydra on the kit's configs)

from rcfr.experiments import tracking
from rcfr.experiments.run import CONFIG_DIR
from rcfr.experiments.runner import Interrupted, identity, run_experiment
from rcfr.experiments.schema import ConfigError, check_group_options, validate

ROOT = Path(__file__).resolve().parent.parent
needs_mlflow = pytest.mark.skipif(importlib.util.find_spec("mlflow") is None,
                                  reason="mlflow is not installed (pip install 'rcfr[mlflow]')")
needs_tensorboard = pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None,
                                       reason="tensorboard is not installed (pip install 'rcfr[tensorboard]')")


def config(iterations=40, **logger):
    return {"game": {"name": "kuhn", "params": {}}, "solver": {"name": "cfr+", "options": {}},
            "run": {"iterations": iterations, "eval_points": 5, "checkpoint_seconds": 1e9}, "label": "CFR+",
            "logger": logger}


def metrics(run_dir: Path) -> list[dict]:
    with (run_dir / "metrics.csv").open() as f:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(f)]


# ---- choosing loggers ----------------------------------------------------------------------------------

@pytest.mark.usefixtures("hydra_ctx")
def test_no_logger_by_default_one_or_several_by_name():
    assert dict(compose(config_name="config").logger) == {}
    assert list(compose(config_name="config", overrides=["logger=mlflow"]).logger) == ["mlflow"]
    both = compose(config_name="config", overrides=["logger=[mlflow,tensorboard]"]).logger
    assert sorted(both) == ["mlflow", "tensorboard"]
    assert both.mlflow.dir == "outputs/mlruns" and both.tensorboard.dir is None


def test_loggers_are_not_part_of_a_runs_identity():
    plain = validate(config())
    tracked = validate(config(tensorboard={"dir": None}))
    assert identity(plain) == identity(tracked)  # a run may be resumed with other loggers


@pytest.mark.parametrize("arguments,fragments", [
    (["logger=mlfow"], ["logger=mlfow", "no option 'mlfow'", "did you mean 'mlflow'?", "allowed: mlflow, none, tensorboard"]),
    (["logger=[mlflow,tensorbord]"], ["no option 'tensorbord'", "did you mean 'tensorboard'?"]),
])
def test_an_unknown_logger_on_the_command_line_fails_in_one_line_with_the_closest_match(arguments, fragments):
    with pytest.raises(ConfigError) as err:
        check_group_options(CONFIG_DIR, arguments)
    assert "\n" not in str(err.value)
    for fragment in fragments:
        assert fragment in str(err.value)
    check_group_options(CONFIG_DIR, ["logger=[mlflow,tensorboard]"])  # the real names pass


def test_an_unknown_logger_or_option_in_a_config_is_refused_by_validation():
    with pytest.raises(ConfigError, match=r"unknown logger 'tensorbaord' \(did you mean 'tensorboard'\?\); "
                                          r"allowed: mlflow, tensorboard"):
        validate(config(tensorbaord={}))
    with pytest.raises(ConfigError, match=r"unknown logger.mlflow key\(s\) 'folder'; allowed: dir, uri"):
        validate(config(mlflow={"folder": "x"}))


def test_an_unwritable_tracking_directory_fails_validation_before_any_work(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    for name in ("mlflow", "tensorboard"):
        if importlib.util.find_spec(name) is None:
            continue
        with pytest.raises(ConfigError, match=rf"logger.{name}.dir=.*cannot be written .*not a writable directory"):
            validate(config(**{name: {"dir": str(blocker / "store")}}))
        with pytest.raises(ConfigError, match=rf"logger.{name}.dir=.*is a file, not a directory"):
            validate(config(**{name: {"dir": str(blocker)}}))
        validate(config(**{name: {"dir": str(tmp_path / "new" / "store")}}))  # can be made: accepted
    assert not (tmp_path / "new").exists()  # checking made nothing


@pytest.mark.usefixtures("hydra_ctx")
def test_the_kits_callbacks_check_the_loggers_before_a_run_or_sweep_starts(tmp_path):
    from omegaconf import OmegaConf

    from rcfr.experiments.callbacks import Validate

    def composed(*overrides):
        cfg = compose("config", overrides=["game=kuhn", f"hydra.run.dir={tmp_path / 'run'}", *overrides],
                      return_hydra_config=True)
        OmegaConf.set_readonly(cfg, False)
        return cfg

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Hydra turns a callback's exception into a warning
        Validate().on_run_start(composed())  # no logger: nothing to check or make
    blocked = tmp_path / "a_file"
    blocked.write_text("")
    name = next((n for n in ("tensorboard", "mlflow") if importlib.util.find_spec(n)), None)
    if name is None:
        pytest.skip("neither mlflow nor tensorboard is installed")
    for start in (Validate().on_run_start, Validate().on_multirun_start):
        with pytest.raises(SystemExit, match=rf"config error: logger.{name}.dir=.*cannot be written"):
            start(composed(f"logger={name}", f"logger.{name}.dir={blocked / 'x'}"))
    assert not (tmp_path / "run").exists()


def test_a_missing_package_is_named_with_its_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    with pytest.raises(ConfigError, match=r"logger=mlflow needs the mlflow package: pip install \"rcfr\[mlflow\]\""):
        validate(config(mlflow={}))


def test_config_flattening_and_numeric_columns():
    assert tracking.flatten({"run": {"seed": 0, "approx": {}}, "label": None, "x": {"l": [1, 2]}}) == \
        {"run.seed": "0", "run.approx": "{}", "label": "None", "x.l": "[1, 2]"}
    assert tracking.numbers({"iteration": 5, "exploitability": 0.5, "nodes_touched": None, "pct": float("nan"),
                             "flag": True, "size": 3}) == {"exploitability": 0.5, "size": 3.0}


# ---- reading back what was logged ----------------------------------------------------------------------

@needs_mlflow
@pytest.mark.slow
def test_mlflow_holds_the_config_every_metrics_row_and_the_files_and_a_resumed_run_continues(tmp_path):
    from mlflow.tracking import MlflowClient

    store = tmp_path / "mlruns"
    run_dir = tmp_path / "runs" / "job"
    run_experiment(config(40, mlflow={"dir": str(store)}), run_dir)
    client = MlflowClient(f"sqlite:///{store / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(str(tmp_path / "runs"))  # the run directory's parent
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.run_name == "job CFR+" and run.info.status == "FINISHED"
    assert run.data.params["game.name"] == "kuhn" and run.data.params["run.iterations"] == "40"
    assert run.data.params["solver.name"] == "cfr+" and run.data.params["label"] == "CFR+"
    rows = metrics(run_dir)
    for column in ("exploitability", "exploitability_mbb", "seconds", "representation_size", "value"):
        history = client.get_metric_history(run.info.run_id, column)
        assert [(m.step, m.value) for m in history] == [(int(r["iteration"]), r[column]) for r in rows]
    assert sorted(a.path for a in client.list_artifacts(run.info.run_id)) == \
        ["config.yaml", "metrics.csv", "policy.json", "summary.json"]
    logged = Path(client.download_artifacts(run.info.run_id, "summary.json", str(tmp_path / "down")))
    assert json.loads(logged.read_text()) == json.loads((run_dir / "summary.json").read_text())

    # a longer run in the same directory resumes it, and continues the same MLflow run
    run_experiment(config(80, mlflow={"dir": str(store)}), run_dir)
    (again,) = client.search_runs([experiment.experiment_id])
    assert again.info.run_id == run.info.run_id and again.info.status == "FINISHED"
    history = client.get_metric_history(run.info.run_id, "exploitability")
    assert [(m.step, m.value) for m in history] == [(int(r["iteration"]), r["exploitability"]) for r in metrics(run_dir)]

    # a stopped run is KILLED, a run that raises FAILED
    with pytest.raises(Interrupted):
        run_experiment(config(200, mlflow={"dir": str(store)}), tmp_path / "runs" / "stopped",
                       should_stop=lambda it: it >= 50)
    with pytest.raises(RuntimeError, match="boom"):
        run_experiment(config(200, mlflow={"dir": str(store)}), tmp_path / "runs" / "broken",
                       should_stop=lambda it: (_ for _ in ()).throw(RuntimeError("boom")))
    status = {r.info.run_name: r.info.status for r in client.search_runs([experiment.experiment_id])}
    assert status == {"job CFR+": "FINISHED", "stopped CFR+": "KILLED", "broken CFR+": "FAILED"}


@needs_tensorboard
@pytest.mark.slow
def test_tensorboard_event_files_hold_every_metrics_row_and_the_config(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = tmp_path / "job"
    run_experiment(config(40, tensorboard={"dir": None}), run_dir)
    events = EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    rows = metrics(run_dir)
    for column in ("exploitability", "exploitability_mbb", "representation_size"):
        assert [(e.step, e.value) for e in events.Scalars(column)] == \
            [(int(r["iteration"]), pytest.approx(r[column], rel=1e-6)) for r in rows]  # float32 in events
    (text,) = events.Tensors("config/text_summary")
    assert b"game.name: kuhn" in text.tensor_proto.string_val[0]

    other = tmp_path / "tb"
    run_experiment(config(40, tensorboard={"dir": str(other)}), tmp_path / "second")
    assert list((other / str(tmp_path)).glob("second CFR+/events.out.tfevents.*"))


@needs_mlflow
@needs_tensorboard
@pytest.mark.slow
def test_a_sweep_is_one_mlflow_experiment_with_a_run_per_job_and_its_plots(tmp_path):
    from mlflow.tracking import MlflowClient
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    sweep, store = tmp_path / "sweep", tmp_path / "mlruns"
    done = subprocess.run([sys.executable, "-m", "rcfr.experiments.run", "-m", "game=kuhn", "solver=cfr,cfr+",
                           "run.iterations=30", "run.eval_points=4", "hydra.launcher.n_jobs=2",
                           f"hydra.sweep.dir={sweep}", "logger=[mlflow,tensorboard]", f"logger.mlflow.dir={store}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    client = MlflowClient(f"sqlite:///{store / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(str(sweep))
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    assert sorted(runs) == ["0 cfr", "1 cfr+", "aggregate"]
    for job in ("0", "1"):
        run = runs[next(n for n in runs if n.startswith(job))]
        history = client.get_metric_history(run.info.run_id, "exploitability")
        assert [m.value for m in history] == [r["exploitability"] for r in metrics(sweep / job)]
        events = EventAccumulator(str(sweep / job / "tensorboard"))
        events.Reload()
        assert len(events.Scalars("exploitability")) == len(history)
    artifacts = {a.path for a in client.list_artifacts(runs["aggregate"].info.run_id)}
    assert {"results.md", "results.csv", "runs.csv", "convergence.png"} <= artifacts
    events = EventAccumulator(str(sweep / "aggregate" / "tensorboard"))
    events.Reload()
    assert "convergence" in events.Tags()["images"]
