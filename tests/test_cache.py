"""The compiled-game cache is checked on open: damaged data or a damaged header is rebuilt, never
loaded; its settings (RCFR_CACHE, RCFR_MAX_HISTORIES) are read as documented or refused by name."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import rcfr
from rcfr import tree
from rcfr.tree import cache_dir, max_histories


def _entry(tmp_path: Path, name: str, **params) -> tuple[rcfr.Game, Path]:
    """A fresh compile of the game and its cache file under tmp_path."""
    game = rcfr.load_game(name, **params)
    return game, tree.cache._cache_path(game.rules, tmp_path)


def _header(path: Path) -> tuple[dict, int, int]:
    """The header, where its JSON text starts and where the arrays start."""
    data = path.read_bytes()
    length = int.from_bytes(data[8:16], "little")
    start = -(-(16 + length) // 64) * 64
    return json.loads(data[16:16 + length]), 16, start


def _assert_same(a: rcfr.Game, b: rcfr.Game) -> None:
    for name, x in a.arrays().items():
        y = getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RCFR_CACHE", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("array", ["utility", "chance_prob", "parent"])
def test_one_flipped_bit_in_the_data_is_seen_and_rebuilt(cache, array):
    leduc, path = _entry(cache, "leduc")
    header, _, start = _header(path)
    _, dtype, shape, offset = next(e for e in header["arrays"] if e[0] == array)
    where = np.flatnonzero(getattr(leduc, array) != 0)[len(leduc.player) // 7 % 50]  # a nonzero entry
    byte = start + offset + int(where) * np.dtype(dtype).itemsize
    data = bytearray(path.read_bytes())
    data[byte] ^= 0x01  # the lowest bit of a mantissa or an index: a quiet change without the check
    path.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="checksum mismatch"):
        again = rcfr.load_game("leduc")
    _assert_same(leduc, again)
    assert path.read_bytes() != bytes(data)  # rewritten
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _assert_same(leduc, rcfr.load_game("leduc"))  # the rebuilt entry opens cleanly


def test_any_single_bit_flip_is_rebuilt_or_harmless(cache):
    """Across the whole file, header included: the game that loads is always the compiled one."""
    kuhn, path = _entry(cache, "kuhn")
    clean = path.read_bytes()
    rng = np.random.default_rng(19)
    for bit in rng.choice(8 * len(clean), size=60, replace=False):
        data = bytearray(clean)
        data[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _assert_same(kuhn, rcfr.load_game("kuhn"))


def _rewrite_header(path: Path, text: str) -> None:
    """Replace the header's JSON with `text`, padded with spaces to the same length (still valid JSON)."""
    data = bytearray(path.read_bytes())
    length = int.from_bytes(data[8:16], "little")
    assert len(text) <= length
    data[16:16 + length] = text.encode().ljust(length)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["list", "string", "shorter utility", "offsets swapped", "no table"])
def test_a_damaged_header_that_is_valid_json_is_rebuilt(cache, damage):
    leduc, path = _entry(cache, "leduc")
    header, _, _ = _header(path)
    if damage == "list":
        text = json.dumps(list(header.values()))
    elif damage == "string":
        text = json.dumps("leduc")
    elif damage == "shorter utility":
        for entry in header["arrays"]:
            if entry[0] == "utility":
                entry[2] = [entry[2][0] - 1000]
        text = json.dumps(header)
    elif damage == "offsets swapped":
        a, b = header["arrays"][0], header["arrays"][1]
        a[3], b[3] = b[3], a[3]
        text = json.dumps(header)
    else:
        del header["arrays"]
        text = json.dumps(header)
    _rewrite_header(path, text)
    with pytest.warns(UserWarning, match="rebuilding the cached game"):
        again = rcfr.load_game("leduc")
    _assert_same(leduc, again)
    assert rcfr.exploitability(again, rcfr.Policy.uniform(again)) == pytest.approx(2.3736, abs=1e-4)


def test_open_game_refuses_damage_without_raising(cache):
    kuhn, path = _entry(cache, "kuhn")
    _rewrite_header(path, "[1, 2]")
    assert tree.open_game(kuhn.rules, path) is None
    with pytest.raises(tree.DamagedEntry, match="not a JSON object"):
        tree.read_game(kuhn.rules, path)


def test_a_file_of_the_layout_without_checksum_is_rebuilt_quietly(cache):
    kuhn, path = _entry(cache, "kuhn")
    header, _, _ = _header(path)
    del header["layout"], header["crc32"]
    _rewrite_header(path, json.dumps(header))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an older version's file is expected, not damage
        _assert_same(kuhn, rcfr.load_game("kuhn"))
    assert "crc32" in _header(path)[0]


@pytest.mark.parametrize("setting", ["none", "None", "OFF", " off ", "0", "false", "no"])
def test_cache_off_settings(tmp_path, monkeypatch, setting):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RCFR_CACHE", setting)
    assert cache_dir() is None
    rcfr.load_game("kuhn")
    assert list(tmp_path.iterdir()) == []  # no literal directory named after the setting


def test_cache_setting_expands_the_home_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RCFR_CACHE", "~/games")
    assert cache_dir() == tmp_path / "home" / "games"
    rcfr.load_game("kuhn")
    assert len(list((tmp_path / "home" / "games").glob("kuhn-*.game"))) == 1
    assert not (tmp_path / "~").exists()


def test_history_limit_beyond_int64_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("RCFR_MAX_HISTORIES", str(2**63))
    with pytest.raises(ValueError, match=r"RCFR_MAX_HISTORIES must be a positive integer at most 2\*\*63 - 1"):
        rcfr.load_game("kuhn", cache=False)
    monkeypatch.setenv("RCFR_MAX_HISTORIES", str(10**30))
    with pytest.raises(ValueError, match="RCFR_MAX_HISTORIES must be"):
        max_histories()
    with pytest.raises(ValueError, match=r"max_histories must be a positive integer at most 2\*\*63 - 1"):
        rcfr.compile_game(rcfr.make_rules("kuhn"), max_histories=2**63)
    monkeypatch.setenv("RCFR_MAX_HISTORIES", str(2**63 - 1))  # the largest limit works, on both paths
    assert rcfr.load_game("kuhn", cache=False).num_histories == 58
    assert rcfr.compile_game(rcfr.make_rules("kuhn"), fast=False).num_histories == 58
