"""One run of the experiment kit: its files, its numbers (checked against the library directly),
and resumption: an interrupted run + resume == one uninterrupted run, bit for bit."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rcfr
from rcfr.experiments.runner import METRICS, Interrupted, eval_schedule, run_experiment
from rcfr.experiments.schema import ConfigError

ROOT = Path(__file__).resolve().parent.parent
TIMING = {"seconds", "cpu_seconds", "wall_seconds"}


def config(game="kuhn", solver="cfr+", iterations=60, **run):
    options = {"cfr": {"averaging": "uniform"}, "cfr+": {"averaging": "linear"},
               "dcfr": {"alpha": 1.5, "beta": 0.0, "averaging": 2.0}}.get(solver, {})
    return {"game": {"name": game, "params": {}}, "solver": {"name": solver, "options": options},
            "run": {"iterations": iterations, "eval_points": 8, "checkpoint_seconds": 1e9, **run},
            "label": solver.upper()}


def metrics(run_dir: Path) -> list[dict]:
    with (run_dir / "metrics.csv").open() as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def without_timing(rows):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def test_a_run_writes_config_metrics_policy_and_summary(tmp_path):
    summary = run_experiment(config(iterations=100), tmp_path)
    assert {p.name for p in tmp_path.iterdir()} >= {"config.yaml", "metrics.csv", "policy.json",
                                                    "summary.json", "checkpoint.npz"}
    rows = metrics(tmp_path)
    assert list(rows[0]) == METRICS
    assert [int(r["iteration"]) for r in rows] == eval_schedule(100, 8)
    assert all(r["seconds"] <= r["wall_seconds"] for r in rows)  # solve time excludes evaluation
    assert np.all(np.diff([r["seconds"] for r in rows]) >= 0)

    # the same numbers straight from the library
    game = rcfr.load_game("kuhn")
    solver = rcfr.make_solver("cfr+", game)
    solver.run(100)
    expected = rcfr.evaluate(game, solver.average_policy())
    assert rows[-1]["exploitability"] == expected.exploitability
    assert rows[-1]["exploitability_mbb"] == expected.exploitability_mbb
    assert rows[-1]["representation_size"] == game.num_sequences == 24
    assert rows[-1]["representation_pct"] == 100.0
    policy = rcfr.Policy.load(game, tmp_path / "policy.json")
    assert np.allclose(policy.probs, solver.average_policy().probs, rtol=0, atol=1e-15)

    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved == summary
    assert (saved["status"], saved["label"], saved["game"], saved["iteration"]) == ("complete", "CFR+", "kuhn", 100)
    assert saved["exploitability"] == expected.exploitability
    assert "iterations: 100" in (tmp_path / "config.yaml").read_text()


@pytest.mark.parametrize("solver,stop_at", [("cfr+", 37)] + [pytest.param(*case, marks=pytest.mark.slow)  # the others: slow set
                                          for case in (("cfr", 1), ("dcfr", 55), ("lcfr", 44))])
def test_interrupted_then_resumed_equals_uninterrupted_bit_for_bit(tmp_path, solver, stop_at):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    run_experiment(config("leduc", solver, 90), whole)
    with pytest.raises(Interrupted) as stop:
        run_experiment(config("leduc", solver, 90), parts, should_stop=lambda it: it >= stop_at)
    stopped = stop.value.iteration
    assert stop_at <= stopped < 90
    interrupted = json.loads((parts / "summary.json").read_text())
    assert (interrupted["status"], interrupted["iteration"]) == ("interrupted", stopped)
    assert not (parts / "policy.json").exists()
    assert all(r["iteration"] <= stopped for r in metrics(parts))

    run_experiment(config("leduc", solver, 90), parts)
    assert (parts / "policy.json").read_bytes() == (whole / "policy.json").read_bytes()
    assert without_timing(metrics(parts)) == without_timing(metrics(whole))
    assert json.loads((parts / "summary.json").read_text())["status"] == "complete"
    with np.load(whole / "checkpoint.npz") as a, np.load(parts / "checkpoint.npz") as b:
        for key in a.files:
            if key != "meta":
                assert np.array_equal(a[key], b[key]), key


@pytest.mark.parametrize("game,abstraction", [
    ("leduc", {"name": "card", "params": {"partition": "JQ.K"}}),
    pytest.param("leduc", {"name": "ehs", "params": {"buckets": 2}}, marks=pytest.mark.slow),
    pytest.param("nlocp", {"name": "action", "params": {"wagers": "HP"}}, marks=pytest.mark.slow)])
def test_abstracted_runs_resume_bit_for_bit_and_score_in_the_full_game(tmp_path, game, abstraction):
    cfg = {**config(game, "cfr+", 60), "abstraction": abstraction}
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    run_experiment(cfg, whole)
    with pytest.raises(Interrupted):
        run_experiment(cfg, parts, should_stop=lambda it: it >= 23)
    run_experiment(cfg, parts)
    assert (parts / "policy.json").read_bytes() == (whole / "policy.json").read_bytes()
    assert without_timing(metrics(parts)) == without_timing(metrics(whole))

    full = rcfr.load_game(game)
    policy = rcfr.Policy.load(full, whole / "policy.json")  # a policy of the full game
    summary = json.loads((whole / "summary.json").read_text())
    assert summary["exploitability"] == pytest.approx(rcfr.evaluate(full, policy).exploitability, rel=1e-9)
    assert 0 < summary["representation_pct"] < 100
    assert summary["representation_size"] < full.num_sequences


@pytest.mark.parametrize("solver", ["es-mccfr"] + [pytest.param(name, marks=pytest.mark.slow)  # the others: slow set
                                    for name in ("os-mccfr", "cscfr", "vr-mccfr")])
def test_sampled_solvers_resume_bit_for_bit_with_their_seed(tmp_path, solver):
    """MCCFR advances in compiled chunks of thousands of iterations; a stop, a resume and the
    sampler's RNG state must still reproduce one uninterrupted run with the same seed."""
    cfg = config("leduc", solver, 6000, seed=7, checkpoint_every=1000)
    whole, parts, other_seed = tmp_path / "whole", tmp_path / "parts", tmp_path / "seed8"
    run_experiment(cfg, whole)
    with pytest.raises(Interrupted) as stop:
        run_experiment(cfg, parts, should_stop=lambda it: it >= 2500)
    assert stop.value.iteration < 6000
    run_experiment(cfg, parts)
    assert (parts / "policy.json").read_bytes() == (whole / "policy.json").read_bytes()
    assert without_timing(metrics(parts)) == without_timing(metrics(whole))
    run_experiment(config("leduc", solver, 6000, seed=8), other_seed)  # the seed reaches the sampler
    assert (other_seed / "policy.json").read_bytes() != (whole / "policy.json").read_bytes()
    summary = json.loads((whole / "summary.json").read_text())
    assert summary["representation_size"] == rcfr.load_game("leduc").num_sequences


