"""The aggregation's plots on made-up runs: seed means on a common grid, nothing dropped, no plot that
says nothing, every curve its own look, words instead of code strings."""

from __future__ import annotations

import numpy as np
import pytest

from rcfr.experiments import display, figures, pooling


def _curve(iterations, values, seconds_per_iteration=1e-3):
    return [{"iteration": i, "seconds": i * seconds_per_iteration, "exploitability": v, "exploitability_mbb": 1000 * v}
            for i, v in zip(iterations, values)]


def test_seeds_at_the_same_iterations_average_exactly():
    a, b = _curve([1, 10, 100], [1.0, 0.1, 0.01]), _curve([1, 10, 100], [3.0, 0.3, 0.03])
    iterations, _, mean, half = pooling.mean_curve([a, b], "exploitability")
    assert iterations.tolist() == [1, 10, 100] and mean == pytest.approx([2.0, 0.2, 0.02], rel=1e-15)
    assert np.all(half > 0)


def test_seeds_at_different_iterations_are_interpolated_in_logs_not_dropped():
    # a node budget: each seed evaluated at its own iterations; exploitability ~ 1/iteration in both
    a = _curve([1, 9, 110, 1300], [1 / i for i in [1, 9, 110, 1300]])
    b = _curve([2, 13, 95, 1000], [2 / i for i in [2, 13, 95, 1000]])
    assert pooling.common_iterations([a, b]) == []  # the old plot drew nothing here
    iterations, seconds, mean, _ = pooling.mean_curve([a, b], "exploitability")
    assert iterations[0] == pytest.approx(9) and iterations[-1] == pytest.approx(1000)  # the range both cover
    assert mean == pytest.approx(1.5 / iterations, rel=1e-9)  # exact in log-log for a power law
    assert seconds == pytest.approx(iterations * 1e-3, rel=1e-9)


def test_seeds_that_share_no_range_give_none_so_each_is_drawn(tmp_path):
    assert pooling.mean_curve([_curve([1, 10], [1, .1]), _curve([100, 1000], [.01, .001])], "exploitability") is None
    rows = [{"run": r, "game": "kuhn", "label": "OS", "config_hash": "h", "status": "complete", "iteration": 10,
             "max_nodes_touched": 0, **{k: 1.0 for k in pooling.POOLED}, "representation_pct": 100.0,
             "measure": "exploitability", "seed": i} for i, r in enumerate(["0", "1"])]
    curves = {"0": _curve([1, 10], [1, .1]), "1": _curve([100, 1000], [.01, .001])}
    files = figures.plot(tmp_path, pooling.pool(rows), curves)
    assert [p.name for p in files] == ["convergence.png", "convergence.svg"]  # one size only: no size plot
    svg = (tmp_path / "convergence.svg").read_text()
    assert "OS [0]" in svg and "OS [1]" in svg  # a curve per seed, both drawn


def _group(label, pct, game="leduc(merge_suits=True)", size=None):
    return {"label": label, "game": game, "status": "complete", "seeds": 1, "iteration": 100,
            "representation_pct": pct, "representation_size": size if size is not None else 6.72 * pct,
            "exploitability": 0.1, "exploitability_ci95": None, "exploitability_mbb": 100.0,
            "exploitability_mbb_ci95": None, "runs": label, "measure": "exploitability"}


def test_the_size_plot_is_drawn_only_when_sizes_differ(tmp_path):
    curves = {"BF": _curve([1, 100], [1, .1]), "CFR+": _curve([1, 100], [1, .01])}
    names = [p.name for p in figures.plot(tmp_path, [_group("CFR+", 100.0)], {"CFR+": curves["CFR+"]})]
    assert "exploitability_vs_size.png" not in names and "convergence.png" in names
    names = [p.name for p in figures.plot(tmp_path, [_group("BF", 9.52), _group("CFR+", 100.0)], curves)]
    assert "exploitability_vs_size.png" in names
    svg = (tmp_path / "exploitability_vs_size.svg").read_text()
    assert "Leduc hold" in svg and "rank-only" in svg and "672 sequences" in svg  # the game in words, its size
    assert "RCFR (best-first tree)" in svg and "mbb/g" in svg


