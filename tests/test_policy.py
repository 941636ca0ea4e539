"""The policy type and its JSON format."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    (lambda d: d.__setitem__("infoset", {}), "unknown field 'infoset'; allowed: format, version, game, infosets"),
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


# ---- hostile JSON files ---------------------------------------------------------------------------
def _with_row(row: str) -> str:
    """Kuhn's uniform policy as JSON text with the row of 'K||' replaced by `row` (raw text)."""
    text = json.dumps(_kuhn_rows()[1])
    return text.replace('"K||": {"c": 0.5, "r": 0.5}', f'"K||": {row}')


@pytest.mark.parametrize("text, message", [
    (_with_row('{"c": 1' + "0" * 400 + ', "r": 0}'), "'c': 1000000.*\\(401 characters\\) is not a finite number"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (b'{"game": "kuhn\xff()"}', "not UTF-8 text \\(byte 14\\)"),
    ('{"version": true, "infosets": {}}', "'version' must be the integer 1, got True"),
    ('{"version": 1.0, "infosets": {}}', "'version' must be the integer 1, got 1.0"),
    ('{"game": "kuhn()", "infosets": {"' + "x" * 5_000_000 + '": {}}}', "unknown information set 'xxxx.*\\.\\.\\. \\(5000002 characters\\)"),
    (_with_row('{"c": "' + "y" * 10_000 + '", "r": 0}'), "\\(10002 characters\\) is not a finite"),
    (_with_row('{"' + "z" * 10_000 + '": 1}'), "unknown action 'zzz.*\\(10002 characters\\); legal"),
    (_with_row("1" + "0" * 5000), "not valid JSON \\(Exceeds the limit"),
], ids=["huge integer", "deep nesting", "not utf-8", "version true", "version 1.0", "5 MB key", "long value",
        "long action", "5000 digits"])
def test_hostile_files_get_a_clear_short_policy_error(tmp_path, text, message):
    """Raw OverflowError, RecursionError and UnicodeDecodeError used to escape; True and 1.0 passed as
    version 1; a 5 MB key was echoed whole."""
    game = rcfr.load_game("kuhn")
    path = tmp_path / "policy.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(PolicyError, match=message) as caught:
        Policy.load(game, path)
    assert len(str(caught.value)) < 400


# ---- the compact binary form ----------------------------------------------------------------------
def test_npz_roundtrip_is_exact_and_compact(tmp_path, leduc):
    policy = Policy.random(leduc, 5)
    policy.save(tmp_path / "p.npz")
    policy.save(tmp_path / "p.json")
    loaded = Policy.load(leduc, tmp_path / "p.npz")
    assert np.array_equal(loaded.probs, policy.probs) and loaded.game is leduc
    assert (tmp_path / "p.npz").stat().st_size < (tmp_path / "p.json").stat().st_size / 2
    with np.load(tmp_path / "p.npz") as data:
        assert sorted(data.files) == ["fingerprint", "format", "game", "probs", "version"]
        assert str(data["fingerprint"]) == leduc.fingerprint
    assert not list(tmp_path.glob(".*tmp"))  # written atomically


def test_npz_of_another_game_is_refused_naming_both(tmp_path, leduc, leduc_ranks):
    Policy.uniform(leduc_ranks).save(tmp_path / "ranks.npz")
    with pytest.raises(PolicyError, match=r"belongs to the game leduc\(.*merge_suits=True\), "
                                          r"not to leduc\(.*merge_suits=False\)"):
        Policy.load(leduc, tmp_path / "ranks.npz")


def _rewrite(path, **changes):
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays.update(changes)
    np.savez(path, **{k: v for k, v in arrays.items() if v is not None})


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[:200]), "not a readable .npz policy file"),
    (lambda p: p.write_bytes(b"\x00" * 64), "not a readable .npz policy file"),
    (lambda p: np.save(open(p, "wb"), np.zeros(3)), "a single array"),
    (lambda p: _rewrite(p, probs=None), "missing \\['probs'\\]"),
    (lambda p: _rewrite(p, extra=np.zeros(1)), "unknown \\['extra'\\]"),
    (lambda p: _rewrite(p, probs=np.zeros(5)), "'probs' must hold 24 floats"),
    (lambda p: _rewrite(p, probs=np.full(24, 0.5, np.float32) + 0.1), "sum to"),
    (lambda p: _rewrite(p, version=np.array(True)), "'version' must be the integer 1"),
    (lambda p: _rewrite(p, version=np.array(2)), "'version' must be the integer 1"),
    (lambda p: _rewrite(p, format=np.array("other")), "'format' must be 'rcfr.policy'"),
    (lambda p: _rewrite(p, fingerprint=np.array("0" * 16)), "fingerprint 0000000000000000, this game's is"),
])
def test_damaged_npz_files_get_a_clear_policy_error(tmp_path, damage, message):
    game = rcfr.load_game("kuhn")
    path = tmp_path / "policy.npz"
    Policy.uniform(game).save(path)
    damage(path)
    with pytest.raises(PolicyError, match=message):
        Policy.load(game, path)


def test_the_suffix_chooses_the_form(tmp_path):
    game = rcfr.load_game("kuhn")
    for name in ("policy", "policy.txt", "policy.npy"):
        with pytest.raises(ValueError, match=r"suffix must be \.json \(readable\) or \.npz"):
            Policy.uniform(game).save(tmp_path / name)
    assert not list(tmp_path.iterdir())
    Policy.uniform(game).save(tmp_path / "UPPER.NPZ")
    assert Policy.load(game, tmp_path / "UPPER.NPZ").probs.tolist() == [0.5] * 24


def test_the_command_line_refuses_a_bad_suffix_before_solving(tmp_path, capsys):
    from rcfr.__main__ import main
    with pytest.raises(SystemExit):
        main(["--game", "kuhn", "--iterations", "10", "--save", str(tmp_path / "policy.txt")])
    captured = capsys.readouterr()
    assert "--save: policy file" in captured.err and "iteration" not in captured.out
    assert main(["--game", "kuhn", "--iterations", "10", "--save", str(tmp_path / "policy.npz")]) == 0
    assert Policy.load(rcfr.load_game("kuhn"), tmp_path / "policy.npz").game.name == "kuhn"
