"""Sharded exact evaluation (`workers`, `shards`, `cut`, `ray_address`; `rcfr.distributed`, `rcfr.evaluation.shards`).

In one process (default set): a shard count's result is the one-walk result to 1e-12 on the rules path and bit
for bit on the compiled path, one shard at a cut is the walk bit for bit, errors found in a shard or across
shards are raised, bad sharding options are refused naming the field, and nothing imports Ray. On a local Ray
(slow set: a Ray start takes 20-40 s on the shared 2-core machine; skipped without Ray): two workers give the
in-process result of the same shard count bit for bit, and a worker killed mid-walk is redone, or the call
fails saying so.
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rcfr
from rcfr import distributed
from rcfr.evaluation import rules as rules_eval
from rcfr.policy.rules import CodePolicy
from rcfr.regrets import FullRegret
from rcfr.regrets.rules import RulesFullRegret
from rcfr.solvers import rules_cfr

RULES_GAMES = [("goofspiel", {"cards": 4}), ("liars_dice", {}), ("pam", {"horizon": 2})]
FIELDS = ("value", "br0", "br1")


@functools.cache
def game(name, **params):
    return rcfr.load_game(name, **params)


def code_policy(g, seed, keep=1):
    """A random policy of compiled `g` keyed by code; ``keep=2`` drops every other set (played uniformly)."""
    full = CodePolicy.from_policy(rcfr.Policy.random(g, seed))
    if keep == 1:
        return full
    rows = range(0, len(full.codes), keep)
    sizes = np.diff(full.first)[::keep]
    return CodePolicy(g.rules, full.codes[::keep].copy(), np.concatenate(([0], np.cumsum(sizes))),
                      np.concatenate([full.row(int(full.codes[i])) for i in rows]))


# ---- rules path, in one process ----------------------------------------------------------------------
@pytest.mark.parametrize("name, params", RULES_GAMES, ids=[g[0] for g in RULES_GAMES])
@pytest.mark.parametrize("keep, default", [(1, None), (2, "uniform")])
def test_rules_shards_equal_one_walk(name, params, keep, default):
    g = game(name, **params)
    policy = code_policy(g, 3, keep)
    one = rules_eval.walk(g.rules, policy, default)
    for shards, cut in ((2, None), (3, None), (4, 2), (7, 3)):
        got = rules_eval.walk(g.rules, policy, default, shards=shards, cut=cut)
        assert all(abs(got[f] - one[f]) <= 1e-12 for f in FIELDS), (shards, cut)
        # the counts are the walk's: histories once, every set met once
        assert all(got[f] == one[f] for f in ("histories", "depth", "infosets", "extra_infosets"))
        assert got == rules_eval.walk(g.rules, policy, default, shards=shards, cut=cut)  # deterministic
    if keep == 1:  # and the compiled path's numbers
        want = rcfr.evaluate(g, rcfr.Policy.random(g, 3))
        assert abs(rules_eval.exploitability(g.rules, policy, shards=3) - want.exploitability) < 1e-12


def test_one_shard_at_a_cut_is_the_walk_bit_for_bit():
    """The merge of a single shard renumbers nothing and adds to zeros: the walk's numbers exactly."""
    g = game("liars_dice")
    for keep, default in ((1, None), (2, "uniform")):
        policy = code_policy(g, 5, keep)
        one = rules_eval.walk(g.rules, policy, default)
        got = rules_eval.walk(g.rules, policy, default, shards=1, cut=2)
        assert all(got[f] == one[f] for f in FIELDS)


def test_an_empty_policy_played_uniformly_shards():
    """Every set is an extra one (numbered as met): the merge renumbers them across shards."""
    g = game("goofspiel", cards=4)
    empty = CodePolicy(g.rules, np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0))
    one = rules_eval.walk(g.rules, empty, "uniform")
    got = rules_eval.walk(g.rules, empty, "uniform", shards=5)
    assert all(abs(got[f] - one[f]) <= 1e-12 for f in FIELDS)
    assert abs(one["br0"] + one["br1"] - 2 * rcfr.exploitability(g, rcfr.Policy.uniform(g))) < 1e-12


@settings(max_examples=15)
@given(seed=st.integers(0, 2**16), shards=st.integers(2, 9), cut=st.integers(1, 4))
def test_rules_shards_any_cut(seed, shards, cut):
    g = game("goofspiel", cards=4)
    policy = code_policy(g, seed)
    one = rules_eval.walk(g.rules, policy)
    try:
        got = rules_eval.walk(g.rules, policy, shards=shards, cut=cut)
    except ValueError as why:  # a cut with fewer subtrees than shards is refused, naming the field
        assert "shards=" in str(why) and f"cut depth {cut}" in str(why)
        return
    assert all(abs(got[f] - one[f]) <= 1e-12 for f in FIELDS)


