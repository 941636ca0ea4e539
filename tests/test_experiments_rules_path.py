"""The kit on a game walked by its rules (``game.compiled=false``, or a game above the compile limit): the
same numbers as on the compiled tree, and what the rules path cannot do refused before any work."""

from __future__ import annotations

import csv
import json

import pytest

import rcfr
from rcfr.evaluation import bluff as bluff_evaluation
from rcfr.experiments.build import make_game
from rcfr.experiments.runner import identity, run_experiment
from rcfr.experiments.schema import ConfigError, validate
from rcfr.policy.rules import CodePolicy
from rcfr.sources.rules import RulesGame


def config(game="kuhn", params=None, compiled=False, solver="es-mccfr", **changes):
    cfg = {"game": {"name": game, "params": params or {}, "compiled": compiled},
           "solver": {"name": solver, "options": {}},
           "run": {"iterations": 300, "eval_points": 4, "checkpoint_seconds": 1e9}, "label": solver}
    for key, value in changes.items():  # run__measure="x" -> cfg["run"]["measure"] = "x"
        group, name = key.split("__")
        cfg[group][name] = value
    return cfg


def rows(run_dir):
    with (run_dir / "metrics.csv").open() as f:
        return list(csv.DictReader(f))


@pytest.mark.slow  # compiles the driver for the rules' state source (about a minute from a cold cache)
@pytest.mark.parametrize("game, params", [("kuhn", {}), ("liars_dice", {"dice1": 1, "dice2": 1})])
def test_a_run_on_the_rules_scores_what_the_compiled_run_scores(tmp_path, game, params):
    walked = run_experiment(config(game, params, compiled=False), tmp_path / "rules")
    compiled = run_experiment(config(game, params, compiled=None), tmp_path / "tree")
    ours, theirs = rows(tmp_path / "rules"), rows(tmp_path / "tree")
    assert [r["iteration"] for r in ours] == [r["iteration"] for r in theirs]
    for a, b in zip(ours, theirs):
        assert a["nodes_touched"] == b["nodes_touched"]
        assert float(a["exploitability"]) == pytest.approx(float(b["exploitability"]), abs=1e-12)
        assert a["representation_pct"] == ""  # the rules path does not count the game's sequences
    assert walked["game_sequences"] is None and compiled["game_sequences"] > 0
    policy = CodePolicy.load(rcfr.make_rules(game, **params), tmp_path / "rules" / "policy.npz")
    assert policy.num_infosets > 0
    summary = json.loads((tmp_path / "rules" / "summary.json").read_text())
    assert summary["exploitability"] == pytest.approx(compiled["exploitability"], abs=1e-12)


@pytest.mark.parametrize("change, field", [
    ({"abstraction": {"name": "ranks", "params": {}}}, "abstraction"),
    ({"run__policy_format": "json"}, "run.policy_format"),
    ({"solver": {"name": "sampled-rcfr", "options": {"capacity": "1%"}}}, "solver.options.capacity"),
])
def test_what_needs_the_tree_is_refused_before_any_work(change, field, no_enumeration):
    cfg = config(**{k: v for k, v in change.items() if "__" in k})
    cfg.update({k: v for k, v in change.items() if "__" not in k})
    if cfg["solver"]["name"] == "sampled-rcfr":
        cfg.update(regressor={"name": "table", "params": {}}, features={"name": "identity", "params": {}})
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        validate(cfg)


def test_full_width_cfr_on_the_rules_scores_what_the_compiled_run_scores(tmp_path):
    """solver=cfr on a game walked by its rules is CFR over the rules (`rcfr.solvers.rules_cfr`): the compiled run's
    exploitability at every point."""
    for name, compiled in (("rules", False), ("tree", None)):
        run_experiment(config("goofspiel", {"cards": 4}, compiled=compiled, solver="cfr", run__iterations=8),
                       tmp_path / name)
    ours, theirs = rows(tmp_path / "rules"), rows(tmp_path / "tree")
    assert [r["iteration"] for r in ours] == [r["iteration"] for r in theirs]
    for a, b in zip(ours, theirs):
        assert float(a["exploitability"]) == pytest.approx(float(b["exploitability"]), abs=1e-12)


