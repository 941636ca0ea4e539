"""Hyperparameter search (experiments/tuning.py, configs/experiment/tune_lean_rcfr.yaml): the Optuna preset
runs its trials, prints the best one, resumes its study, records failed trials as failed, and its best trial
re-runs to the same objective; an empty search range is refused before any trial."""

from __future__ import annotations

import csv
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose
from omegaconf import OmegaConf
from test_experiments_config import hydra_ctx  # noqa: F401  (the fixture: Hydra on the kit's configs)

from rcfr.experiments.tuning import check_search_space, rerun_command

ROOT = Path(__file__).resolve().parent.parent
needs_optuna = pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_optuna_sweeper") is None,
                                  reason="the Optuna sweeper is not installed (pip install 'rcfr[optuna]')")


@pytest.mark.parametrize("key,text,fragment", [
    ("regressor.params.max_leaves", "int(interval(24, 2))", "an empty range (its low end 24 is not below its high end 2)"),
    ("regressor.params.learning_rate", "interval(0.1, 0.1)", "an empty range"),
    ("solver.options.refit_every", "range(5, 5)", "an empty range (no value from 5 up to 5 in steps of 1)"),
    ("solver.options.refit_every", "range(1, 9, step=-2)", "an empty range"),
    ("regressor.params.learning_rate", "tag(log, interval(0, 1))", "a log range must start above 0, got 0"),
])
def test_an_empty_search_range_is_refused_naming_the_key(key, text, fragment):
    with pytest.raises(ValueError) as err:
        check_search_space({key: text})
    assert f"search space {key}={text}: " in str(err.value) and fragment in str(err.value)


def test_ranges_with_values_pass():
    check_search_space({"a": "int(interval(2, 24))", "b": "choice(1, 4, 16)", "c": "range(1, 9, step=2)",
                        "d": "tag(log, interval(0.001, 1.0))", "e": "5"})


@pytest.fixture()
def preset(request):
    request.getfixturevalue("hydra_ctx")
    cfg = compose("config", overrides=["+experiment=tune_lean_rcfr"], return_hydra_config=True)
    OmegaConf.set_readonly(cfg, False)
    return cfg


@needs_optuna
def test_the_preset_is_an_optuna_study_in_sqlite_and_an_empty_range_stops_it_before_any_trial(preset, tmp_path):
    from rcfr.experiments.callbacks import Validate

    sweeper = preset.hydra.sweeper
    assert sweeper.n_trials == 8 and sweeper.direction == "minimize" and sweeper.study_name == "tune_lean_rcfr"
    assert sweeper.storage.url.startswith("sqlite:///") and sweeper.max_failure_rate == 1.0
    preset.hydra.sweeper.storage.url = f"sqlite:///{tmp_path / 'study.db'}"
    Validate().on_multirun_start(preset)  # its own search space passes
    preset.hydra.overrides.task.append("regressor.params.max_leaves=int(interval(30, 3))")
    with pytest.raises(SystemExit, match=r"config error: search space regressor.params.max_leaves=int\(interval"
                                         r"\(30, 3\)\): an empty range"):
        Validate().on_multirun_start(preset)
    assert not (tmp_path / "study.db").exists()


def test_the_rerun_command_replaces_the_swept_keys_and_runs_once(preset):
    preset.hydra.overrides.task.append("solver.options.refit_every=choice(1,4)")
    command = rerun_command(preset, {"regressor.params.max_leaves": 9, "solver.options.refit_every": 4})
    assert command == ("rcfr-run +experiment=tune_lean_rcfr regressor.params.max_leaves=9 "
                       "solver.options.refit_every=4 hydra.mode=RUN")


def _run(*arguments):
    return subprocess.run([sys.executable, "-m", "rcfr.experiments.run", *arguments], cwd=ROOT, capture_output=True,
                          text=True, timeout=1200, env={**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})


@needs_optuna
@pytest.mark.slow
def test_the_preset_runs_8_trials_prints_the_best_resumes_and_its_best_trial_reruns(tmp_path):
    import optuna

    from rcfr.experiments.tuning import study_storage

    storage = f"hydra.sweeper.storage.url=sqlite:///{tmp_path / 'study.db'}"
    done = _run("+experiment=tune_lean_rcfr", f"hydra.sweep.dir={tmp_path / 'first'}", storage,
                "hydra.launcher.n_jobs=2", "run.iterations=250")  # shorter trials; the re-run command keeps it
    assert done.returncode == 0, done.stderr
    assert "study tune_lean_rcfr: 8 trials (8 complete)" in done.stdout
    best = re.search(r"best: trial (\d+), objective (\S+)\n  (.*)\nre-run it: (.*)\n", done.stdout)
    assert best, done.stdout
    study = optuna.load_study(study_name="tune_lean_rcfr", storage=study_storage(f"sqlite:///{tmp_path / 'study.db'}"))
    assert study.best_trial.number == int(best.group(1)) and study.best_value == pytest.approx(float(best.group(2)))
    assert best.group(3) == " ".join(f"{k}={v}" for k, v in study.best_params.items())
    # every trial's objective is its run's final exploitability
    values = sorted(t.value for t in study.trials)
    with (tmp_path / "first" / "runs.csv").open() as f:
        runs = sorted(float(row["exploitability"]) for row in csv.DictReader(f))
    assert values == pytest.approx(runs, rel=1e-12)

    # the same study again, with two trials that fail: they are recorded and listed as failed
    again = _run("+experiment=tune_lean_rcfr", f"hydra.sweep.dir={tmp_path / 'second'}", storage,
                 "hydra.sweeper.n_trials=2", "solver.options.capacity=choice(0,-1)")
    assert again.returncode == 0, again.stderr
    assert "study tune_lean_rcfr: 10 trials (8 complete, 2 fail)" in again.stdout
    assert len(re.findall(r"failed: trial \d+ .*solver.options.capacity=(0|-1)", again.stdout)) == 2
    assert "failed" in again.stdout.split("study tune_lean_rcfr")[0]  # the sweep's table lists them too

    # the best trial re-run as one run by the printed command gives its objective again
    command = shlex.split(best.group(4))
    assert command[0] == "rcfr-run"
    words = command[1:]
    rerun = _run(*words, f"hydra.run.dir={tmp_path / 'best'}")
    assert rerun.returncode == 0, rerun.stderr
    assert float(re.search(r"exploitability (\S+) chips", rerun.stdout).group(1)) == pytest.approx(
        float(best.group(2)), rel=1e-5)