def test_an_abstract_policy_shards():
    from test_rules_abstraction import CASES, games, random_abstract_policy
    name, params, kind, options = CASES[0]
    compiled, walked, abstraction = games(name, params, kind, options)
    policy = random_abstract_policy(compiled, abstraction, seed=2)
    one = rules_eval.walk(walked.rules, policy)
    got = rules_eval.walk(walked.rules, policy, shards=4)
    assert all(abs(got[f] - one[f]) <= 1e-12 for f in FIELDS)


def test_a_shard_error_is_raised():
    """A policy lacking a set (no default) fails in the shard that meets it, naming the set."""
    g = game("goofspiel", cards=4)
    with pytest.raises(ValueError, match="not in the policy"):
        rules_eval.walk(g.rules, code_policy(g, 0, keep=2), shards=3)


def test_a_negative_control_a_dropped_shard_changes_the_result():
    """The equality tests can fail: reducing all shards but one gives other best responses."""
    from rcfr.evaluation.shards import merge
    g = game("goofspiel", cards=4)
    policy = code_policy(g, 1)
    common = (g.rules, policy, False)
    parts = [rules_eval._shard(common, (2, k * 4, (k + 1) * 4)) for k in range(4)]
    assert [p["out"][7] for p in parts] == [16] * 4  # subtrees at the cut
    full, out_full, _ = merge(parts, policy.first, policy.codes)
    part, out_part, _ = merge(parts[:3], policy.first, policy.codes)
    rules_eval._best_responses(full["order"], full["above"], full["owner"], policy.first, full["extra_first"],
                               full["tv"], out_full)
    rules_eval._best_responses(part["order"], part["above"], part["owner"], policy.first, part["extra_first"],
                               part["tv"], out_part)
    one = rules_eval.walk(g.rules, policy)
    assert abs(out_full[1] - one["br0"]) < 1e-12
    assert abs(out_part[1] - one["br0"]) > 1e-3 or abs(out_part[0] - one["value"]) > 1e-3


# ---- compiled path and full regret, in one process -----------------------------------------------------
def test_compiled_shards_equal_one_process_bit_for_bit():
    g = game("goofspiel", cards=5)
    policy = rcfr.Policy.random(g, 0)
    one = rcfr.evaluate(g, policy)
    for shards in (2, 3, 16):
        assert rcfr.evaluate(g, policy, shards=shards) == one
    assert rcfr.exploitability(g, policy, "mbb", shards=2) == one.exploitability_mbb


@settings(max_examples=200)
@given(sizes=st.lists(st.integers(0, 50), min_size=1, max_size=40), data=st.data())
def test_row_blocks_cover_every_row_once(sizes, data):
    """Runs of rows with about equal nonzeros, none empty, whatever the rows' sizes (empty rows included)."""
    from rcfr.evaluation import _row_blocks
    indptr = np.concatenate(([0], np.cumsum(sizes)))
    shards = data.draw(st.integers(1, len(sizes)))
    blocks = _row_blocks(indptr, shards)
    assert len(blocks) == shards and blocks[0][0] == 0 and blocks[-1][1] == len(sizes)
    assert all(lo < hi for lo, hi in blocks) and all(a[1] == b[0] for a, b in itertools.pairwise(blocks))


def test_full_regret_trackers_shard():
    g = game("goofspiel", cards=4)
    trackers = [FullRegret(g), FullRegret(g, shards=3), RulesFullRegret(g.rules), RulesFullRegret(g.rules, shards=3)]
    for seed in range(3):
        policy = rcfr.Policy.random(g, seed)
        for t in trackers[:2]:
            t.add(policy)
        for t in trackers[2:]:
            t.add(CodePolicy.from_policy(policy))
    regrets = [t.average_regrets() for t in trackers]
    assert regrets[1] == regrets[0]  # compiled: bit for bit
    assert np.allclose(regrets[2], regrets[3], rtol=0, atol=1e-12)
    assert np.allclose(regrets[0], regrets[2], rtol=0, atol=1e-12)