def test_cfr_over_the_rules_on_several_workers_needs_fixed_point_sums(tmp_path):
    """Float sums' iterates part with the shard count at a tie of regrets, so run.workers would change a run's
    numbers: refused before any work, naming the option that makes them shard-free."""
    cfg = config("goofspiel", {"cards": 4}, solver="cfr", run__iterations=2, run__workers=2)
    with pytest.raises(ConfigError, match=r"solver\.options\.sums=fixed"):
        run_experiment(cfg, tmp_path)
    assert not (tmp_path / "metrics.csv").exists()


@pytest.mark.slow  # a local Ray
def test_cfr_over_the_rules_on_two_ray_workers_scores_the_one_process_run(tmp_path, local_ray):
    """The kit's run.workers=2 shards CFR over the rules on Ray: with fixed-point sums the iterates equal the
    one-process run's bit for bit (the saved average policy), and the sharded evaluation scores them to rounding."""
    for workers in (1, 2):
        cfg = config("goofspiel", {"cards": 4}, solver="cfr", run__iterations=6, run__workers=workers)
        cfg["solver"]["options"] = {"sums": "fixed"}
        run_experiment(cfg, tmp_path / str(workers))
    one, two = rows(tmp_path / "1"), rows(tmp_path / "2")
    assert [r["iteration"] for r in one] == [r["iteration"] for r in two] and len(one) > 1
    for a, b in zip(one, two):
        assert float(a["exploitability"]) == pytest.approx(float(b["exploitability"]), abs=1e-12)
    assert (tmp_path / "1" / "policy.npz").read_bytes() == (tmp_path / "2" / "policy.npz").read_bytes()


def test_compiled_must_be_a_boolean_or_null():
    with pytest.raises(ConfigError, match="compiled"):
        validate(config(compiled="sometimes"))


def test_the_default_leaves_run_identities_as_they_were():
    assert '"compiled"' not in identity(validate(config(compiled=None)))
    assert '"compiled": false' in identity(validate(config(compiled=False)))


def test_the_large_presets_walk_the_rules_and_bluff_is_scored_on_its_public_tree():
    spec = validate(config("liars_dice", {"dice1": 2, "dice2": 2}, compiled=False))
    game = make_game(spec)
    assert isinstance(game, RulesGame)
    assert bluff_evaluation.walks(game.rules)
    assert not bluff_evaluation.walks(rcfr.make_rules("kuhn"))


@pytest.mark.slow  # the sampling driver on the rules' state source
def test_full_regret_on_the_rules_measures_what_the_tree_measures(tmp_path):
    """run.measure=full_regret walks the whole game per profile on the rules path: Figure 5.4's measure for an
    abstract outcome-sampling run on Bluff(1,1), equal to the compiled run's."""
    scores = []
    for compiled in (False, None):
        cfg = config("liars_dice", {"dice1": 1, "dice2": 1}, compiled=compiled, solver="os-mccfr", run__iterations=12,
                     run__measure="full_regret", run__eval_points=2)
        cfg["abstraction"] = {"name": "bluff_last_bids", "params": {"r": 1}}
        cfg["solver"]["options"] = {"average_space": "abstract"}
        run_experiment(cfg, tmp_path / str(compiled))
        scores.append([float(r["full_regret"]) for r in rows(tmp_path / str(compiled))])
    assert scores[0] == pytest.approx(scores[1], abs=1e-12) and scores[0][-1] > 0


@pytest.mark.slow
def test_a_recall_abstraction_runs_on_the_rules_as_on_the_tree(tmp_path):
    """Chance-sampled CFR on Bluff(1,1) remembering the last 2 bids: the same numbers on both paths."""
    changes = dict(abstraction={"name": "bluff_last_bids", "params": {"r": 2}}, run__iterations=300)

    def make(compiled):
        cfg = config("liars_dice", {"dice1": 1, "dice2": 1}, compiled=compiled, solver="cscfr",
                     **{k: v for k, v in changes.items() if "__" in k})
        cfg["abstraction"] = changes["abstraction"]
        cfg["solver"]["options"] = {"average_space": "abstract"}
        return cfg
    scores = _bluff_scores_on_both_paths(tmp_path, make)
    assert scores[0][-1] < 0.5 * scores[0][0]  # it learned (from uniform's 0.78)


