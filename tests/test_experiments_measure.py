"""The kit's per-iteration measure (``run.measure``), ``average_space`` for full-width solvers on an
abstraction, and the presets of Lanctot 2013 Figs 5.3 and 5.4 built on them."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

import rcfr
from rcfr.abstraction import FullRegret, abstract_solver, average_policy, make_abstraction
from rcfr.experiments.aggregate import aggregate
from rcfr.experiments.callbacks import sweep_jobs
from rcfr.experiments.pooling import curve_rows
from rcfr.experiments.run import CONFIG_DIR
from rcfr.experiments.runner import Interrupted, run_experiment
from rcfr.experiments.schema import ConfigError, validate


def drp(solver="cscfr", iterations=40, skew=0.2, options=None, **run):
    return {"game": {"name": "dieroll", "params": {"skew": skew}}, "solver": {"name": solver, "options": options or {}},
            "abstraction": {"name": "drp_ir"}, "label": f"{solver} | δ={skew}",
            "run": {"iterations": iterations, "eval_points": 6, "seed": 3, "measure": "full_regret",
                    "checkpoint_seconds": 1e9, "progress": False, **run}}


def column(run_dir, name):
    with (run_dir / "metrics.csv").open() as f:
        return [(int(r["iteration"]), float(r[name])) for r in csv.DictReader(f)]


def test_full_regret_is_the_library_measure_of_the_played_profiles(tmp_path):
    summary = run_experiment(drp(), tmp_path)
    got = column(tmp_path, "full_regret")
    game = rcfr.load_game("dieroll", skew=0.2)
    solver = rcfr.make_solver("cscfr", game, abstraction=make_abstraction(game, "drp_ir"), seed=3)
    tracker, expected = FullRegret(game), []
    for t in range(1, 41):  # what benchmarks/reproductions/imperfect_recall.py did: measure sigma^t, then iterate
        tracker.add(solver.current_policy())
        solver.run(1)
        if t in dict(got):
            expected.append((t, tracker.positive_sum()))
    assert got == expected and got[-1][0] == 40
    assert (summary["measure"], summary["measure_value"]) == ("full_regret", got[-1][1])
    assert column(tmp_path, "exploitability")[-1][1] == rcfr.exploitability(game, solver.average_policy())


def test_an_interrupted_full_regret_run_resumes_bit_for_bit(tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    run_experiment(drp(), whole)
    with pytest.raises(Interrupted):
        run_experiment(drp(), parts, should_stop=lambda it: it >= 13)
    with np.load(parts / "checkpoint.npz") as data:
        assert int(data["measure.t"]) == 13 and data["measure.plan0"].any()
    run_experiment(drp(), parts)
    assert column(parts, "full_regret") == column(whole, "full_regret")
    with np.load(whole / "checkpoint.npz") as a, np.load(parts / "checkpoint.npz") as b:
        for key in a.files:
            if key != "meta":
                assert np.array_equal(a[key], b[key]), key


def test_a_checkpoint_whose_measure_sums_do_not_match_is_not_resumed(tmp_path, caplog):
    with pytest.raises(Interrupted):
        run_experiment(drp(), tmp_path, should_stop=lambda it: it >= 5)
    with np.load(tmp_path / "checkpoint.npz") as data:
        state = {k: data[k] for k in data.files}
    state["measure.t"] = np.array(4)
    np.savez(tmp_path / "checkpoint.npz", **state)
    run_experiment(drp(), tmp_path)
    assert "starting over" in caplog.text
    whole = tmp_path / "whole"
    run_experiment(drp(), whole)
    assert column(tmp_path, "full_regret") == column(whole, "full_regret")


def test_abstract_averaging_of_full_width_cfr_is_the_library_average(tmp_path):
    game = rcfr.load_game("liars_dice")
    cfg = {"game": {"name": "liars_dice"}, "solver": {"name": "cfr", "options": {"average_space": "abstract"}},
           "abstraction": {"name": "bluff_last_bids", "params": {"r": 1}},
           "run": {"iterations": 5, "eval_points": 2, "progress": False}}
    run_experiment(cfg, tmp_path / "abstract")
    run_experiment({**cfg, "solver": {"name": "cfr", "options": {"average_space": "full"}}}, tmp_path / "full")
    solver = abstract_solver("cfr", game, make_abstraction(game, "bluff_last_bids", r=1)).run(5)
    for space in ("abstract", "full"):
        assert column(tmp_path / space, "exploitability")[-1][1] == rcfr.exploitability(
            game, average_policy(solver, space))
    assert column(tmp_path / "abstract", "exploitability") != column(tmp_path / "full", "exploitability")


@pytest.mark.parametrize("change,message", [
    ({"run": {"measure": "regret"}}, "run.measure must be one of exploitability, full_regret, approx_exploitability, got 'regret'"),
    ({"solver": {"name": "cfr", "options": {"average_space": "sideways"}}},
     "unknown solver.options.average_space 'sideways'; allowed: full, abstract"),
    ({"solver": {"name": "cfr", "options": {"average_space": "abstract"}}, "abstraction": {"name": "none"}},
     "average_space='abstract' averages over merged information sets, so it needs an information-set abstraction"),
    ({"solver": {"name": "cscfr", "options": {"average_space": "sideways"}}}, "average_space"),
])
def test_bad_measure_and_average_space_fail_before_any_work(tmp_path, change, message):
    cfg = drp()
    for key, value in change.items():
        cfg[key] = {**cfg[key], **value}
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_experiment(cfg, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_aggregate_tabulates_the_measure_per_iteration_in_panels_across_game_parameters(tmp_path):
    for skew in (0.0, 0.5):
        for seed in (0, 1):
            run_experiment({**drp(iterations=12, skew=skew), "label": f"Skew | δ={skew}",
                            "run": {**drp()["run"], "iterations": 12, "seed": seed}}, tmp_path / f"{skew}-{seed}")
    result = aggregate(tmp_path)
    rows = curve_rows(result.groups)
    assert list(rows) == [("dieroll", "Skew")] and [name for name, _ in rows[("dieroll", "Skew")]] == ["δ=0.0", "δ=0.5"]
    text = (tmp_path / "curves.md").read_text()
    assert text.startswith("Skew: (R1+ + R2+)/T of the played profiles, full game (chips), mean over seeds")
    mean = np.mean([column(tmp_path / f"0.5-{s}", "full_regret")[-1][1] for s in (0, 1)])
    assert "| δ=0.5 | 2 | " in text and f"{mean:.5g} |" in text.splitlines()[-1]
    assert "| full_regret |" in (tmp_path / "results.md").read_text()


def _jobs(preset):
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
            cfg = compose("config", overrides=[f"+experiment={preset}"], return_hydra_config=True)
            return [validate(compose("config", overrides=job)) for job in sweep_jobs(cfg)]
    finally:
        GlobalHydra.instance().clear()


def test_fig53_presets_pair_each_game_with_its_abstraction_and_both_averages():
    for preset, iterations in (("lanctot_fig53", 1000), ("lanctot_fig53_quick", 100)):
        jobs = _jobs(preset)
        assert {(j.game.name, j.abstraction.name, j.solver.options["average_space"], j.label) for j in jobs} == {
            ("dieroll", "drp_ir", s, f"DRP-IR | {s} averaging") for s in ("full", "abstract")} | {
            ("liars_dice", "bluff_last_bids", s, f"Bluff(1,1) r=4 | {s} averaging") for s in ("full", "abstract")}
        assert {(j.solver.name, j.run.iterations) for j in jobs} == {("cfr", iterations)}


@pytest.mark.slow  # composes every job of the Fig 5.4 presets (10-17 s)
def test_fig54_presets_take_run_lengths_from_the_arms_or_the_quick_preset():
    full = _jobs("lanctot_fig54")
    assert {j.run.measure for j in full} == {"full_regret"} and {j.solver.name for j in full} == {"cscfr"}
    lengths = {(j.game.name, j.game.params.get("dice1", 1), j.run.iterations) for j in full}
    assert lengths == {("dieroll", 1, 50000), ("liars_dice", 1, 1000), ("liars_dice", 2, 300)}
    skews = sorted({j.game.params["skew"] for j in full if j.game.name == "dieroll"})
    assert skews == [0.0, 0.05, 0.1, 0.2, 0.5]
    assert len(full) == 3 * len({j.label for j in full})  # every arm is its own curve, over 3 seeds
    quick = _jobs("lanctot_fig54_quick")
    assert {j.run.iterations for j in quick} == {1000} and {j.run.seed for j in quick} == {0, 1}
    assert json.dumps(sorted({j.abstraction.params.get("r", 0) for j in quick})) == "[0, 1, 2, 4]"
