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

import textwrap

import argparse
import csv
import io
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rcfr.files import atomic_write
from rcfr.stats import ci95

from .measures import LABELS
from .memory import MEMORY

COLUMNS = ["label", "game", "solver", "regressor", "features", "abstraction", "seed", "status", "iteration",
           "representation_size", "representation_pct", "exploitability", "exploitability_mbb", "seconds",
           "cpu_seconds", "compile_seconds", *MEMORY, "nodes_touched", "config_hash", "max_nodes_touched", "measure",
           "measure_value", "run"]
#: per-configuration columns: the numbers are means over the pooled seeds, ``*_ci95`` half-widths
GROUP_COLUMNS = ["label", "game", "solver", "regressor", "features", "abstraction", "seeds", "status", "iteration",
                 "representation_size", "representation_pct", "exploitability", "exploitability_ci95",
                 "exploitability_mbb", "exploitability_mbb_ci95", "seconds", "cpu_seconds", "compile_seconds",
                 *MEMORY, "nodes_touched", "measure", "measure_value", "measure_value_ci95", "runs"]
POOLED = ["representation_size", "representation_pct", "exploitability", "exploitability_mbb", "seconds",
          "cpu_seconds", "compile_seconds", *MEMORY, "nodes_touched", "measure_value"]
PLOT_NAMES = ("exploitability_vs_size", "convergence", "exploitability_vs_nodes", "exploitability_vs_cpu_seconds")
#: the x axes of the per-evaluation curve plots of budgeted runs: metrics column -> axis label
CURVE_AXES = {"nodes_touched": "nodes touched",
              "cpu_seconds": "solve CPU seconds (process; compilation and evaluation excluded)"}
MARKERS = "osD^v<>ph*XP8dH"
LINESTYLES = ("-", "--", ":")
#: words for the games' registry names in plot titles (`game_title`)
GAME_WORDS = {"kuhn": "Kuhn poker", "leduc": "Leduc hold'em", "ocp": "one-card poker", "nlocp": "no-limit one-card poker",
              "nlocp_wagers": "no-limit one-card poker, abstract wagers", "liars_dice": "Liar's Dice (Bluff)",
              "goofspiel": "Goofspiel", "dieroll": "Die-Roll Poker", "pam": "Princess and Monster",
              "latent_ttt": "Latent Tic-Tac-Toe", "openspiel": "OpenSpiel"}
#: games whose exploitability is plotted in mbb/g (milli-big-blinds per game); the others in chips
POKER = {"kuhn", "leduc", "ocp", "nlocp", "nlocp_wagers"}
#: the kit's short method labels (`rcfr.experiments.arms`) in words, for legends
LABEL_WORDS = {"BF": "RCFR (best-first tree)", "BF+": "RCFR+ (best-first tree)",
               "BF_BS": "RCFR (best-first tree, bootstrapped targets)",
               "BF+_BS": "RCFR+ (best-first tree, bootstrapped targets)"}
#: in a label, what comes before it names the panel of the nodes-touched plot (`split_label`)
PANEL_SEPARATOR = " | "


@dataclass
class Aggregate:
    directory: Path
    rows: list[dict]  # one per run
    groups: list[dict]  # one per configuration, seeds pooled
    curves: dict[str, list[dict]]  # run -> metrics rows
    files: list[Path]
    unfinished: list[dict] = field(default_factory=list)  # jobs without results: status "failed" or "missing"


def find_runs(directory: Path) -> list[Path]:
    return sorted((p.parent for p in directory.rglob("summary.json") if ".hydra" not in p.parts),
                  key=lambda p: [(0, int(s), "") if s.isdigit() else (1, 0, s) for s in p.relative_to(directory).parts])


