"""The sweep's match table (`rcfr.experiments.matches`): every pair of configurations on one game, seed against seed."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import rcfr
from rcfr.experiments.matches import match_table, requested, write_requested
from rcfr.experiments.runner import run_experiment
from rcfr.experiments.schema import ConfigError, validate


def config(solver, iterations, seed, matches=0):
    return {"game": {"name": "kuhn", "params": {}}, "solver": {"name": solver, "options": {}},
            "run": {"iterations": iterations, "eval_points": 2, "seed": seed, "checkpoint_seconds": 1e9,
                    "matches": matches},
            "label": f"{solver} x{iterations}"}


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    for i, (solver, iterations) in enumerate([("cfr+", 300), ("cfr", 1)]):
        for seed in (0,):
            run_experiment(config(solver, iterations, seed, matches=3000), root / f"{i}{seed}")
    return root


def _against(game, a, b) -> float:
    """Exactly: a's payoff against b, both seatings averaged."""
    def mix(first, second):  # first's player-0 rows, second's player-1 rows
        probs = second.probs.copy()
        for I in np.flatnonzero(game.infoset_player == 0):
            f, n = game.infoset_first_seq[I], game.infoset_num_actions[I]
            probs[f:f + n] = first.probs[f:f + n]
        return rcfr.Policy(game, probs)
    return (rcfr.evaluate(game, mix(a, b)).value - rcfr.evaluate(game, mix(b, a)).value) / 2


def test_every_pair_plays_both_ways(sweep):
    rows, skipped = match_table(sweep, samples=3000)
    assert skipped == []
    by_pair = {(r["a"], r["b"]): r for r in rows}
    strong, weak = by_pair[("cfr+ x300", "cfr x1")], by_pair[("cfr x1", "cfr+ x300")]
    assert strong["value"] == -weak["value"] and strong["ci95"] == weak["ci95"] and strong["seeds"] == 1
    game = rcfr.load_game("kuhn")
    policies = [rcfr.Policy.load(game, sweep / name / "policy.json") for name in ("00", "10")]
    exact = _against(game, *policies)
    assert exact > 0.05  # the control: the equilibrium's edge is far from a draw
    assert abs(strong["value"] - exact) < 2 * strong["ci95"]


def test_the_table_is_written_when_runs_ask(sweep, tmp_path):
    assert requested(sweep) == 3000 and requested(tmp_path) == 0
    assert write_requested(tmp_path) == []
    assert (sweep / "matches.md") in write_requested(sweep)
    with (sweep / "matches.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 2
    assert "cfr+ x300" in (sweep / "matches.md").read_text()


def test_an_unfinished_run_is_left_out_and_named(sweep, tmp_path):
    (tmp_path / "a").mkdir()
    for name in ("summary.json", "config.yaml", "policy.json"):
        (tmp_path / "a" / name).write_bytes((sweep / "00" / name).read_bytes())
    text = (tmp_path / "a" / "summary.json").read_text().replace('"complete"', '"interrupted"')
    (tmp_path / "a" / "summary.json").write_text(text)
    rows, skipped = match_table(tmp_path, samples=10)
    assert rows == [] and skipped == ["a"]


def test_matches_must_be_a_count():
    with pytest.raises(ConfigError, match="run.matches"):
        validate(config("cfr", 1, 0, matches=-1))