def test_a_recall_abstraction_is_accepted_on_the_rules():
    cfg = config("liars_dice", {"dice1": 2, "dice2": 2})
    cfg["abstraction"] = {"name": "bluff_last_bids", "params": {"r": 4}}
    validate(cfg)  # no ConfigError: the rules path keys the abstraction by code


def _preset_specs(preset, seed=None):
    """The validated run specs of a preset's sweep; with `seed`, those of that seed's jobs and the number of all jobs."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rcfr.experiments.callbacks import sweep_jobs
    from rcfr.experiments.run import CONFIG_DIR
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
            jobs = sweep_jobs(compose("config", overrides=[f"+experiment={preset}"], return_hydra_config=True))
            chosen = [job for job in jobs if seed is None or f"run.seed={seed}" in job]
            specs = [validate(compose("config", overrides=job)) for job in chosen]
            return (specs, len(jobs)) if seed is not None else specs
    finally:
        GlobalHydra.instance().clear()


@pytest.mark.slow  # validates 25 jobs: 8 s
def test_the_equal_memory_presets_compose():
    big = _preset_specs("rcfr_bluff22")
    assert len(big) == 18 and {s.game.compiled for s in big} == {False}
    assert {s.abstraction.params.get("r") for s in big} == {None, 2, 4, 6, 8}
    assert {s.solver.name for s in big} == {"es-mccfr", "sampled-rcfr+"}
    assert all(s.solver.options.get("average_space") == "abstract" for s in big if s.abstraction.name != "none")
    assert all(s.run.matches > 0 and s.run.max_nodes_touched == 10 ** 9 for s in big)
    quick = _preset_specs("rcfr_bluff22_quick")
    assert {(s.game.params["dice1"], s.game.params["dice2"]) for s in quick} == {(2, 1)}
    assert {s.solver.name for s in quick} == {"es-mccfr", "sampled-rcfr+"}


@pytest.mark.slow  # validates 35 jobs
def test_the_bounded_equal_memory_presets_compose():
    """Issue 34's comparison: every learned arm keeps nothing per set (model profile, row targets, a bounded
    mixture), at three sizes, beside ES on the full game and the six recall abstractions."""
    big, jobs = _preset_specs("bluff22_equal_memory", seed=0)
    assert len(big) == 25 and jobs == 25 * 3 and {(s.game.params["dice2"], s.game.compiled) for s in big} == {(2, False)}
    assert {s.abstraction.params.get("r") for s in big} == {None, 1, 2, 3, 4, 6, 8}
    learned = [s for s in big if s.solver.name != "es-mccfr"]
    assert {s.regressor.name for s in learned} == {"best_first", "lightgbm", "mlp"}
    assert {(s.solver.options["profile"], s.solver.options["average"]) for s in learned} == {("model", "mixture")}
    assert {s.solver.options["capacity"] for s in learned} == {3000, 12000, 48000}
    assert {s.run.max_cpu_seconds for s in big} == {3600}
    quick = _preset_specs("bluff22_equal_memory_quick")
    assert len(quick) == 10 and {s.run.max_cpu_seconds for s in quick} == {120}
    assert {s.solver.options.get("capacity") for s in quick} == {None, 12000}


@pytest.mark.parametrize("preset, opening", [("lanctot_fig54_pttt_quick", [4, 0]), ("lanctot_fig54_pttt", [4])])
def test_the_phantom_panel_presets_compose(preset, opening):
    specs = _preset_specs(preset)
    assert [list(s.game.params["opening"]) for s in specs] == [opening] * 5
    assert {s.abstraction.params.get("forget") for s in specs} == {None, "fosf", "foi", "fos", "foe"}
    assert {s.run.measure for s in specs} == {"full_regret"}


@pytest.mark.slow  # the sampling driver on the rules' state source
def test_lean_rcfr_plus_runs_on_the_rules_through_the_kit(tmp_path):
    """Lean sampled RCFR+ walks the rules in the kit (the RCFR+ arm of rcfr_bluff22): its saved policy scores what
    the run reported, and a run on the tree with the exact table and every target fit scores the same."""
    params = {"dice1": 1, "dice2": 1}
    options = {"features_on_demand": True, "traversals": 2, "refit_every": 1, "capacity": 10**6}
    scores = []
    for compiled in (False, None):
        cfg = config("liars_dice", params, compiled=compiled, solver="sampled-rcfr+", run__iterations=12)
        cfg["solver"]["options"] = options
        cfg.update(regressor={"name": "table", "params": {}}, features={"name": "liars_dice", "params": {}})
        run_experiment(cfg, tmp_path / str(compiled))
        scores.append([float(r["exploitability"]) for r in rows(tmp_path / str(compiled))])
    assert scores[0] == pytest.approx(scores[1], abs=1e-12)
    rules = rcfr.make_rules("liars_dice", **params)
    policy = CodePolicy.load(rules, tmp_path / "False" / "policy.npz")
    saved = bluff_evaluation.evaluate(rules, policy, default="uniform").exploitability
    assert saved == pytest.approx(scores[0][-1], abs=1e-12) and saved < 0.9  # it learned (uniform: above 0.9)


def test_the_bluff22_panel_presets_compose():
    specs = _preset_specs("lanctot_fig54_bluff22")
    assert {(s.game.params["dice1"], s.game.params["dice2"], s.game.compiled) for s in specs} == {(2, 2, False)}
    assert sorted(s.abstraction.params.get("r", 99) for s in specs) == [1, 2, 3, 4, 6, 8, 10, 99]
    assert {s.solver.name for s in specs} == {"cscfr"} and {s.run.iterations for s in specs} == {2000}
    quick = _preset_specs("lanctot_fig54_bluff22_quick")
    assert sorted(s.abstraction.params.get("r", 99) for s in quick) == [1, 4, 99]
    assert {s.run.iterations for s in quick} == {10}


@pytest.mark.parametrize("abstraction", [None, {"name": "bluff_last_bids", "params": {"r": 3}}])
def test_chance_sampling_on_bluffs_rules_takes_the_public_tree_and_scores_the_compiled_run(tmp_path, abstraction):
    """cscfr on Bluff walked by its rules is the public-tree solver (evaluated from its table): its rows equal
    those of the compiled run, which samples the same rolls, over a short run (a long free run drifts apart
    by rounding: tests/test_bluff_public_cfr.py), and its saved policy scores what it reported."""
    def make(compiled):
        cfg = config("liars_dice", {"dice1": 1, "dice2": 1}, compiled=compiled, solver="cscfr", run__iterations=8)
        if abstraction is not None:
            cfg["abstraction"] = abstraction
        return cfg
    _bluff_scores_on_both_paths(tmp_path, make, saved={"dice1": 1, "dice2": 1})


def _bluff_scores_on_both_paths(tmp_path, make, saved=None):
    """Run ``make(compiled)`` on Bluff's rules and on its compiled tree: equal exploitability rows (1e-12), and
    with `saved` (the dice) the rules run's saved policy scores its last row. Returns the rows."""
    scores = []
    for compiled in (False, None):
        run_experiment(make(compiled), tmp_path / str(compiled))
        scores.append([float(r["exploitability"]) for r in rows(tmp_path / str(compiled))])
    assert scores[0] == pytest.approx(scores[1], abs=1e-12)
    if saved is not None:
        rules = rcfr.make_rules("liars_dice", **saved)
        policy = CodePolicy.load(rules, tmp_path / "False" / "policy.npz")
        assert bluff_evaluation.evaluate(rules, policy).exploitability == pytest.approx(scores[0][-1], abs=1e-12)
    return scores
