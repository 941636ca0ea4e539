"""Models evaluated inside the sampling walk (lean sampled RCFR's ``profile="model"``, issue 34 item 1): the walk
makes each set's strategy from the player's compiled model where it meets the set, so the run is the visited
profile's bit for bit (trees predict the same float64 compiled or not), while no profile, discovery walk or
regret table is kept.

The comparison is on games walked by their rules, where the walk holds the state of every history it visits.
Sets are numbered as first met: outcome sampling's discovery walk meets them in the traversal's order, so its runs
number them alike and are compared array for array; external sampling's discovery walk looks ahead when it stops,
so after the first refit it numbers some sets in another order, and those runs are compared set by set (by code):
policies, and nodes touched."""

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


@pytest.fixture(scope="module")
def goofspiel4():
    return rcfr.load_game("goofspiel", cards=4, points_order="random", seed=3, compiled=False)


def _pair(game, solver=SampledRCFR, iterations=12, **options):
    options = {**LEAN, **options}
    return (solver(game, profile="model", **options).run(iterations),
            solver(game, profile="visited", **options).run(iterations))


def _codes(solver):
    return solver.buffers.index["codes"][:solver.buffers.num_sets]


def _same_run(model, visited, numbered_alike=True):
    """The two runs did the same: same nodes touched, average and current policies set by set (codes) and, where
    they numbered the sets alike, the same average sums and training sets array for array."""
    assert model.nodes_touched == visited.nodes_touched > 0
    for p in (0, 1):
        assert model.fits[p]["count"][1] > 0  # fit: the strategies are not the uniform start
    for a, b in ((model.average_policy(), visited.average_policy()), (model.current_policy(), visited.current_policy())):
        assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)
        assert np.ptp(a.probs) > 0
    if not numbered_alike:
        return
    assert np.array_equal(_codes(model), _codes(visited))
    slots = model.buffers.num_slots
    assert np.array_equal(model.buffers.state.avg[:slots], visited.buffers.state.avg[:slots])
    for p in (0, 1):
        for key, value in model.fits[p].items():
            assert np.array_equal(value, visited.fits[p][key]), (p, key)


@pytest.mark.slow  # the driver for the rules source, with models and with the visited profile: ~2 min cold
def test_external_sampling_on_kuhn_is_the_visited_profile_bit_for_bit(kuhn):
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
    ("leduc", "external", SampledRCFRPlus, "stored", 5),
    ("leduc", "external", SampledRCFR, "reservoir", 3),
    ("goofspiel4", "outcome", SampledRCFRPlus, "stored", 3),
    ("goofspiel4", "external", SampledRCFRPlus, "stored", 3),
])
def test_equals_the_visited_profile(kuhn, leduc, goofspiel4, game, sampler, solver, targets, refit):
    walked = {"kuhn": kuhn, "leduc": leduc, "goofspiel4": goofspiel4}[game]
    features = "goofspiel" if game == "goofspiel4" else "poker"
    model, visited = _pair(walked, solver, iterations=4 * refit, sampler=sampler, targets=targets,
                           refit_every=refit, capacity=10**4, features=features)
    _same_run(model, visited, numbered_alike=game == "kuhn" or sampler == "outcome")


@pytest.mark.slow  # the driver compiled for the compiled tree with models (about two minutes cold)
@pytest.mark.parametrize("game", ["kuhn", "leduc", "goofspiel4"])
@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_on_the_compiled_tree_equals_the_cache_profile(game, sampler):
    """On a compiled game the walk replays each decision's state from the root (`TreeWalkModel`); the sets are
    the game's, so the run is the cache profile's array for array."""
    compiled, features = {"kuhn": (rcfr.load_game("kuhn"), "poker"), "leduc": (rcfr.load_game("leduc"), "poker"),
                          "goofspiel4": (rcfr.load_game("goofspiel", cards=4, points_order="random", seed=3),
                                         "goofspiel")}[game]
    options = {**LEAN, "features": features, "sampler": sampler, "targets": "reservoir", "refit_every": 3,
               "capacity": 400}
    model = SampledRCFR(compiled, profile="model", **options).run(9)
    cache = SampledRCFR(compiled, profile="cache", **options).run(9)
    assert model.nodes_touched == cache.nodes_touched > 0
    assert np.array_equal(model.buffers.avg, cache.buffers.avg)
    for p in (0, 1):
        assert model.fits[p]["count"][1] > 0
        for key, value in model.fits[p].items():
            assert np.array_equal(value, cache.fits[p][key]), (p, key)
    a, b = model.current_policy().probs, cache.current_policy().probs
    assert np.array_equal(a, b) and np.ptp(a) > 0
    assert model.buffers.state.sigma.size == model.buffers.state.regrets.size == 0  # no profile, no table


