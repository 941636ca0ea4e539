"""State that does not grow with the sets met (issue 34 items 2-4): the average strategy as a mixture of the kept
models (``average="mixture"``).

The mixture is checked against an independent statement of the exact average: the current policy after every
iteration (predicted in batches by the regressor itself, not the compiled models), each player's own reach of
every history multiplied out along the path in Python, and the averaging weights of the iterations whose
traversals credited the player (player 0's model of iteration t is credited in player 1's traversals of t, after
player 0's refit; player 1's in player 0's traversals of t + 1)."""

import numpy as np
import pytest

import rcfr
from rcfr.solvers import SampledRCFR, SampledRCFRPlus

TREES = {"name": "best_first", "max_leaves": 8}
LEAN = {"features_on_demand": True, "features": "poker", "traversals": 2, "seed": 5, "regressor": TREES,
        "profile": "model", "average": "mixture"}


def _own_reaches(game, sigma, player):
    """Player's own reach of every history of compiled `game` under the behavioural strategy `sigma`."""
    reach = np.ones(game.num_histories)
    for h in range(1, game.num_histories):
        up = game.parent[h]
        reach[h] = reach[up]
        if game.player[up] == player:
            reach[h] *= sigma[game.infoset_first_seq[game.infoset[up]] + game.action[h]]
    return reach


def _exact_average(game, sigmas, weights, reach_weighted=True):
    """sum_t w_t pi_p^t(I) sigma_t(I) / sum_t w_t pi_p^t(I) at every set (`sigmas[p][t]`, `weights[p][t]`)."""
    out = np.zeros(game.num_sequences)
    history = np.asarray(game.infoset_history)
    for p in (0, 1):
        mine = np.flatnonzero(np.asarray(game.infoset_player) == p)
        num = np.zeros(game.num_sequences)
        for sigma, w in zip(sigmas[p], weights[p]):
            reach = _own_reaches(game, sigma, p) if reach_weighted else np.ones(game.num_histories)
            for i in mine:
                f, n = game.infoset_first_seq[i], game.infoset_num_actions[i]
                num[f:f + n] += w * reach[history[i]] * sigma[f:f + n]
        for i in mine:
            f, n = game.infoset_first_seq[i], game.infoset_num_actions[i]
            total = num[f:f + n].sum()
            out[f:f + n] = num[f:f + n] / total if total > 0 else 1.0 / n
    return out


def _matched(prediction, t, game):
    """Regret matching on t x prediction at every set of compiled `game` (uniform where nothing is positive)."""
    sigma = np.zeros(game.num_sequences)
    for f, n in zip(game.infoset_first_seq, game.infoset_num_actions):
        positive = np.maximum(t * prediction[f:f + n], 0.0)
        sigma[f:f + n] = positive / positive.sum() if positive.sum() > 0 else 1.0 / n
    return sigma


def _recorded(solver, compiled, iterations):
    """Run `iterations` one at a time; the current policies (compiled layout) each player played and their weights.
    On the rules the solver's current policy covers the sets met only (uniform elsewhere, where the model is not):
    there each player's regressor predicts every sequence of the compiled twin in one batch."""
    from rcfr.features.encoders import make_encoder, sequence_rows
    from rcfr.regressors import base as regressors
    twin = None if compiled is None else make_encoder(compiled, solver.options.features)  # for the compiled twin

    def current():
        if compiled is None:
            return solver.current_policy().probs.copy()
        rows = sequence_rows(compiled, twin, np.arange(compiled.num_sequences))
        players = np.repeat(compiled.infoset_player, compiled.infoset_num_actions)
        prediction = np.zeros(compiled.num_sequences)
        for p in (0, 1):
            if solver.fits[p]["count"][1] > 0:
                prediction[players == p] = regressors.predict(solver.regressors[p], rows[players == p])
        sigma = np.zeros(compiled.num_sequences)
        for p in (0, 1):
            mine = _matched(prediction, float(solver.fits[p]["count"][1]), compiled)
            sigma[players == p] = mine[players == p]
        return sigma
    power = solver.power
    before = current()
    sigmas, weights = [[], []], [[], []]
    for t in range(1, iterations + 1):
        solver.iterate()
        after = current()
        sigmas[0].append(after)  # player 0 refits before player 1's traversals credit it
        sigmas[1].append(before)  # player 1's refit at t comes after player 0's traversals of t
        weights[0].append(float(t) ** power)
        weights[1].append(float(t) ** power)
        before = after
    return sigmas, weights


