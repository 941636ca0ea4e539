"""A checkpoint says whose it is: solver name, options, abstraction and game; another solver's, other
options' or a negative iteration's checkpoint is refused, naming the difference."""

import json
import re

import numpy as np
import pytest

import rcfr
from rcfr import make_solver
from rcfr.abstraction import make_abstraction

RCFR = dict(regressor="table", features="indicator")


@pytest.fixture(scope="module")
def kuhn():
    return rcfr.load_game("kuhn")


def _state(game, name, iterations=3, **options):
    return make_solver(name, game, **options).run(iterations).state_dict()


@pytest.mark.parametrize("saved, loaded, options", [
    ("cfr", "cfr+", {}), ("cfr+", "cfr", {}), ("lcfr", "dcfr", {}),
    ("rcfr", "rcfr+", RCFR), ("rcfr+", "rcfr", RCFR),
    ("os-mccfr", "es-mccfr", {}), ("es-mccfr", "pure-cfr", {}), ("vr-mccfr", "os-mccfr", {}),
    ("sampled-rcfr", "sampled-rcfr+", RCFR),
])
def test_another_solver_is_refused(kuhn, saved, loaded, options):
    state = _state(kuhn, saved, **options)
    if saved.startswith(("os", "vr")) and loaded.startswith("os"):
        options = {}
    with pytest.raises(ValueError, match=re.escape(f"checkpoint is a '{saved}' solver's; this solver is '{loaded}'")):
        make_solver(loaded, kuhn, **options).load_state_dict(state)


@pytest.mark.parametrize("name, saved, other", [
    ("os-mccfr", {"epsilon": 0.6}, {"epsilon": 0.5}),
    ("os-mccfr", {"seed": 1}, {"seed": 2}),
    ("es-mccfr", {"averaging": "uniform"}, {"averaging": "linear"}),
    ("cfr", {"updates": "alternating"}, {"updates": "simultaneous"}),
    ("dcfr", {"alpha": 1.5}, {"alpha": 2.0}),
    ("rcfr", {**RCFR, "seed": 0}, {**RCFR, "seed": 1}),
    ("sampled-rcfr", {**RCFR, "sampler": "external"}, {**RCFR, "sampler": "outcome"}),
])
def test_other_options_are_refused_naming_each_difference(kuhn, name, saved, other):
    state = _state(kuhn, name, **saved)
    changed = [k for k in other if saved.get(k) != other[k]]
    with pytest.raises(ValueError, match="written with other options") as err:
        make_solver(name, kuhn, **other).load_state_dict(state)
    for key in changed:
        assert f"{key}: {json.loads(str(state['options']))[key]!r} -> " in str(err.value), key


@pytest.mark.parametrize("name, options", [("cfr", {}), ("cfr+", {}), ("os-mccfr", {"seed": 3}),
                                           ("es-mccfr", {"seed": 3}), ("rcfr+", RCFR),
                                           ("sampled-rcfr", {**RCFR, "seed": 2})])
def test_the_same_solver_resumes_exactly(kuhn, name, options):
    first = make_solver(name, kuhn, **options).run(4)
    second = make_solver(name, kuhn, **options)
    second.load_state_dict(first.state_dict())
    first.run(3), second.run(3)
    np.testing.assert_array_equal(first.average_policy().probs, second.average_policy().probs)
    assert str(first.state_dict()["solver"]) == name


def test_a_negative_iteration_is_refused(kuhn):
    state = _state(kuhn, "cfr")
    state["iteration"] = np.array(-1)
    with pytest.raises(ValueError, match="'iteration' must be an integer >= 0, got"):
        make_solver("cfr", kuhn).load_state_dict(state)


def test_a_checkpoint_without_identity_is_refused(kuhn):
    state = _state(kuhn, "cfr")
    del state["options"]
    with pytest.raises(ValueError, match="no 'options' field"):
        make_solver("cfr", kuhn).load_state_dict(state)


def test_another_abstraction_is_refused():
    game = rcfr.load_game("liars_dice", dice1=1, dice2=1)
    coarse, fine = make_abstraction(game, "bluff_last_bids", r=1), make_abstraction(game, "bluff_last_bids", r=2)
    state = make_solver("es-mccfr", game, abstraction=coarse).run(2).state_dict()
    with pytest.raises(ValueError, match="written on abstraction 'bluff_last_bids\\(r=1\\)"):
        make_solver("es-mccfr", game, abstraction=fine).load_state_dict(state)
    with pytest.raises(ValueError, match="this solver runs on 'none'"):
        make_solver("es-mccfr", game).load_state_dict(state)


# ---- two sampled-RCFR classes, one factory ------------------------------------------------------------
def test_the_factory_picks_the_form_and_the_plus_variant_differs_by_defaults():
    from rcfr.solvers import DenseSampledRCFR, LeanSampledRCFR, SampledRCFRSolver
    game = rcfr.load_game("goofspiel", cards=4)
    dense = make_solver("sampled-rcfr", game, regressor="table", features="indicator")
    lean = make_solver("sampled-rcfr+", game, regressor="table", features="goofspiel", features_on_demand=True)
    assert type(dense) is DenseSampledRCFR and type(lean) is LeanSampledRCFR
    assert isinstance(dense, SampledRCFRSolver) and isinstance(lean, SampledRCFRSolver)
    assert (dense.options.regret_matching, dense.options.averaging) == ("rm", "uniform")
    assert (lean.options.regret_matching, lean.options.averaging) == ("rm+", "linear")
    with pytest.raises(ValueError, match="features_on_demand=False form"):
        DenseSampledRCFR(game, lean.options)


def test_the_lean_and_dense_modules_import_no_circle():
    import ast
    from pathlib import Path

    import rcfr.solvers as solvers
    root = Path(solvers.__file__).parent

    def imports(name):
        tree = ast.parse((root / f"{name}.py").read_text())
        return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}

    assert "on_demand" not in imports("visited") and "visited" not in imports("predictions")
    assert "sampled_rcfr" not in imports("on_demand") | imports("sampled_regression")