# ---- bad input, refused before any work -----------------------------------------------------------------
@pytest.mark.parametrize("options, match", [
    ({"workers": 0}, "workers must be an integer >= 1"),
    ({"workers": 1.5}, "workers must be an integer >= 1"),
    ({"shards": 0}, "shards must be an integer >= 1"),
    ({"shards": True}, "shards must be an integer >= 1"),
    ({"workers": 2, "ray_address": "nowhere"}, "ray_address must be"),
    ({"workers": 2, "ray_address": "localhost:port"}, "is not a number"),
])
def test_bad_sharding_is_refused(options, match):
    g = game("kuhn")
    with pytest.raises(ValueError, match=match):
        rcfr.evaluate(g, rcfr.Policy.uniform(g), **options)
    with pytest.raises(ValueError, match=match):
        rules_eval.evaluate(g.rules, CodePolicy.from_policy(rcfr.Policy.uniform(g)), **options)
    with pytest.raises(ValueError, match=match):
        FullRegret(g, **options)


def test_too_many_shards_and_a_bad_cut_are_refused():
    g = game("kuhn")
    policy = CodePolicy.from_policy(rcfr.Policy.uniform(g))
    with pytest.raises(ValueError, match=r"shards=4 is more than the 3 subtrees at cut depth 1 of kuhn"):
        rules_eval.evaluate(g.rules, policy, shards=4, cut=1)
    with pytest.raises(ValueError, match="cut must be an integer >= 1"):
        rules_eval.evaluate(g.rules, policy, shards=2, cut=0)
    with pytest.raises(ValueError, match="shards=200 is more than the .* rows"):
        rcfr.evaluate(g, rcfr.Policy.uniform(g), shards=200)


def test_an_unreachable_ray_address_fails_within_seconds():
    """Checked with a plain socket before Ray is asked (no Ray import): a closed port answers at once."""
    with socket_closed_port() as port:
        start = time.perf_counter()
        with pytest.raises(ConnectionError, match=f"ray_address '127.0.0.1:{port}' cannot be reached"):
            rcfr.evaluate(game("kuhn"), rcfr.Policy.uniform(game("kuhn")), workers=2,
                          ray_address=f"127.0.0.1:{port}")
        assert time.perf_counter() - start < distributed.CONNECT_TIMEOUT + 5


class socket_closed_port:
    def __enter__(self):
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()  # bound, then released: nothing listens there
        return self.port

    def __exit__(self, *exc):
        return False


def test_without_ray_workers_say_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    g = game("kuhn")
    with pytest.raises(ImportError, match=r"pip install 'rcfr\[ray\]'"):
        rcfr.evaluate(g, rcfr.Policy.uniform(g), workers=2)


def test_one_process_never_imports_ray(monkeypatch):
    """With ``workers=1`` any number of shards runs here: an `import ray` would raise, and none is tried."""
    monkeypatch.setitem(sys.modules, "ray", None)
    g = game("kuhn")
    policy = rcfr.Policy.uniform(g)
    assert rcfr.evaluate(g, policy, shards=2) == rcfr.evaluate(g, policy)
    rules_eval.evaluate(g.rules, CodePolicy.from_policy(policy), shards=2)
    _cfr_run(g, 2, shards=2)


def test_what_crosses_to_a_worker_keeps_its_writeable_flags():
    """Ray's object store hands every array over read-only (numba would compile a worker's kernels anew for that
    type): unpacked, an array writable here is a writable copy there and a frozen one the store's own bytes."""
    pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'rcfr[ray]'")
    frozen, writable = np.arange(6.0), np.arange(4, dtype=np.int32)
    frozen.setflags(write=False)
    payload, arrays, flags = distributed._pack({"frozen": frozen, "nested": [(writable, 3)]})
    stored = [a.copy() for a in arrays]
    for a in stored:
        a.setflags(write=False)  # as a worker reads them from the store
    there = distributed._unpack((payload, stored, flags))
    assert flags == [False, True]
    assert not there["frozen"].flags.writeable and np.shares_memory(there["frozen"], stored[0])
    assert there["nested"][0][0].flags.writeable and not np.shares_memory(there["nested"][0][0], stored[1])
    assert np.array_equal(there["frozen"], frozen) and np.array_equal(there["nested"][0][0], writable)
    assert there["nested"][0][0].dtype == np.int32 and there["nested"][0][1] == 3
    assert all(not a.flags.writeable for a in distributed._unpack(distributed._pack(game("kuhn").views[0].payoff))
               .__dict__.values() if isinstance(a, np.ndarray))  # the game's payoffs are frozen: shared, not copied


