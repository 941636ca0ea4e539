"""The presets of Lanctot 2013 Figs 4.2-4.4 and the panels of the nodes-touched plot."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from rcfr.experiments.callbacks import sweep_jobs
from rcfr.experiments.display import split_label
from rcfr.experiments.figures import panel_layout, plot_nodes
from rcfr.experiments.run import CONFIG_DIR
from rcfr.experiments.schema import validate

#: preset: (solver, sweep jobs per game and seed)
PRESETS = {"lanctot_fig42": ("os-mccfr", 2 * 2 * 5), "lanctot_fig43": ("os-mccfr", 5), "lanctot_fig44": ("es-mccfr", 2)}


def test_labels_split_into_panel_and_curve():
    assert split_label("OS alternating optimistic | ε=0.6") == ("OS alternating optimistic", "ε=0.6")
    assert split_label("ES stochastic") == ("", "ES stochastic")


def test_panels_are_one_row_per_game_when_labels_name_them(tmp_path):
    point = [(1e3, 0.5, 0.1, 5), (1e4, 0.2, 0.05, 5)]
    table = {(g, f"{panel} | ε={e}"): point for g in ("bluff", "goof") for panel in ("A", "B", "C") for e in (0.2, 0.6)}
    rows, cols, places = panel_layout(table)
    assert (rows, cols) == (2, 3)
    assert places[("goof", "B")] == (1, 1) and len(set(places.values())) == 6
    plain = {(g, "ES"): point for g in ("a", "b", "c", "d")}  # no panels: a grid of games, 3 per row
    assert panel_layout(plain) == (2, 3, {("a", ""): (0, 0), ("b", ""): (0, 1), ("c", ""): (0, 2), ("d", ""): (1, 0)})
    assert tmp_path / "exploitability_vs_nodes.png" in plot_nodes(tmp_path, table)


@pytest.mark.parametrize("figure", sorted(PRESETS))
def test_figure_presets_expand_to_distinct_labelled_configurations(figure):
    solver, per_game = PRESETS[figure]
    full, quick = (OmegaConf.load(f"{CONFIG_DIR}/experiment/{name}.yaml") for name in (figure, f"{figure}_quick"))
    for key in ("game", "run.seed"):
        assert full.hydra.sweeper.params[key] == quick.hydra.sweeper.params[key]
    assert full.run.max_nodes_touched > quick.run.max_nodes_touched > 0
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
            cfg = compose("config", overrides=[f"+experiment={figure}"], return_hydra_config=True)
            jobs = sweep_jobs(cfg)
            first = validate(compose("config", overrides=jobs[0]))  # one job composes and validates
    finally:
        GlobalHydra.instance().clear()
    assert len(jobs) == 2 * per_game * 5  # Bluff(1,1) and Goofspiel(6), 5 seeds
    assert first.solver.name == solver and first.run.max_nodes_touched == full.run.max_nodes_touched
    labels = set()
    for job in jobs:  # each job's label, resolved from its overrides
        node = OmegaConf.merge(OmegaConf.masked_copy(cfg, ["solver", "label"]),
                               OmegaConf.from_dotlist([o for o in job if o.startswith("solver.")]))
        labels.add((dict(o.split("=", 1) for o in job if "=" in o)["game"], node.label))
        assert str(node.solver.options.average_mode) in node.label
        if solver == "os-mccfr":
            assert split_label(node.label)[1] == f"ε={node.solver.options.epsilon}"
    assert len(labels) == 2 * per_game  # every configuration is its own curve; seeds share it
