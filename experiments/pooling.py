"""Seeds pooled: one row per configuration, mean curves and node-budget curves with 95% intervals."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from rcfr.stats import ci95

from .display import fmt, is_poker, split_label
from .measures import LABELS
from .memory import MEMORY

#: per-configuration columns: the numbers are means over the pooled seeds, ``*_ci95`` half-widths
GROUP_COLUMNS = ["label", "game", "solver", "regressor", "features", "abstraction", "seeds", "status", "iteration",
                 "representation_size", "representation_pct", "exploitability", "exploitability_ci95",
                 "exploitability_mbb", "exploitability_mbb_ci95", "seconds", "cpu_seconds", "compile_seconds",
                 *MEMORY, "nodes_touched", "state_bytes", "measure", "measure_value", "measure_value_ci95", "runs"]


POOLED = ["representation_size", "representation_pct", "exploitability", "exploitability_mbb", "seconds",
          "cpu_seconds", "compile_seconds", *MEMORY, "nodes_touched", "state_bytes", "measure_value"]


def budgeted(row: dict) -> bool:
    """Whether the run ran on a budget (nodes touched or CPU seconds) rather than to an iteration count."""
    return bool(row.get("max_nodes_touched") or row.get("max_cpu_seconds"))


def pool(rows: list[dict]) -> list[dict]:
    """One row per configuration: runs that differ only in their seed, at the same iteration and
    status (complete runs on a budget at any iteration), pooled into means, 95% half-widths and the
    seed count."""
    members = defaultdict(list)
    for r in rows:  # runs on a budget stop at different iterations: their seeds pool all the same
        stop = None if budgeted(r) and r["status"] == "complete" else r["iteration"]
        members[(r["game"], r["label"], r["config_hash"] or r["run"], r["status"], stop)].append(r)
    groups = []
    for runs in members.values():
        first = runs[0]
        group = {k: first[k] for k in GROUP_COLUMNS if k in first}
        group.update(seeds=len(runs), runs=" ".join(r["run"] for r in runs))
        if len({r["iteration"] for r in runs}) > 1:  # a budget: the mean iteration
            group["iteration"] = round(float(np.mean([r["iteration"] for r in runs])))
        for key in POOLED:
            values = [r[key] for r in runs if r.get(key) is not None]  # runs from before a column have none
            group[key] = float(np.mean(values)) if len(values) == len(runs) else None
        for key in ("exploitability", "exploitability_mbb", "measure_value"):
            group[f"{key}_ci95"] = ci95([r[key] for r in runs]) if group[key] is not None else None
        groups.append(group)
    groups.sort(key=lambda g: (g["game"], g["label"], g["representation_size"] or 0, g["iteration"] or 0))
    return groups


def mean_ci(values) -> tuple[float, float]:
    """Mean and 95% CI half-width (0 for a single value)."""
    return float(np.mean(values)), ci95(values) or 0.0


def node_curves(rows: list[dict], curves: dict[str, list[dict]],
                x: str = "nodes_touched") -> dict[tuple[str, str], list[tuple]]:
    """(game, label) -> per point: (nodes touched, mean measure, CI half-width, seeds) over the
    runs (seeds) of that label that ran on a budget (``run.max_nodes_touched`` or ``run.max_cpu_seconds``). Seeds evaluate at slightly different
    node counts, so each curve is interpolated (log-log) at the first seed's evaluation points that
    every seed covers, and at the end of the shortest. A label with several configurations (e.g. model
    sizes) gets a curve per configuration, "<label> (<mean % of game>%)". `x` is the metrics column of
    the first coordinate (`CURVE_AXES`: nodes touched, or the solve's CPU seconds)."""
    by_label = defaultdict(list)  # (game, label) -> configuration -> runs
    for r in rows:
        if budgeted(r):
            by_label[(r["game"], r["label"])].append(r)
    runs = defaultdict(list)
    for (game, label), members in by_label.items():
        configurations = defaultdict(list)
        for r in members:
            configurations[r["config_hash"] or r["run"]].append(r)
        for same in configurations.values():
            name = label
            if len(configurations) > 1:
                name += f" ({fmt(float(np.mean([r['representation_pct'] or 0.0 for r in same])), 2)}%)"
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


def mbb_factors(rows: list[dict]) -> dict[str, float]:
    """game -> mbb/g per chip, for the poker games among `rows` measured by exploitability."""
    out = {}
    for r in rows:
        if is_poker(r["game"]) and (r.get("measure") or "exploitability") == "exploitability" \
                and r.get("exploitability") and r.get("exploitability_mbb") is not None:
            out[r["game"]] = r["exploitability_mbb"] / r["exploitability"]
    return out


def game_sequences(groups: list[dict], game: str) -> float | None:
    """The game's sequence count, from any of its runs' size and share of the game."""
    for g in groups:
        if g["game"] == game and g["representation_size"] and g["representation_pct"]:
            return g["representation_size"] * 100.0 / g["representation_pct"]
    return None


def log_interp(grid: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """`ys` at `grid` (both x in logs), interpolated in log y where every value is positive."""
    if np.all(ys > 0):
        return np.exp(np.interp(grid, xs, np.log(ys)))
    return np.interp(grid, xs, ys)


def common_iterations(curves: list[list[dict]]) -> list:
    return sorted(set.intersection(*({c["iteration"] for c in curve} for curve in curves)))


def mean_curve(curves: list[list[dict]], column: str = "exploitability_mbb",
                interpolate: bool = True) -> tuple[np.ndarray, ...] | None:
    """Iterations, mean solve seconds, mean and 95% half-width of `column` over the seeds' curves. Where
    the seeds evaluated at the same iterations, at those; where they did not (a node budget evaluates
    at node counts), each seed is interpolated in log iterations on the first seed's evaluations inside
    the range every seed covers. None when the seeds share no range (`plot` then draws each seed).
    ``interpolate=False``: only the iterations every seed has (the tables of `curve_markdown`)."""
    common = common_iterations(curves)
    if interpolate and any(len(curve) != len(common) for curve in curves):
        xs = [np.log([max(c["iteration"], 1e-300) for c in curve]) for curve in curves]
        low, high = max(x[0] for x in xs), min(x[-1] for x in xs)
        if low > high:
            return None
        grid = np.array([g for g in xs[0] if low <= g < high] + [high])
        seconds = np.array([log_interp(grid, x, np.array([c["seconds"] for c in curve], dtype=float))
                            for x, curve in zip(xs, curves)])
        values = np.array([log_interp(grid, x, np.array([c[column] for c in curve], dtype=float))
                           for x, curve in zip(xs, curves)])
        half = np.array([ci95(column_) or 0.0 for column_ in values.T])
        return np.exp(grid), seconds.mean(axis=0), values.mean(axis=0), half
    at = [{c["iteration"]: c for c in curve} for curve in curves]
    seconds = np.array([[a[i]["seconds"] for a in at] for i in common]).reshape(len(common), -1)
    values = np.array([[a[i][column] for a in at] for i in common]).reshape(len(common), -1)
    half = np.array([ci95(row) or 0.0 for row in values])
    return np.array(common), seconds.mean(axis=1), values.mean(axis=1), half


def plotted(group: dict) -> tuple[str, str]:
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