# ---- on a local Ray (slow) -------------------------------------------------------------------------------
@pytest.mark.slow
def test_ray_workers_equal_one_process(local_ray):
    for name, params in (("goofspiel", {"cards": 4}), ("liars_dice", {})):
        g = game(name, **params)
        policy = code_policy(g, 7)
        here = rules_eval.evaluate(g.rules, policy, shards=2)
        assert rules_eval.evaluate(g.rules, policy, workers=2) == here  # same shard count: bit for bit
        assert abs(here.exploitability - rules_eval.exploitability(g.rules, policy)) < 1e-12
    g = game("goofspiel", cards=5)
    policy = rcfr.Policy.random(g, 1)
    assert rcfr.evaluate(g, policy, workers=2) == rcfr.evaluate(g, policy)


def _descends_from_us(pid: int) -> bool:
    """Whether process `pid` was started (through any chain) by this test process: our own Ray's workers."""
    while pid > 1:
        if pid == os.getpid():
            return True
        with open(f"/proc/{pid}/stat") as f:
            pid = int(f.read().rpartition(")")[2].split()[1])
    return False


def _ray_workers_running(name: str) -> list[int]:
    """Process ids of our Ray's workers now running a task of function `name` (titled ``ray::<name>``)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if f.read().startswith(f"ray::{name}".encode()) and _descends_from_us(int(pid)):
                        found.append(int(pid))
            except OSError:
                pass
    return found


@pytest.mark.slow
def test_a_worker_killed_mid_walk_is_redone(local_ray):
    """SIGKILL one worker while it walks its shard: Ray runs the shard again and the result is whole."""
    g = game("goofspiel", cards=6)
    policy = code_policy(g, 2)
    want = rules_eval.walk(g.rules, policy, shards=4)
    killed = []

    def kill_one():
        deadline = time.monotonic() + 120
        while not killed and time.monotonic() < deadline:
            running = _ray_workers_running("_call")
            if running:
                time.sleep(0.05)  # into the walk
                os.kill(running[0], signal.SIGKILL)
                killed.append(running[0])
            time.sleep(0.01)

    killer = threading.Thread(target=kill_one)
    killer.start()
    got = rules_eval.walk(g.rules, policy, shards=4, workers=2)
    killer.join()
    assert killed, "no worker was found running a shard"
    assert got == want


def _die_first(common, task):
    """Kill this worker process the first time shard `task` runs (marked by a file), then answer."""
    mark = os.path.join(common, f"shard-{task}")
    if not os.path.exists(mark):
        open(mark, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return task * 10


@pytest.mark.slow
def test_a_dead_worker_fails_the_call_without_retries(local_ray, tmp_path):
    local_ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    assert distributed.run_shards(_die_first, str(tmp_path), [0, 1, 2], workers=2, retries=1) == [0, 10, 20]
    fresh = tmp_path / "again"
    fresh.mkdir()
    with pytest.raises(RuntimeError, match=r"shard [01] of 2 failed on Ray after 1 tries .*no result was reduced"):
        distributed.run_shards(_die_first, str(fresh), [7, 8], workers=2, retries=0)


# ---- full-width CFR iterations (compiled path) -----------------------------------------------------------
def _cfr_run(g, iterations, name="cfr", **sharding):
    solver = rcfr.make_solver(name, g)
    if sharding:
        solver.distribute(**sharding)
    solver.run(iterations)
    return solver


def test_sharded_cfr_iterations_equal_one_process_bit_for_bit(monkeypatch):
    g = game("goofspiel", cards=5)
    calls = []
    run = rcfr.evaluation.run_shards
    monkeypatch.setattr(rcfr.evaluation, "run_shards", lambda *a, **k: calls.append(len(a[2])) or run(*a, **k))
    assert _cfr_run(g, 3, shards=4) and calls == [4] * 6  # the products did go through the shards
    for name in ("cfr", "cfr+"):
        one = _cfr_run(g, 20, name)
        for shards in (2, 5):
            got = _cfr_run(g, 20, name, shards=shards)
            assert np.array_equal(got.average_policy().probs, one.average_policy().probs)
            assert np.array_equal(got.current_policy().probs, one.current_policy().probs)
            assert got.nodes_touched == one.nodes_touched


def test_a_sharded_solver_resumes_on_another_shard_count():
    """Sharding is a setting of the run, not an option: a checkpoint written with 3 shards resumes with 1."""
    g = game("goofspiel", cards=4)
    half = _cfr_run(g, 5, shards=3)
    resumed = rcfr.make_solver("cfr", g)
    resumed.load_state_dict(half.state_dict())
    resumed.run(5)
    assert np.array_equal(resumed.average_policy().probs, _cfr_run(g, 10).average_policy().probs)
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        rcfr.make_solver("cfr", g).distribute(workers=0)


@pytest.mark.slow
def test_ray_cfr_iterations_equal_one_process(local_ray):
    """20 CFR iterations of Goofspiel(6) with two Ray workers: the one-process iterates bit for bit."""
    g = game("goofspiel", cards=6)
    one = _cfr_run(g, 20)
    got = _cfr_run(g, 20, workers=2)
    assert np.array_equal(got.average_policy().probs, one.average_policy().probs)


@pytest.mark.slow
def test_ray_rules_cfr_and_full_regret_equal_one_process(local_ray):
    """Two Ray workers give the in-process iterates (CFR over the rules, Goofspiel(4)) and plan sums (the full
    regret, Bluff(1,1)) of the same shard count bit for bit; with fixed-point sums, the unsharded iterates."""
    here = _rules_cfr("goofspiel", {"cards": 4}, iterations=5, shards=2)
    far = _rules_cfr("goofspiel", {"cards": 4}, iterations=5, workers=2)
    assert np.array_equal(_regrets_by_code(far), _regrets_by_code(here))
    assert np.array_equal(far.average_policy().probs, here.average_policy().probs)
    fixed = [rcfr.make_solver("cfr", walked("goofspiel", cards=5), sums="fixed") for _ in range(2)]
    fixed[1].distribute(workers=2)
    for solver in fixed:
        solver.run(4)
    assert np.array_equal(_regrets_by_code(fixed[1]), _regrets_by_code(fixed[0]))  # fixed sums: = one process
    g = game("liars_dice")
    trackers = [RulesFullRegret(g.rules, shards=2), RulesFullRegret(g.rules, workers=2)]
    for seed in range(2):
        for t in trackers:
            t.add(code_policy(g, seed))
    states = [t.state_dict() for t in trackers]
    assert all(np.array_equal(states[0][k], states[1][k]) for k in states[0])


# ---- the kit: run.workers, run.ray_address -------------------------------------------------------------
def _kit(game_name, params, iterations, **run):
    return {"game": {"name": game_name, "params": params}, "solver": {"name": "cfr", "options": {}},
            "run": {"iterations": iterations, "eval_points": 4, "checkpoint_seconds": 1e9, **run}}


def _kit_rows(run_dir):
    import csv
    with (run_dir / "metrics.csv").open() as f:
        return [{k: v for k, v in row.items() if "seconds" not in k} for row in csv.DictReader(f)]


def test_kit_refuses_bad_run_workers(tmp_path):
    from rcfr.experiments.runner import run_experiment
    from rcfr.experiments.schema import ConfigError
    with pytest.raises(ConfigError, match="run.workers must be an integer"):
        run_experiment(_kit("kuhn", {}, 2, workers=0), tmp_path / "a")
    with pytest.raises(ConfigError, match="run.ray_address must be"):
        run_experiment(_kit("kuhn", {}, 2, workers=2, ray_address="nowhere"), tmp_path / "b")


@pytest.mark.slow
def test_kit_run_on_two_workers_equals_one_process(local_ray, tmp_path):
    """CFR on Goofspiel(4) with the full-regret measure: every metrics.csv number but the times is the same."""
    from rcfr.experiments.runner import run_experiment
    for name, run in (("one", {}), ("two", {"workers": 2})):
        run_experiment(_kit("goofspiel", {"cards": 4}, 6, measure="full_regret", **run), tmp_path / name)
    assert _kit_rows(tmp_path / "two") == _kit_rows(tmp_path / "one")


# ---- the full regret's walk per profile, sharded (rules path) ---------------------------------------------
def _sums_by_code(tracker):
    state = tracker.state_dict()
    order = np.argsort(state["codes"])
    sizes = np.diff(state["starts"])[order]
    rows = np.concatenate([state["sums"][state["starts"][i]:state["starts"][i + 1]] for i in order])
    return state["codes"][order], sizes, rows, float(state["value"])


@pytest.mark.parametrize("name, params", RULES_GAMES[:2], ids=[g[0] for g in RULES_GAMES[:2]])
def test_rules_full_regret_plans_shard(name, params, monkeypatch):
    """Each set's plan sums equal one walk's bit for bit for any shard count (each set is added once, from the
    first shard that met it); the value, a sum over terminals, to rounding."""
    g = game(name, **params)
    calls = []
    run = distributed.run_shards
    monkeypatch.setattr(rcfr.regrets.rules, "run_shards", lambda *a, **k: calls.append(len(a[2])) or run(*a, **k))
    one = RulesFullRegret(g.rules)
    sharded = [RulesFullRegret(g.rules, shards=s, cut=c) for s, c in ((2, None), (3, None), (5, 2), (1, 2))]
    for seed in range(3):
        policy = code_policy(g, seed, keep=1 + seed % 2)  # every other profile lacks half the sets
        for t in [one, *sharded]:
            t.add(policy)
    assert calls == [2, 3, 5, 1] * 3
    codes, sizes, rows, value = _sums_by_code(one)
    for t in sharded:
        got = _sums_by_code(t)
        assert np.array_equal(got[0], codes) and np.array_equal(got[1], sizes) and np.array_equal(got[2], rows)
        assert abs(got[3] - value) <= 1e-12
        assert np.allclose(t.average_regrets(), one.average_regrets(), rtol=0, atol=1e-12)
    again = RulesFullRegret(g.rules, shards=3)
    for seed in range(3):
        again.add(code_policy(g, seed, keep=1 + seed % 2))
    assert all(np.array_equal(a, b) for a, b in zip(_sums_by_code(again), _sums_by_code(sharded[1])))


def test_rules_full_regret_a_dropped_shard_changes_the_sums(monkeypatch):
    """Negative control: reducing all shards but the last gives other sums (so the equality above can fail)."""
    g = game("goofspiel", cards=4)
    run = distributed.run_shards
    monkeypatch.setattr(rcfr.regrets.rules, "run_shards", lambda *a, **k: run(*a, **k)[:-1])
    one, short = RulesFullRegret(g.rules), RulesFullRegret(g.rules, shards=3)
    one.add(code_policy(g, 4))
    short.add(code_policy(g, 4))
    assert len(_sums_by_code(short)[0]) < len(_sums_by_code(one)[0])


def test_rules_full_regret_resumes_on_another_shard_count():
    g = game("liars_dice")
    straight, first = RulesFullRegret(g.rules), RulesFullRegret(g.rules, shards=3)
    for seed in range(4):
        straight.add(code_policy(g, seed))
    for seed in range(2):
        first.add(code_policy(g, seed))
    resumed = RulesFullRegret(g.rules, shards=2)
    resumed.load_state_dict(first.state_dict())
    for seed in range(2, 4):
        resumed.add(code_policy(g, seed))
    got, want = _sums_by_code(resumed), _sums_by_code(straight)
    assert all(np.array_equal(a, b) for a, b in zip(got[:3], want[:3])) and abs(got[3] - want[3]) <= 1e-12


# ---- full-width CFR iterations over the rules ------------------------------------------------------------
#: Bluff(1,1) is the largest of them: in the slow set, so that the default set stays within its time
RULES_CFR_GAMES = [("kuhn", {}), ("leduc", {}), ("goofspiel", {"cards": 4}),
                   pytest.param("liars_dice", {}, marks=pytest.mark.slow)]


@functools.cache
def walked(name, **params):
    return rcfr.load_game(name, compiled=False, **params)


def _rules_cfr(name, params, solver="cfr", iterations=0, **sharding):
    options = {"walk": "general"} if name == "liars_dice" else {}  # not Bluff's public tree
    s = rcfr.make_solver(solver, walked(name, **params), **options)
    if sharding:
        s.distribute(**sharding)
    return s.run(iterations)


def _gap(a, b):
    assert np.array_equal(a.codes, b.codes) and np.array_equal(a.first, b.first)
    return float(np.abs(a.probs - b.probs).max())


def _regrets_by_code(solver):
    """A solver's cumulative regrets in the `CodePolicy` layout (sets sorted by code), either path."""
    regrets = solver.store.regrets
    if hasattr(solver, "layout"):
        return solver._profile(regrets)
    from rcfr.policy.rules import infoset_codes
    g = solver.game
    order = np.argsort(infoset_codes(g), kind="stable")
    sizes = g.infoset_num_actions[order].astype(np.int64)
    first = np.concatenate(([0], np.cumsum(sizes)))
    source = np.repeat(g.infoset_first_seq[order].astype(np.int64) - first[:-1], sizes) + np.arange(first[-1])
    return np.concatenate([regrets[0][1:], regrets[1][1:]])[source]