def _probs(solver, compiled):
    policy = solver.average_policy()
    return policy.probs if compiled is None else policy.to_policy(compiled, default="uniform").probs


@pytest.mark.slow  # compiles the model driver for the compiled tree and for the rules source (minutes cold)
@pytest.mark.parametrize("solver", [SampledRCFR, SampledRCFRPlus])
@pytest.mark.parametrize("name, by_rules", [("kuhn", False), ("kuhn", True), ("leduc", False), ("leduc", True)])
def test_the_mixture_is_the_exact_average(name, by_rules, solver):
    compiled = rcfr.load_game(name)
    game = rcfr.load_game(name, compiled=False) if by_rules else compiled
    run = solver(game, refit_every=2, capacity=10**4, **LEAN)
    sigmas, weights = _recorded(run, compiled if by_rules else None, 9)
    got = _probs(run, compiled if by_rules else None)
    want = _exact_average(compiled, sigmas, weights)
    assert np.max(np.abs(got - want)) < 1e-12
    assert len(run.snapshots[0].kept) == 4 and len(run.snapshots[1].kept) == 4  # refits at 2, 4, 6, 8
    # negative controls: without the reach weights, or with player 1 credited with its later model, it differs
    assert np.max(np.abs(got - _exact_average(compiled, sigmas, weights, reach_weighted=False))) > 1e-3
    shifted = [sigmas[0], sigmas[1][1:] + sigmas[1][-1:]]
    assert np.max(np.abs(got - _exact_average(compiled, shifted, weights))) > 1e-3


@pytest.mark.slow
def test_a_bound_keeps_that_many_and_resumes_bit_for_bit():
    leduc = rcfr.load_game("leduc", compiled=False)
    options = {**LEAN, "refit_every": 1, "capacity": 10**4, "snapshots": 3}
    straight = SampledRCFRPlus(leduc, **options).run(10)
    assert [len(s.kept) for s in straight.snapshots] == [3, 3]
    assert [s.seen for s in straight.snapshots] == [9, 10]  # player 0's first model credited nothing before its refit
    first = SampledRCFRPlus(leduc, **options).run(6)
    resumed = SampledRCFRPlus(leduc, **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(4)
    a, b = straight.average_policy(), resumed.average_policy()
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)
    assert np.ptp(a.probs) > 0
    every = SampledRCFRPlus(leduc, **{**options, "snapshots": None}).run(10)
    assert not np.array_equal(every.average_policy().probs, a.probs)  # the bound dropped some: another mixture


def test_refused_naming_the_field():
    kuhn = rcfr.load_game("kuhn")
    with pytest.raises(ValueError, match="snapshots must be an integer >= 1"):
        SampledRCFR(kuhn, **{**LEAN, "snapshots": 0})
    with pytest.raises(ValueError, match="snapshots=2 bounds average='mixture'"):
        SampledRCFR(kuhn, **{**LEAN, "average": "sums", "snapshots": 2})
    with pytest.raises(ValueError, match="average='mixture'.*profile='model'"):
        SampledRCFR(kuhn, **{**LEAN, "profile": "visited"})
    with pytest.raises(ValueError, match="average='mixture'.*features_on_demand=True"):
        SampledRCFR(kuhn, average="mixture")
    with pytest.raises(ValueError, match="average must be one of|allowed"):
        SampledRCFR(kuhn, **{**LEAN, "average": "mean"})


# ---- targets="rows": the fits read the feature rows the walk wrote --------------------------------------
ROWS = {**LEAN, "targets": "rows", "traversals": 1, "average": "sums"}


def _by_code(policy):
    return dict(zip(policy.codes.tolist(), np.split(policy.probs, policy.first[1:-1])))