def test_card_abstractions_need_a_regret_store(tmp_path):
    cfg = {**config("leduc", "rcfr", 10), "abstraction": {"name": "card", "params": {"partition": "JQ.K"}},
           "regressor": {"name": "table", "params": {}}, "features": {"name": "indicator", "params": {}}}
    with pytest.raises(ConfigError, match="no tabular regret store.*cfr, cfr\\+, lcfr, dcfr, .*cscfr, os-mccfr"):
        run_experiment(cfg, tmp_path / "run")
    assert not (tmp_path / "run").exists()
    sampled = {**config("leduc", "es-mccfr", 10), "abstraction": {"name": "card", "params": {"partition": "JQ.K"}}}
    assert run_experiment(sampled, tmp_path / "sampled")["representation_size"] < 2184  # abstract sequences
    action = {**config("nlocp", "es-mccfr", 300), "abstraction": {"name": "action", "params": {"wagers": "HP"}}}
    assert run_experiment(action, tmp_path / "action")["representation_size"] < 3200


def test_a_crash_loses_nothing_before_the_last_checkpoint(tmp_path):
    """A kill (here: an exception) between checkpoints resumes from the last one, same result."""
    whole, crashed = tmp_path / "whole", tmp_path / "crashed"
    run_experiment(config("leduc", "cfr+", 120, checkpoint_every=25), whole)

    crashed_at = []

    def crash(it):
        if it >= 40:
            crashed_at.append(it)
            raise RuntimeError("killed")
        return False

    with pytest.raises(RuntimeError):
        run_experiment(config("leduc", "cfr+", 120, checkpoint_every=25), crashed, should_stop=crash)
    with np.load(crashed / "checkpoint.npz") as data:
        meta = json.loads(str(data["meta"]))
        last = int(data["solver.iteration"])
    assert last < crashed_at[0]  # iterations after the last checkpoint were lost ...
    assert last in set(eval_schedule(120, 8)) | {25, 50}  # ... which was an evaluation or a multiple of 25
    assert [r["iteration"] for r in meta["rows"]] == [i for i in eval_schedule(120, 8) if i <= last]
    run_experiment(config("leduc", "cfr+", 120, checkpoint_every=25), crashed)
    assert (crashed / "policy.json").read_bytes() == (whole / "policy.json").read_bytes()
    assert without_timing(metrics(crashed)) == without_timing(metrics(whole))