#: Regret matching divides regrets by their positive sum, which is tiny where the regrets nearly cancel: a
#: rounding difference of 1e-17 in a regret of 1e-7 moves the strategy by 1e-10. Where the terminal values are
#: summed in another order (other shards) the regrets agree to 1e-12 and the strategies to this.
RATIO_TOLERANCE = 1e-9


@pytest.mark.parametrize("name, params", RULES_CFR_GAMES, ids=["kuhn", "leduc", "goofspiel", "liars_dice"])
@pytest.mark.parametrize("solver", ["cfr", "cfr+"])
def test_rules_cfr_equals_compiled_cfr_iteration_for_iteration(name, params, solver):
    from rcfr.solvers.rules_cfr import RulesCFRSolver
    compiled = rcfr.make_solver(solver, game(name, **params))
    one, two = _rules_cfr(name, params, solver), _rules_cfr(name, params, solver, shards=2)
    assert isinstance(one, RulesCFRSolver)
    for _ in range(12):
        for s in (compiled, one, two):
            s.iterate()
        regrets = _regrets_by_code(compiled)
        for rules, policy_tolerance in ((one, 1e-12), (two, RATIO_TOLERANCE)):
            assert np.abs(_regrets_by_code(rules) - regrets).max() <= 1e-12
            for policy in ("current_policy", "average_policy"):
                want = CodePolicy.from_policy(getattr(compiled, policy)())
                assert _gap(want, getattr(rules, policy)()) <= policy_tolerance
    assert abs(rcfr.exploitability(one.game, one.average_policy())
               - rcfr.exploitability(compiled.game, compiled.average_policy())) <= 1e-12


