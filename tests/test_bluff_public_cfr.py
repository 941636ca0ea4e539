"""CFR and chance-sampled CFR of Bluff on its public bid tree (`rcfr.solvers.public_tree`, kernels in
`rcfr.rules.bluff_cfr`): equal to the compiled solvers iteration for iteration (1e-12), the sampled
increments unbiased (exact expectation over the rolls, with a negative control), the exact evaluation
from the table equal to the policy's, checkpoints bit for bit, and bad input refused before any work."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr.abstraction import make_abstraction
from rcfr.abstraction.store import abstract_solver
from rcfr.rules import bluff_cfr
from rcfr.rules import bluff_evaluation as bluff_eval
from rcfr.rules.game import RulesGame
from rcfr.rules.policy import CodePolicy
from rcfr.solvers import BluffPublicCFR, ChanceSamplingCFR, make_solver

TOL = 1e-12
_games: dict = {}


def compiled(dice1=1, dice2=1):
    key = (dice1, dice2)
    if key not in _games:
        _games[key] = rcfr.load_game("liars_dice", dice1=dice1, dice2=dice2)
    return _games[key]


def rules_game(dice1=1, dice2=1):
    return RulesGame(rcfr.make_rules("liars_dice", dice1=dice1, dice2=dice2))


def gap(public: CodePolicy, policy) -> float:
    """Largest difference between a public solver's policy and a compiled solver's, set by set."""
    other = CodePolicy.from_policy(policy)
    assert np.array_equal(public.codes, other.codes) and np.array_equal(public.first, other.first)
    return float(np.abs(public.probs - other.probs).max())


def assert_same_run(public, general, iterations):
    for _ in range(iterations):
        public.iterate()
        general.iterate()
        assert gap(public.current_policy(), general.current_policy()) < TOL
        assert gap(public.average_policy(), general.average_policy()) < TOL


# ---- equal to the compiled solvers ---------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"updates": "simultaneous"}, {"averaging": "linear"}])
def test_cfr_equals_compiled_cfr(options):
    game = compiled()
    public = make_solver("cfr", game, walk="public", **options)
    assert isinstance(public, BluffPublicCFR)
    assert_same_run(public, make_solver("cfr", game, **options), 6)


@pytest.mark.parametrize("options", [
    {}, {"updates": "alternating"}, {"regret_matching": "rm+", "seed": 3}, {"chance_sampling": "all"},
    {"chance_sampling": "all", "updates": "alternating"}])
def test_cscfr_equals_compiled_cscfr_with_the_same_rolls(options):
    game = compiled()
    public = make_solver("cscfr", game, walk="public", **options)
    general = make_solver("cscfr", game, **options)
    assert isinstance(general, ChanceSamplingCFR)
    assert_same_run(public, general, 25)


@pytest.mark.parametrize("r", [1, 3, 6])
def test_recall_abstractions_equal_compiled_with_full_averaging(r):
    game = compiled()
    abstraction = make_abstraction(rules_game(), "bluff_last_bids", r=r)
    on_tree = abstraction.on(game)
    public = make_solver("cscfr", game, walk="public", abstraction=abstraction, seed=2)
    assert_same_run(public, make_solver("cscfr", game, abstraction=on_tree, seed=2), 20)
    public = BluffPublicCFR(game, "cfr", abstraction=abstraction)
    assert_same_run(public, abstract_solver("cfr", game, on_tree), 4)


@pytest.mark.slow
def test_bluff_21_equals_compiled():
    """Bluff(2,1) compiles in ~35 s to ~3 GB: CFR and chance-sampled CFR, full game and r = 4."""
    game = compiled(2, 1)
    assert_same_run(make_solver("cfr", game, walk="public"), make_solver("cfr", game), 3)
    assert_same_run(make_solver("cscfr", game, walk="public", seed=5), make_solver("cscfr", game, seed=5), 30)
    abstraction = make_abstraction(rules_game(2, 1), "bluff_last_bids", r=4)
    assert_same_run(make_solver("cscfr", game, walk="public", abstraction=abstraction),
                    make_solver("cscfr", game, abstraction=abstraction.on(game)), 30)


# ---- unbiased --------------------------------------------------------------------------------------
def _one_walk(solver, rolls, weights=None):
    """The regret and average increments of one simultaneous walk from zero tables, carrying `rolls`."""
    solver.regrets[:] = 0.0
    solver.avg[:] = 0.0
    solver._walk(rolls, bluff_cfr.UPDATE, 3, 3, 1.0)
    return solver.regrets.copy(), solver.avg.copy()


@pytest.mark.parametrize("r", [None, 2])
def test_chance_sampled_increments_are_unbiased(r):
    """Over every pair of rolls, weighted by their probabilities, a chance-sampled walk's increments add up
    to the vanilla walk's (exactly: the expectation is a finite sum). Negative control: weighting the pairs
    uniformly, as if Bluff(2,1)'s two-dice rolls were equally likely, misses by far."""
    game = rules_game(2, 1)
    abstraction = None if r is None else make_abstraction(game, "bluff_last_bids", r=r)
    solver = BluffPublicCFR(game, "cscfr", abstraction=abstraction)
    exact = _one_walk(solver, (None, None))
    (q0, q1), expected, uniform = solver.probs, [0.0, 0.0], [0.0, 0.0]
    for r0 in range(len(q0)):
        for r1 in range(len(q1)):
            sampled = _one_walk(solver, (r0, r1))
            for k in (0, 1):
                expected[k] = expected[k] + q0[r0] * q1[r1] * sampled[k]
                uniform[k] = uniform[k] + sampled[k] / (len(q0) * len(q1))
    for k in (0, 1):
        scale = np.abs(exact[k]).max()
        assert scale > 0.01
        assert np.abs(expected[k] - exact[k]).max() < 1e-12 * max(1.0, scale)
    assert np.abs(uniform[0] - exact[0]).max() > 1e-3 * scale  # the control fails as it should