@pytest.mark.slow
def test_on_the_compiled_tree_resumes_bit_for_bit():
    leduc = rcfr.load_game("leduc")
    options = {**LEAN, "sampler": "external", "targets": "stored", "refit_every": 3, "capacity": 10**4}
    straight = SampledRCFRPlus(leduc, profile="model", **options).run(10)
    first = SampledRCFRPlus(leduc, profile="model", **options).run(5)
    resumed = SampledRCFRPlus(leduc, profile="model", **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(5)
    assert np.array_equal(straight.buffers.avg, resumed.buffers.avg)
    assert np.array_equal(straight.current_policy().probs, resumed.current_policy().probs)
    assert straight.nodes_touched == resumed.nodes_touched


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
def test_bytes_stop_growing_and_hold_no_profile(leduc, monkeypatch):
    """From arrays with room for 16 sets, the model run's arrays grow while sets are met, then stay: the same bytes
    after 2N iterations as after N. It holds no profile, regret table or discovery walk: at the visited run's
    capacities, at least their profile's and regret table's bytes fewer."""
    from rcfr.solvers.state_bytes import state_breakdown
    from rcfr.sources.rules import RulesGame
    monkeypatch.setattr(RulesGame, "initial_sets", 16)
    options = {**LEAN, "sampler": "outcome", "targets": "stored", "refit_every": 5, "capacity": 10**4}
    model = SampledRCFRPlus(leduc, profile="model", **options).run(200)
    visited = SampledRCFRPlus(leduc, profile="visited", **options).run(200)
    before, sets = model.state_bytes(), model.buffers.num_sets
    model.run(200)
    assert model.state_bytes() == before and model.buffers.num_sets > sets  # sets still met, nothing grew
    assert model.buffers.meta[2] > 16
    assert np.array_equal(model.buffers.meta[2:4], visited.buffers.meta[2:4])  # the same capacities
    parts = state_breakdown(model)
    assert not [k for k in parts if k.startswith("visited") or k.endswith((".sigma", ".regrets"))], parts
    table = visited.buffers.state.sigma.nbytes + visited.buffers.state.regrets.nbytes
    assert table > 0 and before <= visited.state_bytes() - table


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_growing_arrays_change_nothing(leduc, monkeypatch, sampler):
    """Arrays with room for 4 sets overflow in the first traversals: the call is undone and walked again on
    larger arrays, so the run is the one on arrays that never grow."""
    from rcfr.sources.rules import RulesGame
    options = {**LEAN, "sampler": sampler, "targets": "stored", "refit_every": 3, "capacity": 10**4}
    roomy = SampledRCFRPlus(leduc, profile="model", **options).run(12)
    monkeypatch.setattr(RulesGame, "initial_sets", 4)
    tight = SampledRCFRPlus(leduc, profile="model", **options).run(12)
    assert tight.buffers.meta[2] < roomy.buffers.meta[2]
    assert np.array_equal(_codes(tight), _codes(roomy))
    a, b = tight.average_policy(), roomy.average_policy()
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)
    assert tight.nodes_touched == roomy.nodes_touched


@pytest.mark.slow
def test_dense_layers_to_rounding(kuhn):
    """A linear model's compiled prediction sums in its own order: the same run to 1e-12, set by set."""
    model, visited = _pair(kuhn, sampler="outcome", targets="reservoir", refit_every=3, capacity=400,
                           regressor={"name": "linear"})
    assert model.nodes_touched == visited.nodes_touched
    for a, b in ((model.average_policy(), visited.average_policy()), (model.current_policy(), visited.current_policy())):
        assert np.array_equal(a.codes, b.codes)
        np.testing.assert_allclose(a.probs, b.probs, rtol=0, atol=1e-12)
        assert np.ptp(a.probs) > 0


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_resumes_bit_for_bit(leduc, sampler):
    options = {**LEAN, "sampler": sampler, "targets": "stored", "refit_every": 3, "capacity": 10**4}
    straight = SampledRCFRPlus(leduc, profile="model", **options).run(10)
    first = SampledRCFRPlus(leduc, profile="model", **options).run(5)
    resumed = SampledRCFRPlus(leduc, profile="model", **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(5)
    for a, b in ((straight.average_policy(), resumed.average_policy()),
                 (straight.current_policy(), resumed.current_policy())):
        assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)
    assert straight.nodes_touched == resumed.nodes_touched


@pytest.mark.slow
def test_asking_for_policies_mid_run_changes_nothing(leduc):
    """The kit asks for the current policy every iteration under run.measure=full_regret: it predicts every set met
    into an array of its own, and the run goes on as it was."""
    options = {**LEAN, "sampler": "external", "targets": "stored", "refit_every": 3, "capacity": 10**4}
    straight = SampledRCFRPlus(leduc, profile="model", **options).run(12)
    asked = SampledRCFRPlus(leduc, profile="model", **options)
    for _ in range(12):
        asked.run(1)
        asked.current_policy()
    a, b = straight.average_policy(), asked.average_policy()
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)


# ---- refused, before any work --------------------------------------------------------------------
def test_a_sampler_it_does_not_cover_is_refused(kuhn):
    with pytest.raises(ValueError, match="profile='model' evaluates the models inside the walks of sampler 'external' "
                                         "or 'outcome'; got sampler='probing'"):
        SampledRCFR(kuhn, profile="model", **{**LEAN, "sampler": "probing"})


def test_a_regressor_that_cannot_be_compiled_is_refused(kuhn):
    with pytest.raises(ValueError, match=r"profile='model'.*regressor='table' cannot be compiled.*"
                                         r"profile='visited'.*slow path"):
        SampledRCFR(kuhn, profile="model", **{**LEAN, "regressor": "table"})


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