def _read_metrics(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open() as f:
        return [{k: float(v) if v else None for k, v in row.items()} for row in csv.DictReader(f)]


def collect(directory: Path) -> tuple[list[dict], dict[str, list[dict]]]:
    rows, curves = [], {}
    for run in find_runs(directory):
        summary = json.loads((run / "summary.json").read_text())
        name = str(run.relative_to(directory)) or "."
        rows.append({**{k: summary.get(k) for k in COLUMNS}, "run": name})
        rows[-1]["measure"] = rows[-1]["measure"] or "exploitability"  # runs from before run.measure
        if rows[-1]["measure_value"] is None:
            rows[-1]["measure_value"] = summary.get(rows[-1]["measure"])
        curves[name] = _read_metrics(run / "metrics.csv")
    rows.sort(key=lambda r: (r["game"], r["label"], r["representation_size"] or 0, r["seed"] or 0))
    return rows, curves


def _job_overrides(job: Path) -> list[str]:
    from omegaconf import OmegaConf
    try:
        return [str(o) for o in OmegaConf.load(job / ".hydra" / "overrides.yaml")]
    except Exception:  # noqa: BLE001  (a damaged or half-written file: the job is listed all the same)
        return []


def _job_label(job: Path) -> tuple[str | None, str | None]:
    """(label, game) of a job that left no summary, read from the config Hydra saved for it."""
    from omegaconf import OmegaConf
    try:
        cfg = OmegaConf.to_container(OmegaConf.load(job / ".hydra" / "config.yaml"), resolve=False)
        game = cfg["game"]
        params = ", ".join(f"{k}={v!r}" for k, v in (game.get("params") or {}).items())
        if cfg.get("label"):
            return str(cfg["label"]), f"{game['name']}({params})"
        parts = [cfg["solver"]["name"]] + [cfg[c]["name"] for c in ("regressor", "features", "abstraction")
                                           if cfg.get(c, {}).get("name", "none") != "none"]
        return " ".join(parts), f"{game['name']}({params})"
    except Exception:  # noqa: BLE001
        return None, None


def expected_jobs(directory: Path) -> list[list[str]] | None:
    """The override lists of the jobs in the sweep's ``multirun.yaml``, expanded as Hydra's basic
    sweeper does; None without that file, for another sweeper, or for a sweep this cannot expand (glob)."""
    path = directory / "multirun.yaml"
    if not path.exists():
        return None
    from omegaconf import OmegaConf
    try:
        from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
        from hydra.core.override_parser.overrides_parser import OverridesParser

        config = OmegaConf.load(path)
        if "BasicSweeper" not in str(config.hydra.sweeper.get("_target_", "")):
            return None
        params = config.hydra.sweeper.get("params") or {}
        arguments = [f"{k}={v}" for k, v in params.items()] + list(config.hydra.overrides.task)
        batches = BasicSweeper.split_arguments(OverridesParser.create().parse_overrides(arguments), None)
        return [job for batch in batches for job in batch]
    except Exception:  # noqa: BLE001
        return None


def unfinished_jobs(directory: Path) -> list[dict]:
    """Jobs under `directory` with no results: "failed" ones (a job directory, no summary.json) and
    "missing" ones (named by multirun.yaml, no directory), each with its label, game and overrides."""
    out = []
    for hydra_dir in sorted(directory.rglob(".hydra")):
        job = hydra_dir.parent
        if (hydra_dir / "overrides.yaml").exists() and not (job / "summary.json").exists():
            label, game = _job_label(job)
            out.append({"run": str(job.relative_to(directory)) or ".", "status": "failed", "label": label,
                        "game": game, "overrides": " ".join(_job_overrides(job))})
    jobs = expected_jobs(directory)
    if jobs is not None:
        for number, overrides in enumerate(jobs):
            if not (directory / str(number)).exists():
                out.append({"run": str(number), "status": "missing", "label": None, "game": None,
                            "overrides": " ".join(overrides)})
    out.sort(key=lambda u: (int(u["run"]) if u["run"].isdigit() else 10 ** 9, u["run"]))
    return out


def unfinished_note(unfinished: list[dict]) -> str:
    """One line per job without results, under a count, for results.md and the console."""
    if not unfinished:
        return ""
    counts = ", ".join(f"{sum(u['status'] == s for u in unfinished)} {s}" for s in ("failed", "missing")
                       if any(u["status"] == s for u in unfinished))
    lines = [f"**{len(unfinished)} job(s) without results ({counts})**: the table lists them without numbers; "
             "a failed job's log is in its directory.", ""]
    lines += [f"- {u['status']}: job {u['run']} `{u['overrides'] or '(no overrides)'}`" for u in unfinished]
    return "\n".join(lines) + "\n"


def pool(rows: list[dict]) -> list[dict]:
    """One row per configuration: runs that differ only in their seed, at the same iteration and
    status (complete runs on a node budget at any iteration), pooled into means, 95% half-widths and the
    seed count."""
    members = defaultdict(list)
    for r in rows:  # runs on a node budget stop at different iterations: their seeds pool all the same
        stop = None if r.get("max_nodes_touched") and r["status"] == "complete" else r["iteration"]
        members[(r["game"], r["label"], r["config_hash"] or r["run"], r["status"], stop)].append(r)
    groups = []
    for runs in members.values():
        first = runs[0]
        group = {k: first[k] for k in GROUP_COLUMNS if k in first}
        group.update(seeds=len(runs), runs=" ".join(r["run"] for r in runs))
        if len({r["iteration"] for r in runs}) > 1:  # a node budget: the mean iteration
            group["iteration"] = round(float(np.mean([r["iteration"] for r in runs])))
        for key in POOLED:
            values = [r[key] for r in runs if r[key] is not None]
            group[key] = float(np.mean(values)) if len(values) == len(runs) else None
        for key in ("exploitability", "exploitability_mbb", "measure_value"):
            group[f"{key}_ci95"] = ci95([r[key] for r in runs]) if group[key] is not None else None
        groups.append(group)
    groups.sort(key=lambda g: (g["game"], g["label"], g["representation_size"] or 0, g["iteration"] or 0))
    return groups


def _fmt(value, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def markdown(groups: list[dict], unfinished: list[dict] = ()) -> str:
    head = ["label", "game", "size", "% of game", "iterations", "exploitability (chips)", "95% CI (chips)",
            "mbb/g", "seconds", "CPU seconds", "peak MiB", "seeds", "status"]
    measured = any(g.get("measure", "exploitability") != "exploitability" for g in groups)
    head += ["measure", "value (chips)", "95% CI"] if measured else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in groups:
        ci = g["exploitability_ci95"]
        cells = [g["label"], g["game"], _fmt(g["representation_size"]), _fmt(g["representation_pct"], 3),
                 _fmt(g["iteration"]), _fmt(g["exploitability"]), "-" if ci is None else f"± {ci:.2g}",
                 _fmt(g["exploitability_mbb"]), _fmt(g["seconds"], 3), _fmt(g.get("cpu_seconds"), 3),
                 _fmt(g.get("peak_rss_mib"), 4), g["seeds"], g["status"]]
        if measured:
            half = g.get("measure_value_ci95")
            cells += [g["measure"], _fmt(g["measure_value"]), "-" if half is None else f"± {half:.2g}"]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    for u in unfinished:  # no numbers: say which job, so it is not mistaken for a smaller sweep
        cells = [u["label"] or f"job {u['run']}", u["game"] or u["overrides"] or "-"] + ["-"] * (len(head) - 4) \
            + ["-", u["status"]]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(value) -> str:
    """A Markdown table cell (a label's panel separator " | " must not split it)."""
    return str(value).replace("|", "\\|")


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, lambda f: f.write(text.getvalue().encode()))


def mean_ci(values) -> tuple[float, float]:
    """Mean and 95% CI half-width (0 for a single value)."""
    return float(np.mean(values)), ci95(values) or 0.0


def node_curves(rows: list[dict], curves: dict[str, list[dict]],
                x: str = "nodes_touched") -> dict[tuple[str, str], list[tuple]]:
    """(game, label) -> per point: (nodes touched, mean measure, CI half-width, seeds) over the
    runs (seeds) of that label that ran on a node budget (``run.max_nodes_touched``). Seeds evaluate at slightly different
    node counts, so each curve is interpolated (log-log) at the first seed's evaluation points that
    every seed covers, and at the end of the shortest. A label with several configurations (e.g. model
    sizes) gets a curve per configuration, "<label> (<mean % of game>%)". `x` is the metrics column of
    the first coordinate (`CURVE_AXES`: nodes touched, or the solve's CPU seconds)."""
    budgeted = defaultdict(list)  # (game, label) -> configuration -> runs
    for r in rows:
        if r.get("max_nodes_touched"):
            budgeted[(r["game"], r["label"])].append(r)
    runs = defaultdict(list)
    for (game, label), members in budgeted.items():
        configurations = defaultdict(list)
        for r in members:
            configurations[r["config_hash"] or r["run"]].append(r)
        for same in configurations.values():
            name = label
            if len(configurations) > 1:
                name += f" ({_fmt(float(np.mean([r['representation_pct'] or 0.0 for r in same])), 2)}%)"
            for r in same:
                curve = [c for c in curves.get(r["run"], []) if c.get(x) and c.get("nodes_touched") is not None]
                if curve:
                    runs[(game, name)].append((curve, r.get("measure") or "exploitability"))
    table = {}
    for key, group in sorted(runs.items()):
        xs = [np.log([c[x] for c in curve]) for curve, _ in group]
        ys = [np.log([c[measure] for c in curve]) for curve, measure in group]
        low, high = max(x[0] for x in xs), min(x[-1] for x in xs)
        grid = [g for g in xs[0] if low <= g < high] + [high]
        table[key] = [(float(np.exp(g)), *mean_ci([np.exp(np.interp(g, x, y)) for x, y in zip(xs, ys)]),
                       len(group)) for g in grid]
    return table


def node_markdown(table: dict[tuple[str, str], list[tuple]], ylabel: str = LABELS["exploitability"]) -> str:
    head = ["game", "label", "seeds", "nodes touched", ylabel, "95% CI"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (game, label), points in table.items():
        nodes, mean, half, seeds = points[-1]
        half = 0.0 if half <= 1e-9 * mean else half  # interpolation round-off between identical seeds
        lines.append(f"| {game} | {_cell(label)} | {seeds} | {nodes:.3g} | {mean:.4g} | ±{half:.2g} |")
    return "\n".join(lines) + "\n"


def split_label(label: str) -> tuple[str, str]:
    """(panel, curve) of a label: "OS alternating optimistic | ε=0.6" is curve "ε=0.6" of panel "OS
    alternating optimistic"; a label without `PANEL_SEPARATOR` is a curve of the game's only panel."""
    panel, _, curve = label.rpartition(PANEL_SEPARATOR)
    return panel, curve


def panel_layout(table: dict[tuple[str, str], list[tuple]]) -> tuple[int, int, dict[tuple[str, str], tuple[int, int]]]:
    """Rows, columns and the (row, column) of each (game, panel) of the nodes-touched plot: a grid of
    one panel per game when no label names a panel, else one row per game and a column per panel."""
    games = sorted({g for g, _ in table})
    panels = sorted({(g, split_label(label)[0]) for g, label in table})
    if all(panel == "" for _, panel in panels):
        cols = min(3, len(games))
        return (len(games) + cols - 1) // cols, cols, {key: divmod(i, cols) for i, key in enumerate(panels)}
    per_game = {g: [p for h, p in panels if h == g] for g in games}
    places = {(g, p): (games.index(g), per_game[g].index(p)) for g, p in panels}
    return len(games), max(len(p) for p in per_game.values()), places


def mbb_factors(rows: list[dict]) -> dict[str, float]:
    """game -> mbb/g per chip, for the poker games among `rows` measured by exploitability."""
    out = {}
    for r in rows:
        if is_poker(r["game"]) and (r.get("measure") or "exploitability") == "exploitability" \
                and r.get("exploitability") and r.get("exploitability_mbb") is not None:
            out[r["game"]] = r["exploitability_mbb"] / r["exploitability"]
    return out


def plot_nodes(directory: Path, table: dict[tuple[str, str], list[tuple]], axis: str = "nodes_touched",
               ylabel: str = LABELS["exploitability"], mbb: dict[str, float] | None = None,
               sequences: dict[str, float] | None = None) -> list[Path]:
    """The measure against nodes touched, or the `axis` of `node_curves` (`panel_layout`; the panels of a
    game share one vertical range, and a curve name keeps its colour and marker in every panel). The
    games in `mbb` (`mbb_factors`: poker) are drawn in mbb/g, as in the convergence plot; titles give each
    game's size where `sequences` knows it (`game_sequences`), as the other plots do."""
    mbb, sequences = mbb or {}, sequences or {}
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, cols, places = panel_layout(table)
    named_panels = len(places) > len({g for g, _ in table})
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False,
                             sharey="row" if named_panels else False)
    curves = sorted({split_label(label)[1] for _, label in table})
    floors = {game: log_floor([p[1] for (g, _), points in table.items() if g == game for p in points])
              for game, _ in places}
    for (game, panel), (row, col) in places.items():
        ax = axes[row][col]
        for label, points in ((lab, p) for (g, lab), p in table.items() if g == game and split_label(lab)[0] == panel):
            name = split_label(label)[1]
            x, y, half = (np.array([p[j] for p in points]) for j in range(3))
            y, half = y * mbb.get(game, 1.0), half * mbb.get(game, 1.0)
            ax.errorbar(x, y, yerr=log_errors(y, half, floors[game] * mbb.get(game, 1.0)), markersize=3, capsize=2,
                        label=label_words(name), **_style(curves.index(name)))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(CURVE_AXES[axis])
        ax.set_ylabel("exploitability (mbb/g)" if game in mbb else ylabel)
        title = game_title(game, sequences.get(game))
        ax.set_title(f"{title}\n{panel}" if panel else title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for row, col in set(np.ndindex(rows, cols)) - set(places.values()):
        axes[row][col].set_visible(False)
    fig.tight_layout()
    files = _save_figure(fig, directory, "exploitability_vs_nodes" if axis == "nodes_touched" else f"exploitability_vs_{axis}")
    plt.close(fig)
    return files


def log_floor(means) -> float:
    """Where a log axis cuts a 95% interval that reaches zero or below: half the lowest positive mean
    (as the convergence plot's bands), so that a few seeds' wide intervals do not stretch the axis over
    decades no mean comes near and flatten every curve."""
    positive = [float(m) for m in means if m and m > 0]
    return 0.5 * min(positive) if positive else 1e-12


def log_errors(y, half, floor: float) -> np.ndarray:
    """Asymmetric error bars (below, above) for a log axis: the interval's lower end cut at `floor`."""
    y, half = np.asarray(y, float), np.asarray(half, float)
    return np.vstack([y - np.maximum(y - half, np.minimum(floor, y)), half])


def _save_figure(fig, directory: Path, name: str) -> list[Path]:
    paths = []
    for ext in ("png", "svg"):
        path = directory / f"{name}.{ext}"
        buffer = io.BytesIO()
        fig.savefig(buffer, format=ext, dpi=120, bbox_inches="tight")
        atomic_write(path, lambda f: f.write(buffer.getvalue()))
        paths.append(path)
    return paths


def _style(i: int) -> dict:
    """Curve `i` of a panel: its own colour (tab10's ten, then their light shades with a dashed line) and
    its own hollow marker, so that no two of up to 15 curves look alike and points on top of each
    other stay visible."""
    import matplotlib.pyplot as plt
    colour = plt.cm.tab10(i % 10) if (i // 10) % 2 == 0 else plt.cm.tab20(2 * (i % 10) + 1)
    return {"color": colour, "marker": MARKERS[i % len(MARKERS)], "mfc": "none",
            "linestyle": LINESTYLES[(i // 10) % len(LINESTYLES)]}


def game_title(game: str, sequences: float | None = None) -> str:
    """A game's description ("leduc(merge_suits=True)") in words, with its size when known."""
    name, _, params = game.partition("(")
    params = params.rstrip(")").replace("merge_suits=True", "rank-only")
    text = GAME_WORDS.get(name, name) + (f" ({params})" if params else "")
    text = f"{text}, {sequences:,.0f} sequences" if sequences else text
    return textwrap.fill(text, 60)  # OpenSpiel descriptions run to 200 characters: wrapped, not cut


def label_words(label: str) -> str:
    """A curve label for a legend: "BF+" -> "RCFR+ (best-first tree)", "CFR+ J.Q.K" -> "CFR+ on
    abstraction J.Q.K"; other labels as they are."""
    head, _, rest = label.partition(" ")
    if head in LABEL_WORDS:
        return LABEL_WORDS[head] + (f" {rest}" if rest else "")
    if head == "CFR+" and rest and not rest.startswith(("(", "[")):
        return f"CFR+ on abstraction {rest}"
    return label


def game_sequences(groups: list[dict], game: str) -> float | None:
    """The game's sequence count, from any of its runs' size and share of the game."""
    for g in groups:
        if g["game"] == game and g["representation_size"] and g["representation_pct"]:
            return g["representation_size"] * 100.0 / g["representation_pct"]
    return None


def is_poker(game: str) -> bool:
    return game.split("(")[0] in POKER


def _log_interp(grid: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """`ys` at `grid` (both x in logs), interpolated in log y where every value is positive."""
    if np.all(ys > 0):
        return np.exp(np.interp(grid, xs, np.log(ys)))
    return np.interp(grid, xs, ys)


def _common_iterations(curves: list[list[dict]]) -> list:
    return sorted(set.intersection(*({c["iteration"] for c in curve} for curve in curves)))


def _mean_curve(curves: list[list[dict]], column: str = "exploitability_mbb",
                interpolate: bool = True) -> tuple[np.ndarray, ...] | None:
    """Iterations, mean solve seconds, mean and 95% half-width of `column` over the seeds' curves. Where
    the seeds evaluated at the same iterations, at those; where they did not (a node budget evaluates
    at node counts), each seed is interpolated in log iterations on the first seed's evaluations inside
    the range every seed covers. None when the seeds share no range (`plot` then draws each seed).
    ``interpolate=False``: only the iterations every seed has (the tables of `curve_markdown`)."""
    common = _common_iterations(curves)
    if interpolate and any(len(curve) != len(common) for curve in curves):
        xs = [np.log([max(c["iteration"], 1e-300) for c in curve]) for curve in curves]
        low, high = max(x[0] for x in xs), min(x[-1] for x in xs)
        if low > high:
            return None
        grid = np.array([g for g in xs[0] if low <= g < high] + [high])
        seconds = np.array([_log_interp(grid, x, np.array([c["seconds"] for c in curve], dtype=float))
                            for x, curve in zip(xs, curves)])
        values = np.array([_log_interp(grid, x, np.array([c[column] for c in curve], dtype=float))
                           for x, curve in zip(xs, curves)])
        half = np.array([ci95(column_) or 0.0 for column_ in values.T])
        return np.exp(grid), seconds.mean(axis=0), values.mean(axis=0), half
    at = [{c["iteration"]: c for c in curve} for curve in curves]
    seconds = np.array([[a[i]["seconds"] for a in at] for i in common]).reshape(len(common), -1)
    values = np.array([[a[i][column] for a in at] for i in common]).reshape(len(common), -1)
    half = np.array([ci95(row) or 0.0 for row in values])
    return np.array(common), seconds.mean(axis=1), values.mean(axis=1), half


def _plotted(group: dict) -> tuple[str, str]:
    """Column and axis label of a configuration's curve: exploitability in mbb/g for poker and in chips
    (the game's payoff unit) for the other games, any other measure in chips."""
    measure = group.get("measure") or "exploitability"
    if measure == "exploitability" and is_poker(group["game"]):
        return "exploitability_mbb", "exploitability (mbb/g)"
    return measure, LABELS[measure]


def curve_rows(groups: list[dict]) -> dict[tuple[str, str], list[tuple[str, dict]]]:
    """The rows of the convergence plot and of `curve_markdown`: (row title, ...) -> [(curve name,
    configuration)]. One row per game; where labels name a panel ("<panel> | <curve>"), one row per game
    family and panel, so a panel can hold one game under several parameters (Skew-DRP(δ) for each δ);
    a curve name that two games share there gets its game."""
    rows = defaultdict(list)
    for g in groups:
        panel, curve = split_label(g["label"])
        rows[(g["game"].split("(")[0], panel) if panel else (g["game"], "")].append((curve, g))
    for key, members in rows.items():
        games = defaultdict(set)
        for curve, g in members:
            games[curve].add(g["game"])
        rows[key] = [(f"{curve} ({g['game']})" if len(games[curve]) > 1 else curve, g) for curve, g in members]
    return dict(sorted(rows.items()))


def _row_title(key: tuple[str, str]) -> str:
    return key[1] or key[0]


def curve_markdown(rows: list[dict], groups: list[dict], curves: dict[str, list[dict]]) -> str:
    """Per row of `curve_rows`, the mean over seeds of each configuration's measure (chips) at each
    evaluation iteration all its seeds share (runs with a node budget evaluate at node counts: left out)."""
    budget = {r["run"] for r in rows if r.get("max_nodes_touched")}
    out = []
    for key, members in curve_rows(groups).items():
        table = {}
        for name, g in members:
            runs = [curves.get(r) for r in g["runs"].split()]
            if not all(runs) or budget & set(g["runs"].split()):
                continue
            measure = g.get("measure") or "exploitability"
            iterations, _, mean, _ = _mean_curve(runs, measure, interpolate=False)
            table[name] = (measure, dict(zip(iterations.tolist(), mean.tolist())), g["seeds"])
        if not table:
            continue
        marks = sorted({i for _, values, _ in table.values() for i in values})
        lines = [f"{_row_title(key)}: {', '.join(sorted({LABELS[m] for m, _, _ in table.values()}))}, mean over seeds",
                 "", "| curve | seeds | " + " | ".join(f"T = {int(m):,}" for m in marks) + " |",
                 "|---" * (len(marks) + 2) + "|"]
        for name, (_, values, seeds) in table.items():
            lines.append(f"| {_cell(name)} | {seeds} | " + " | ".join(_fmt(values.get(m), 5) for m in marks) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out) + ("\n" if out else "")


def _plot_sizes(directory: Path, games: list[str], done: list[dict], groups: list[dict]) -> list[Path]:
    """Final exploitability against representation size, one row per game (linear and log x)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(games), 2, figsize=(11, 4 * len(games)), squeeze=False, layout="constrained")
    for row, game in enumerate(games):
        column, unit = ("exploitability_mbb", "exploitability (mbb/g)") if is_poker(game) \
            else ("exploitability", "exploitability (chips)")
        points_all = [g for g in done if g["game"] == game]
        by_label = defaultdict(list)
        for g in done:
            if g["game"] == game:
                by_label[g["label"]].append(g)
        floor = log_floor([g[column] for g in points_all])
        for ax, scale in zip(axes[row], ("linear", "log")):
            for i, (label, points) in enumerate(sorted(by_label.items())):
                points.sort(key=lambda g: g["representation_pct"])
                seeds = max(g["seeds"] for g in points)
                ax.errorbar([g["representation_pct"] for g in points], [g[column] for g in points],
                            yerr=log_errors([g[column] for g in points], [g[f"{column}_ci95"] or 0.0 for g in points],
                                            floor), capsize=3, markersize=7,
                            **_style(i),
                            label=label_words(label) if seeds == 1 else f"{label_words(label)} (n={seeds})")
            ax.set_xscale(scale)
            ax.set_yscale("log")
            ax.set_xlabel(f"representation size (% of the game's {game_sequences(groups, game) or 0:,.0f} sequences)")
            ax.set_ylabel(unit)
            iterations = sorted({g["iteration"] for g in points_all})
            after = f" after {iterations[0]:,} iterations" if len(iterations) == 1 else ""
            ax.set_title(f"{game_title(game, game_sequences(groups, game))}\nfinal exploitability{after} "
                         f"({scale} x axis)", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        if by_label:
            axes[row][1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    files = _save_figure(fig, directory, "exploitability_vs_size")
    plt.close(fig)
    return files


def plot(directory: Path, groups: list[dict], curves: dict[str, list[dict]]) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [g for g in groups if g["status"] == "complete" and g["exploitability_mbb"] is not None
            and g["representation_pct"] is not None]  # a size-vs-exploitability plot needs both
    games = sorted({g["game"] for g in done})
    files: list[Path] = []
    sizes = {g["representation_pct"] for g in done}
    if len(sizes) > 1:  # every point at one size (a tabular sweep) says nothing against size
        files += _plot_sizes(directory, games, done, groups)

    layout = curve_rows(groups)

    fig, axes = plt.subplots(len(layout), 2, figsize=(11, 4 * len(layout)), squeeze=False, layout="constrained")
    sizes_per_label = defaultdict(set)
    for g in groups:
        sizes_per_label[(g["game"], g["label"])].add(g["representation_size"])
    for row, (key, members) in enumerate(layout.items()):
        names: set[str] = set()
        shown, means = [], []
        for name, g in members:
            runs = [curves.get(r) for r in g["runs"].split()]
            if not all(runs):
                continue
            mean = _mean_curve(runs, _plotted(g)[0])
            if mean is not None:
                shown.append((label_words(name), g))
                means.append(mean)
            else:  # seeds that share no range of iterations: one curve per seed, none dropped
                for run, curve in zip(g["runs"].split(), runs):
                    shown.append((f"{label_words(name)} [{run}]", {**g, "seeds": 1}))
                    means.append(_mean_curve([curve], _plotted(g)[0]))
        # on a log axis a 95% band reaching zero or below is drawn down to half the lowest mean instead
        floor = 0.5 * min((float(np.min(m[2][m[2] > 0])) for m in means if np.any(m[2] > 0)), default=1e-12)
        for i, ((name, g), (iterations, seconds, mbb, half)) in enumerate(zip(shown, means)):
            if len(sizes_per_label[(g["game"], g["label"])]) > 1:
                name += f" ({_fmt(g['representation_pct'], 3)}%)"
            if g["seeds"] > 1:
                name += f" (mean of {g['seeds']} seeds)"
            if name in names:  # the same label and size in two configurations: say which runs
                name += f" [{g['runs'].split()[0]}]"
            names.add(name)
            for ax, xs in zip(axes[row], (iterations, seconds)):
                ax.plot(xs, mbb, markersize=4, label=name, **_style(i))
                if g["seeds"] > 1:
                    ax.fill_between(xs, np.maximum(mbb - half, floor), mbb + half, color=_style(i)["color"],
                                    alpha=0.15, linewidth=0)
        ylabel = " / ".join(sorted({_plotted(g)[1] for _, g in members}))
        for ax, axis in zip(axes[row], ("iterations", "solve seconds (compilation and evaluation excluded)")):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(axis)
            ax.set_ylabel(ylabel)
            title = game_title(key[0], game_sequences(groups, key[0])) if not key[1] \
                else f"{GAME_WORDS.get(key[0], key[0])}: {key[1]}"
            ax.set_title(f"{title}\nconvergence", fontsize=9)  # two lines: long titles of neighbours meet
            ax.grid(True, which="both", alpha=0.3)
        if shown:
            axes[row][1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    files += _save_figure(fig, directory, "convergence")
    plt.close(fig)
    return files


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
    _write_csv(directory / "runs.csv", COLUMNS, rows + [{k: u[k] for k in ("run", "status", "label", "game")}
                                                        for u in unfinished])
    _write_csv(directory / "results.csv", GROUP_COLUMNS, groups)
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
