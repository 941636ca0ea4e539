"""The command line, run in-process: output lines, the saved policy, and clean errors for bad input."""

from __future__ import annotations

import pytest

import rcfr
from rcfr.__main__ import checkpoints, main


def _fails(capsys, argv) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_solves_kuhn_and_prints_a_convergence_table(capsys, tmp_path):
    path = tmp_path / "policy.json"
    assert main(["--game", "kuhn", "--solver", "cfr+", "--iterations", "10", "--save", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "kuhn()"
    assert "  histories              58" in lines
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["iteration", "seconds"])
    rows = [line.split() for line in lines[header + 1:] if line.strip() and line.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == checkpoints(10)
    assert rows[-1][0] == "10"
    values = [float(r[2]) for r in rows]
    assert values[-1] < values[0]  # exploitability falls
    assert float(rows[-1][3]) == pytest.approx(1000 * values[-1], rel=1e-3)  # mbb/g of a 1-chip big blind
    assert lines[-1] == f"average policy written to {path}"
    assert lines[-2].startswith("game value for player 1 (average policy): ")
    game = rcfr.load_game("kuhn")
    saved = rcfr.Policy.load(game, path)
    expected = rcfr.make_solver("cfr+", game).run(10).average_policy()
    assert saved.probs == pytest.approx(expected.probs, abs=1e-12)


def test_one_iteration_and_game_parameters(capsys):
    assert main(["--game", "ocp", "--param", "cards=4", "--solver", "cfr", "--iterations", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "ocp(cards=4)"
    assert any(line.split()[:1] == ["1"] for line in lines)


@pytest.mark.parametrize("value, message", [("0", "must be at least 1, got 0"), ("-5", "must be at least 1, got -5"),
                                            ("ten", "expected a positive integer, got 'ten'")])
def test_bad_iterations_are_rejected(capsys, value, message):
    assert _fails(capsys, ["--game", "kuhn", "--iterations", value]).endswith(f"argument --iterations: {message}")


def test_bad_game_parameters_are_clean_errors(capsys):
    last = _fails(capsys, ["--game", "leduc", "--param", "bets=3", "--iterations", "1"])
    assert "--game leduc: game parameter 'bets' must be a non-empty sequence of positive integers" in last
    last = _fails(capsys, ["--game", "kuhn", "--param", "cards=3"])
    assert "unknown option(s) 'cards' for game 'kuhn'" in last
    last = _fails(capsys, ["--game", "poker"])
    assert "unknown game 'poker'; allowed:" in last
    last = _fails(capsys, ["--game", "kuhn", "--param", "oops"])
    assert "--param expects key=value, got 'oops'" in last


def test_a_type_error_from_the_rules_is_a_clean_error(capsys):
    class Picky(rcfr.GameRules):
        name = "picky"

        def __init__(self, size: int = 2):
            self.size = size + 0  # a string parameter raises TypeError here

    rcfr.register_game("picky_cli_test", Picky)
    try:
        last = _fails(capsys, ["--game", "picky_cli_test", "--param", "size='x'"])
    finally:
        rcfr.GAMES.pop("picky_cli_test")
    assert last.startswith("python -m rcfr: error: --game picky_cli_test:") and "str" in last


def test_bad_solver_is_a_clean_error(capsys):
    last = _fails(capsys, ["--game", "kuhn", "--solver", "cfr-plus"])
    assert "--solver cfr-plus: unknown solver 'cfr-plus'; allowed: " in last and ", cfr, cfr+, " in last


@pytest.mark.parametrize("argv, line", [
    (["--game", "leduk"], "python -m rcfr: error: --game leduk: unknown game 'leduk' (did you mean 'leduc'?); "
                          "allowed: dieroll, goofspiel, kuhn, latent_ttt, leduc, "),
    (["--game", "kuhn", "--solver", "cfr++"], "python -m rcfr: error: --solver cfr++: unknown solver 'cfr++' "
                                               "(did you mean 'cfr+'?); allowed: apcfr+, apdcfr+, as-mccfr, cfr, "),
])
def test_a_misspelled_name_is_one_line_with_the_closest_match(capsys, argv, line):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(line)


def test_the_help_is_complete_and_lists_the_readme_games(capsys):
    from pathlib import Path

    from rcfr.__main__ import game_names
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "RCFR/RCFR+ (with their default regressor and features)." in text  # not cut mid-sentence
    assert "one of: " + ", ".join(game_names()) + "; or openspiel:<OpenSpiel game string>" in text
    assert "one of: " + ", ".join(rcfr.SOLVERS) + " (default: cfr+)" in text
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    games_item = readme.split("* **Games**", 1)[1].split("\n* ", 1)[0]
    assert [name for name in game_names() if f"`{name}`" not in games_item] == []
    assert "openspiel:<game string>" in games_item
