"""CFR, chance-sampled CFR and external sampling of Bluff on its public bid tree (`rcfr.solvers.public_tree`, kernels in
`rcfr.solvers.public_tree.cfr_walks`): equal to the compiled solvers iteration for iteration (1e-12), the sampled
increments unbiased (exact expectation over the rolls, with a negative control), the exact evaluation
from the table equal to the policy's, checkpoints bit for bit, and bad input refused before any work."""

from __future__ import annotations

import numpy as np
import pytest

import rcfr
from rcfr.abstraction import make_abstraction
from rcfr.abstraction.store import abstract_solver
from rcfr.evaluation import bluff as bluff_eval
from rcfr.policy.rules import CodePolicy, infoset_codes
from rcfr.solvers import BluffPublicCFR, ChanceSamplingCFR, make_solver
from rcfr.solvers.public_tree import cfr_walks as bluff_cfr
from rcfr.sources.rules import RulesGame

TOL = 1e-12
_games: dict = {}


def compiled(dice1=1, dice2=1):
    key = (dice1, dice2)
    if key not in _games:
        _games[key] = rcfr.load_game("liars_dice", dice1=dice1, dice2=dice2)
    return _games[key]


def rules_game(dice1=1, dice2=1):
    return RulesGame(rcfr.make_rules("liars_dice", dice1=dice1, dice2=dice2))


def entries(game, solver, abstract=False, own=False) -> np.ndarray:
    """The public solver's table entry of every sequence of compiled `game` (global sequence order): its full
    set's, or its abstract set's (the r highest bids of the set's mask kept); with `own`, the probability of
    the sequence's own roll instead."""
    nb = game.rules.num_bids
    codes = infoset_codes(game)
    n = game.infoset_num_actions.astype(np.int64)
    half, player = codes >> 1, codes & 1
    roll, mask = half >> nb, half & ((1 << nb) - 1)
    if abstract:
        kept, count = np.zeros_like(mask), np.zeros_like(mask)
        for b in range(nb - 1, -1, -1):
            take = ((mask >> b) & 1 == 1) & (count < solver.recall)
            kept |= take.astype(np.int64) << b
            count += take
        base = solver.abstract[2 * kept + player]
    else:
        base = solver.full[mask]
    base = base + roll * n
    sets = np.repeat(np.arange(len(codes)), n)
    within = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
    out = np.empty(game.num_sequences, np.float64 if own else np.int64)
    if own:
        q = np.where(player == 0, solver.probs[0][np.minimum(roll, len(solver.probs[0]) - 1)],
                     solver.probs[1][np.minimum(roll, len(solver.probs[1]) - 1)])
        out[game.infoset_first_seq[sets] + within] = q[sets]
    else:
        out[game.infoset_first_seq[sets] + within] = base[sets] + within
    return out


def close(a, b) -> bool:
    return np.abs(a - b).max() <= TOL * max(1.0, np.abs(b).max())


def gap(public: CodePolicy, policy) -> float:
    """Largest difference between a public solver's policy and a compiled solver's, set by set."""
    other = CodePolicy.from_policy(policy)
    assert np.array_equal(public.codes, other.codes) and np.array_equal(public.first, other.first)
    return float(np.abs(public.probs - other.probs).max())


def assert_same_steps(public, general, iterations):
    """Iteration for iteration: before each step the public solver takes the compiled one's regrets (and
    random stream), so a step is compared from the same state; after it, both tables agree to 1e-12
    (relative to their scale). A free run would not do: regret matching turns a regret of 1e-17 against
    an exact 0 (the same sum added in another order) into a different strategy, and the runs drift apart.
    Averages are compared as they accumulate (they never feed back; a compiled walk of every roll adds
    them times the own roll's probability)."""
    game = general.game
    sampled = isinstance(general, ChanceSamplingCFR)
    full = entries(game, public)
    into = entries(game, public, abstract=True) if public.abstracted else full

    def regrets():
        if sampled:
            slots = general.buffers.slots.seq_map if public.abstracted else np.arange(game.num_sequences)
            return general.buffers.regrets[slots]
        return np.concatenate([general.store.regrets[p][1:] for p in (0, 1)])

    def averages():
        return general.buffers.avg if sampled else np.concatenate([general.average_plans[p][1:] for p in (0, 1)])

    scale = entries(game, public, own=True) if sampled and general.options.chance_sampling == "all" else 1.0
    for _ in range(iterations):
        public.regrets[into] = regrets()
        if sampled:
            public.rng[:] = general.buffers.state.rng
        public.iterate()
        general.iterate()
        assert close(public.regrets[into], regrets())
        assert close(public.avg[full] * scale, averages())
        if sampled:
            assert public.rng[0] == general.buffers.state.rng[0]


