"""OpenSpiel interop: OpenSpiel games compiled by rcfr, built-in games matched to OpenSpiel's, and
policies scored by both libraries. Every number is checked against OpenSpiel's own evaluators."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import rcfr
from rcfr import Policy, PolicyError
from rcfr.interop.alignment import align
from rcfr.interop.openspiel import openspiel_equivalent

needs_pyspiel = pytest.mark.skipif(importlib.util.find_spec("pyspiel") is None,
                                   reason="OpenSpiel is an optional extra: pip install 'rcfr[openspiel]'")

#: built-in game (name, params) -> the same game in OpenSpiel
PAIRS = {
    "kuhn": (("kuhn", {}), "kuhn_poker"),
    "leduc": (("leduc", {}), "leduc_poker"),
    "liars_dice": (("liars_dice", {}), "liars_dice(numdice=1)"),
    "goofspiel": (("goofspiel", {"cards": 4}), "goofspiel(imp_info=True,num_cards=4,points_order=descending)"),
}
#: games rcfr does not have built in: small dark hex, battleship, and oshi-zumo through the turn-based transform
OTHERS = ["dark_hex(board_size=2)",
          "battleship(board_width=2,board_height=2,ship_sizes=[2],ship_values=[1],num_shots=2)",
          "oshi_zumo(coins=4,size=1,horizon=3)"]


@pytest.fixture(scope="module")
def games():
    """Compiled built-in and OpenSpiel versions of each pair, compiled once for the module."""
    cache = {}

    def get(pair: str):
        if pair not in cache:
            (name, params), os_string = PAIRS[pair]
            cache[pair] = rcfr.load_game(name, **params), rcfr.load_game(f"openspiel:{os_string}")
        return cache[pair]
    return get


def unforced_sizes(game) -> dict:
    """Sizes that do not depend on whether forced moves (one legal action) are compiled or collapsed."""
    free = game.infoset_num_actions > 1
    return {"terminals": game.num_terminals,
            "infosets": [int(np.count_nonzero(free & (game.infoset_player == p))) for p in (0, 1)],
            "sequences": [int(game.infoset_num_actions[free & (game.infoset_player == p)].sum()) for p in (0, 1)]}


def assert_same_scores(game, policy, tabular, openspiel_best_responses: bool = True):
    """rcfr's expected value, best-response values and exploitability equal OpenSpiel's (C++) to 1e-9.
    `openspiel_best_responses=False` skips the two separate best responses (the exploitability computes
    both again) where OpenSpiel takes long: 8 s each in Liar's dice."""
    import pyspiel
    from open_spiel.python.policy import python_policy_to_pyspiel_policy
    os_game, joint = tabular.game, python_policy_to_pyspiel_policy(tabular)
    root = os_game.new_initial_state()
    ours = rcfr.evaluate(game, policy)
    assert ours.value == pytest.approx(pyspiel.expected_returns(root, joint, -1, True)[0], abs=1e-9)
    if openspiel_best_responses:
        best = [pyspiel.TabularBestResponse(os_game, p, joint).value(root.history_str()) for p in (0, 1)]
        assert list(ours.best_response_values) == pytest.approx(best, abs=1e-9)
    assert ours.exploitability == pytest.approx(pyspiel.exploitability(os_game, joint), abs=1e-9)


# ---- games in ---------------------------------------------------------------------------------------
@needs_pyspiel
@pytest.mark.parametrize("pair", PAIRS)
def test_openspiel_versions_of_builtin_games_have_the_same_sizes(games, pair):
    from rcfr.games.openspiel import canonical_name, load_openspiel_game
    ours, theirs = games(pair)
    assert unforced_sizes(theirs) == unforced_sizes(ours)
    if pair in ("kuhn", "leduc"):  # no forced moves: equal in full, however forced moves are compiled
        assert theirs.sizes() == ours.sizes()
    assert theirs.rules.params()["name"] == canonical_name(load_openspiel_game(PAIRS[pair][1]))


@needs_pyspiel
def test_openspiel_keys_and_action_names_are_openspiels_strings(games):
    import pyspiel
    _, kuhn = games("kuhn")
    state = pyspiel.load_game("kuhn_poker").new_initial_state().child(2).child(0)  # K vs J, player 0 to act
    i = kuhn.infoset_index[state.information_state_string()]
    assert kuhn.actions_of(i) == ["Pass", "Bet"]
    dealt = (kuhn.parent >= 0) & (kuhn.player[np.maximum(kuhn.parent, 0)] == rcfr.games.CHANCE)
    assert set(kuhn.chance_outcome_names[dealt]) == {"Deal:0", "Deal:1", "Deal:2"}


