"""Experiment kit configs: every group option and preset composes, bad configs fail early with the
field and the allowed values, launcher configs for Slurm and Ray compose (they run in
test_experiments_multirun.py)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import ConfigCompositionException
from hypothesis import given
from hypothesis import strategies as st
from omegaconf import OmegaConf

from rcfr.experiments import arms, build, components
from rcfr.experiments.callbacks import Validate, sweep_jobs
from rcfr.experiments.run import CONFIG_DIR
from rcfr.experiments.runner import default_label, eval_schedule
from rcfr.experiments.schema import ConfigError, validate

CONFIGS = Path(CONFIG_DIR)


@pytest.fixture()
def hydra_ctx():
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        yield
    GlobalHydra.instance().clear()


def options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


def test_default_config_is_leduc_cfr_plus(hydra_ctx):
    spec = validate(compose("config"))
    assert (spec.game.name, spec.solver.name, spec.regressor.name, spec.abstraction.name) == \
        ("leduc", "cfr+", "none", "none")


@pytest.mark.parametrize("group", ["game", "solver", "regressor", "features",
                                   pytest.param("abstraction", marks=pytest.mark.slow)])  # ~10 CPU s: builds each
def test_every_group_option_composes_with_a_known_name(hydra_ctx, group):
    table = {"regressor": components.REGRESSORS, "features": components.FEATURES,
             "abstraction": components.ABSTRACTIONS}.get(group)
    for option in options(group):
        cfg = compose("config", overrides=[f"{group}={option}"])
        node = cfg[group]
        if group == "game":
            if node.name == "openspiel" and importlib.util.find_spec("pyspiel") is None:
                continue  # the optional extra rcfr[openspiel] is not installed (tests/test_openspiel.py)
            build.make_rules(node.name, **node.params)  # valid rules
        elif group == "solver":
            assert node.name == option  # file name == registry name, one mechanism
        elif group == "abstraction":
            assert set(node.params) <= set(table[node.name]), option
            if option == "none":
                continue
            game_name = {"phantom_ttt_forget": "phantom_ttt_40"}.get(option) or next(  # a compiled PTTT, not the full one
                (g for g in options("game") if option.startswith(g)), "leduc")  # nlocp_*, dieroll_*, ...
            spec = validate(compose("config", overrides=[f"{group}={option}", f"game={game_name}"]))
            setup = build.make_setup(spec, build.make_game(spec))  # the library builds it
            assert 0 < setup.size() < setup.game.num_sequences, option
            assert setup.policy().game is setup.game  # policies come back in the full game
        else:
            assert node.name in table, (group, option)
            assert set(node.params) <= set(table[node.name]), (group, option)


def test_tabular_solver_options_match_their_constructors(hydra_ctx):
    for name in build.SOLVERS:
        learned = "regressor" in build.keyword_names(build.SOLVERS[name])  # RCFR/RCFR+ need components
        extra = ["regressor=best_first", "features=poker"] if learned else []
        spec = validate(compose("config", overrides=[f"solver={name}", *extra]))
        written = OmegaConf.load(CONFIGS / "solver" / f"{name}.yaml")
        assert spec.solver.name == written.name == name
        assert dict(spec.solver.options) == OmegaConf.to_container(written.get("options") or {}), name
        assert set(spec.solver.options) <= set(build.keyword_names(build.SOLVERS[name])), name


@pytest.mark.parametrize("preset", ["leduc_quick", "leduc_vs_abstraction", "leduc_vs_abstraction_quick",
                                    "nlocp_vs_abstraction", "nlocp_vs_abstraction_quick"])
def test_presets_compose_and_expand_to_their_arms(hydra_ctx, preset):
    cfg = compose("config", overrides=[f"+experiment={preset}"], return_hydra_config=True)
    assert cfg.hydra.mode.name == "MULTIRUN"
    jobs = sweep_jobs(cfg)
    chosen = [next(o.split("=", 1)[1] for o in job if o.startswith("+arm=")) for job in jobs]
    assert len(chosen) == len(set(chosen)) > 0
    assert set(chosen) <= set(arms.arms())
    if preset.endswith("vs_abstraction"):
        assert cfg.run.iterations == 100_000
        game = "nlocp" if preset.startswith("nlocp") else "leduc"
        # BF, BF_BS, BF+, BF+_BS at the same budgets, CFR+ unabstracted, every abstraction of the game
        budgets = {prefix: sorted(int(c.split("-")[-1]) for c in chosen if c.startswith(prefix + "-"))
                   for prefix in arms.REGRESSION}
        assert len({tuple(b) for b in budgets.values()}) == 1 and len(budgets["bf"]) >= 6
        assert "cfr+" in chosen
        assert {c[4:] for c in chosen if c.startswith("abs_")} == \
            {a for a in arms.abstraction_names() if a.startswith(game) or (game == "leduc" and "ehs" in a)}
    seen = set()
    for job in jobs:  # one job of each kind composes; its arm pins solver, regressor and abstraction
        arm = next(o.split("=", 1)[1] for o in job if o.startswith("+arm="))
        kind = arm if arm in arms.TABULAR else arm.split("-")[0] if "-" in arm else arm[:9]
        if kind in seen:
            continue
        seen.add(kind)
        job_cfg = compose("config", overrides=job)
        if arm in arms.TABULAR:
            validate(job_cfg)
            assert job_cfg.solver.name == arm
        elif arm.startswith("abs_"):
            assert job_cfg.abstraction == OmegaConf.load(CONFIGS / "abstraction" / f"{arm[4:]}.yaml")
        else:
            prefix, leaves = arm.rsplit("-", 1)
            solver, targets, label = arms.REGRESSION[prefix]
            assert (job_cfg.solver.name, job_cfg.solver.options.targets, job_cfg.label) == \
                (solver, targets, label)
            assert job_cfg.regressor.params.max_leaves == int(leaves)


def test_leduc_quick_compares_cfr_plus_rcfr_rcfr_plus_and_card_abstractions(hydra_ctx):
    cfg = compose("config", overrides=["+experiment=leduc_quick"], return_hydra_config=True)
    specs = [validate(compose("config", overrides=job)) for job in sweep_jobs(cfg)]
    assert all(spec.game.params.get("merge_suits") for spec in specs)  # sizes relative to 672 sequences
    by_label = {}
    for spec in specs:
        by_label.setdefault(spec.label, []).append(spec)
    assert [s.solver.name for s in by_label["CFR+"]] == ["cfr+"]
    for label, solver in (("BF", "rcfr"), ("BF+", "rcfr+")):
        assert {s.solver.name for s in by_label[label]} == {solver}
        assert sorted(s.regressor.params["max_leaves"] for s in by_label[label]) == [32, 64, 128, 256]
    abstracted = [label for label in by_label if label.startswith("CFR+ ")]
    assert len(abstracted) >= 3 and all(len(by_label[label]) == 1 for label in abstracted)


BAD = [
    (["solver.name=foo"], ["solver.name", "'foo'", "allowed: cfr, cfr+, lcfr, dcfr", "es-mccfr"]),
    (["game.name=chess"], ["game", "'chess'", "allowed:", "kuhn", "leduc", "nlocp"]),
    (["game=nlocp", "game.params.cards=1"], ["cards", "[2, 13]", "1"]),
    (["run.iterations=0"], ["run.iterations", "in [1,", "got 0"]),
    (["run.eval_points=-3"], ["run.eval_points", "in [1, 10,000]"]),
    (["run.eval_points=100000000"], ["run.eval_points", "in [1, 10,000]", "100000000"]),
    (["run.seed=-1"], ["run.seed", "in [0,"]),
    (["run.checkpoint_seconds=-1"], ["run.checkpoint_seconds", ">= 0"]),
    (["run.checkpoint_seconds=nan"], ["run.checkpoint_seconds", "finite", "nan"]),
    (["run.checkpoint_seconds=inf"], ["run.checkpoint_seconds", "finite", "inf"]),
    (["+run.itertions=5"], ["'run.itertions'", "allowed in run: iterations, seed, eval_points"]),
    (["run.itertions=5"], ["'run.itertions'", "allowed in run: iterations"]),
    (["+foo=5"], ["'foo'", "allowed at the top level: game, solver, regressor"]),
    (["+game.foo=5"], ["'game.foo'", "allowed in game: name, params"]),
    (["regressor=best_first", "regressor.params.leafs=64"], ["regressor.params", "'leafs'", "max_leaves"]),
    (["solver=cfr", "solver.options.alpha=2"], ["solver.options", "'alpha'", "allowed: updates, averaging"]),
    (["solver=cfr", "+solver.options.alpha=2"], ["solver.options", "'alpha'", "'cfr'", "allowed: updates, averaging"]),
    (["solver=dcfr", "solver.options.updates=sometimes"], ["updates", "'sometimes'", "alternating, simultaneous"]),
    (["regressor=best_first"], ["'cfr+'", "regressor=none"]),
    (["abstraction=nlocp_hp"], ["abstraction 'action'", "no-limit game", "leduc"]),
    (["abstraction=leduc_jq_k", "abstraction.params.partition=J.QK.K"], ["partition 'J.QK.K'", "'J.Q.K'"]),
    (["abstraction.name=card"], ["abstraction 'card' needs abstraction.params.partition"]),
    (["abstraction=ehs3", "abstraction.params.recall=total"], ["recall", "'total'", "perfect, imperfect"]),
    (["regressor.name=forest"], ["regressor.name", "'forest'", "best_first", "lightgbm", "mlp"]),
    (["features.name=pixels"], ["features.name", "'pixels'", "indicator, generic, poker"]),
    (["abstraction.name=magic"], ["abstraction.name", "'magic'", "none, card, action, ranks, ehs, ehs2"]),
    (["regressor=best_first", "+regressor.params.leafs=3"], ["regressor.params", "'leafs'", "max_leaves"]),
    (["solver=rcfr+"], ["'rcfr+' needs a regressor", "best_first"]),
    (["+arm=bf+-64", "solver.options.targets=mean"], ["targets 'mean'", "stored, bootstrap"]),
]


@pytest.mark.parametrize("overrides,fragments", BAD, ids=[" ".join(o) for o, _ in BAD])
def test_bad_configs_fail_naming_the_field_and_the_allowed_values(hydra_ctx, overrides, fragments):
    cfg = compose("config", overrides=overrides)
    with pytest.raises(ConfigError) as err:
        spec = validate(cfg)
        build.make_setup(spec, build.make_game(spec))  # value errors the constructors find
    for fragment in fragments:
        assert fragment in str(err.value), (fragment, str(err.value))


def test_value_errors_found_by_constructors_stop_the_run_before_its_directory_exists(hydra_ctx, tmp_path):
    from rcfr.experiments.runner import run_experiment
    cfg = compose("config", overrides=["solver=dcfr", "solver.options.updates=sometimes", "game=kuhn"])
    with pytest.raises(ConfigError, match="updates.*sometimes.*alternating, simultaneous"):
        run_experiment(cfg, tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("overrides,key", [(["bogus=1"], "+bogus=1"), (["run.iterations=abc"], "run.iterations"),
                                           (["solver=nope"], "solver")])
def test_shape_errors_fail_while_composing_and_name_the_key(hydra_ctx, overrides, key):
    """Types, group options and top-level keys without ``+`` are Hydra's to reject (then ``+bogus=1``
    reaches `validate`); every other unknown key is `validate`'s (see BAD)."""
    with pytest.raises(ConfigCompositionException) as err:
        compose("config", overrides=overrides)
    text = str(err.value) + str(err.value.__cause__)
    assert key in text
    if overrides == ["solver=nope"]:
        assert "cfr+" in text  # hydra lists the available options of the group


