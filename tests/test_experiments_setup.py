"""A run builds its setup once: the abstraction and the feature matrix (the parts that take seconds to
minutes on a large game) are made once per run, the warm-up's throwaway solver included."""

from __future__ import annotations

import numpy as np

import rcfr.abstraction
from rcfr.experiments import build
from rcfr.experiments.runner import run_experiment


def _count(monkeypatch, owner, name: str, calls: list, when=lambda *a, **k: True):
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        if when(*args, **kwargs):
            calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


def test_a_card_abstraction_is_built_once_per_run(tmp_path, monkeypatch):
    setups, abstractions = [], []
    _count(monkeypatch, build, "make_setup", setups)
    _count(monkeypatch, rcfr.abstraction, "make_abstraction", abstractions)
    cfg = {"game": {"name": "leduc", "params": {}}, "solver": {"name": "cfr+", "options": {}},
           "abstraction": {"name": "card", "params": {"partition": "JQ.K"}},
           "run": {"iterations": 8, "eval_points": 2, "checkpoint_seconds": 1e9, "progress": False}}
    run_experiment(cfg, tmp_path)
    assert len(setups) == 1 and len(abstractions) == 1


def test_a_feature_matrix_is_built_once_and_each_solver_gets_its_own_regressor(tmp_path, monkeypatch):
    features, regressors = [], []
    _count(monkeypatch, build, "make_component", features, lambda kind, *rest: kind == "features")
    _count(monkeypatch, build, "make_component", regressors, lambda kind, *rest: kind == "regressor")
    cfg = {"game": {"name": "kuhn", "params": {}}, "solver": {"name": "rcfr", "options": {}},
           "regressor": {"name": "table", "params": {}}, "features": {"name": "indicator", "params": {}},
           "run": {"iterations": 6, "eval_points": 2, "checkpoint_seconds": 1e9, "progress": False}}
    summary = run_experiment(cfg, tmp_path)
    assert len(features) == 1
    assert len(regressors) == 2  # the run's solver and the warm-up's: a fitted regressor is never shared
    assert np.isfinite(summary["exploitability"])


def test_a_spare_setup_shares_the_parts_but_not_the_solver():
    from rcfr.experiments.schema import validate

    spec = validate({"game": {"name": "kuhn", "params": {}}, "solver": {"name": "rcfr", "options": {}},
                     "regressor": {"name": "table", "params": {}}, "features": {"name": "indicator", "params": {}},
                     "run": {"iterations": 4}})
    game = build.make_game(spec)
    setup = build.make_setup(spec, game)
    spare = setup.spare()
    assert spare.solver is not setup.solver and spare.game is setup.game
    spare.solver.run(3)
    assert setup.solver.iteration == 0
    setup.solver.run(3)
    assert np.array_equal(setup.policy().probs, spare.policy().probs)  # same parts, same seed: same run
