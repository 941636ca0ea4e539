"""Head-to-head matches between the final policies of a sweep, for games where no exact best response is
affordable (or as a second view where one is): every pair of configurations on one game plays
`rcfr.match_policies` (both seatings on common chance draws), seed against seed.

    rcfr-matches <sweep directory> --samples 10000

A sweep whose runs set ``run.matches=N`` writes the table when it ends, after its aggregate. ``matches.csv`` has one row
per ordered pair (a's payoff against b in chips, its 95% half-width over seeds, or the one match's own when
there is one seed); ``matches.md`` a matrix per game, a row per configuration. Runs that did not finish, or
left no policy file, are left out and listed.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

import numpy as np
from omegaconf import OmegaConf

from rcfr.files import atomic_write
from rcfr.stats import ci95

COLUMNS = ["game", "a", "b", "seeds", "value", "ci95", "samples"]


def _runs(directory: Path) -> tuple[list[dict], list[str]]:
    """The finished runs with a policy file: their summary, config and policy path; and the others' names."""
    from .runs import find_runs
    runs, skipped = [], []
    for run in find_runs(directory):
        summary = json.loads((run / "summary.json").read_text())
        policy = next((run / f"policy.{ext}" for ext in ("npz", "json") if (run / f"policy.{ext}").exists()), None)
        config = run / "config.yaml"
        if summary.get("status") != "complete" or policy is None or not config.exists():
            skipped.append(str(run.relative_to(directory)))
            continue
        runs.append({"summary": summary, "config": OmegaConf.load(config), "policy": policy,
                     "label": summary["label"], "game": summary["game"], "seed": summary["seed"]})
    return runs, skipped


def requested(directory: str | Path) -> int:
    """The largest ``run.matches`` among the runs' configs (0: no run asked for a match table)."""
    from .runs import find_runs
    asked = [OmegaConf.load(run / "config.yaml").get("run", {}).get("matches", 0) or 0
             for run in find_runs(Path(directory)) if (run / "config.yaml").exists()]
    return int(max(asked, default=0))


def _load(run: dict, games: dict):
    """The run's game (one per game config, shared) and its final policy, as the kit wrote them."""
    from .build import load_policy, make_game
    from .schema import validate
    spec = validate(run["config"])
    key = json.dumps(OmegaConf.to_container(run["config"].game, resolve=True), sort_keys=True)
    if key not in games:
        games[key] = make_game(spec)
    game = games[key]
    return game, load_policy(spec, game, run["policy"])


def match_table(directory: str | Path, samples: int, seed: int = 0) -> tuple[list[dict], list[str]]:
    """One row per ordered pair of configurations (labels) on the same game, and the runs left out."""
    from rcfr import match_policies
    runs, skipped = _runs(Path(directory))
    games: dict = {}
    by_game: dict[str, dict[str, dict[int, object]]] = {}
    for run in runs:
        game, policy = _load(run, games)
        by_game.setdefault(run["game"], {}).setdefault(run["label"], {})[run["seed"]] = (game, policy)
    rows = []
    for game_name, labels in by_game.items():
        names = sorted(labels)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                seeds = sorted(set(labels[a]) & set(labels[b]))
                results = [match_policies(labels[a][s][0], labels[a][s][1], labels[b][s][1], samples=samples,
                                          seed=seed + s, default="uniform") for s in seeds]
                if not results:
                    continue
                values = np.array([r.value for r in results])
                ci = results[0].ci95 if len(values) == 1 else ci95(values)  # one seed: its play-outs' own
                for x, y, sign in ((a, b, 1.0), (b, a, -1.0)):
                    rows.append({"game": game_name, "a": x, "b": y, "seeds": len(seeds),
                                 "value": sign * float(values.mean()), "ci95": ci, "samples": samples})
    return rows, skipped


def markdown(rows: list[dict], skipped: list[str]) -> str:
    """A matrix per game: row a, column b, a's payoff against b (chips) ± its 95% half-width."""
    out = []
    for game in sorted({r["game"] for r in rows}):
        mine = [r for r in rows if r["game"] == game]
        names = sorted({r["a"] for r in mine})
        cell = {(r["a"], r["b"]): f"{r['value']:+.4f} ± {r['ci95']:.4f}" for r in mine}
        seeds = max(r["seeds"] for r in mine)
        out.append(f"{game}: row's payoff against column (chips per game, both seatings), 95% half-width over "
                   f"{seeds} seed(s), {mine[0]['samples']:,} play-outs per seating and seed\n")
        out.append("| | " + " | ".join(names) + " |")
        out.append("|---|" + "---|" * len(names))
        for a in names:
            out.append(f"| {a} | " + " | ".join(cell.get((a, b), "—") for b in names) + " |")
        out.append("")
    if skipped:
        out.append(f"Left out (unfinished, or no policy file): {', '.join(skipped)}\n")
    return "\n".join(out)


def write(directory: str | Path, samples: int, seed: int = 0) -> list[Path]:
    """``matches.csv`` and ``matches.md`` in `directory` (written atomically); none when no pair played."""
    directory = Path(directory)
    rows, skipped = match_table(directory, samples, seed)
    if not rows:
        return []
    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(directory / "matches.csv", lambda f: f.write(text.getvalue().encode()))
    atomic_write(directory / "matches.md", lambda f: f.write(markdown(rows, skipped).encode()))
    return [directory / "matches.csv", directory / "matches.md"]


def write_requested(directory: str | Path) -> list[Path]:
    """The table, if the runs under `directory` asked for one (``run.matches``)."""
    samples = requested(directory)
    return write(directory, samples) if samples else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rcfr-matches", description=__doc__.split("\n")[0])
    parser.add_argument("directory", help="a sweep directory")
    parser.add_argument("--samples", type=int, default=10_000, help="play-outs per seating and seed")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.samples < 2:
        parser.error("--samples must be at least 2")
    files = write(args.directory, args.samples, args.seed)
    if not files:
        print(f"no pair of finished runs with policies on one game under {args.directory}", file=sys.stderr)
        return 1
    print(files[1].read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
