"""The experiment kit's node budget (run.max_nodes_touched) and the exploitability-vs-nodes aggregate."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from scipy import stats

from rcfr.experiments.aggregate import aggregate
from rcfr.experiments.figures import plot_nodes
from rcfr.experiments.pooling import mean_ci, node_curves
from rcfr.experiments.runner import Interrupted, node_schedule, run_experiment
from rcfr.experiments.schema import ConfigError, validate


def config(solver="cfr", budget=20_000, seed=0, iterations=10**9):
    return {"game": {"name": "kuhn", "params": {}}, "solver": {"name": solver, "options": {}},
            "run": {"iterations": iterations, "max_nodes_touched": budget, "eval_points": 6, "seed": seed,
                    "checkpoint_seconds": 1e9}, "label": solver}


def rows_of(run_dir):
    with (run_dir / "metrics.csv").open() as f:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]


@pytest.mark.parametrize("solver", ["cfr", "es-mccfr"])
def test_a_node_budget_stops_the_run_and_spaces_evaluations_by_nodes(tmp_path, solver):
    summary = run_experiment(config(solver), tmp_path)
    rows = rows_of(tmp_path)
    nodes = [r["nodes_touched"] for r in rows]
    assert summary["status"] == "complete" and nodes[-1] >= 20_000
    assert nodes[-2] < 20_000  # it stopped at the first evaluation past the budget
    assert np.all(np.diff(nodes) > 0) and np.all(np.diff([r["iteration"] for r in rows]) > 0)
    marks = node_schedule(20_000, 6)
    assert len(rows) <= len(marks) and marks[0] == 1000 and marks[-1] == 20_000
    for mark in marks:  # every mark is followed closely by an evaluation
        assert any(n >= mark for n in nodes)


def test_a_node_budget_run_resumes_bit_for_bit(tmp_path):
    run_experiment(config("es-mccfr"), tmp_path / "whole")
    with pytest.raises(Interrupted):
        run_experiment(config("es-mccfr"), tmp_path / "parts", should_stop=lambda it: it >= 200)
    run_experiment(config("es-mccfr"), tmp_path / "parts")
    strip = [{k: v for k, v in r.items() if "seconds" not in k} for r in rows_of(tmp_path / "whole")]
    assert strip == [{k: v for k, v in r.items() if "seconds" not in k} for r in rows_of(tmp_path / "parts")]


def test_node_budget_is_validated():
    with pytest.raises(ConfigError, match="run.max_nodes_touched"):
        validate(config(budget=-1))


def test_cpu_budget_is_validated_and_is_one_budget_of_two():
    for bad in (-1.0, float("nan"), float("inf")):
        cfg = config(budget=0)
        cfg["run"]["max_cpu_seconds"] = bad
        with pytest.raises(ConfigError, match="run.max_cpu_seconds must be a finite number >= 0"):
            validate(cfg)
    cfg = config()
    cfg["run"]["max_cpu_seconds"] = 5.0
    with pytest.raises(ConfigError, match="two budgets for one run"):
        validate(cfg)


class _Counted:
    """A stand-in solver and progress: each iteration spends `cost` CPU seconds."""

    def __init__(self, cost):
        self.iteration, self.cpu_seconds, self.cost = 0, 0.0, cost

    def run(self, n):
        self.iteration += n
        self.cpu_seconds += n * self.cost


def test_a_cpu_budget_schedules_evaluations_at_log_spaced_cpu_seconds():
    from types import SimpleNamespace

    from rcfr.experiments.schedule import FIRST_CPU_MARK, Schedule
    run = SimpleNamespace(iterations=10**9, checkpoint_every=0, max_nodes_touched=0, max_cpu_seconds=100.0,
                          eval_points=5)
    solver = _Counted(0.01)
    schedule = Schedule(run, solver, solver)  # the stand-in is its own progress
    evaluated = []
    while schedule.running(solver.iteration):
        solver.run(schedule.stop_at(solver.iteration, 10**6) - solver.iteration)
        if schedule.evaluation_due(solver.iteration):
            evaluated.append(solver.cpu_seconds)
    marks = node_schedule(100.0, 5, FIRST_CPU_MARK)
    assert marks[0] == FIRST_CPU_MARK and marks[-1] == 100.0 and len(marks) == 5
    assert len(evaluated) == len(marks) and evaluated[-1] >= 100.0 > evaluated[-2]
    for mark, at in zip(marks, evaluated):  # each evaluation lands just past its mark
        assert mark <= at < mark * 1.05 + 0.02


def test_a_cpu_budget_stops_the_run(tmp_path):
    cfg = config("es-mccfr", budget=0)
    cfg["run"].update(max_cpu_seconds=1.5, eval_points=3)
    summary = run_experiment(cfg, tmp_path)
    rows = rows_of(tmp_path)
    cpu = [r["cpu_seconds"] for r in rows]
    assert summary["status"] == "complete" and summary["max_cpu_seconds"] == 1.5
    assert cpu[-1] >= 1.5 > cpu[-2] and np.all(np.diff(cpu) > 0)


def test_mean_ci_is_the_student_t_interval():
    values = [1.0, 2.0, 4.0]
    mean, half = mean_ci(values)
    assert mean == pytest.approx(7 / 3)
    assert half == pytest.approx(stats.t.ppf(0.975, 2) * np.std(values, ddof=1) / np.sqrt(3))
    assert mean_ci([5.0]) == (5.0, 0.0)


def test_aggregate_averages_seeds_by_evaluation(tmp_path):
    for seed in (0, 1, 2):
        run_experiment(config("os-mccfr", seed=seed), tmp_path / str(seed))
    result = aggregate(tmp_path, plots=False)
    table = node_curves(result.rows, result.curves)
    (key, points), = table.items()
    assert key == ("kuhn", "os-mccfr") and all(p[3] == 3 for p in points)
    curves = [rows_of(tmp_path / str(s)) for s in (0, 1, 2)]
    end = min(c[-1]["nodes_touched"] for c in curves)
    assert points[-1][0] == pytest.approx(end)
    at = [np.exp(np.interp(np.log(points[-1][0]), np.log([r["nodes_touched"] for r in c]),
                           np.log([r["exploitability"] for r in c]))) for c in curves]
    assert points[-1][1] == pytest.approx(np.mean(at))
    assert points[0][0] >= max(c[0]["nodes_touched"] for c in curves)
    assert points[-1][2] > 0  # seeds differ
    assert tmp_path / "exploitability_vs_nodes.png" in plot_nodes(tmp_path, table)
    assert "Mean over seeds" in (tmp_path / "results.md").read_text()
    assert json.loads((tmp_path / "0" / "summary.json").read_text())["max_nodes_touched"] == 20_000


def test_fig45_full_preset_names_valid_games_and_the_quick_ones_arms():
    from omegaconf import OmegaConf

    from rcfr.experiments.build import make_rules
    from rcfr.experiments.run import CONFIG_DIR

    full, quick = (OmegaConf.load(f"{CONFIG_DIR}/experiment/{name}.yaml") for name in ("lanctot_fig45", "lanctot_fig45_quick"))
    assert full.hydra.sweeper.params["+arm"] == quick.hydra.sweeper.params["+arm"]
    assert full.hydra.sweeper.params["run.seed"] == quick.hydra.sweeper.params["run.seed"]
    for option in full.hydra.sweeper.params.game.split(","):
        game = OmegaConf.load(f"{CONFIG_DIR}/game/{option}.yaml")
        make_rules(game.name, **game.params)
    assert full.run.max_nodes_touched > quick.run.max_nodes_touched
    assert full.hydra.callbacks.validate.build_solvers is False and full.hydra.launcher.n_jobs == 1


@pytest.mark.parametrize("preset, games", [("lanctot_fig45_quick", 5)])
def test_fig45_presets_expand_to_games_solvers_and_seeds(preset, games):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rcfr.experiments.callbacks import sweep_jobs
    from rcfr.experiments.run import CONFIG_DIR

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose("config", overrides=[f"+experiment={preset}"], return_hydra_config=True)
        jobs = sweep_jobs(cfg)
        assert len(jobs) == games * 4 * 3
        values = [dict(o.split("=", 1) for o in job if not o.startswith("+experiment")) for job in jobs]
        assert {v["run.seed"] for v in values} == {"0", "1", "2"}
        assert {v["+arm"] for v in values} == {"cfr", "cscfr", "os-mccfr", "es-mccfr"}
        # one job per game and one per solver compose and validate
        picked = {v["game"]: job for v, job in zip(values, jobs)} | {v["+arm"]: job for v, job in zip(values, jobs)}
        specs = [validate(compose("config", overrides=job)) for job in picked.values()]
    GlobalHydra.instance().clear()
    assert len({s.game.name for s in specs}) == games
    assert {s.solver.options["epsilon"] for s in specs if s.solver.name == "os-mccfr"} == {0.6}
    assert {s.solver.options.get("average_mode") for s in specs if "mccfr" in s.solver.name} == {"stochastic"}
    assert all(s.run.max_nodes_touched > 0 for s in specs)