def assert_same_run(public, general, iterations):
    """A free run: policies and the average's exploitability after every iteration (few iterations: see
    `assert_same_steps` for why a long free run drifts)."""
    for _ in range(iterations):
        public.iterate()
        general.iterate()
        assert gap(public.average_policy(), general.average_policy()) < TOL
        want = rcfr.exploitability(general.game, general.average_policy())
        assert abs(public.exploitability().exploitability - want) < TOL


# ---- equal to the compiled solvers ---------------------------------------------------------------
@pytest.mark.parametrize("options", [{}, {"updates": "simultaneous"}, {"averaging": "linear"}])
def test_cfr_equals_compiled_cfr(options):
    game = compiled()
    public = make_solver("cfr", game, walk="public", **options)
    assert isinstance(public, BluffPublicCFR)
    assert_same_steps(public, make_solver("cfr", game, **options), 15)
    assert_same_run(make_solver("cfr", game, walk="public", **options), make_solver("cfr", game, **options), 4)


@pytest.mark.parametrize("options", [
    {}, {"updates": "alternating"}, {"regret_matching": "rm+", "seed": 3}, {"chance_sampling": "all"},
    {"chance_sampling": "all", "updates": "alternating"}])
def test_cscfr_equals_compiled_cscfr_with_the_same_rolls(options):
    game = compiled()
    general = make_solver("cscfr", game, **options)
    assert isinstance(general, ChanceSamplingCFR)
    assert_same_steps(make_solver("cscfr", game, walk="public", **options), general, 40)


@pytest.mark.parametrize("r", [1, 3, 6])
def test_recall_abstractions_equal_compiled_with_full_averaging(r):
    game = compiled()
    abstraction = make_abstraction(rules_game(), "bluff_last_bids", r=r)
    on_tree = abstraction.on(game)
    public = make_solver("cscfr", game, walk="public", abstraction=abstraction, seed=2)
    assert_same_steps(public, make_solver("cscfr", game, abstraction=on_tree, seed=2), 40)
    public = BluffPublicCFR(game, "cfr", abstraction=abstraction)
    assert_same_run(public, abstract_solver("cfr", game, on_tree), 3)


@pytest.mark.slow
def test_bluff_21_equals_compiled():
    """Bluff(2,1) compiles in ~35 s to ~3 GB: CFR and chance-sampled CFR, full game and r = 4."""
    game = compiled(2, 1)
    assert_same_steps(make_solver("cfr", game, walk="public"), make_solver("cfr", game), 2)
    assert_same_steps(make_solver("cscfr", game, walk="public", seed=5), make_solver("cscfr", game, seed=5), 10)
    abstraction = make_abstraction(rules_game(2, 1), "bluff_last_bids", r=4)
    assert_same_steps(make_solver("cscfr", game, walk="public", abstraction=abstraction),
                    make_solver("cscfr", game, abstraction=abstraction.on(game)), 10)


# ---- the scalar walk of a chance-sampled iteration ------------------------------------------------
def assert_same_walks(scalar, vector, iterations):
    """A free run of the scalar walk beside the vector walk from the same seed: after every iteration the
    same tables bit for bit (each sum is taken in the same order), the same nodes entered and stream. The
    regrets must also move (else equal tables would prove little)."""
    assert (scalar.options.sampled_walk, vector.options.sampled_walk) == ("scalar", "vector")
    for _ in range(iterations):
        scalar.iterate()
        vector.iterate()
        assert np.array_equal(scalar.regrets, vector.regrets) and np.array_equal(scalar.avg, vector.avg)
        assert close(scalar.regrets, vector.regrets) and close(scalar.avg, vector.avg)  # the 1e-12 asked
        assert scalar.nodes_touched == vector.nodes_touched and np.array_equal(scalar.rng, vector.rng)
    assert np.abs(scalar.regrets).max() > 0.1 and np.abs(scalar.avg).max() > 0.1