@pytest.mark.parametrize("name, params", RULES_CFR_GAMES[2:], ids=["goofspiel", "liars_dice"])
def test_sharded_rules_cfr_equals_one_process(name, params, monkeypatch):
    """A fixed shard count: the same iterates bit for bit on every run; other counts (and simultaneous updates,
    one walk per iteration) to rounding."""
    calls = []
    run = distributed.run_shards
    monkeypatch.setattr(rules_cfr, "run_shards", lambda *a, **k: calls.append(len(a[2])) or run(*a, **k))
    one = _rules_cfr(name, params, iterations=8)
    assert calls == []
    three = _rules_cfr(name, params, iterations=8, shards=3)
    assert calls == [3] * 17  # the numbering walk, then two walks per iteration
    again = _rules_cfr(name, params, iterations=8, shards=3)
    five = _rules_cfr(name, params, iterations=8, shards=5, cut=3)
    for policy in ("current_policy", "average_policy"):
        assert np.array_equal(getattr(again, policy)().probs, getattr(three, policy)().probs)
        for other in (three, five):
            assert _gap(getattr(other, policy)(), getattr(one, policy)()) <= RATIO_TOLERANCE
    for other in (three, five):
        assert np.abs(_regrets_by_code(other) - _regrets_by_code(one)).max() <= 1e-12
    assert np.array_equal(_regrets_by_code(again), _regrets_by_code(three))
    assert three.nodes_touched == one.nodes_touched
    both = rcfr.make_solver("cfr", game(name, **params), updates="simultaneous").run(6)
    simultaneous = rcfr.make_solver("cfr", walked(name, **params), updates="simultaneous",
                                    **({"walk": "general"} if name == "liars_dice" else {})).distribute(shards=2).run(6)
    assert np.abs(_regrets_by_code(both) - _regrets_by_code(simultaneous)).max() <= 1e-12
    assert _gap(CodePolicy.from_policy(both.average_policy()), simultaneous.average_policy()) <= RATIO_TOLERANCE


