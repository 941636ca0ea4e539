"""Collect a multirun directory into tables and plots, pooling seeds.

``rcfr-aggregate <dir>`` finds every run (a directory with ``summary.json``) under
``<dir>`` and writes, into ``<dir>``:

* ``runs.csv``  one row per run: label, game, components, seed, representation size and % of game,
  iterations, final exploitability (chips, mbb/g), solve and compile seconds, status;
* ``results.csv`` / ``results.md``  one row per configuration, its seeds pooled: the mean, the
  half-width of a 95% confidence interval (Student's t; none for a single seed) and the number of
  seeds ``seeds``. Runs pool when they differ only in their seed (the ``config_hash`` of their
  summaries) and stopped at the same iteration with the same status;
* ``exploitability_vs_size.{png,svg}``  final exploitability against representation size (% of
  game), linear and log axes (the layout of Morrill 2016, Fig. 4.1 / 4.3), one curve per label, with
  95% confidence bars where there are several seeds; complete runs only;
* ``convergence.{png,svg}``  exploitability against iterations and against solve seconds
  (compilation excluded), one curve per configuration (mean over seeds, 95% band).
* ``exploitability_vs_nodes.{png,svg}`` (runs with a node budget) exploitability against nodes
  touched, log-log, one panel per game (or per game and the label's part before " | ", one row per game
  on one vertical range), the mean over seeds with 95% confidence intervals (Lanctot 2013, Figs 4.2-4.5);
  ``results.md`` then adds the final means per game and label. A label with several sizes gets a
  curve per size. ``exploitability_vs_cpu_seconds.{png,svg}``: the same curves against the solve's
  process CPU seconds (evaluation and compilation excluded), which a loaded machine does not inflate.

Memory (``peak_rss_mib``, ``solve_peak_rss_mib``, ``anon_rss_mib``: `rcfr.experiments.runner.MEMORY`) is in
the tables, pooled like the other numbers.

Jobs without results are listed, not dropped: a job directory with Hydra's ``.hydra/`` but no
``summary.json`` is "failed" (it raised, was killed, or is still running), and a job that the sweep's
``multirun.yaml`` names but that has no directory is "missing"; both appear in ``runs.csv``, in the
table of ``results.md`` and on the console, with their overrides.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rcfr.files import atomic_write

from .figures import plot, plot_nodes
from .measures import LABELS
from .pooling import GROUP_COLUMNS, game_sequences, mbb_factors, node_curves, pool
from .runs import COLUMNS, collect, unfinished_jobs
from .tables import curve_markdown, markdown, node_markdown, unfinished_note, write_csv


@dataclass
class Aggregate:
    directory: Path
    rows: list[dict]  # one per run
    groups: list[dict]  # one per configuration, seeds pooled
    curves: dict[str, list[dict]]  # run -> metrics rows
    files: list[Path]
    unfinished: list[dict] = field(default_factory=list)  # jobs without results: status "failed" or "missing"


def aggregate(directory: str | Path, *, plots: bool = True) -> Aggregate | None:
    """Write the tables (and plots) of every run under `directory`; None when it holds no run."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"no such directory: {directory}")
    rows, curves = collect(directory)
    unfinished = unfinished_jobs(directory)
    if not rows and not unfinished:
        return None
    groups = pool(rows)
    write_csv(directory / "runs.csv", COLUMNS, rows + [{k: u[k] for k in ("run", "status", "label", "game")}
                                                        for u in unfinished])
    write_csv(directory / "results.csv", GROUP_COLUMNS, groups)
    table = markdown(groups, unfinished)
    if unfinished:
        table += "\n" + unfinished_note(unfinished)
    by_nodes = node_curves(rows, curves)
    ylabel = _measure_label(rows)
    if by_nodes:
        table += f"\nMean over seeds at the last evaluation:\n\n{node_markdown(by_nodes, ylabel)}"
    atomic_write(directory / "results.md", lambda f: f.write(table.encode()))
    files = [directory / "runs.csv", directory / "results.csv", directory / "results.md"]
    by_iteration = curve_markdown(rows, groups, curves)
    if by_iteration:
        atomic_write(directory / "curves.md", lambda f: f.write(by_iteration.encode()))
        files.append(directory / "curves.md")
    if plots and groups:
        files += plot(directory, groups, curves)
        if by_nodes:
            sizes = {game: game_sequences(groups, game) for game in {g["game"] for g in groups}}
            files += plot_nodes(directory, by_nodes, ylabel=ylabel, mbb=mbb_factors(rows), sequences=sizes)
            by_cpu = node_curves(rows, curves, "cpu_seconds")
            if by_cpu:  # runs from before cpu_seconds was recorded have none
                files += plot_nodes(directory, by_cpu, "cpu_seconds", ylabel, mbb=mbb_factors(rows), sequences=sizes)
    return Aggregate(directory, rows, groups, curves, files, unfinished)


def _measure_label(rows: list[dict]) -> str:
    """The axis label of the runs' measure (`rcfr.experiments.measures.LABELS`), or all of them joined."""
    return " / ".join(LABELS[m] for m in sorted({r.get("measure") or "exploitability" for r in rows}))


def report(result: Aggregate) -> str:
    plots = [str(p) for p in result.files if p.suffix == ".png"]
    by_nodes = node_curves(result.rows, result.curves)
    extra = f"\n{node_markdown(by_nodes, _measure_label(result.rows))}" if by_nodes else ""
    missing = f"\n{unfinished_note(result.unfinished)}" if result.unfinished else ""
    return (f"\n{markdown(result.groups, result.unfinished)}{extra}{missing}\n{len(result.rows)} runs "
            f"({len(result.groups)} configurations) in {result.directory}\n"
            f"table: {result.directory / 'results.csv'}\nplots: {', '.join(plots)}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rcfr-aggregate", description=__doc__.split("\n")[0])
    parser.add_argument("directory", help="a multirun (sweep) directory, or any directory holding runs")
    parser.add_argument("--no-plots", action="store_true", help="write the tables only")
    args = parser.parse_args(argv)
    try:
        result = aggregate(args.directory, plots=not args.no_plots)
    except FileNotFoundError as err:
        print(err, file=sys.stderr)
        return 2
    if result is None:
        print(f"no runs (summary.json) under {args.directory}", file=sys.stderr)
        return 1
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