SCALAR_CASES = [({}, None), ({"updates": "alternating"}, None), ({"regret_matching": "rm+", "seed": 3}, None),
                ({"averaging": "linear", "seed": 4}, None), ({"dtype": "float32", "seed": 6}, None),
                ({"seed": 7}, 2), ({"regret_matching": "rm+", "updates": "alternating", "seed": 8}, 3)]


@pytest.mark.parametrize("options, r", SCALAR_CASES)
def test_scalar_walk_equals_the_vector_walk_on_bluff_11(options, r):
    game = rules_game()
    abstraction = None if r is None else make_abstraction(game, "bluff_last_bids", r=r)
    scalar, vector = (make_solver("cscfr", game, abstraction=abstraction, sampled_walk=w, **{"dtype": "float64", **options})
                      for w in ("scalar", "vector"))
    assert_same_walks(scalar, vector, 60)


@pytest.mark.parametrize("options, r", [({}, None), ({"updates": "alternating", "regret_matching": "rm+"}, None),
                                        ({"dtype": "float32", "seed": 2}, None), ({"seed": 5}, 4)])
def test_scalar_walk_equals_the_vector_walk_on_bluff_21(options, r):
    game = rules_game(2, 1)
    abstraction = None if r is None else make_abstraction(game, "bluff_last_bids", r=r)
    scalar, vector = (make_solver("cscfr", game, abstraction=abstraction, sampled_walk=w, **{"dtype": "float64", **options})
                      for w in ("scalar", "vector"))
    assert_same_walks(scalar, vector, 8)


@pytest.mark.parametrize("dice", [(1, 1), (2, 1)])
def test_scalar_walk_returns_the_vector_walks_values_for_every_roll_pair(dice):
    """One walk from the same (nonzero) tables for each pair of rolls: the same increments, and the same
    values and nodes in `out`. Negative control: the vector walk given player 1's next roll instead gives
    other increments."""
    game = rules_game(*dice)
    scalar, vector = (make_solver("cscfr", game, seed=1, sampled_walk=w, dtype="float64") for w in ("scalar", "vector"))
    scalar.run(5)
    start = scalar.regrets.copy(), scalar.avg.copy()
    q0, q1 = scalar.probs
    pairs = [(r0, r1) for r0 in range(len(q0)) for r1 in range(len(q1))][:: 1 if dice == (1, 1) else 21]
    for r0, r1 in pairs:
        for solver in (scalar, vector):
            solver.regrets[:], solver.avg[:] = start
        got = scalar._walk((r0, r1), bluff_cfr.UPDATE, 3, 3, 2.0)
        want = vector._walk((r0, r1), bluff_cfr.UPDATE, 3, 3, 2.0)
        assert np.array_equal(got, want) and got[3] > 1
        assert np.array_equal(scalar.regrets, vector.regrets) and np.array_equal(scalar.avg, vector.avg)
        vector.regrets[:], vector.avg[:] = start
        vector._walk((r0, (r1 + 1) % len(q1)), bluff_cfr.UPDATE, 3, 3, 2.0)
        assert np.abs(scalar.regrets - vector.regrets).max() > 1e-3  # the control fails as it should


def test_scalar_walk_negative_control():
    """Another seed draws other rolls: the free-run comparison above can fail."""
    game = rules_game()
    scalar = make_solver("cscfr", game, seed=1, dtype="float64").run(20)
    vector = make_solver("cscfr", game, seed=2, dtype="float64", sampled_walk="vector").run(20)
    assert np.abs(scalar.regrets - vector.regrets).max() > 1e-3


def test_scalar_walk_is_the_default_for_chance_sampling_and_checkpoints_resume_across_it():
    game = rules_game()
    assert make_solver("cscfr", game).options.sampled_walk == "scalar"
    with pytest.raises(ValueError, match="unknown sampled_walk 'fast'; allowed: scalar, vector"):
        make_solver("cscfr", game, sampled_walk="fast")
    with pytest.raises(ValueError, match="unknown sampled_walk 'fast'"):
        BluffPublicCFR(game, sampled_walk="fast")
    straight = make_solver("cscfr", game, seed=3).run(9)
    first = make_solver("cscfr", game, seed=3, sampled_walk="vector").run(4)
    resumed = make_solver("cscfr", game, seed=3)
    resumed.load_state_dict(first.state_dict())
    resumed.run(5)
    assert np.array_equal(resumed.regrets, straight.regrets) and np.array_equal(resumed.avg, straight.avg)


