"""The policy type and its JSON format."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import rcfr
from rcfr import Policy, PolicyError


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(["kuhn", "leduc", "nlocp"]))
def test_random_policies_are_distributions(seed, name):
    game = rcfr.load_game(name)
    probs = Policy.random(game, seed).probs
    assert probs.min() >= 0
    assert np.allclose(np.bincount(game.sequence_infoset, probs), 1.0)


def test_random_policy_is_seeded():
    game = rcfr.load_game("kuhn")
    assert np.array_equal(Policy.random(game, 3).probs, Policy.random(game, 3).probs)
    assert not np.array_equal(Policy.random(game, 3).probs, Policy.random(game, 4).probs)


def test_json_roundtrip(tmp_path):
    game = rcfr.load_game("leduc")
    policy = rcfr.make_solver("cfr+", game).run(20).average_policy()
    path = tmp_path / "policy.json"
    policy.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == "rcfr.policy" and data["game"].startswith("leduc(")
    assert set(data["infosets"]["Qh||"]) == {"c", "r"}
    loaded = Policy.load(game, path)
    assert np.allclose(loaded.probs, policy.probs, atol=0, rtol=1e-15)
    assert not list(tmp_path.glob(".*tmp"))  # the atomic write left nothing behind


def _kuhn_rows():
    game = rcfr.load_game("kuhn")
    return game, Policy.uniform(game).to_dict()


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["infosets"].pop("K||cr"), "missing information set 'K||cr'"),
    (lambda d: d["infosets"].__setitem__("A||", {"c": 1.0}), "unknown information set 'A||'"),
    (lambda d: d["infosets"]["K||"].__setitem__("x", 0.0), "unknown action 'x'"),
    (lambda d: d["infosets"]["K||"].pop("r"), "missing action 'r'"),
    (lambda d: d["infosets"].__setitem__("K||", {"c": 1.5, "r": -0.5}), "negative probability"),
    (lambda d: d["infosets"].__setitem__("K||", {"c": 0.6, "r": 0.6}), "sum to 1.2"),
    (lambda d: d["infosets"].__setitem__("K||", {"c": "half", "r": 0.5}), "not a finite number"),
    (lambda d: d["infosets"].__setitem__("K||", [0.5, 0.5]), "expected {action: probability}"),
    (lambda d: d.__setitem__("game", "leduc()"), "policy is for game 'leduc\\(\\)'"),
    (lambda d: d.__setitem__("format", "other"), "field 'format'"),
    (lambda d: d.pop("infosets"), "field 'infosets'"),
])
def test_malformed_policies_are_rejected_with_a_reason(mutate, message):
    game, data = _kuhn_rows()
    mutate(data)
    with pytest.raises(PolicyError, match=message):
        Policy.from_dict(game, data)


def test_rows_are_never_renormalized():
    game, data = _kuhn_rows()
    data["infosets"]["K||"] = {"c": 0.5, "r": 0.4999}
    with pytest.raises(PolicyError, match="K\\|\\|"):
        Policy.from_dict(game, data)
    data["infosets"]["K||"] = {"c": 0.5, "r": 0.5 - 1e-9}  # within tolerance: kept as written
    assert Policy.from_dict(game, data)["K||"]["r"] == 0.5 - 1e-9


def test_bad_files(tmp_path):
    game = rcfr.load_game("kuhn")
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(PolicyError, match="not valid JSON"):
        Policy.load(game, path)
    path.write_text("[1, 2]")
    with pytest.raises(PolicyError, match="JSON object"):
        Policy.load(game, path)


def test_lookup_and_shape_errors():
    game = rcfr.load_game("kuhn")
    policy = Policy.uniform(game)
    assert policy["Q||c"] == {"c": 0.5, "r": 0.5}
    with pytest.raises(KeyError, match="no information set"):
        policy["Z||"]
    with pytest.raises(ValueError, match="needs 24 probabilities"):
        Policy(game, np.ones(3))


def test_saved_files_follow_the_umask(tmp_path):
    import os
    game = rcfr.load_game("kuhn")
    old = os.umask(0o022)
    try:
        Policy.uniform(game).save(tmp_path / "p.json")
    finally:
        os.umask(old)
    assert (tmp_path / "p.json").stat().st_mode & 0o777 == 0o644
