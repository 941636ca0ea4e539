"""State that does not grow with the sets met (issue 34 items 2-4): the average strategy as a mixture of the kept
models (``average="snapshots"``).

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
        "profile": "model", "average": "snapshots"}


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
    twin = None if compiled is None else make_encoder(compiled, "poker")  # the same encoder, for the compiled twin

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
    with pytest.raises(ValueError, match="snapshots=2 bounds average='snapshots'"):
        SampledRCFR(kuhn, **{**LEAN, "average": "sums", "snapshots": 2})
    with pytest.raises(ValueError, match="average='snapshots'.*profile='model'"):
        SampledRCFR(kuhn, **{**LEAN, "profile": "visited"})
    with pytest.raises(ValueError, match="average='snapshots'.*features_on_demand=True"):
        SampledRCFR(kuhn, average="snapshots")
    with pytest.raises(ValueError, match="average must be one of|allowed"):
        SampledRCFR(kuhn, **{**LEAN, "average": "mean"})