# ---- unbiased --------------------------------------------------------------------------------------
def _one_walk(solver, rolls, weights=None):
    """The regret increments of one simultaneous walk from zero tables, carrying `rolls`."""
    solver.regrets[:] = 0.0
    solver.avg[:] = 0.0
    solver._walk(rolls, bluff_cfr.UPDATE, 3, 3, 1.0)
    return solver.regrets.copy()


@pytest.mark.parametrize("dice, r", [((1, 1), None), ((1, 1), 2), pytest.param((2, 1), None, marks=pytest.mark.slow),
                                     pytest.param((2, 1), 2, marks=pytest.mark.slow)])
def test_chance_sampled_increments_are_unbiased(dice, r):
    """Over every pair of rolls, weighted by their probabilities, a chance-sampled walk's regret increments
    add up to the vanilla walk's (exactly: the expectation is a finite sum). Negative control: weighting the
    pairs with other probabilities (roll 0 of each player twice as likely) misses by far. (Average
    increments are the vanilla ones times the own roll's probability, a per-set factor that normalizing
    removes, as on the compiled path.)"""
    game = rules_game(*dice)
    abstraction = None if r is None else make_abstraction(game, "bluff_last_bids", r=r)
    solver = BluffPublicCFR(game, "cscfr", abstraction=abstraction)
    exact = _one_walk(solver, (None, None))
    (q0, q1), expected, skewed = solver.probs, 0.0, 0.0
    w0, w1 = (np.where(np.arange(len(q)) == 0, 2 * q, q) / (1 + q[0]) for q in (q0, q1))
    for r0 in range(len(q0)):
        for r1 in range(len(q1)):
            sampled = _one_walk(solver, (r0, r1))
            expected = expected + q0[r0] * q1[r1] * sampled
            skewed = skewed + w0[r0] * w1[r1] * sampled
    assert np.abs(exact).max() > 0.01
    assert close(expected, exact)
    assert np.abs(skewed - exact).max() > 1e-3  # the control fails as it should


# ---- evaluation, policies, checkpoints ------------------------------------------------------------
@pytest.mark.parametrize("dice", [(1, 1), pytest.param((2, 1), marks=pytest.mark.slow)])
def test_exploitability_from_the_table_equals_the_policy_walk(dice):
    game = rules_game(*dice)
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
    """float32 rounds each entry to 6e-8 relative; regret matching turns that into different strategies
    where a regret sum is near zero, so runs drift apart slowly: after 50 chance-sampled iterations of
    Bluff(2,1) the exploitabilities differ by 9.9e-5 (of 0.708; docs/large_games.md); here Bluff(1,1)."""
    game = rules_game()
    wide, narrow = (make_solver("cscfr", game, seed=1, dtype=d).run(300) for d in ("float64", "float32"))
    assert narrow.regrets.dtype == np.float32 and wide.regrets.dtype == np.float64
    assert abs(wide.exploitability().exploitability - narrow.exploitability().exploitability) < 1e-3


# ---- external sampling on the public tree --------------------------------------------------------
def by_code(policy):
    """A policy's rows keyed by information-set code."""
    p = CodePolicy.from_policy(policy) if not isinstance(policy, CodePolicy) else policy
    return {int(c): p.probs[p.first[i]:p.first[i + 1]] for i, c in enumerate(p.codes)}


def assert_same_external_run(public, general, chunks, steps):
    """A free run of external sampling: the same draws in the same order, so the same histories touched, the
    same regrets and average, set by set (sets the general walk never met have zero sums on the public tree)."""
    for _ in range(chunks):
        public.run(steps)
        general.run(steps)
        assert public.nodes_touched == general.nodes_touched
        ours, theirs = by_code(public.average_policy()), by_code(general.average_policy())
        assert set(theirs) <= set(ours)
        assert max(np.abs(ours[c] - theirs[c]).max() for c in theirs) < TOL
        ours, theirs = by_code(public.current_policy()), by_code(general.current_policy())
        assert max(np.abs(ours[c] - theirs[c]).max() for c in theirs) < TOL
        assert abs(rcfr.exploitability(public.game, public.average_policy())
                   - rcfr.exploitability(general.game, general.average_policy())) < TOL