def test_sharded_rules_cfr_negative_control(monkeypatch):
    """Dropping a shard's walk changes the iterates: the equalities above can fail."""
    one = _rules_cfr("goofspiel", {"cards": 4}, iterations=3, shards=3)
    run = distributed.run_shards
    iteration_walk = rules_cfr._iteration_shard
    monkeypatch.setattr(rules_cfr, "run_shards",
                        lambda f, *a, **k: run(f, *a, **k)[:-1] if f is iteration_walk else run(f, *a, **k))
    short = _rules_cfr("goofspiel", {"cards": 4}, iterations=3, shards=3)
    assert _gap(short.average_policy(), one.average_policy()) > 1e-3


def test_a_rules_cfr_checkpoint_resumes_on_another_shard_count():
    half = _rules_cfr("goofspiel", {"cards": 4}, "cfr+", iterations=5, shards=3)
    resumed = _rules_cfr("goofspiel", {"cards": 4}, "cfr+", shards=2)
    resumed.load_state_dict(half.state_dict())
    resumed.run(5)
    straight = _rules_cfr("goofspiel", {"cards": 4}, "cfr+", iterations=10)
    assert resumed.iteration == 10
    assert np.abs(_regrets_by_code(resumed) - _regrets_by_code(straight)).max() <= 1e-12
    assert _gap(resumed.average_policy(), straight.average_policy()) <= RATIO_TOLERANCE
    same = _rules_cfr("goofspiel", {"cards": 4}, "cfr+", shards=3)
    same.load_state_dict(half.state_dict())
    assert np.array_equal(same.run(5).average_policy().probs,
                          _rules_cfr("goofspiel", {"cards": 4}, "cfr+", iterations=10, shards=3).average_policy().probs)
    with pytest.raises(ValueError, match="fingerprint|belongs to"):
        _rules_cfr("kuhn", {}, "cfr+").load_state_dict(half.state_dict())


