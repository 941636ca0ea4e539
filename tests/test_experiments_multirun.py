"""Multiruns through the joblib, submitit (local mode) and Ray launchers, and the aggregation of a
sweep directory (seeds pooled)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rcfr
from rcfr.experiments.aggregate import aggregate
from rcfr.experiments.aggregate import main as aggregate_main
from rcfr.experiments.runner import run_experiment

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def _run(*args, timeout=900):  # generous: a loaded machine starts Python and numba slowly
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
def test_tiny_multirun_through_joblib_is_aggregated_into_tables_and_plots(tmp_path):
    sweep = tmp_path / "sweep"
    done = _run("rcfr.experiments.run", "-m", "+arm=cfr,cfr+", "game=kuhn,leduc", "run.iterations=40",
                "run.eval_points=5", "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={sweep}")
    assert done.returncode == 0, done.stderr
    assert "Joblib.Parallel(n_jobs=2" in done.stdout + done.stderr
    assert "JoblibLauncher" in (sweep / "multirun.yaml").read_text()
    assert sorted(p.name for p in sweep.iterdir() if p.is_dir()) == ["0", "1", "2", "3"]

    with (sweep / "results.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert sorted((r["game"], r["label"]) for r in rows) == \
        [("kuhn", "CFR"), ("kuhn", "CFR+"), ("leduc", "CFR"), ("leduc", "CFR+")]
    for r in rows:  # every number is the library's own evaluation of the same solve
        game = rcfr.load_game(r["game"])
        solver = rcfr.make_solver(r["solver"], game)
        solver.run(40)
        assert float(r["exploitability"]) == pytest.approx(
            rcfr.evaluate(game, solver.average_policy()).exploitability, rel=1e-12)
        assert r["status"] == "complete" and int(r["iteration"]) == 40
        assert float(r["representation_pct"]) == 100.0
    table = (sweep / "results.md").read_text()
    assert table.splitlines()[0].startswith("| label | game | size | % of game |")
    assert len(table.splitlines()) == 2 + 4
    assert (sweep / "convergence.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (sweep / "convergence.svg").read_bytes()[:500]
    assert not (sweep / "exploitability_vs_size.png").exists()  # every run at 100%: nothing to show against size
    # the multirun's end prints the table and the plot paths
    assert "| CFR+ | leduc |" in done.stdout and str(sweep / "convergence.png") in done.stdout

    # the same sweep command again resumes every finished job (nothing recomputed, same results)
    again = _run("rcfr.experiments.run", "-m", "+arm=cfr,cfr+", "game=kuhn,leduc", "run.iterations=40",
                 "run.eval_points=5", "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={sweep}")
    assert again.returncode == 0, again.stderr
    with (sweep / "results.csv").open() as f:
        rerun = list(csv.DictReader(f))
    assert [r["exploitability"] for r in rerun] == [r["exploitability"] for r in rows]
    assert [r["seconds"] for r in rerun] == [r["seconds"] for r in rows]  # no iteration was redone


def test_aggregate_lists_every_run_by_label_and_seed(tmp_path):
    for i, (solver, seed) in enumerate([("cfr", 0), ("cfr", 1), ("cfr+", 0)]):
        run_experiment({"game": {"name": "kuhn"}, "solver": {"name": solver},
                        "run": {"iterations": 20 + 10 * i, "seed": seed, "eval_points": 4}}, tmp_path / str(i))
    (tmp_path / "not_a_run").mkdir()
    result = aggregate(tmp_path)
    assert [(r["label"], r["seed"], r["iteration"]) for r in result.rows] == \
        [("cfr", 0, 20), ("cfr", 1, 30), ("cfr+", 0, 40)]
    assert set(result.curves) == {"0", "1", "2"}
    assert all(len(c) == 4 for c in result.curves.values())
    summary = json.loads((tmp_path / "2" / "summary.json").read_text())
    assert result.rows[2]["exploitability"] == summary["exploitability"]


def test_an_interrupted_run_is_listed_with_its_status(tmp_path):
    from rcfr.experiments.runner import Interrupted
    with pytest.raises(Interrupted):
        run_experiment({"game": {"name": "kuhn"}, "run": {"iterations": 50, "eval_points": 5}}, tmp_path / "r",
                       should_stop=lambda it: it >= 20)
    result = aggregate(tmp_path)
    assert [r["status"] for r in result.rows] == ["interrupted"] and 20 <= result.rows[0]["iteration"] < 50
    assert "| interrupted |" in (tmp_path / "results.md").read_text()


def test_aggregate_command_line(tmp_path, capsys):
    assert aggregate_main([str(tmp_path)]) == 1  # no runs
    assert "no runs" in capsys.readouterr().err
    assert aggregate_main([str(tmp_path / "missing")]) == 2
    run_experiment({"game": {"name": "kuhn"}, "run": {"iterations": 10, "eval_points": 3}}, tmp_path / "r")
    assert aggregate_main([str(tmp_path), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "| cfr+ | kuhn | 24 | 100 | 10 |" in out
    assert (tmp_path / "results.csv").exists() and not (tmp_path / "convergence.png").exists()


@pytest.mark.slow
def test_the_readme_main_command(tmp_path):
    """`rcfr-run +experiment=leduc_quick` as a new user runs it (2 min warm on 2 idle cores, 2.5 with a cold
    numba cache, about 3 beside the slow set's other worker)."""
    done = _run("rcfr.experiments.run", "+experiment=leduc_quick", f"hydra.sweep.dir={tmp_path}", timeout=1200)
    assert done.returncode == 0, done.stderr
    lines = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")][1:]
    rows = [(cells[0][2:], float(cells[3]), float(cells[5])) for cells in lines]  # label, % of game, chips
    assert len(rows) == 13
    by_label = {}
    for label, pct, chips in rows:
        by_label.setdefault(label, []).append((pct, chips))
    assert by_label["CFR+"][0][1] < 1e-4
    bf, bf_plus = sorted(by_label["BF"]), sorted(by_label["BF+"])
    assert len(bf) == len(bf_plus) == 4
    # the thesis's shape: at each leaf budget RCFR+ is less exploitable than RCFR, near full size
    # RCFR+ is close to CFR+, and every hand-made abstraction stays far behind
    assert all(plus[1] < plain[1] for plus, plain in zip(bf_plus, bf))
    assert bf_plus[-1][1] < 0.01
    assert min(chips for label, _, chips in rows if label.startswith("CFR+ ")) > 0.3
    assert f"plots: {tmp_path / 'exploitability_vs_size.png'}" in done.stdout


# ---- launchers: the cluster paths run end to end on this machine ----------------------------------
def _two_job_sweep(sweep: Path, *launcher: str):
    """Two jobs through `launcher`, each run to the end in its own directory (no aggregation: the
    joblib test covers it)."""
    done = _run("rcfr.experiments.run", "-m", "game=kuhn", "+arm=cfr,cfr+", "run.iterations=20", "run.eval_points=2",
                "~hydra.callbacks.aggregate", *launcher, f"hydra.sweep.dir={sweep}")
    assert done.returncode == 0, done.stderr
    summaries = [json.loads((sweep / job / "summary.json").read_text()) for job in ("0", "1")]
    assert sorted((s["label"], s["status"], s["iteration"]) for s in summaries) == \
        [("CFR", "complete", 20), ("CFR+", "complete", 20)]


@pytest.mark.slow
def test_a_sweep_through_submitit_local_mode_the_slurm_code_path(tmp_path):
    """`hydra/launcher=submitit_local` pickles each job and runs it in a submitit subprocess, as the
    Slurm launcher does on a cluster node."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    _two_job_sweep(tmp_path, "hydra/launcher=submitit_local", "hydra.launcher.timeout_min=5")
    assert "LocalLauncher" in (tmp_path / "multirun.yaml").read_text()
    assert list(tmp_path.glob(".submitit/*/*_result.pkl"))  # the jobs went through submitit


@pytest.mark.slow
def test_a_sweep_through_ray_on_a_local_ray_instance(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_ray_launcher",
                        reason="the `launchers` extra (hydra-ray-launcher) is not installed")
    _two_job_sweep(tmp_path, "hydra/launcher=ray", "+hydra.launcher.ray.init.num_cpus=2",
                   "+hydra.launcher.ray.init.include_dashboard=false")
    assert "RayLauncher" in (tmp_path / "multirun.yaml").read_text()


def test_a_launcher_that_cannot_start_fails_in_one_line_before_any_job(monkeypatch):
    """The README's Slurm line on a machine without Slurm: one line that says why, before any job."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rcfr.experiments.callbacks import Validate
    from rcfr.experiments.run import CONFIG_DIR

    monkeypatch.setattr("shutil.which", lambda name, *a, **k: None)  # no srun on PATH
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose("config", overrides=["+experiment=leduc_vs_abstraction_quick", "hydra/launcher=slurm",
                                           "hydra.launcher.partition=cpu"], return_hydra_config=True)
        with pytest.raises(SystemExit) as err:
            Validate().on_multirun_start(cfg)
    GlobalHydra.instance().clear()
    message = str(err.value)
    assert "\n" not in message and message.startswith("launcher error: hydra/launcher=slurm")
    assert "'srun'" in message and "hydra/launcher=submitit_local" in message


def test_a_failed_validation_leaves_no_run_directory(tmp_path):
    done = _run("rcfr.experiments.run", "game=kuhn", "+run.itertions=5", f"hydra.run.dir={tmp_path / 'run'}")
    assert done.returncode == 1
    assert "config error: unknown key(s) 'run.itertions'; allowed in run: iterations" in done.stderr
    assert not (tmp_path / "run").exists()


def test_seeds_are_pooled_into_mean_95_ci_and_count(tmp_path):
    """Three seeds of one configuration become one row: the mean, Student's t half-width (t = 4.3027
    for 2 degrees of freedom) and n = 3; another configuration keeps its own row."""
    runs = []
    for i, seed in enumerate((0, 1, 2)):
        runs.append(run_experiment({"game": {"name": "kuhn"}, "solver": {"name": "os-mccfr"},
                                    "run": {"iterations": 300, "seed": seed, "eval_points": 3}}, tmp_path / str(i)))
    run_experiment({"game": {"name": "kuhn"}, "solver": {"name": "os-mccfr"},
                    "run": {"iterations": 200, "seed": 0, "eval_points": 3}}, tmp_path / "3")
    result = aggregate(tmp_path)
    assert len(result.rows) == 4 and [g["seeds"] for g in result.groups] == [1, 3]
    pooled = result.groups[1]
    values = [r["exploitability"] for r in runs]
    assert len(set(values)) == 3  # the seeds reach the sampler
    assert pooled["exploitability"] == pytest.approx(sum(values) / 3, rel=1e-12)
    mean = sum(values) / 3
    sd = (sum((v - mean) ** 2 for v in values) / 2) ** 0.5
    assert pooled["exploitability_ci95"] == pytest.approx(4.302652729911275 * sd / 3 ** 0.5, rel=1e-9)
    assert pooled["runs"] == "0 1 2" and result.groups[0]["exploitability_ci95"] is None
    table = (tmp_path / "results.md").read_text().splitlines()
    assert table[0].endswith("| seconds | CPU seconds | peak MiB | seeds | status |")
    assert table[3].startswith("| os-mccfr | kuhn | 24 | 100 | 300 |")
    assert "| ± " in table[3] and "| 3 | complete |" in table[3]
    with (tmp_path / "runs.csv").open() as f:
        assert sorted(int(r["seed"]) for r in csv.DictReader(f)) == [0, 0, 1, 2]


def test_failed_and_missing_jobs_are_listed_in_the_table_and_on_the_console(tmp_path, capsys):
    """A sweep of four jobs (multirun.yaml) where job 2 left only Hydra's .hydra/ (it raised or was
    killed) and job 3 never started: both are reported, not just the two that finished."""
    from omegaconf import OmegaConf
    jobs = [["solver=cfr", "run.seed=0"], ["solver=cfr", "run.seed=1"], ["solver=cfr+", "run.seed=0"],
            ["solver=cfr+", "run.seed=1"]]
    OmegaConf.save({"hydra": {"sweeper": {"_target_": "hydra._internal.core_plugins.basic_sweeper.BasicSweeper",
                                          "params": {"solver": "cfr,cfr+"}},
                              "overrides": {"task": ["run.seed=0,1", "game=kuhn"]}}}, tmp_path / "multirun.yaml")
    for number, (solver, seed) in enumerate([("cfr", 0), ("cfr", 1), ("cfr+", 0)]):
        job = tmp_path / str(number)
        (job / ".hydra").mkdir(parents=True)
        OmegaConf.save([*jobs[number], "game=kuhn"], job / ".hydra" / "overrides.yaml")
        cfg = {"game": {"name": "kuhn", "params": {}}, "solver": {"name": solver},
               "run": {"iterations": 10, "seed": seed, "eval_points": 3}}
        OmegaConf.save({**cfg, "regressor": {"name": "none"}, "features": {"name": "none"},
                        "abstraction": {"name": "none"}, "label": None}, job / ".hydra" / "config.yaml")
        if number < 2:
            run_experiment(cfg, job)
    result = aggregate(tmp_path)
    assert [(u["run"], u["status"], u["label"]) for u in result.unfinished] == \
        [("2", "failed", "cfr+"), ("3", "missing", None)]
    assert result.unfinished[0]["overrides"] == "solver=cfr+ run.seed=0 game=kuhn"
    assert result.unfinished[1]["overrides"] == "solver=cfr+ run.seed=1 game=kuhn"
    table = (tmp_path / "results.md").read_text()
    assert "| cfr+ | kuhn() | - |" in table and table.count("| failed |") == 1
    assert "| job 3 | solver=cfr+ run.seed=1 game=kuhn |" in table and table.count("| missing |") == 1
    assert "2 job(s) without results (1 failed, 1 missing)" in table
    with (tmp_path / "runs.csv").open() as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["complete", "complete", "failed", "missing"]
    assert aggregate_main([str(tmp_path), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "- failed: job 2 `solver=cfr+ run.seed=0 game=kuhn`" in out
    assert "- missing: job 3 `solver=cfr+ run.seed=1 game=kuhn`" in out


def test_a_sweep_where_every_job_failed_is_still_reported(tmp_path):
    job = tmp_path / "0" / ".hydra"
    job.mkdir(parents=True)
    (job / "overrides.yaml").write_text("- game=kuhn\n")
    result = aggregate(tmp_path)
    assert result is not None and result.rows == [] and [u["status"] for u in result.unfinished] == ["failed"]
    assert "| job 0 | game=kuhn |" in (tmp_path / "results.md").read_text()