# ---- policies out and in ------------------------------------------------------------------------------
@needs_pyspiel
@pytest.mark.parametrize("pair", PAIRS)
def test_random_policies_score_the_same_in_both_libraries(games, pair):
    ours, theirs = games(pair)
    policy = Policy.random(ours, seed=12)
    tabular = policy.to_openspiel()  # the OpenSpiel equivalent of the built-in game
    assert_same_scores(ours, policy, tabular, openspiel_best_responses=pair != "liars_dice")
    # the same policy read into the compiled OpenSpiel game scores the same there too
    there = rcfr.evaluate(theirs, Policy.from_openspiel(theirs, tabular))
    here = rcfr.evaluate(ours, policy)
    assert (there.value, *there.best_response_values) == pytest.approx((here.value, *here.best_response_values),
                                                                        abs=1e-12)


@needs_pyspiel
@pytest.mark.parametrize("pair", ["kuhn", "leduc", "goofspiel"])
def test_policies_round_trip_through_tabular_policy_exactly(games, pair):
    ours, theirs = games(pair)
    for game in (ours, theirs):
        policy = Policy.random(game, seed=3)
        back = Policy.from_openspiel(game, policy.to_openspiel())
        assert np.array_equal(back.probs, policy.probs)
    # built-in -> OpenSpiel key space -> built-in
    policy = Policy.random(ours, seed=4)
    there = Policy.from_openspiel(theirs, policy.to_openspiel(theirs.rules.game))
    assert np.array_equal(Policy.from_openspiel(ours, there.to_openspiel()).probs, policy.probs)


@needs_pyspiel
def test_kuhn_and_leduc_actions_map_by_situation(games):
    """Kuhn's Pass is check (c) or fold (f), Bet is bet (r) or call (c); Leduc's cards keep their ids."""
    import pyspiel
    kuhn, os_kuhn = games("kuhn")
    policy = Policy.random(kuhn, seed=5)
    translated = Policy.from_openspiel(os_kuhn, policy.to_openspiel())
    assert translated["2"] == dict(zip(["Pass", "Bet"], policy["K||"].values()))  # K, first to act: c, r
    assert translated["0pb"] == dict(zip(["Pass", "Bet"], policy["J||cr"].values()))  # J facing a bet: f, c
    assert list(policy["J||cr"]) == ["f", "c"] and list(policy["K||"]) == ["c", "r"]
    leduc, os_leduc = games("leduc")
    policy = Policy.random(leduc, seed=6)
    translated = Policy.from_openspiel(os_leduc, policy.to_openspiel())
    state = pyspiel.load_game("leduc_poker").new_initial_state()
    for action in (3, 0, 1, 1, 5):  # Qh to player 0, Js to player 1, call, call, Kh on the board
        state.apply_action(action)  # card id = 2 * rank + suit: 3 = Q of suit 1, 5 = K of suit 1
    row = translated[state.information_state_string()]
    assert list(row.values()) == list(policy["Qh|Kh|cc/"].values())


@needs_pyspiel
def test_an_openspiel_solvers_policy_is_scored_by_rcfr_as_by_openspiel(games):
    import pyspiel
    from open_spiel.python.algorithms import cfr
    kuhn, _ = games("kuhn")
    solver = cfr.CFRPlusSolver(pyspiel.load_game("kuhn_poker"))
    for _ in range(30):
        solver.evaluate_and_update_policy()
    tabular = solver.average_policy()
    assert_same_scores(kuhn, Policy.from_openspiel(kuhn, tabular), tabular)


@needs_pyspiel
def test_tabular_policies_are_validated_like_json_policies(games):
    import pyspiel
    from open_spiel.python.policy import TabularPolicy
    kuhn, os_kuhn = games("kuhn")
    tabular = TabularPolicy(pyspiel.load_game("kuhn_poker"))
    assert np.array_equal(Policy.from_openspiel(kuhn, tabular).probs, Policy.uniform(kuhn).probs)
    tabular.policy_for_key("1pb")[:] = [0.7, 0.7]
    with pytest.raises(PolicyError, match="'1pb': probabilities sum to 1.4"):
        Policy.from_openspiel(os_kuhn, tabular)
    goof, _ = games("goofspiel")
    tabular = Policy.uniform(goof).to_openspiel()
    key = tabular.states_per_player[0][1]
    row = tabular.policy_for_key(key)
    illegal = int(np.flatnonzero(tabular.legal_actions_mask[tabular.state_lookup[key]] == 0)[0])
    row[illegal] = 0.5
    with pytest.raises(PolicyError, match=f"on action {illegal}, which is not legal"):
        Policy.from_openspiel(goof, tabular)
    with pytest.raises(PolicyError, match="missing information set"):
        Policy.from_openspiel(kuhn, TabularPolicy(pyspiel.load_game("kuhn_poker"), players=[0]))
    with pytest.raises(ValueError, match="not the same game"):
        Policy.from_openspiel(kuhn, TabularPolicy(pyspiel.load_game("leduc_poker")))
    with pytest.raises(ValueError, match="simultaneous-move game; .*convert_to_turn_based"):
        Policy.uniform(goof).to_openspiel(pyspiel.load_game(PAIRS["goofspiel"][1]))


