"""MCCFR through OpenSpiel's state API (`rcfr.solvers.state_sampling`): equal to the compiled walks bit for bit,
converging, resumable, refusing what cannot work, and running on a game far above the compile limit."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import rcfr
from rcfr import Policy, PolicyError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("pyspiel") is None,
                                reason="OpenSpiel is an optional extra: pip install 'rcfr[openspiel]'")

SOLVERS = {"external": "ExternalSamplingMCCFR", "outcome": "OutcomeSamplingMCCFR"}


def _state_mccfr(game: str, **options):
    from rcfr.solvers.state_sampling import StateMCCFR
    return StateMCCFR(game, **options)


def _exploitability(policy, compiled) -> float:
    """rcfr's exact exploitability of a `StatePolicy`, read through OpenSpiel's policy classes."""
    from open_spiel.python.policy import tabular_policy_from_callable
    played = policy.to_openspiel()
    return rcfr.exploitability(compiled, Policy.from_openspiel(compiled, tabular_policy_from_callable(played.game,
                                                                                                      played)))


def _table_arrays(solver) -> tuple[np.ndarray, np.ndarray]:
    return np.frombuffer(solver.table.regrets, np.float64), np.frombuffer(solver.table.avg, np.float64)


@pytest.mark.parametrize("name, iterations", [
    ("kuhn_poker", 500), ("leduc_poker", 200),
    ("goofspiel(imp_info=True,num_cards=4,points_order=descending)", 100)])  # simultaneous; forced last bids
@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_state_path_equals_the_compiled_walk_bit_for_bit(name, iterations, sampler):
    """Same random stream, same order of draws, same float operations, forced moves collapsed alike: every
    regret and average sum and the nodes touched equal rcfr's compiled ES/OS on ``openspiel:<game>``."""
    from rcfr.solvers import mccfr
    compiled = rcfr.load_game(f"openspiel:{name}")
    theirs = getattr(mccfr, SOLVERS[sampler])(compiled, seed=5)
    theirs.run(iterations)
    mine = _state_mccfr(name, sampler=sampler, seed=5).run(iterations)
    assert mine.nodes_touched == theirs.nodes_touched
    table, slots = mine.table, theirs.buffers.slots.seq_map
    assert table.num_sets > 0.3 * compiled.num_infosets
    for key, row in {**table.index[0], **table.index[1]}.items():  # Kuhn's and Leduc's keys name the player
        f, n = compiled.infoset_first_seq[compiled.infoset_index[key]], table.first[row + 1] - table.first[row]
        mine_slots = slice(table.first[row], table.first[row + 1])
        assert np.array_equal(theirs.buffers.regrets[slots[f:f + n]], np.array(table.regrets[mine_slots])), key
        assert np.array_equal(theirs.buffers.avg[f:f + n], np.array(table.avg[mine_slots])), key


@pytest.mark.parametrize("name, sampler, iterations, bound", [
    ("kuhn_poker", "external", 1000, 0.05), ("kuhn_poker", "outcome", 10000, 0.05),
    ("leduc_poker", "external", 3000, 1.0), ("leduc_poker", "outcome", 10000, 1.5)])
def test_average_policy_converges(name, sampler, iterations, bound):
    compiled = rcfr.load_game(f"openspiel:{name}")
    solver = rcfr.solve_openspiel(name, sampler=sampler, iterations=iterations, seed=0)
    assert _exploitability(solver.average_policy(), compiled) < bound  # uniform: 0.458 (Kuhn), 2.37 (Leduc)


def test_openspiel_scores_the_exported_policy_as_rcfr_does():
    from open_spiel.python.algorithms import exploitability
    compiled = rcfr.load_game("openspiel:kuhn_poker")
    policy = rcfr.solve_openspiel("kuhn_poker", iterations=300).average_policy()
    ours = _exploitability(policy, compiled)
    played = policy.to_openspiel()
    assert exploitability.exploitability(played.game, played) == pytest.approx(ours, abs=1e-12)
    assert played.unmet == 0


@pytest.mark.parametrize("sampler", ["external", "outcome"])
def test_resume_is_bit_identical_and_another_seed_differs(tmp_path, sampler):
    whole = _state_mccfr("leduc_poker", sampler=sampler, seed=1).run(60)
    first = _state_mccfr("leduc_poker", sampler=sampler, seed=1).run(25)
    np.savez(tmp_path / "ckpt.npz", **first.state_dict())
    resumed = _state_mccfr("leduc_poker", sampler=sampler, seed=1)
    with np.load(tmp_path / "ckpt.npz", allow_pickle=False) as data:
        resumed.load_state_dict({k: data[k] for k in data.files})
    resumed.run(35)
    assert (resumed.iteration, resumed.nodes_touched) == (whole.iteration, whole.nodes_touched)
    assert resumed.table.keys() == whole.table.keys()
    for a, b in zip(_table_arrays(resumed), _table_arrays(whole)):
        assert np.array_equal(a, b)
    other = _state_mccfr("leduc_poker", sampler=sampler, seed=2).run(60)  # negative control
    assert not np.array_equal(_table_arrays(other)[0][:20], _table_arrays(whole)[0][:20])