@pytest.mark.slow  # the model driver for the rules source and for the compiled tree (minutes cold)
@pytest.mark.parametrize("name, by_rules", [("kuhn", True), ("leduc", True), ("kuhn", False), ("leduc", False)])
def test_rows_train_on_what_the_sequence_reservoir_trains_on(name, by_rules):
    """Until the reservoirs are full (one traversal an iteration, so an example is one visit) the walk writes the
    sequence reservoir's examples as rows, (row, regret, iteration) for (sequence, regret, iteration), and the
    first fit sees the same training set (equal rows merged: the encoder gives some of Leduc's sequences one row,
    so there the later fits may split otherwise; on Kuhn every sequence has its own row and the runs are the same)."""
    from rcfr.solvers.targets import row_targets
    game = rcfr.load_game(name, compiled=not by_rules)
    rows = SampledRCFR(game, refit_every=3, capacity=10**5, **ROWS)
    ids = SampledRCFR(game, refit_every=3, capacity=10**5, **{**ROWS, "targets": "reservoir"})

    def same_examples():
        own = True  # does every sequence met have a row of its own? (then the fits are the same problem)
        for p in (0, 1):
            x, r, t = rows.kept[p].examples()
            sequence, regret, iteration = ids.reservoirs[p].examples()
            got = np.column_stack([x, r, t])
            want = np.column_stack([ids.rows(sequence + ids.offsets[p]), regret, iteration])
            assert got.shape == want.shape and len(got) > 0
            assert np.array_equal(got[np.lexsort(got.T[::-1])], want[np.lexsort(want.T[::-1])])
            for a, b in zip(row_targets(x, r, t, 1.0), row_targets(want[:, :-2], regret, iteration, 1.0)):
                assert np.array_equal(a, b)
            own &= len(np.unique(sequence)) == len(row_targets(x, r, t, 1.0)[0])
        assert rows.nodes_touched == ids.nodes_touched
        return own

    rows.run(3), ids.run(3)  # to the first refit
    own = same_examples()
    if name == "leduc":  # some sequences share a row (merged): the later fits need not split alike
        return
    assert own
    rows.run(7), ids.run(7)
    assert same_examples()
    if by_rules:
        assert rows.buffers.tree.set_states.size == 0 and ids.buffers.tree.set_states.size > 0
        mine, theirs = _by_code(rows.current_policy()), _by_code(ids.current_policy())
        assert set(theirs) <= set(mine)
        assert all(np.array_equal(mine[c], theirs[c]) for c in theirs)
    else:
        assert np.array_equal(rows.current_policy().probs, ids.current_policy().probs)
    assert np.ptp(rows.current_policy().probs) > 0