@pytest.mark.slow  # builds the solver of each of the 26 jobs (~7 CPU s)
def test_a_bad_job_stops_the_whole_sweep_before_any_job_runs(hydra_ctx):
    cfg = compose("config", overrides=["+experiment=leduc_quick"], return_hydra_config=True)
    OmegaConf.set_readonly(cfg, False)
    cfg.hydra.overrides.task.append("run.iterations=5,0")
    with pytest.raises(SystemExit) as err:
        Validate().on_multirun_start(cfg)
    assert "run.iterations must be an integer in [1, 1,000,000,000,000], got 0" in str(err.value)
    assert "+arm=cfr+ " in str(err.value)  # names the job
    cfg.hydra.overrides.task[-1] = "run.seed=1,2"
    Validate().on_multirun_start(cfg)  # a valid sweep passes
    assert len(sweep_jobs(cfg)) == 2 * 13


def test_a_value_only_a_constructor_rejects_stops_the_sweep_before_any_job_runs(hydra_ctx):
    cfg = compose("config", overrides=["game=kuhn", "abstraction=ehs3"], return_hydra_config=True)
    OmegaConf.set_readonly(cfg, False)
    cfg.hydra.overrides.task.extend(["game=kuhn,liars_dice", "abstraction=ehs3"])
    with pytest.raises(SystemExit) as err:  # E[HS] buckets need a poker game: liars_dice has none
        Validate().on_multirun_start(cfg)
    assert "game=liars_dice" in str(err.value)