@needs_pyspiel
def test_games_that_differ_are_not_matched(games):
    """Negative controls for the matching: other payoffs, a coarser partition, another deck."""
    _, os_goof = games("goofspiel")
    with pytest.raises(ValueError, match="utilities differ"):
        align(rcfr.load_game("goofspiel", cards=4, returns="points"), os_goof)
    _, os_leduc = games("leduc")
    with pytest.raises(ValueError, match="is split in the other game"):
        align(rcfr.load_game("leduc", merge_suits=True), os_leduc)
    _, os_kuhn = games("kuhn")
    with pytest.raises(ValueError, match="number of moves differs"):
        align(rcfr.load_game("ocp", cards=4), os_kuhn)
    with pytest.raises(ValueError, match="no OpenSpiel equivalent"):
        openspiel_equivalent(rcfr.load_game("ocp", cards=4))


# ---- games rcfr does not have ------------------------------------------------------------------------
@needs_pyspiel
@pytest.mark.parametrize("name", OTHERS)
def test_cfr_plus_solves_openspiel_games_and_openspiel_agrees(name):
    game = rcfr.load_game(f"openspiel:{name}")
    solver = rcfr.make_solver("cfr+", game)
    solver.run(300)
    policy = solver.average_policy()
    start = rcfr.exploitability(game, Policy.uniform(game))
    assert rcfr.exploitability(game, policy) < 0.05 * start
    assert_same_scores(game, policy, policy.to_openspiel())


# ---- errors, identity, packaging --------------------------------------------------------------------
@needs_pyspiel
@pytest.mark.parametrize("name, message", [
    ("kuhn_poker(players=3)", "has 3 players"),
    ("sheriff", "has utility GENERAL_SUM"),
    ("chess", "has about .* histories .* more than the limit"),
    ("no_such_game", "OpenSpiel cannot load game 'no_such_game': .*Unknown game"),
    ("", "must be an OpenSpiel game string"),
])
def test_games_rcfr_cannot_solve_fail_before_compiling(name, message):
    with pytest.raises(ValueError, match=message):
        rcfr.load_game(f"openspiel:{name}")


@needs_pyspiel
def test_imperfect_recall_is_reported_for_openspiel_games():
    with pytest.raises(ValueError, match=r"openspiel: information set .* \(imperfect recall\)"):
        rcfr.load_game("openspiel:dark_hex_ir(board_size=2)", cache=False)


@needs_pyspiel
def test_cache_key_has_the_game_string_and_the_openspiel_version(monkeypatch, games):
    from rcfr.games import openspiel as adapter
    _, kuhn = games("kuhn")
    version = adapter.openspiel_version()
    assert kuhn.rules.description() == f"openspiel(name='kuhn_poker(players=2)', open_spiel='{version}')"
    assert rcfr.load_game("openspiel:kuhn_poker()").fingerprint == kuhn.fingerprint  # one game, one key
    assert rcfr.load_game("openspiel", name="kuhn_poker").fingerprint == kuhn.fingerprint
    assert rcfr.load_game("openspiel:leduc_poker").fingerprint != kuhn.fingerprint
    monkeypatch.setattr(adapter, "openspiel_version", lambda: "0.0.0")
    assert rcfr.make_rules("openspiel:kuhn_poker").description() != kuhn.rules.description()
    with pytest.raises(ValueError, match="drop the parameter 'name'"):
        rcfr.make_rules("openspiel:kuhn_poker", name="leduc_poker")


def test_openspiel_games_without_the_extra_say_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'rcfr\[openspiel\]'"):
        rcfr.load_game("openspiel:kuhn_poker")


@needs_pyspiel
def test_cli_and_experiment_kit_take_openspiel_games(tmp_path, capsys):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from rcfr.__main__ import main
    from rcfr.experiments.run import CONFIG_DIR
    from rcfr.experiments.runner import run_experiment
    from rcfr.experiments.schema import validate
    assert main(["--game", "openspiel:kuhn_poker", "--iterations", "5"]) == 0
    assert "openspiel(name='kuhn_poker(players=2)'" in capsys.readouterr().out
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        cfg = compose("config", overrides=["game=openspiel", 'game.params.name="liars_dice(numdice=1)"'])
    GlobalHydra.instance().clear()
    assert validate(cfg).game.params == {"name": "liars_dice(numdice=1)"}
    summary = run_experiment({"game": {"name": "openspiel", "params": {"name": "kuhn_poker"}},
                              "solver": {"name": "cfr+", "options": {}},
                              "run": {"iterations": 20, "eval_points": 2, "checkpoint_seconds": 1e9}}, tmp_path)
    assert summary["status"] == "complete" and summary["exploitability"] < 0.05