def test_extending_a_finished_run_continues_it(tmp_path):
    longer, extended = tmp_path / "longer", tmp_path / "extended"
    run_experiment(config("kuhn", "cfr", 80), longer)
    run_experiment(config("kuhn", "cfr", 30), extended)
    run_experiment(config("kuhn", "cfr", 80), extended)
    assert (extended / "policy.json").read_bytes() == (longer / "policy.json").read_bytes()
    assert metrics(extended)[-1]["exploitability"] == metrics(longer)[-1]["exploitability"]


def test_a_directory_of_another_configuration_is_refused_and_resume_false_starts_over(tmp_path, caplog):
    fresh = tmp_path / "fresh"
    run_experiment(config("kuhn", "cfr+", 40), fresh)
    other = tmp_path / "other"
    run_experiment(config("kuhn", "cfr", 40), other)
    before = {p.name: p.read_bytes() for p in other.iterdir() if p.is_file()}
    with pytest.raises(ConfigError, match="another configuration.*solver.name: 'cfr' -> 'cfr\\+'.*hydra.run.dir"):
        run_experiment(config("kuhn", "cfr+", 40), other)
    assert {p.name: p.read_bytes() for p in other.iterdir() if p.is_file()} == before  # nothing touched
    run_experiment({**config("kuhn", "cfr", 40), "label": "renamed"}, other)  # the label is not the config

    # a checkpoint without its config.yaml is still checked against the configuration
    (other / "config.yaml").unlink()
    run_experiment(config("kuhn", "cfr+", 40), other)
    assert "another configuration" in caplog.text
    assert (other / "policy.json").read_bytes() == (fresh / "policy.json").read_bytes()

    again = tmp_path / "again"
    run_experiment(config("kuhn", "cfr+", 20), again)
    run_experiment(config("kuhn", "cfr+", 40, resume=False), again)
    assert (again / "policy.json").read_bytes() == (fresh / "policy.json").read_bytes()
    assert metrics(again)[0]["iteration"] == 1  # nothing kept from the discarded run


def test_lowering_iterations_on_a_finished_directory_is_refused(tmp_path):
    run_experiment(config("kuhn", "cfr", 30), tmp_path)
    summary = (tmp_path / "summary.json").read_text()
    with pytest.raises(ConfigError, match="run.iterations=20 is below the 30 iterations already done"):
        run_experiment(config("kuhn", "cfr", 20), tmp_path)
    assert (tmp_path / "summary.json").read_text() == summary
    assert "iterations: 30" in (tmp_path / "config.yaml").read_text()