def test_the_bytes_plot_is_drawn_when_the_bytes_held_differ(tmp_path):
    curves = {"BF": _curve([1, 100], [1, .1]), "CFR+": _curve([1, 100], [1, .01])}
    same = [dict(_group("BF", 9.52), state_bytes=1e6), dict(_group("CFR+", 100.0), state_bytes=1e6)]
    assert "exploitability_vs_state_bytes.png" not in [p.name for p in figures.plot(tmp_path, same, curves)]
    held = [dict(_group("BF", 9.52), state_bytes=2.5e5), dict(_group("CFR+", 100.0), state_bytes=4e7)]
    assert "exploitability_vs_state_bytes.png" in [p.name for p in figures.plot(tmp_path, held, curves)]
    svg = (tmp_path / "exploitability_vs_state_bytes.svg").read_text()
    assert "bytes kept between iterations" in svg and "RCFR (best-first tree)" in svg


def test_every_curve_of_a_panel_has_its_own_colour_and_marker():
    styles = [figures.style(i) for i in range(15)]
    assert len({tuple(s["color"]) for s in styles}) == 15 and len({s["marker"] for s in styles}) == 15


def test_words_for_games_and_labels():
    assert display.game_title("leduc(merge_suits=True)", 672) == "Leduc hold'em (rank-only), 672 sequences"
    assert display.game_title("liars_dice(dice1=1, dice2=1)") == "Liar's Dice (Bluff) (dice1=1, dice2=1)"
    long = display.game_title("openspiel(name='" + "x" * 150 + "')", 34)
    assert max(map(len, long.splitlines())) <= 60 and long.split()[-2:] == ["34", "sequences"]
    assert display.label_words("BF+") == "RCFR+ (best-first tree)" and display.label_words("BF_BS") == \
        "RCFR (best-first tree, bootstrapped targets)"
    assert display.label_words("CFR+ J.Q.K") == "CFR+ on abstraction J.Q.K" and display.label_words("ES-MCCFR") == "ES-MCCFR"
    assert display.is_poker("ocp(cards=13)") and not display.is_poker("goofspiel(cards=5)")


def test_poker_is_plotted_in_mbb_and_other_games_in_chips():
    assert pooling.plotted({"game": "leduc", "measure": "exploitability"}) == ("exploitability_mbb",
                                                                            "exploitability (mbb/g)")
    assert pooling.plotted({"game": "goofspiel(cards=5)", "measure": "exploitability"}) == ("exploitability",
                                                                                         "exploitability (chips)")
    rows = [{"game": "ocp(cards=13)", "measure": "exploitability", "exploitability": 0.5, "exploitability_mbb": 500.0},
            {"game": "pam", "measure": "exploitability", "exploitability": 0.5, "exploitability_mbb": 500.0}]
    assert pooling.mbb_factors(rows) == {"ocp(cards=13)": 1000.0}


def test_error_bars_on_a_log_axis_stop_at_half_the_lowest_mean():
    """Two seeds' t-intervals often reach below zero: the bar's lower end is cut at half the panel's lowest
    mean (as the convergence bands), so the axis does not stretch over decades no mean comes near."""
    y, half = np.array([100.0, 10.0, 4.0]), np.array([500.0, 2.0, 30.0])
    floor = figures.log_floor(y)
    assert floor == 2.0
    below, above = figures.log_errors(y, half, floor)
    np.testing.assert_allclose(y - below, [2.0, 8.0, 2.0])  # cut, kept (8 > floor), cut
    np.testing.assert_allclose(above, half)  # the upper ends are the interval's
    assert figures.log_floor([0.0, None]) == 1e-12  # nothing positive: no cut to speak of
