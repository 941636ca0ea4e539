"""The kit's parts for issue 13's comparison: sizes as shares of the game, peak memory and CPU seconds per
run, curves per size, and the game-specific arms of the large_rcfr presets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from rcfr.experiments import build, memory
from rcfr.experiments.aggregate import aggregate
from rcfr.experiments.callbacks import sweep_jobs
from rcfr.experiments.pooling import node_curves
from rcfr.experiments.run import CONFIG_DIR
from rcfr.experiments.runner import run_experiment
from rcfr.experiments.schema import ConfigError, parse_share, resolve_shares, validate


def config(solver="sampled-rcfr", game="leduc", max_leaves="10%", seed=0, **run):
    rcfr = solver == "sampled-rcfr"
    return {"game": {"name": game, "params": {}},
            "solver": {"name": solver, "options": {"targets": "reservoir", "refit_every": 4, "features_on_demand": True} if rcfr else {}},
            "regressor": {"name": "best_first" if rcfr else "none", "params": {"max_leaves": max_leaves} if rcfr else {}},
            "features": {"name": "poker" if rcfr else "none"},
            "run": {"iterations": 40, "eval_points": 3, "checkpoint_seconds": 1e9, "seed": seed, **run},
            "label": "RCFR" if rcfr else "ES"}


def test_a_share_is_split_between_the_players():
    assert parse_share("f", "1%") == 0.01 and parse_share("f", " 0.1 %") == pytest.approx(0.001)
    assert parse_share("f", 64) is None and parse_share("f", "linear") is None
    assert resolve_shares("regressor.params", {"max_leaves": "10%", "min_samples_leaf": 1}, 1000) == \
        {"max_leaves": 50, "min_samples_leaf": 1}
    assert resolve_shares("p", {"max_leaves": "0.01%"}, 1000) == {"max_leaves": 1}  # never below one


@pytest.mark.parametrize("bad", ["0%", "150%", "1.2.3%", "ten%", "-1%"])
def test_a_bad_share_is_refused_before_any_work(bad):
    with pytest.raises(ConfigError, match=r"regressor.params.max_leaves must be a share .* got"):
        validate(config(max_leaves=bad))


def test_a_share_sizes_both_trees_together():
    spec = validate(config(max_leaves="10%"))
    game = build.make_game(spec)
    setup = build.make_setup(spec, game)
    assert [r.max_leaves for r in setup.solver.regressors] == [round(0.1 * game.num_sequences / 2)] * 2
    setup.solver.run(8)
    assert 0 < setup.size() <= round(0.1 * game.num_sequences / 2) * 2


_OWN_PEAK = """
import json, sys
import numpy as np
from rcfr.experiments import memory
from rcfr.experiments.runner import run_experiment
from tests.test_large_rcfr_kit import config
# a first run compiles (or loads) every kernel, so the measured run's peak holds no compiler's memory
run_experiment(config("es-mccfr", game="kuhn", max_nodes_touched=2000), sys.argv[1] + "/warm-up")
if not memory.reset_peak():
    print(json.dumps(None)); sys.exit()
ballast = np.ones(400 * 2 ** 20 // 8)  # 400 MiB resident before the run, freed before it starts
before = memory.peak_mib()
del ballast
summary = run_experiment(config("es-mccfr", game="kuhn", max_nodes_touched=2000), sys.argv[1] + "/run")
print(json.dumps({"before": before, **{k: summary[k] for k in (*memory.MEMORY, "cpu_seconds")}}))
"""


@pytest.mark.slow  # two kit runs in a fresh interpreter
def test_a_run_reports_its_own_peak_memory_and_cpu_seconds(tmp_path):
    # In a fresh interpreter: the test process's own size (2.3 GB after other tests) must not matter.
    import os
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", _OWN_PEAK, str(tmp_path)], cwd=root, capture_output=True,
                          text=True, timeout=900, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.splitlines()[-1])
    if summary is None:
        pytest.skip("no /proc/self/clear_refs here")
    assert all(summary[k] > 0 for k in memory.MEMORY) and summary["cpu_seconds"] > 0
    # the peak is the run's, not the process's: without the reset it would include the ballast
    assert summary["peak_rss_mib"] < summary["before"] - 200
    assert summary["anon_rss_mib"] <= summary["solve_peak_rss_mib"] <= summary["peak_rss_mib"]
    rows = (tmp_path / "run" / "metrics.csv").read_text().splitlines()
    assert rows[0].split(",")[:3] == ["iteration", "seconds", "cpu_seconds"]


def test_curves_split_by_size_and_plot_against_cpu_seconds(tmp_path):
    for leaves in ("5%", "20%"):
        for seed in (0, 1):
            run_experiment(config(max_leaves=leaves, seed=seed, max_nodes_touched=20_000),
                           tmp_path / f"{leaves[:-1]}-{seed}")
    result = aggregate(tmp_path)
    table = node_curves(result.rows, result.curves)
    assert len(table) == 2 and all(label.startswith("RCFR (") and label.endswith("%)") for _, label in table)
    assert all(p[3] == 2 for points in table.values() for p in points)  # seeds pooled per size
    assert set(node_curves(result.rows, result.curves, "cpu_seconds")) == set(table)
    assert tmp_path / "exploitability_vs_cpu_seconds.png" in result.files
    pooled = [g for g in result.groups if g["seeds"] == 2]
    assert len(pooled) == 2 and all(g["peak_rss_mib"] > 0 for g in pooled)
    assert "peak MiB" in (tmp_path / "results.md").read_text()


@pytest.mark.parametrize("preset", ["large_rcfr_quick", pytest.param("large_rcfr", marks=pytest.mark.slow)])
def test_the_presets_arms_compose_into_their_games(preset):
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
            jobs = sweep_jobs(compose("config", overrides=[f"+experiment={preset}"], return_hydra_config=True))
            specs = [validate(compose("config", overrides=job)) for job in jobs if "run.seed=0" in job]
    finally:
        GlobalHydra.instance().clear()
    assert len(jobs) == 3 * len(specs)
    games = {s.game.name for s in specs}
    assert games == {"goofspiel", "liars_dice", "latent_ttt"}
    for spec in specs:
        assert spec.run.max_nodes_touched > 0
        if spec.solver.name == "sampled-rcfr":
            assert spec.solver.options["features_on_demand"] and spec.features.name == spec.game.name
            assert str(spec.regressor.params["max_leaves"]).endswith("%")
        if spec.abstraction.name != "none":
            assert spec.solver.name == "es-mccfr" and spec.label == "ES abstraction"
    arms = OmegaConf.load(Path(CONFIG_DIR) / "experiment" / f"{preset}.yaml").hydra.sweeper.params["+arm"]
    assert all((Path(CONFIG_DIR) / "arm" / f"{arm}.yaml").exists() for arm in arms.split(","))
