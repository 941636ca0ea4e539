"""Size vs exploitability of every static abstraction, solved by CFR+ and scored exactly in the full game.

    python -m benchmarks.reproductions.abstractions [--iterations 10000] [--write]

Prints two Markdown tables (Leduc card abstractions, nlocp action abstractions); ``--write`` also
replaces the results section of docs/abstractions.md (atomically). Leduc sizes are given as % of the
rank-only game (672 sequences, the lossless view used by the RCFR experiments) and of the suited game
(2184 sequences); all Leduc abstractions are solved and scored on the suited game.
"""

from __future__ import annotations

import argparse
import re
import time

import rcfr  # noqa: E402
from benchmarks import ROOT
from rcfr.abstraction import (  # noqa: E402
    ACTION_ABSTRACTIONS,
    abstract_solver,
    action_abstraction,
    average_policy,
    make_abstraction,
    translate,
)
from rcfr.files import atomic_write  # noqa: E402

DOC = ROOT / "docs" / "abstractions.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"

LEDUC = [("identity (full game)", "identity", {}), ("ranks (lossless)", "ranks", {}),
         ("JQK", "JQK", {}), ("J.QK", "J.QK", {}), ("JQ.K", "JQ.K", {}), ("J.Q.K", "J.Q.K", {})]
for metric in ("ehs", "ehs2"):
    for k in (2, 3):
        for recall in ("perfect", "imperfect"):
            LEDUC.append((f"{'E[HS]' if metric == 'ehs' else 'E[HS^2]'} k={k} k-means, {recall} recall",
                          metric, {"buckets": k, "recall": recall}))
for recall in ("perfect", "imperfect"):
    LEDUC.append((f"E[HS] k=2 percentile, {recall} recall", "ehs", {"buckets": 2, "method": "percentile",
                                                                  "recall": recall}))


def mbb(game, policy) -> str:
    return f"{rcfr.exploitability(game, policy, unit='mbb'):.3f}"


def leduc_table(iterations: int) -> str:
    game = rcfr.load_game("leduc")
    abstract_solver("cfr+", game, make_abstraction(game, "identity")).run(2)  # compile the kernels first
    ranks_sequences = rcfr.load_game("leduc", merge_suits=True).num_sequences
    lines = [f"Leduc hold'em, CFR+ (alternating updates, linear averaging), exploitability in mbb/g after "
             f"{iterations // 10} and {iterations} iterations; 'tied' = abstract averaging.", "",
             "| abstraction | abstract infosets | abstract sequences | % of rank game (672) | % of suited game (2184) "
             f"| mbb/g @{iterations // 10} | mbb/g @{iterations} | mbb/g @{iterations}, tied | ms/iteration |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, name, options in LEDUC:
        abstraction = make_abstraction(game, name, **options)
        solver = abstract_solver("cfr+", game, abstraction)
        start = time.perf_counter()
        solver.run(iterations // 10)
        seconds = time.perf_counter() - start
        early = mbb(game, solver.average_policy())
        start = time.perf_counter()
        solver.run(iterations - iterations // 10)
        seconds += time.perf_counter() - start
        lines.append(f"| {label} | {abstraction.num_infosets} | {abstraction.num_sequences} | "
                     f"{100 * abstraction.num_sequences / ranks_sequences:.1f} | "
                     f"{100 * abstraction.fraction_of():.1f} | {early} | {mbb(game, solver.average_policy())} | "
                     f"{mbb(game, average_policy(solver, 'abstract'))} | {1000 * seconds / iterations:.3f} |")
        print(lines[-1], flush=True)
    return "\n".join(lines)


def nlocp_table(iterations: int) -> str:
    game = rcfr.load_game("nlocp")
    lines = [f"No-limit one-card poker (4 cards, stacks of 10, ante 1), CFR+ for {iterations} iterations on the "
             "abstract game, translated into the full game by soft geometric translation and scored there.", "",
             "| abstraction | abstract infosets | abstract sequences | % of game (3200) | mbb/g in the abstract game "
             "| mbb/g in the full game | value in the full game (mbb/g) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    full = rcfr.make_solver("cfr+", game).run(iterations).average_policy()
    lines.append(f"| full game | {game.num_infosets} | {game.num_sequences} | 100.0 | {mbb(game, full)} | "
                 f"{mbb(game, full)} | {1000 * rcfr.expected_value(game, full):.1f} |")
    print(lines[-1], flush=True)
    for wagers in ACTION_ABSTRACTIONS:
        abstract = action_abstraction(game, wagers)
        policy = rcfr.make_solver("cfr+", abstract).run(iterations).average_policy()
        translated = translate(game, abstract, policy)
        lines.append(f"| {wagers} | {abstract.num_infosets} | {abstract.num_sequences} | "
                     f"{100 * abstract.num_sequences / game.num_sequences:.1f} | {mbb(abstract, policy)} | "
                     f"{mbb(game, translated)} | {1000 * rcfr.expected_value(game, translated):.1f} |")
        print(lines[-1], flush=True)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=10000)
    parser.add_argument("--write", action="store_true", help=f"update the results section of {DOC}")
    args = parser.parse_args()
    tables = f"{leduc_table(args.iterations)}\n\n{nlocp_table(args.iterations)}"
    print()
    print(tables)
    if args.write:
        text = DOC.read_text()
        if START not in text or END not in text:
            raise SystemExit(f"{DOC} lacks the markers {START} / {END}")
        text = re.sub(f"{re.escape(START)}.*{re.escape(END)}", lambda _: f"{START}\n{tables}\n{END}", text,
                      flags=re.S)
        atomic_write(DOC, lambda f: f.write(text.encode()))


if __name__ == "__main__":
    main()