def test_rules_cfr_refuses_bad_input():
    rules = rcfr.make_rules("goofspiel", cards=4)
    solver = rcfr.make_solver("cfr", rules)  # the rules themselves are walked too
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        solver.distribute(workers=0)
    with pytest.raises(ValueError, match="cut must be an integer >= 1"):
        solver.distribute(shards=2, cut=0)
    with pytest.raises(ValueError, match=r"shards=100000 is more than the .* subtrees at cut depth 1"):
        solver.distribute(shards=100000, cut=1).run(1)
    with pytest.raises(ValueError, match="unknown option.*'store'"):
        rcfr.make_solver("cfr", rules, store=None)
    with pytest.raises(ValueError, match="updates"):
        rcfr.make_solver("cfr", rules, updates="sometimes")


def test_fixed_point_sums_give_every_shard_count_the_same_bits():
    """``sums="fixed"``: on Goofspiel(5), where float sums with 1 and 3 shards part at a tie of regrets, every
    shard count and cut gives the same iterates bit for bit, and a checkpoint resumes on another count exactly.
    Against float sums (one shard) the first iteration's regrets agree to 1e-12."""
    rules = rcfr.make_rules("goofspiel", cards=5)

    def run(iterations, **sharding):
        solver = rcfr.make_solver("cfr", rules, sums="fixed")
        return (solver.distribute(**sharding) if sharding else solver).run(iterations)

    one = run(6)
    for sharding in ({"shards": 2}, {"shards": 3}, {"shards": 5, "cut": 3}):
        other = run(6, **sharding)
        assert np.array_equal(_regrets_by_code(other), _regrets_by_code(one))
        assert np.array_equal(other.average_policy().probs, one.average_policy().probs)
    floats = [rcfr.make_solver("cfr", rules).distribute(shards=s).run(2) for s in (1, 3)]
    assert np.abs(_regrets_by_code(floats[0]) - _regrets_by_code(floats[1])).max() > 1e-3  # float sums part
    first = rcfr.make_solver("cfr", rules).run(1)
    assert np.abs(_regrets_by_code(run(1, shards=3)) - _regrets_by_code(first)).max() <= 1e-12
    half, resumed = run(3, shards=3), rcfr.make_solver("cfr", rules, sums="fixed").distribute(shards=2)
    resumed.load_state_dict(half.state_dict())
    assert np.array_equal(_regrets_by_code(resumed.run(3)), _regrets_by_code(one))
    with pytest.raises(ValueError, match="other options"):  # the sums change the numbers: part of the identity
        rcfr.make_solver("cfr", rules).load_state_dict(half.state_dict())
    with pytest.raises(ValueError, match="unknown sums 'exact'; allowed: float, fixed"):
        rcfr.make_solver("cfr", rules, sums="exact")


@pytest.mark.parametrize("value", [0.0, 1.0, -1.0, 1e-30, -3.75e-7, 123456.789, -2.0**40, 0.1])
def test_fixed_point_round_trips(value):
    """A value added in fixed point and read back: within the grid (2**-80) of it, signs and carries right;
    x and -x cancel exactly."""
    from rcfr.solvers import rules_cfr_walk as cfr
    high, low = np.zeros(1, np.uint64), np.zeros(1, np.uint64)
    cfr._fixed_add(high, low, 0, value)  # the compiled kernel, as the walk inlines it
    assert abs(cfr._fixed_to_float(high, low)[0] - value) <= 2.0**-80 + 1e-16 * abs(value)
    for x in (value, -value, -value):
        cfr._fixed_add(high, low, 0, x)
    assert high[0] == 0 and low[0] == 0
