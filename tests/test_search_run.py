"""The search app: presets compose, bad names fail before work, each study writes its results."""

import json

import pytest
from hydra import compose, initialize_config_dir

from rcfr.experiments.search_run import CONFIG_DIR, run, summary, typed

PRESETS = ["fig6_pig", "fig6_pig_quick", "table6_1", "table6_1_quick", "fig7_variance", "fig7_variance_quick",
           "fig7_3_pig", "fig7_3_pig_quick", "fig7_3_cantstop", "fig7_3_cantstop_quick", "fig7_3_dominion",
           "fig7_3_dominion_quick"]


def config(*overrides):
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return typed(compose("config", overrides=list(overrides)))


def test_presets_compose():
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        studies = [typed(compose("config", overrides=[f"+experiment={p}"])).study for p in PRESETS]
    assert studies == ["estimators"] * 2 + ["tournament"] * 2 + ["variance"] * 2 + ["performance"] * 6


def test_unknown_keys_and_names_fail_early(tmp_path):
    with pytest.raises(Exception, match="runs_per_point"):
        config("+experiment=fig7_variance_quick", "+variance.runs_per_point=3")
    with pytest.raises(ValueError, match="allowed: AV, CRN, CV, CV\\+CRN, UCT|allowed: UCT, CV, CRN, AV, CV\\+CRN"):
        run(config("+experiment=fig7_variance_quick", "variance.methods=[UCT,CV+AV]"), tmp_path)
    with pytest.raises(ValueError, match="allowed: width, depth, seconds, nodes, seed"):
        run(config("+experiment=fig6_pig_quick", "+estimators.algorithms.ExpSS.options.c=3"), tmp_path)
    with pytest.raises(ValueError, match="allowed: pig_solitaire$"):
        run(config("+experiment=fig7_variance_quick", "variance.game=cantstop_solitaire"), tmp_path)
    with pytest.raises(ValueError, match="allowed: turns"):
        run(config("+experiment=fig7_3_cantstop_quick", "+variance.params.cap=3"), tmp_path)
    with pytest.raises(ValueError, match="has no antithetic"):
        run(config("+experiment=fig7_3_dominion_quick", "variance.methods=[UCT,AV]"), tmp_path)
    assert not list(tmp_path.iterdir())


def test_studies_write_rows_tables_and_plots(tmp_path):
    cfg = config("+experiment=fig7_variance_quick", "variance.simulations=[8,16]", "variance.runs=4")
    rows = run(cfg, tmp_path / "v")
    assert len(rows) == 5 * 2 * 2 and {r["quantity"] for r in rows} == {"roll", "difference"}
    assert {p.name for p in (tmp_path / "v").iterdir()} == {"results.json", "results.md", "fig7_1.png", "fig7_2.png"}
    short = summary(rows).splitlines()  # the console's table: one row per method, one column per budget
    assert short[0] == "variance of the roll - stop estimate over 4 searches, by simulations"
    assert short[2] == "| method | 8 | 16 |" and [line.split(" | ")[0] for line in short[4:]] == \
        ["| UCT", "| CV", "| CRN", "| AV", "| CV+CRN"]
    cfg = config("+experiment=fig7_3_pig_quick", "variance.simulations=[4]", "variance.games=3", "variance.params.turns=2")
    rows = run(cfg, tmp_path / "p", plots=False)
    assert len(rows) == 5 and all(0 <= r["mean_score"] <= 200 for r in rows)
    assert summary(rows).splitlines()[2] == "| method | 4 |" and len(summary(rows).splitlines()) == 4 + 5
    cfg = config("+experiment=fig7_3_cantstop_quick", "variance.simulations=[4]", "variance.games=2",
                 "variance.params.turns=1")
    rows = run(cfg, tmp_path / "c", plots=False)
    assert len(rows) == 5 and all(0 <= r["mean_score"] <= 11000 and r["games"] == 2 for r in rows)
    assert json.loads((tmp_path / "c" / "results.json").read_text()) == rows
    cfg = config("+experiment=fig7_3_dominion_quick", "variance.simulations=[4]", "variance.games=2",
                 "variance.params.turns=2")
    rows = run(cfg, tmp_path / "d")
    assert [r["method"] for r in rows] == ["UCT", "CV", "CRN", "CV+CRN"] and all(3 <= r["mean_score"] <= 20 for r in rows)
    assert (tmp_path / "d" / "fig7_3_dominion_solitaire.png").exists()
    cfg = config("+experiment=fig6_pig_quick", "estimators.games=1", "estimators.samples=2", "estimators.max_turns=2",
                 "estimators.goal=30")
    cfg.estimators.algorithms = {"Exp": {"name": "exp", "options": {"depth": 2}},
                                 "DPW": {"name": "mcts-dpw", "options": {"widening": [5, 0.4], "simulations": 50}}}
    rows = run(cfg, tmp_path / "e", plots=False)
    assert rows and all(r["variance"] == 0 for r in rows if r["algorithm"] == "Exp")
    assert json.loads((tmp_path / "e" / "results.json").read_text()) == rows
    cfg = config("+experiment=table6_1_quick", "tournament.pairs=1")
    cfg.tournament.games = {"pig": {"name": "pig", "params": {"goal": 20},
                                    "players": {"A": {"name": "exp", "options": {"depth": 1}},
                                                "B": {"name": "expss", "options": {"width": 3, "depth": 1}}},
                                    "pairings": [["A", "B"]]}}
    rows = run(cfg, tmp_path / "t", plots=False)
    assert rows[0]["games"] == 2 and 0 <= rows[0]["win_percent"] <= 100