def test_default_labels_tell_methods_apart(hydra_ctx):
    def label(*overrides):
        return default_label(validate(compose("config", overrides=list(overrides))))

    assert label("solver=cfr+") == "cfr+"
    assert label("solver=rcfr+", "regressor=best_first", "features=poker") == "rcfr+ best_first poker"
    assert label("solver=rcfr+", "regressor=linear", "features=generic") == "rcfr+ linear generic"
    assert label("abstraction=leduc_jq_k") == "cfr+ JQ.K"


# ---- launchers ----------------------------------------------------------------------------------
def test_joblib_is_the_default_launcher(hydra_ctx):
    cfg = compose("config", return_hydra_config=True)
    assert cfg.hydra.launcher._target_ == "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"


def test_slurm_launcher_config_composes_with_the_submitit_plugin(hydra_ctx):
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    cfg = compose("config", overrides=["hydra/launcher=slurm", "hydra.launcher.partition=gpu"],
                  return_hydra_config=True)
    launcher = cfg.hydra.launcher
    assert launcher._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert (launcher.partition, launcher.cpus_per_task, launcher.timeout_min) == ("gpu", 1, 240)
    from hydra.utils import get_class
    assert get_class(launcher._target_).__name__ == "SlurmLauncher"


@dataclass
class _RayConf:  # the fields of hydra-ray-launcher's RayLauncherConf (the plugin is not installed)
    init: Dict[str, Any] = field(default_factory=lambda: {"address": None})
    remote: Dict[str, Any] = field(default_factory=dict)