@pytest.mark.slow
def test_rows_and_snapshots_resume_bit_for_bit_and_undo_an_overflow(monkeypatch):
    from rcfr.sources.rules import RulesGame
    leduc = rcfr.load_game("leduc", compiled=False)
    options = {**ROWS, "average": "mixture", "snapshots": 3, "refit_every": 2, "capacity": 80}
    straight = SampledRCFR(leduc, **options).run(16)
    assert [int(k.kept.seen[0]) > 80 for k in straight.kept] == [True, True]  # the reservoirs replaced rows
    first = SampledRCFR(leduc, **options).run(9)
    resumed = SampledRCFR(leduc, **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(7)
    monkeypatch.setattr(RulesGame, "initial_sets", 4)  # the first calls overflow, are undone and walked again
    small = SampledRCFR(leduc, **options).run(16)
    for other in (resumed, small):
        for a, b in ((straight.average_policy(), other.average_policy()),
                     (straight.current_policy(), other.current_policy())):
            assert np.array_equal(a.codes, b.codes) and np.array_equal(a.probs, b.probs)
        for p in (0, 1):
            for x, y in zip(straight.kept[p].examples(), other.kept[p].examples()):
                assert np.array_equal(x, y)
        assert straight.nodes_touched == other.nodes_touched
    assert np.ptp(straight.average_policy().probs) > 0


@pytest.mark.slow
def test_bytes_stay_once_the_sets_are_met_and_the_bounds_full():
    """Kuhn walked by its rules: every set is met in the first iterations, the row reservoirs (capacity 40) and the
    snapshot bound (2) fill, and from then on the bytes held are the same (no set_states, no sums per slot)."""
    kuhn = rcfr.load_game("kuhn", compiled=False)
    run = SampledRCFR(kuhn, **{**ROWS, "average": "mixture", "snapshots": 2, "refit_every": 2, "capacity": 40})
    run.run(40)
    assert all(len(s.kept) == 2 for s in run.snapshots) and all(k.kept.seen[0] > 40 for k in run.kept)
    held, models = _held(run)
    assert len(models) == 2 + 2 * 2  # each player's regressor and its two snapshots
    run.run(40)
    assert _held(run)[0] == held  # the models' sizes vary with their fits (fewer leaves), within the bound:
    node = sum(np.dtype(d).itemsize for d in ("i8", "f8", "i8", "i8", "f8", "i1", "?"))
    sizes = list(_held(run)[1].values())  # (a snapshot of the uniform start holds no arrays)
    assert all(size <= 15 * node + 16 for size in sizes) and sum(sizes) > 0  # 8 leaves: 15 nodes, one tree
    every = SampledRCFR(kuhn, **{**ROWS, "average": "mixture", "refit_every": 2, "capacity": 40}).run(80)
    assert len(_held(every)[1]) == 2 + 2 * 40 and every.state_bytes() > run.state_bytes()  # a control: unbounded


def _held(run):
    """(bytes held outside the models, {path: bytes} of the regressors and the snapshots' models)."""
    from rcfr.solvers.state_bytes import state_breakdown
    parts = state_breakdown(run)
    models = {k: v for k, v in parts.items() if k.startswith(("regressors", "snapshots"))}
    return sum(parts.values()) - sum(models.values()), models


def test_rows_refused_naming_the_field():
    kuhn = rcfr.load_game("kuhn")
    for bad, field in (({"sampler": "outcome"}, "sampler='outcome'"), ({"profile": "visited"}, "profile='visited'")):
        with pytest.raises(ValueError, match=f"targets='rows'.*{field}"):
            SampledRCFR(kuhn, **{**ROWS, **bad})
    with pytest.raises(ValueError, match="targets='rows' has no regret_matching='rm\\+'"):
        SampledRCFRPlus(kuhn, **ROWS)
    with pytest.raises(ValueError, match="capacity >= traversals x widest set"):
        SampledRCFR(kuhn, **{**ROWS, "traversals": 3, "capacity": 5})


@pytest.mark.slow
def test_an_iteration_that_writes_more_rows_than_capacity_is_refused():
    leduc = rcfr.load_game("leduc", compiled=False)
    with pytest.raises(ValueError, match="wrote .* feature rows, more than capacity=6"):
        SampledRCFR(leduc, **{**ROWS, "capacity": 6}).run(3)


@pytest.mark.slow
def test_rows_and_snapshots_on_bluff_are_the_exact_average():
    """Both options on Bluff(1,1) walked by its rules: the mixture is the exact average (1e-12), with no set_states."""
    compiled = rcfr.load_game("liars_dice", dice1=1, dice2=1)
    game = rcfr.load_game("liars_dice", dice1=1, dice2=1, compiled=False)
    run = SampledRCFR(game, **{**ROWS, "features": "liars_dice", "average": "mixture", "refit_every": 3,
                               "capacity": 2000})
    sigmas, weights = _recorded(run, compiled, 9)
    got = _probs(run, compiled)
    assert np.max(np.abs(got - _exact_average(compiled, sigmas, weights))) < 1e-12
    assert np.max(np.abs(got - _exact_average(compiled, sigmas, weights, reach_weighted=False))) > 1e-3
    assert run.buffers.tree.set_states.size == 0 and [len(s.kept) for s in run.snapshots] == [3, 3]


@pytest.mark.slow
def test_rows_and_snapshots_on_the_compiled_tree_resume_bit_for_bit():
    leduc = rcfr.load_game("leduc")
    options = {**ROWS, "average": "mixture", "snapshots": 2, "refit_every": 2, "capacity": 80}
    straight = SampledRCFR(leduc, **options).run(12)
    first = SampledRCFR(leduc, **options).run(7)
    resumed = SampledRCFR(leduc, **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(5)
    for a, b in ((straight.average_policy(), resumed.average_policy()),
                 (straight.current_policy(), resumed.current_policy())):
        assert np.array_equal(a.probs, b.probs) and np.ptp(a.probs) > 0
    for p in (0, 1):
        for x, y in zip(straight.kept[p].examples(), resumed.kept[p].examples()):
            assert np.array_equal(x, y)
    assert straight.nodes_touched == resumed.nodes_touched


# ---- targets="bootstrap" on the walk's rows: the model's estimate plus the new sampled regret ----------------
@pytest.mark.slow
@pytest.mark.parametrize("by_rules", [True, False])
def test_bootstrapped_rows_are_the_estimate_plus_the_sample(by_rules):
    """Before the first fit the estimate is zero: each bootstrapped value is the sampled regret / t (clipped at zero
    under RCFR+), example for example against targets="rows"; after the fits the walk predicts them (the runs resume
    bit for bit)."""
    game = rcfr.load_game("kuhn", compiled=not by_rules)
    rows = SampledRCFR(game, **{**ROWS, "refit_every": 3, "capacity": 10**4}).run(3)
    for solver, clip in ((SampledRCFRPlus, True), (SampledRCFR, False)):
        boot = solver(game, **{**ROWS, "targets": "bootstrap", "refit_every": 3, "capacity": 10**4}).run(3)
        for p in (0, 1):
            x, r, t = rows.kept[p].examples()
            bx, br, bt = boot.kept[p].examples()
            assert np.array_equal(np.column_stack([x, t]), np.column_stack([bx, bt]))  # the same walk
            want = (np.maximum(r, 0.0) if clip else r) / t
            assert np.array_equal(br, want) and (np.any(r < 0) and np.all(br >= 0) if clip else np.any(br < 0))
    options = {**ROWS, "targets": "bootstrap", "average": "mixture", "refit_every": 2, "capacity": 200}
    straight = SampledRCFRPlus(game, **options).run(12)
    first = SampledRCFRPlus(game, **options).run(7)
    resumed = SampledRCFRPlus(game, **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(5)
    for a, b in ((straight.average_policy(), resumed.average_policy()),
                 (straight.current_policy(), resumed.current_policy())):
        assert np.array_equal(a.probs, b.probs) and np.ptp(a.probs) > 0
    later = straight.kept[0].examples()
    assert np.all(later[1] >= 0) and np.any(later[2] > 2)  # clipped, and written after fits


def test_bootstrap_refused_naming_the_field():
    kuhn = rcfr.load_game("kuhn")
    with pytest.raises(ValueError, match="targets='bootstrap' needs profile='model'"):
        SampledRCFR(kuhn, **{**ROWS, "targets": "bootstrap", "profile": "visited"})
    with pytest.raises(ValueError, match="targets='bootstrap' keeps the feature rows.*sampler='outcome'"):
        SampledRCFR(kuhn, **{**ROWS, "targets": "bootstrap", "sampler": "outcome"})


# ---- no set numbered (rules path, rows or bootstrapped targets with the mixture: `SetFreeRules`) -------------
FREE = {**ROWS, "average": "mixture", "snapshots": 2, "refit_every": 2}


def test_no_set_index_refused_naming_the_field():
    """set_index=False serves only runs that keep nothing per set; the compiled tree has no such mode."""
    kuhn = rcfr.load_game("kuhn", compiled=False)
    for bad, field in (({"average": "sums", "snapshots": None}, "average='sums'"),
                       ({"targets": "reservoir"}, "targets='reservoir'"),
                       ({"profile": "visited", "targets": "stored", "average": None, "snapshots": None},
                        "profile='visited'")):
        with pytest.raises(ValueError, match=f"set_index=False .*{field}"):
            SampledRCFR(kuhn, **{**FREE, **bad, "set_index": False})
    with pytest.raises(ValueError, match="set_index must be True or False"):
        SampledRCFR(kuhn, **{**FREE, "set_index": 1})
    with pytest.raises(ValueError, match="set_index=False applies to games walked by their rules"):
        SampledRCFR(rcfr.load_game("kuhn"), **{**FREE, "set_index": False})


def _same_run(a, b):
    for p in (0, 1):
        for x, y in zip(a.kept[p].examples(), b.kept[p].examples()):
            assert np.array_equal(x, y)
        assert [s.weight for s in a.snapshots[p].kept] == [s.weight for s in b.snapshots[p].kept]
    assert a.nodes_touched == b.nodes_touched
    for x, y in ((a.average_policy(), b.average_policy()), (a.current_policy(), b.current_policy())):
        assert np.array_equal(x.codes, y.codes) and np.array_equal(x.probs, y.probs)


@pytest.mark.slow
@pytest.mark.parametrize("name, params, solver, targets", [
    ("kuhn", {}, SampledRCFR, "rows"), ("liars_dice", {"dice1": 1, "dice2": 1}, SampledRCFR, "rows"),
    ("liars_dice", {"dice1": 1, "dice2": 1}, SampledRCFRPlus, "bootstrap")])
def test_no_set_index_equals_the_numbered_run(name, params, solver, targets):
    """Kuhn and Bluff: every action is public, so an external-sampling traversal meets no opponent set twice and
    drawing the opponent's action at each visit draws what the per-set cache drew: the same rows, models, nodes and
    policies as with set_index=True, while the buffers number no set and hold the sink alone."""
    game = rcfr.load_game(name, compiled=False, **params)
    features = "poker" if name == "kuhn" else "liars_dice"
    options = {**FREE, "features": features, "targets": targets, "capacity": 60 if name == "kuhn" else 600}
    free, numbered = (solver(game, **options, set_index=index).run(14) for index in (None, True))
    assert not free.numbered and numbered.numbered and numbered.buffers.num_sets > 0
    assert free.buffers.num_sets == 0 and free.buffers.num_set_ids == 1  # the sink alone
    assert free.buffers.nbytes() < numbered.buffers.nbytes()
    _same_run(free, numbered)
    assert np.ptp(free.average_policy().probs) > 0


@pytest.mark.slow
def test_no_set_index_differs_where_an_opponent_set_repeats():
    """Goofspiel(4): a bid is hidden, so the opponent's set repeats across the traverser's bids; drawn at each
    visit, its action differs from the cached one (a control that the mode changes the draws where it may)."""
    game = rcfr.load_game("goofspiel", cards=4, points_order="random", seed=3, compiled=False)
    options = {**FREE, "features": "goofspiel", "capacity": 400}
    free, numbered = (SampledRCFR(game, **options, set_index=index).run(6) for index in (None, True))
    assert any(not np.array_equal(x, y) for x, y in zip(free.kept[0].examples(), numbered.kept[0].examples()))


@pytest.mark.slow
def test_no_set_index_resumes_bit_for_bit():
    leduc = rcfr.load_game("leduc", compiled=False)
    options = {**FREE, "snapshots": 3, "capacity": 80}
    straight = SampledRCFR(leduc, **options).run(12)
    first = SampledRCFR(leduc, **options).run(5)
    resumed = SampledRCFR(leduc, **options)
    resumed.load_state_dict(first.state_dict())
    resumed.run(7)
    assert not resumed.numbered
    _same_run(straight, resumed)


@pytest.mark.slow
def test_bluff21_bytes_after_2n_equal_those_after_n(monkeypatch):
    """Issue 34, item 4, on Bluff(2,1) walked by its rules: once the row reservoirs and the snapshot bound are full
    the bytes held are the same after 2N iterations as after N, while sets are still being met; the controls (the
    average sums, or the sets numbered, from arrays with room for 16 sets) grow as they meet sets."""
    from rcfr.sources.rules import RulesGame
    game = rcfr.load_game("liars_dice", dice1=2, dice2=1, compiled=False)
    options = {**FREE, "features": "liars_dice", "capacity": 1000, "refit_every": 5}
    run = SampledRCFR(game, **options).run(20)
    assert all(len(s.kept) == 2 for s in run.snapshots) and all(k.kept.seen[0] > 1000 for k in run.kept)
    n = run.state_bytes()
    held = _held(run)[0]
    run.run(20)
    assert _held(run)[0] == held and run.state_bytes() == n and not run.numbered
    monkeypatch.setattr(RulesGame, "initial_sets", 16)
    numbered = SampledRCFR(game, **options, set_index=True).run(20)
    sums = SampledRCFR(game, **{**options, "average": "sums", "snapshots": None}).run(20)
    grown = [(c.state_bytes(), c.buffers.num_sets) for c in (numbered, sums)]
    for control, (before, sets) in zip((numbered, sums), grown):
        control.run(20)
        assert control.buffers.num_sets > sets and control.state_bytes() > before
