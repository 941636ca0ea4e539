"""Command line: solve a game with any registered solver and print its exploitability as it converges.

Solvers: the CFR family, Monte Carlo CFR and RCFR/RCFR+ (with their default regressor and
features). Exploitability is exact, in chips and in milli-big-blinds per game (mbb/g).

examples:
    python -m rcfr --game leduc --solver cfr+ --iterations 1000
    python -m rcfr --game nlocp --param stack=20 --solver dcfr --save policy.json
    python -m rcfr --game "openspiel:liars_dice(numdice=1)" --iterations 100
    python -m rcfr --game leduc --param merge_suits=True --solver rcfr+ --iterations 200
"""

from __future__ import annotations

import argparse
import ast
import sys
import time

import numpy as np

import rcfr
from rcfr.options import did_you_mean


def _parse_param(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"--param expects key=value, got {text!r}")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def checkpoints(iterations: int, per_decade: int = 3) -> list[int]:
    """Roughly log-spaced iteration counts up to and including `iterations`."""
    marks = np.unique(np.round(np.logspace(0, np.log10(max(iterations, 1)), 1 + per_decade * 6)).astype(int))
    return sorted({int(m) for m in marks if m <= iterations} | {iterations} - {0})


def game_names() -> list[str]:
    """The names `--game` takes (besides ``openspiel:<game string>``), as the README lists them."""
    return sorted(set(rcfr.GAMES) - {"openspiel"})


def _check_name(option: str, value: str, allowed: list[str]) -> None:
    """One line naming the closest allowed name and all of them, then exit 2 (argparse's code)."""
    if value in allowed:
        return
    print(f"python -m rcfr: error: {option} {value}: unknown {option[2:]} {value!r}{did_you_mean(value, allowed)}; "
          f"allowed: {', '.join(allowed)}",
          file=sys.stderr)
    sys.exit(2)


class _Help(argparse.RawDescriptionHelpFormatter):
    """Keeps names such as ``os-mccfr`` whole when wrapping the option help."""

    def _split_lines(self, text, width):
        import textwrap
        return textwrap.wrap(text, width, break_on_hyphens=False)


def main(argv: list[str] | None = None) -> int:
    from .policy import policy_suffix

    parser = argparse.ArgumentParser(prog="python -m rcfr", description=__doc__,
                                     formatter_class=_Help)
    parser.add_argument("--game", default="leduc",
                        help=f"one of: {', '.join(game_names())}; or openspiel:<OpenSpiel game string> "
                             "(default: leduc)")
    parser.add_argument("--param", action="append", type=_parse_param, default=[], metavar="KEY=VALUE",
                        help="game parameter, e.g. --param merge_suits=True (repeatable)")
    parser.add_argument("--solver", default="cfr+", help=f"one of: {', '.join(rcfr.SOLVERS)} (default: cfr+)")
    parser.add_argument("--iterations", type=_positive_int, default=1000, help="at least 1 (default 1000)")
    parser.add_argument("--save", metavar="PATH", help="write the average policy (.json, or .npz: compact binary)")
    parser.add_argument("--progress", action="store_true", help="show a progress bar")
    args = parser.parse_args(argv)
    if not args.game.startswith("openspiel:"):
        _check_name("--game", args.game, sorted(rcfr.GAMES))
    _check_name("--solver", args.solver, sorted(rcfr.SOLVERS))
    if args.save:
        try:
            policy_suffix(args.save)  # before solving, not after
        except ValueError as err:
            parser.error(f"--save: {err}")
    try:
        game = rcfr.load_game(args.game, **dict(args.param))
    except (ValueError, TypeError) as err:  # TypeError: a parameter of the wrong kind reached the rules
        parser.error(f"--game {args.game}: {err}")
    try:
        # ddcfr's policy observes t / T: the run's length is its horizon
        solver = rcfr.make_solver(args.solver, game, **({"horizon": args.iterations} if args.solver == "ddcfr" else {}))
    except (ValueError, TypeError) as err:
        parser.error(f"--solver {args.solver}: {err}")

    print(f"{game.rules.description()}")
    for key, value in game.sizes().items():
        print(f"  {key:22s} {value}")
    print(f"\n{'iteration':>10} {'seconds':>9} {'exploitability (chips)':>24} {'mbb/g':>10}")
    elapsed, done = 0.0, 0
    for mark in checkpoints(args.iterations):
        start = time.perf_counter()
        solver.run(mark - done, progress=args.progress)
        elapsed += time.perf_counter() - start
        done = mark
        result = rcfr.evaluate(game, solver.average_policy())
        print(f"{mark:>10} {elapsed:>9.3f} {result.exploitability:>24.6g} {result.exploitability_mbb:>10.3f}")
    print(f"\ngame value for player 1 (average policy): {result.value:.6f}")
    if args.save:
        solver.average_policy().save(args.save)
        print(f"average policy written to {args.save}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