# ---- evaluation, policies, checkpoints ------------------------------------------------------------
def test_exploitability_from_the_table_equals_the_policy_walk():
    game = rules_game(2, 1)
    solver = make_solver("cscfr", game, seed=4)
    solver.run(30)
    got = solver.exploitability()
    want = bluff_eval.evaluate(game.rules, solver.average_policy())
    for a, b in [(got.value, want.value), (got.exploitability, want.exploitability),
                 *zip(got.best_response_values, want.best_response_values)]:
        assert abs(a - b) < TOL
    assert solver.average_policy().num_infosets == bluff_eval.num_decision_sets(game.rules)


def test_public_walk_is_chosen_on_the_rules_and_can_be_forced_off():
    game = rules_game()
    assert isinstance(make_solver("cscfr", game), BluffPublicCFR)
    assert isinstance(make_solver("cfr", game), BluffPublicCFR)
    assert isinstance(make_solver("cscfr", game, walk="general"), ChanceSamplingCFR)
    assert isinstance(make_solver("cscfr", game, chance_sampling="paired"), ChanceSamplingCFR)  # not offered
    assert isinstance(make_solver("cscfr", compiled()), ChanceSamplingCFR)  # compiled: the general one by default


def test_checkpoints_resume_bit_for_bit_and_record_the_options():
    game = rules_game()
    abstraction = make_abstraction(game, "bluff_last_bids", r=3)
    straight = make_solver("cscfr", game, abstraction=abstraction, seed=9, dtype="float32").run(12)
    first = make_solver("cscfr", game, abstraction=abstraction, seed=9, dtype="float32").run(5)
    state = first.state_dict()
    assert '"dtype": "float32"' in str(state["options"])
    resumed = make_solver("cscfr", game, abstraction=abstraction, seed=9, dtype="float32")
    resumed.load_state_dict(state)
    resumed.run(7)
    assert np.array_equal(resumed.regrets, straight.regrets) and np.array_equal(resumed.avg, straight.avg)
    with pytest.raises(ValueError, match="seed: 9 -> 8"):
        make_solver("cscfr", game, abstraction=abstraction, seed=8, dtype="float32").load_state_dict(state)


def test_float32_tables_stay_close_to_float64():
    game = rules_game(2, 1)
    wide, narrow = (make_solver("cscfr", game, seed=1, dtype=d).run(50) for d in ("float64", "float32"))
    assert narrow.regrets.dtype == np.float32 and wide.regrets.dtype == np.float64
    assert abs(wide.exploitability().exploitability - narrow.exploitability().exploitability) < 1e-5


# ---- bad input ---------------------------------------------------------------------------------------
def test_bad_input_is_refused_naming_the_field(monkeypatch):
    game = rules_game()
    with pytest.raises(ValueError, match="walk.*'auto', 'public', 'general'"):
        make_solver("cscfr", game, walk="fast")
    with pytest.raises(ValueError, match="dtype"):
        make_solver("cscfr", game, dtype="float16")
    with pytest.raises(ValueError, match="walk='public'.*chance_sampling='paired'"):
        make_solver("cscfr", game, walk="public", chance_sampling="paired")
    with pytest.raises(ValueError, match="walk='public'.*es-mccfr"):
        make_solver("es-mccfr", game, walk="public")
    with pytest.raises(ValueError, match="walk='public'.*Liar's Dice"):
        make_solver("cfr", rcfr.load_game("kuhn"), walk="public")
    for r in (0, 13):
        with pytest.raises(ValueError, match=r"r \(bids remembered\) must be an integer in \[1, 12\]"):
            make_abstraction(game, "bluff_last_bids", r=r)


def test_memory_and_index_limits_are_refused_before_allocating(monkeypatch):
    from rcfr.solvers import public_tree
    with pytest.raises(ValueError, match=r"table index .* would overflow int64"):
        BluffPublicCFR(rules_game(5, 4))
    monkeypatch.setattr(public_tree, "available_memory", lambda: 2_000_000)
    game = rules_game(2, 1)  # tables: 5,308,389 entries each
    with pytest.raises(MemoryError, match=r"dtype='float32'.*needs 0\.04 GiB; this machine has 0\.00 GiB"):
        BluffPublicCFR(game)
    monkeypatch.setattr(public_tree, "available_memory", lambda: 60_000_000)
    assert BluffPublicCFR(game).options.dtype == "float32"  # auto: float64 does not fit
    with pytest.raises(MemoryError, match=r"dtype='float64'.*needs 0\.08 GiB.*float32' halves it"):
        BluffPublicCFR(game, dtype="float64")
