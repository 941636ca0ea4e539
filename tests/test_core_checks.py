"""Core hardening: the compiled-tree cache, atomic writes, the enumeration limit, early validation."""

from __future__ import annotations

import importlib
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import rcfr
from rcfr import files
from rcfr.policy import PolicyError
from rcfr.solvers import RegretTable, solve_matrix_game
from rcfr.solvers.rrm import RRM
from rcfr.tree import cache_dir, compile_game, load_compiled

# ---- the disk cache ------------------------------------------------------------------------------
RULES_SOURCE = '''
import rcfr
from rcfr.games import TERMINAL

PAYOFF = {payoff}.0  # a module-level helper: editing it must invalidate the cache too


class OneShot(rcfr.GameRules):
    """Player 0 picks a or b and is paid PAYOFF for a and -PAYOFF for b."""

    name = "oneshot"

    def initial_state(self):
        return ""

    def player(self, s):
        return TERMINAL if s else 0

    def actions(self, s):
        return ["a", "b"]

    def next_state(self, s, a):
        return "ab"[a]

    def utility(self, s):
        return PAYOFF if s == "a" else -PAYOFF

    def infoset_key(self, s):
        return "root"
'''


def test_editing_a_rules_class_invalidates_its_cached_tree(tmp_path, monkeypatch):
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    source = tmp_path / "corefix_oneshot_rules.py"
    source.write_text(RULES_SOURCE.format(payoff=1))
    module = importlib.import_module("corefix_oneshot_rules")
    try:
        assert load_compiled(module.OneShot()).utility.max() == 1.0
        source.write_text(RULES_SOURCE.format(payoff=3))  # same class text, module and description
        module = importlib.reload(module)
        assert load_compiled(module.OneShot()).utility.max() == 3.0
        assert len(list((tmp_path / "cache").glob("oneshot-*.game"))) == 2
    finally:
        sys.modules.pop("corefix_oneshot_rules", None)


def test_rules_without_source_still_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path))
    namespace: dict = {}
    exec(RULES_SOURCE.format(payoff=2), namespace)  # no source file: inspect.getsource fails
    first = load_compiled(namespace["OneShot"]())
    assert len(list(tmp_path.glob("oneshot-*.game"))) == 1
    assert np.array_equal(load_compiled(namespace["OneShot"]()).utility, first.utility)


def test_truncated_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path))
    expected = rcfr.load_game("kuhn").utility
    path = next(tmp_path.glob("kuhn-*.game"))
    data = path.read_bytes()
    for cut in (len(data) // 2, 40, 0):
        path.write_bytes(data[:cut])
        assert np.array_equal(rcfr.load_game("kuhn").utility, expected)


def test_empty_xdg_cache_home_falls_back_to_home(monkeypatch):
    monkeypatch.delenv("RCFR_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert cache_dir() == Path.home() / ".cache" / "rcfr"
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert cache_dir() == Path("/somewhere/rcfr")


def test_payoff_matrices_are_canonical(leduc):
    for view in leduc.views:
        assert view.payoff.has_canonical_format  # duplicates summed, indices sorted


# ---- atomic writes -------------------------------------------------------------------------------
def test_atomic_write_syncs_before_renaming_and_leaves_the_umask_alone(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b))[1])

    def no_umask(mask):
        raise AssertionError("os.umask changes process state and races with other threads")

    monkeypatch.setattr(os, "umask", no_umask)
    files.write_json(tmp_path / "out.json", {"a": 1})
    assert calls == ["fsync", "replace"]
    assert (tmp_path / "out.json").read_text() == '{\n "a": 1\n}\n'
    assert (tmp_path / "out.json").stat().st_mode & 0o777 == 0o666 & ~files._UMASK


# ---- games too large to compile --------------------------------------------------------------------
def test_enumeration_stops_at_the_history_limit(monkeypatch):
    rules = rcfr.make_rules("leduc")
    with pytest.raises(ValueError, match=r"leduc\(ranks=3, suits=2, .*\) has more than 1,000 histories"):
        compile_game(rules, max_histories=1000)
    assert compile_game(rcfr.make_rules("kuhn"), max_histories=58).num_histories == 58
    monkeypatch.setenv("RCFR_MAX_HISTORIES", "57")
    with pytest.raises(ValueError, match="kuhn.*more than 57 histories.*RCFR_MAX_HISTORIES"):
        rcfr.load_game("kuhn", cache=False)
    monkeypatch.setenv("RCFR_MAX_HISTORIES", "many")
    with pytest.raises(ValueError, match="RCFR_MAX_HISTORIES must be a positive integer, got 'many'"):
        rcfr.load_game("kuhn", cache=False)
    with pytest.raises(ValueError, match="max_histories must be a positive integer"):
        compile_game(rules, max_histories=0)