@dataclass
class _RayLauncherConf:
    _target_: str = "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher"
    ray: _RayConf = field(default_factory=_RayConf)


def test_ray_launcher_config_matches_the_plugin_schema(hydra_ctx):
    cfg = compose("config", overrides=["hydra/launcher=ray_cluster"], return_hydra_config=True)
    launcher = cfg.hydra.launcher
    schema = OmegaConf.structured(_RayLauncherConf)
    merged = OmegaConf.merge(schema, launcher)  # an unknown key or a wrong type would raise here
    assert merged._target_ == _RayLauncherConf._target_
    assert merged.ray.init.address == "auto" and merged.ray.remote.num_cpus == 1
    with pytest.raises(Exception):
        OmegaConf.merge(schema, {"ray": {"inti": {}}})  # the check itself can fail


# ---- evaluation schedule ------------------------------------------------------------------------
@given(st.integers(1, 10 ** 6), st.integers(1, 60))
def test_eval_schedule_is_log_spaced_and_ends_at_the_last_iteration(iterations, points):
    marks = eval_schedule(iterations, points)
    assert marks == sorted(set(marks)) and marks[0] >= 1 and marks[-1] == iterations
    assert len(marks) <= points + 1
    if iterations >= 1000 and points >= 10:
        assert marks[0] == 1 and len(marks) >= min(points, 10) // 2