def test_a_checkpoint_of_other_options_or_another_game_is_refused():
    state = _state_mccfr("kuhn_poker", seed=1).run(3).state_dict()
    with pytest.raises(ValueError, match="checkpoint field 'options'"):
        _state_mccfr("kuhn_poker", seed=2).load_state_dict(state)
    with pytest.raises(ValueError, match="checkpoint field 'game' is 'kuhn_poker.*'leduc_poker"):
        _state_mccfr("leduc_poker", seed=1).load_state_dict(state)


@pytest.mark.parametrize("kwargs, message", [
    ({"sampler": "es"}, "unknown sampler 'es'; allowed: .*external.*outcome"),
    ({"iterations": 0}, "iterations"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"seed": -1}, "seed"),
    ({"game": "kuhn_poker(players=3)"}, "has 3 players"),
    ({"game": "sheriff"}, "has utility GENERAL_SUM"),
    ({"game": "zerosum(game=negotiation())"}, "has sampled chance"),
    ({"game": "no_such_game"}, "OpenSpiel cannot load game"),
])
def test_bad_options_fail_before_any_work(monkeypatch, kwargs, message):
    from rcfr.solvers import state_sampling
    monkeypatch.setattr(state_sampling.StateMCCFR, "run", lambda *a: pytest.fail("ran"))
    options = {"game": "kuhn_poker", **kwargs}
    with pytest.raises(ValueError, match=message):
        rcfr.solve_openspiel(options.pop("game"), **options)


def test_a_game_above_the_compile_limit_samples_without_compiling(monkeypatch):
    """Phantom Tic-Tac-Toe (about 1e10 histories): refused compiled, with a pointer to the state path, which
    meets information sets without building the game's rules object or its tree."""
    monkeypatch.setenv("RCFR_MAX_HISTORIES", "1000000")  # the default follows the free memory
    with pytest.raises(ValueError, match=r"more than the limit.*rcfr\.solve_openspiel\('phantom_ttt"):
        rcfr.load_game("openspiel:phantom_ttt")
    from rcfr.games import openspiel
    monkeypatch.setattr(openspiel.OpenSpielRules, "__init__", lambda *a: pytest.fail("compiled"))
    solver = rcfr.solve_openspiel("phantom_ttt", sampler="outcome", iterations=20, seed=0)
    assert solver.nodes_touched > 40 and solver.table.num_sets > 20
    policy = solver.average_policy()
    assert policy.num_sets == solver.table.num_sets
    played = policy.to_openspiel()
    probs = played.action_probabilities(played.game.new_initial_state())  # the root: always met
    assert sum(probs.values()) == pytest.approx(1.0) and played.unmet == 0


def test_unmet_information_sets_play_uniformly():
    policy = rcfr.solve_openspiel("phantom_ttt", sampler="outcome", iterations=1, seed=0).average_policy()
    played = policy.to_openspiel()
    state = played.game.new_initial_state()
    for action in (8, 7):  # a line seed 0's two trajectories do not take (they open at 6 and 0)
        state = state.child(action)
    assert (state.current_player(), state.information_state_string()) not in policy
    probs = played.action_probabilities(state)
    assert set(probs) == set(state.legal_actions()) and set(probs.values()) == {1 / 8}
    assert played.unmet == 1


def test_policy_file_round_trip_and_identity(tmp_path):
    policy = rcfr.solve_openspiel("kuhn_poker", sampler="outcome", iterations=50).average_policy()
    path = tmp_path / "kuhn.npz"
    policy.save(path)
    from rcfr.solvers.state_sampling import StatePolicy
    loaded = StatePolicy.load(path, "kuhn_poker()")  # any string of the same game
    assert loaded.keys == policy.keys == sorted(policy.keys)
    assert all(loaded[k] == policy[k] for k in policy.keys) and {p for p, _ in loaded.keys} == {0, 1}
    assert np.array_equal(loaded.probs, policy.probs) and loaded.probs.dtype == np.float64
    with pytest.raises(PolicyError, match="field 'game' is 'kuhn_poker.*expected 'leduc_poker"):
        StatePolicy.load(path, "leduc_poker")
    with pytest.raises(ValueError, match="suffix must be .npz"):
        policy.save(tmp_path / "kuhn.json")
    arrays = dict(np.load(path, allow_pickle=False))
    arrays["probs"] = arrays["probs"] * 2
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(PolicyError, match="sum to one"):
        StatePolicy.load(tmp_path / "bad.npz", "kuhn_poker")


def test_a_game_whose_long_lines_are_rare_is_refused_by_the_mean(monkeypatch):
    """Liar's Dice with two dice each: most random bids are called at once, so the probes' median is ~3e6
    histories while the game has ~1e10; the mean of the unbiased estimates sees it (a compile would run out
    of memory before reaching the limit). The control: Leduc, far below the limit, is accepted."""
    from rcfr.games.openspiel import OpenSpielRules, estimated_histories, load_openspiel_game
    monkeypatch.setenv("RCFR_MAX_HISTORIES", "100000000")
    median, mean = estimated_histories(load_openspiel_game("liars_dice(numdice=2)"), cap=1e10)
    assert median < 1e8 < mean  # the median alone would let it through
    with pytest.raises(ValueError, match=r"median .*mean .*more than the limit"):
        OpenSpielRules("liars_dice(numdice=2)")
    assert OpenSpielRules("leduc_poker").game_string.startswith("leduc_poker")