@pytest.mark.parametrize("options", [{}, {"regret_matching": "rm+", "seed": 3}, {"averaging": "linear", "seed": 5}])
def test_external_sampling_equals_the_compiled_solver(options):
    """Against the compiled solver (whose draws the general walk on the rules repeats node for node,
    `tests/test_rules_sampling.py`); the general walk on the rules itself is in the slow set (its driver compiles
    for minutes from an empty cache)."""
    public = make_solver("es-mccfr", rules_game(), dtype="float64", **options)
    assert isinstance(public, BluffPublicCFR)
    assert_same_external_run(public, make_solver("es-mccfr", compiled(), **options), 4, 25)


@pytest.mark.parametrize("options", [{}, {"updates": "simultaneous", "seed": 4}, {"regret_matching": "rm+", "epsilon": 0.3},
                                     {"averaging": "linear", "seed": 7}])
def test_outcome_sampling_equals_the_compiled_solver(options):
    public = make_solver("os-mccfr", rules_game(), dtype="float64", **options)
    assert isinstance(public, BluffPublicCFR)
    assert_same_external_run(public, make_solver("os-mccfr", compiled(), **options), 4, 500)


@pytest.mark.slow
@pytest.mark.parametrize("dice", [(1, 1), (2, 1)])
def test_sampling_on_the_public_tree_equals_the_general_walk_on_the_rules(dice):
    game = rules_game(*dice)
    steps = 25 if dice == (1, 1) else 40
    assert_same_external_run(make_solver("es-mccfr", game, seed=2, dtype="float64"),
                             make_solver("es-mccfr", game, seed=2, walk="general"), 3, steps)
    assert_same_external_run(make_solver("os-mccfr", game, seed=2, dtype="float64"),
                             make_solver("os-mccfr", game, seed=2, walk="general"), 3, 50 * steps)


def test_sampling_on_the_public_tree_negative_control():
    """Another seed draws other rolls and actions: the comparison above can fail. (Unbiasedness is the general
    walk's, tested with it: this walk makes the same draws and the same sums.)"""
    public = make_solver("es-mccfr", rules_game(), seed=1, dtype="float64").run(30)
    other = make_solver("es-mccfr", compiled(), seed=2).run(30)
    ours, theirs = by_code(public.average_policy()), by_code(other.average_policy())
    assert max(np.abs(ours[c] - theirs[c]).max() for c in theirs) > 1e-3


# ---- bad input ---------------------------------------------------------------------------------------
def test_bad_input_is_refused_naming_the_field(monkeypatch):
    game = rules_game()
    with pytest.raises(ValueError, match="unknown walk 'fast'; allowed: auto, public, general"):
        make_solver("cscfr", game, walk="fast")
    with pytest.raises(ValueError, match="dtype"):
        make_solver("cscfr", game, dtype="float16")
    with pytest.raises(ValueError, match="walk='public'.*chance_sampling='paired'"):
        make_solver("cscfr", game, walk="public", chance_sampling="paired")
    with pytest.raises(ValueError, match="walk='public'.*pure-cfr"):
        make_solver("pure-cfr", game, walk="public")
    with pytest.raises(ValueError, match="walk='public'.*epsilon"):
        make_solver("es-mccfr", game, walk="public", epsilon=0.5)
    with pytest.raises(ValueError, match="epsilon"):
        make_solver("os-mccfr", game, epsilon=0.0)
    with pytest.raises(ValueError, match="walk='public'.*abstraction"):
        make_solver("es-mccfr", game, walk="public", abstraction=make_abstraction(game, "bluff_last_bids", r=2))
    with pytest.raises(ValueError, match="walk='public'.*average_mode='optimistic'"):
        make_solver("es-mccfr", game, walk="public", average_mode="optimistic")
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
    with pytest.raises(MemoryError, match=r"dtype='float32'.*\(10,616,778 entries\) need 0\.04 GiB; this machine has 0\.00 GiB"):
        BluffPublicCFR(game)
    monkeypatch.setattr(public_tree, "available_memory", lambda: 60_000_000)
    assert BluffPublicCFR(game).options.dtype == "float32"  # auto: float64 does not fit
    with pytest.raises(MemoryError, match=r"dtype='float64'.*need 0\.08 GiB.*float32' halves it"):
        BluffPublicCFR(game, dtype="float64")