def test_a_run_is_checked_before_hydra_touches_its_directory(hydra_ctx, tmp_path):
    """`Validate.on_run_start` runs before Hydra creates the run directory or writes `.hydra/` into it:
    a bad value or another configuration's directory stops the run there."""
    from rcfr.experiments.callbacks import Validate
    from rcfr.experiments.runner import run_experiment

    def start(*overrides):
        cfg = compose("config", overrides=[*overrides, f"hydra.run.dir={tmp_path / 'run'}"],
                      return_hydra_config=True)
        Validate().on_run_start(cfg)

    with pytest.raises(SystemExit, match="config error: run.checkpoint_seconds must be a finite number"):
        start("game=kuhn", "run.checkpoint_seconds=nan")
    run_experiment(compose("config", overrides=["game=kuhn", "run.iterations=5"]), tmp_path / "run")
    start("game=kuhn", "run.iterations=50")  # the same configuration, longer: allowed
    with pytest.raises(SystemExit, match="another configuration \\(solver.name: 'cfr\\+' -> 'cfr'"):
        start("game=kuhn", "solver=cfr")


@pytest.mark.parametrize("arguments, line", [
    (["solver=cfr++", "game=kuhn"], "solver=cfr++: solver has no option 'cfr++' (did you mean 'cfr+'?); allowed: "
                                    "apcfr+, apdcfr+, as-mccfr, cfr, cfr+, "),
    (["game=leduk"], "game=leduk: game has no option 'leduk' (did you mean 'leduc'?); allowed: dieroll, "),
    (["-m", "solver=cfr,cfr++"], "solver=cfr,cfr++: solver has no option 'cfr++' (did you mean 'cfr+'?)"),
    (["+experiment=leduc_quik"], "+experiment=leduc_quik: experiment has no option 'leduc_quik' "
                                 "(did you mean 'leduc_quick'?)"),
    (["+arm=large_rcfr/goofspiel7-ez"], "arm has no option 'large_rcfr/goofspiel7-ez' "
                                        "(did you mean 'large_rcfr/goofspiel7-es'?)"),
    (["hydra/launcher=slurmm"], "hydra/launcher has no option 'slurmm' (did you mean 'slurm'?); allowed: basic, "),
    (["regressor=zzzz"], "regressor=zzzz: regressor has no option 'zzzz'; allowed: best_first, "),
])
def test_a_misspelled_group_option_is_one_line_with_the_closest_name(arguments, line):
    from rcfr.experiments.schema import check_group_options
    with pytest.raises(ConfigError) as error:
        check_group_options(CONFIG_DIR, arguments)
    assert line in str(error.value) and "\n" not in str(error.value)


def test_group_options_that_exist_and_plain_values_pass_the_check():
    from rcfr.experiments.schema import check_group_options
    check_group_options(CONFIG_DIR, ["-m", "solver=cfr,cfr+", "game=kuhn", "+experiment=leduc_quick",
                                     "+arm=large_rcfr/goofspiel7-es", "hydra/launcher=joblib", "run.seed=1",
                                     "regressor.params.max_leaves=5", "~abstraction", "+arm=glob(bf*-64)",
                                     "label=x", "solver=range(1,3"])  # a syntax error is Hydra's to report


def test_a_users_config_dir_adds_group_options(tmp_path):
    """``--config-dir DIR`` (Hydra's flag) puts the user's groups on the search path: the one-line check
    must accept their options too, and still refuse a misspelling of them."""
    from rcfr.experiments.schema import check_group_options
    (tmp_path / "game").mkdir()
    (tmp_path / "game" / "my_kuhn.yaml").write_text((CONFIGS / "game" / "kuhn.yaml").read_text())
    for flag in (["--config-dir", str(tmp_path)], ["-cd", str(tmp_path)], [f"--config-dir={tmp_path}"]):
        check_group_options(CONFIG_DIR, [*flag, "game=my_kuhn"])
    with pytest.raises(ConfigError, match="did you mean 'my_kuhn'"):
        check_group_options(CONFIG_DIR, ["--config-dir", str(tmp_path), "game=my_kuhm"])
    with pytest.raises(ConfigError, match="game has no option 'my_kuhn'"):
        check_group_options(CONFIG_DIR, ["game=my_kuhn"])  # negative control: not without the folder


def test_the_app_prints_the_misspelling_in_one_line_before_hydra_starts(tmp_path):
    import os
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "rcfr.experiments.run", "game=leduk", f"hydra.run.dir={tmp_path}/r"],
                          cwd=root, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "config error: game=leduk: game has no option 'leduk' (did you mean 'leduc'?); allowed: "
        + ", ".join(options("game"))]
    assert not (tmp_path / "r").exists()