@pytest.mark.parametrize("name, params, message", [
    ("goofspiel", {"cards": 14}, r"'cards' must be an integer in \[1, 13\], got 14"),
    ("liars_dice", {"dice1": 8}, r"'dice1' must be an integer in \[1, 7\], got 8"),
    ("liars_dice", {"dice1": 5, "dice2": 5}, r"'dice1' and 'dice2': Bluff\(5, 5\)'s information-set codes .* overflow int64"),
    ("nlocp", {"stack": 60}, r"'stack' must be an integer in \[2, 50\], got 60"),
])
def test_impossible_game_sizes_fail_at_construction(name, params, message):
    with pytest.raises(ValueError, match=message):
        rcfr.make_rules(name, **params)


def test_abstracted_no_limit_keeps_deep_stacks():
    assert rcfr.make_rules("nlocp_wagers", stack=400).stack == 400


BAD_BETS = [3, (), [], (2, 0), (2, -4), "24", (2.0, 4), (True,), None, (2, "4")]


@pytest.mark.parametrize("name", ["leduc", "limit_poker", "dieroll"])
@pytest.mark.parametrize("bets", BAD_BETS)
def test_bets_must_be_positive_integers(name, bets):
    make = (lambda **kw: rcfr.games.LimitPoker(**kw)) if name == "limit_poker" else (
        lambda **kw: rcfr.make_rules(name, **kw))
    with pytest.raises(ValueError, match="'bets' must be a non-empty sequence of positive integers"):
        make(bets=bets)


def test_bets_accept_lists_and_numpy_integers():
    assert rcfr.make_rules("leduc", bets=[1, np.int64(3)]).bets == (1, 3)
    assert rcfr.make_rules("dieroll", bets=np.array([2])).bets == (2,)


# ---- early validation ------------------------------------------------------------------------------
@pytest.mark.parametrize("options, message", [
    ({"alpha": "1.5"}, "alpha must be a finite number in \\[0, 20\\] or None"),
    ({"beta": -0.5}, "beta must be a finite number in \\[0, 20\\] or None"),
    ({"alpha": math.inf}, "alpha must be"), ({"beta": math.nan}, "beta must be"),
    ({"alpha": True}, "alpha must be"),
])
def test_discount_parameters_are_checked_at_construction(kuhn, options, message):
    with pytest.raises(ValueError, match=message):
        rcfr.make_solver("dcfr", kuhn, **options)


def test_regret_table_options():
    with pytest.raises(ValueError, match="unknown regret_matching 'yes'; allowed: rm, rm\\+"):
        RegretTable("yes")
    table = RegretTable("rm+", alpha=1, beta=None)
    assert table.regret_matching == "rm+" and table.alpha == 1.0 and table.beta is None


def test_policy_rows_are_validated(kuhn):
    good = rcfr.Policy.uniform(kuhn).probs
    first = str(kuhn.infoset_keys[0])
    bad = good.copy()
    bad[0] = -0.25
    with pytest.raises(PolicyError, match=f"information set '{first}', action '.*': probability -0.25 is not"):
        rcfr.Policy(kuhn, bad)
    bad = good.copy()
    bad[3] = np.nan
    with pytest.raises(PolicyError, match="probability nan is not a finite"):
        rcfr.Policy(kuhn, bad)
    bad = good.copy()
    bad[-1] += 1e-3
    last = str(kuhn.infoset_keys[-1])
    with pytest.raises(PolicyError, match=rf"information set '{last}': probabilities sum to 1.001.*1 of 12 rows"):
        rcfr.Policy(kuhn, bad)
    bad = good.copy()
    bad[-1] += 1e-9  # within the tolerance
    rcfr.Policy(kuhn, bad)


def test_matrix_game_needs_an_iteration():
    for iterations in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="iterations must be an integer >= 1"):
            solve_matrix_game(np.eye(2), RRM(2), RRM(2), iterations)


def test_registered_rules_must_store_their_parameters():
    class Forgets(rcfr.GameRules):
        def __init__(self, size: int = 3):
            self.n = size

    with pytest.raises(TypeError, match=r"Forgets.__init__ must store each parameter .*; missing: size"):
        rcfr.register_game("corefix_forgets", Forgets)
    assert "corefix_forgets" not in rcfr.GAMES

    class NoDefaults(rcfr.GameRules):
        def __init__(self, size):
            self.n = size

    rcfr.register_game("corefix_nodefaults", NoDefaults)  # cannot be built without arguments: checked later
    try:
        with pytest.raises(TypeError, match="missing: size"):
            rcfr.load_game("corefix_nodefaults", size=2)
    finally:
        rcfr.GAMES.pop("corefix_nodefaults")


def test_a_game_without_its_required_parameter_is_refused():
    """`load_game("openspiel")` names the missing game string instead of silently picking a default game."""
    with pytest.raises(ValueError, match="game 'openspiel' needs the option.*'name'"):
        rcfr.load_game("openspiel")
