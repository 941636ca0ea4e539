"""Models evaluated inside the sampling walk (lean sampled RCFR's ``profile="model"``, issue 34 item 1): the walk
makes each set's strategy from the player's compiled model where it meets the set, so the run is the visited
profile's bit for bit (trees predict the same float64 compiled or not), while no profile, discovery walk or
regret table is kept.

The comparison is on games walked by their rules, where the walk holds the state of every history it visits.
It needs both runs to number the information sets in the same order: outcome sampling's discovery walk meets sets
in the traversal's order; external sampling's looks ahead when it stops, so its runs here meet every set before
the first refit (asserted: the codes are compared first)."""

import numpy as np
import pytest

import rcfr
from rcfr.solvers import SampledRCFR, SampledRCFRPlus
from rcfr.solvers.model_strategies import walk_model, with_model

TREES = {"name": "best_first", "max_leaves": 8}
LEAN = {"features_on_demand": True, "features": "poker", "traversals": 2, "seed": 5, "regressor": TREES}


@pytest.fixture(scope="module")
def kuhn():
    return rcfr.load_game("kuhn", compiled=False)


@pytest.fixture(scope="module")
def leduc():
    return rcfr.load_game("leduc", compiled=False)


def _pair(game, solver=SampledRCFR, iterations=12, **options):
    options = {**LEAN, **options}
    return (solver(game, profile="model", **options).run(iterations),
            solver(game, profile="visited", **options).run(iterations))


def _codes(solver):
    return solver.buffers.index["codes"][:solver.buffers.num_sets]


def _same_run(model, visited):
    """The two runs met the same sets in the same order and did the same: same average sums, current
    strategies, nodes touched and training sets."""
    assert np.array_equal(_codes(model), _codes(visited))
    slots = model.buffers.num_slots
    assert np.array_equal(model.buffers.state.avg[:slots], visited.buffers.state.avg[:slots])
    assert model.nodes_touched == visited.nodes_touched > 0
    for p in (0, 1):
        assert model.fits[p]["count"][1] > 0  # fit: the strategies are not the uniform start
        for key, value in model.fits[p].items():
            assert np.array_equal(value, visited.fits[p][key]), (p, key)
    a, b = model.current_policy(), visited.current_policy()
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)
    assert np.ptp(a.probs) > 0


def test_external_sampling_on_kuhn_is_the_visited_profile_bit_for_bit(kuhn):
    """The one test of the default set that compiles the driver with models in it (about a minute cold)."""
    model, visited = _pair(kuhn, refit_every=4, targets="reservoir", capacity=400)
    _same_run(model, visited)
    assert model.buffers.state.sigma.size == model.buffers.state.regrets.size == 0  # no profile, no table
    assert model.visited is None


@pytest.mark.slow  # the model driver compiled for outcome sampling's walks too, and Leduc runs
@pytest.mark.parametrize("game, sampler, solver, targets, refit", [
    ("kuhn", "outcome", SampledRCFR, "reservoir", 3),
    ("kuhn", "external", SampledRCFRPlus, "stored", 4),
    ("leduc", "outcome", SampledRCFRPlus, "stored", 3),
    ("leduc", "outcome", SampledRCFR, "reservoir", 2),
    ("leduc", "external", SampledRCFRPlus, "stored", 40),
])
def test_equals_the_visited_profile(kuhn, leduc, game, sampler, solver, targets, refit):
    walked = {"kuhn": kuhn, "leduc": leduc}[game]
    model, visited = _pair(walked, solver, iterations=2 * refit + 2, sampler=sampler, targets=targets,
                           refit_every=refit, capacity=10**4)
    _same_run(model, visited)


@pytest.mark.slow
@pytest.mark.parametrize("change", ["other player's model", "a leaf moved by 1e-9"])
def test_a_different_model_in_the_walk_changes_the_run(kuhn, monkeypatch, change):
    """Negative controls: the comparison above sees a wrong model, and a model off by 1e-9."""
    from rcfr.solvers.model_strategies import with_model as real

    def wrong(walk, player, model, t):
        if change == "a leaf moved by 1e-9":
            model = model._replace(value=model.value + 1e-9)
        else:
            player = 1 - player
        return real(walk, player, model, t)
    options = {"sampler": "outcome", "targets": "reservoir", "refit_every": 3, "capacity": 400}
    visited = SampledRCFR(kuhn, profile="visited", **LEAN, **options).run(12)
    monkeypatch.setattr("rcfr.solvers.model_strategies.with_model", wrong)
    model = SampledRCFR(kuhn, profile="model", **LEAN, **options).run(12)
    slots = model.buffers.num_slots
    assert not np.array_equal(model.buffers.state.avg[:slots], visited.buffers.state.avg[:slots])


@pytest.mark.slow
def test_bytes_stop_growing_and_hold_no_profile(leduc):
    """Once every set is met, the model run holds the same bytes after 2N iterations as after N; it holds none of
    the visited profile's arrays (profile, discovery walk's rows, regret table)."""
    from rcfr.solvers.state_bytes import state_breakdown
    options = {**LEAN, "sampler": "outcome", "targets": "stored", "refit_every": 5, "capacity": 10**4}
    model = SampledRCFRPlus(leduc, profile="model", **options).run(40)
    visited = SampledRCFRPlus(leduc, profile="visited", **options).run(40)
    before = model.state_bytes()
    model.run(40)
    assert model.state_bytes() == before
    parts = state_breakdown(model)
    assert not [k for k in parts if "visited" in k or k.endswith(".sigma") or k.endswith(".regrets")], parts
    profile = visited.buffers.state.sigma.nbytes + visited.buffers.state.regrets.nbytes
    assert before <= visited.state_bytes() - profile


# ---- refused, before any work --------------------------------------------------------------------
def test_a_sampler_it_does_not_cover_is_refused(kuhn):
    with pytest.raises(ValueError, match="profile='model' evaluates the models inside the walks of sampler 'external' "
                                         "or 'outcome'; got sampler='probing'"):
        SampledRCFR(kuhn, profile="model", **{**LEAN, "sampler": "probing"})


def test_a_regressor_that_cannot_be_compiled_is_refused(kuhn):
    with pytest.raises(ValueError, match=r"profile='model'.*regressor='table' cannot be compiled.*"
                                         r"profile='visited'.*slow path"):
        SampledRCFR(kuhn, profile="model", **{**LEAN, "regressor": "table"})


def test_the_compiled_tree_is_refused():
    with pytest.raises(ValueError, match=r"profile='model'.*compiled=False"):
        SampledRCFR(rcfr.load_game("kuhn"), profile="model", **LEAN)


def test_the_dense_path_is_refused(kuhn):
    with pytest.raises(ValueError, match="profile='model' needs features_on_demand=True"):
        SampledRCFR(rcfr.load_game("kuhn"), profile="model", features="poker")


def test_a_model_of_another_width_is_refused(kuhn):
    from rcfr.features.encoders import make_encoder
    from rcfr.solvers.model_strategies import zero_model
    encoder = make_encoder(kuhn, "poker")
    walk = walk_model(encoder, 4, 2)
    with pytest.raises(ValueError, match=f"rows of 3 features but the encoder writes {encoder.num_features}"):
        with_model(walk, 0, zero_model(3), 1)
    with pytest.raises(TypeError, match="must be a CompiledModel"):
        with_model(walk, 0, "tree", 1)
    assert with_model(walk, 1, zero_model(encoder.num_features), 7).t[1] == 7