def test_a_run_directory_in_use_is_refused(tmp_path):
    """Another process holding the directory's lock (as a running run does) stops a second run."""
    tmp_path.joinpath(".lock").touch()
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
                               str(tmp_path / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(ConfigError, match="in use by another run"):
            run_experiment(config("kuhn", "cfr", 10), tmp_path)
        assert not (tmp_path / "config.yaml").exists()
    finally:
        holder.kill()
        holder.wait()
    run_experiment(config("kuhn", "cfr", 10), tmp_path)  # released with the process


def test_compile_time_is_reported_apart_from_solve_time(tmp_path):
    summary = run_experiment(config("leduc", "cfr+", 30), tmp_path)
    assert summary["compile_seconds"] > 0 and summary["seconds"] > 0
    assert json.loads((tmp_path / "summary.json").read_text())["compile_seconds"] == summary["compile_seconds"]


@pytest.mark.parametrize("regressor", [{"name": "mlp", "params": {"hidden": [4], "epochs": 1}},
                                       {"name": "tree", "params": {"max_leaves": 4}}])
def test_the_run_seed_reaches_the_regressors(tmp_path, regressor):
    """Seeds 3 and 4 give different policies, the same seed the same one (mlp: initial weights;
    scikit-learn's tree: the feature order that breaks ties)."""
    def policy(seed, name):
        cfg = {"game": {"name": "kuhn"}, "solver": {"name": "rcfr"}, "regressor": regressor,
               "features": {"name": "generic"}, "run": {"iterations": 6, "seed": seed, "eval_points": 2}}
        run_experiment(cfg, tmp_path / name)
        return (tmp_path / name / "policy.json").read_bytes()

    assert policy(3, "a") == policy(3, "b")
    assert policy(3, "a") != policy(4, "c")


def test_each_player_gets_its_own_seed():
    """An unseeded estimator is copied per player with ``random_state = 2 * seed + player``; an
    explicit random_state is kept; the object given is left alone."""
    from sklearn.tree import DecisionTreeRegressor

    def seeds(given):
        solver = rcfr.make_solver("rcfr", rcfr.load_game("kuhn"), regressor=given, features="generic", seed=3)
        return [getattr(r, "estimator", r).random_state for r in solver.store.regressors]

    given = DecisionTreeRegressor(max_leaf_nodes=4)
    assert seeds(given) == [6, 7] and given.random_state is None
    assert seeds(DecisionTreeRegressor(max_leaf_nodes=4, random_state=11)) == [11, 11]


def test_a_damaged_checkpoint_is_ignored_with_a_warning(tmp_path, caplog):
    fresh = tmp_path / "fresh"
    run_experiment(config("kuhn", "cfr+", 40), fresh)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "checkpoint.npz").write_bytes(b"not a zip file")
    run_experiment(config("kuhn", "cfr+", 40), broken)
    assert "cannot read checkpoint" in caplog.text
    assert (broken / "policy.json").read_bytes() == (fresh / "policy.json").read_bytes()

    # a checkpoint cut short (a zip archive missing its end) starts over too
    cut = tmp_path / "cut"
    with pytest.raises(Interrupted):
        run_experiment(config("kuhn", "cfr+", 40), cut, should_stop=lambda it: it >= 10)
    data = (cut / "checkpoint.npz").read_bytes()
    (cut / "checkpoint.npz").write_bytes(data[:len(data) // 2])
    caplog.clear()
    run_experiment(config("kuhn", "cfr+", 40), cut)
    assert "cannot read checkpoint" in caplog.text
    assert (cut / "policy.json").read_bytes() == (fresh / "policy.json").read_bytes()

    # right configuration, wrong contents: loading fails half-way, the run starts over cleanly
    half = tmp_path / "half"
    with pytest.raises(Interrupted):
        run_experiment(config("kuhn", "cfr+", 40), half, should_stop=lambda it: it >= 10)
    with np.load(half / "checkpoint.npz") as data:
        state = {k: data[k] for k in data.files}
    state["solver.store.regrets1"] = state["solver.store.regrets1"][:-1]
    np.savez(half / "checkpoint.npz", **state)
    caplog.clear()
    run_experiment(config("kuhn", "cfr+", 40), half)
    assert "cannot read checkpoint" in caplog.text
    assert (half / "policy.json").read_bytes() == (fresh / "policy.json").read_bytes()


def test_invalid_config_fails_before_writing_anything(tmp_path):
    with pytest.raises(ConfigError, match="run.iterations must be an integer in \\[1, 1,000,000,000,000\\], got 0"):
        run_experiment(config(iterations=0), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def _app(*overrides, **kwargs):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "rcfr.experiments.run", *overrides], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


@pytest.mark.slow  # two app processes end to end (and generous timeouts: a loaded machine starts them slowly)
def test_ctrl_c_checkpoints_and_the_same_command_resumes(tmp_path):
    """The real app: SIGINT stops after the current iteration, saves, prints how to resume."""
    common = ["game=leduc", "solver=cfr+", "run.iterations=400000", "run.eval_points=5",
              "run.checkpoint_every=500"]
    run_dir = tmp_path / "run"
    proc = _app(*common, f"hydra.run.dir={run_dir}")
    deadline = time.time() + 600
    while not (run_dir / "checkpoint.npz").exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 130, err
    assert "interrupted at iteration" in err and f"hydra.run.dir={run_dir}" in err
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted" and 0 < summary["iteration"] < 400000
    stopped_at = summary["iteration"]

    # resume with a shorter target so the test stays quick: the total is stopped_at + 700
    target = stopped_at + 700
    common[2] = f"run.iterations={target}"
    proc = _app(*common, f"hydra.run.dir={run_dir}")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "exploitability" in out and str(run_dir) in out

    game = rcfr.load_game("leduc")
    solver = rcfr.make_solver("cfr+", game)
    solver.run(target)
    policy = rcfr.Policy.load(game, run_dir / "policy.json")
    assert np.array_equal(policy.probs, solver.average_policy().probs)
    assert json.loads((run_dir / "summary.json").read_text())["exploitability"] == \
        rcfr.evaluate(game, solver.average_policy()).exploitability


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stream,progress,shown", [(_Terminal, None, True), (io.StringIO, None, False),
                                                   (_Terminal, False, False), (io.StringIO, True, True)])
def test_progress_bar_on_a_terminal_quiet_in_logs(tmp_path, monkeypatch, stream, progress, shown):
    err = stream()
    monkeypatch.setattr(sys, "stderr", err)
    run_experiment(config(iterations=50, progress=progress), tmp_path)
    assert ("/50 [" in err.getvalue()) == shown


def test_policy_format_npz_and_auto(tmp_path, monkeypatch):
    """`run.policy_format=npz` writes the compact form; `auto` switches to it above the JSON limit."""
    from rcfr.experiments import runner

    run_experiment(config(iterations=10, policy_format="npz"), tmp_path / "npz")
    game = rcfr.load_game("kuhn")
    assert not (tmp_path / "npz" / "policy.json").exists()
    assert rcfr.Policy.load(game, tmp_path / "npz" / "policy.npz").probs.shape == (game.num_sequences,)
    monkeypatch.setattr(runner, "JSON_POLICY_LIMIT", game.num_infosets - 1)
    run_experiment(config(iterations=10), tmp_path / "auto")
    assert (tmp_path / "auto" / "policy.npz").exists() and not (tmp_path / "auto" / "policy.json").exists()
    with pytest.raises(ConfigError, match="policy_format"):
        run_experiment(config(iterations=10, policy_format="pickle"), tmp_path / "bad")
