"""The sweep's tables: CSV files and Markdown (results.md, curves.md, the node-budget table)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from rcfr.files import atomic_write

from .display import cell, fmt
from .measures import LABELS
from .pooling import budgeted, curve_rows, mean_curve


def markdown(groups: list[dict], unfinished: list[dict] = ()) -> str:
    head = ["label", "game", "size", "% of game", "iterations", "exploitability (chips)", "95% CI (chips)",
            "mbb/g", "seconds", "CPU seconds", "peak MiB", "seeds", "status"]
    measured = any(g.get("measure", "exploitability") != "exploitability" for g in groups)
    head += ["measure", "value (chips)", "95% CI"] if measured else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in groups:
        ci = g["exploitability_ci95"]
        cells = [g["label"], g["game"], fmt(g["representation_size"]), fmt(g["representation_pct"], 3),
                 fmt(g["iteration"]), fmt(g["exploitability"]), "-" if ci is None else f"± {ci:.2g}",
                 fmt(g["exploitability_mbb"]), fmt(g["seconds"], 3), fmt(g.get("cpu_seconds"), 3),
                 fmt(g.get("peak_rss_mib"), 4), g["seeds"], g["status"]]
        if measured:
            half = g.get("measure_value_ci95")
            cells += [g["measure"], fmt(g["measure_value"]), "-" if half is None else f"± {half:.2g}"]
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    for u in unfinished:  # no numbers: say which job, so it is not mistaken for a smaller sweep
        cells = [u["label"] or f"job {u['run']}", u["game"] or u["overrides"] or "-"] + ["-"] * (len(head) - 4) \
            + ["-", u["status"]]
        lines.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, lambda f: f.write(text.getvalue().encode()))


def node_markdown(table: dict[tuple[str, str], list[tuple]], ylabel: str = LABELS["exploitability"]) -> str:
    head = ["game", "label", "seeds", "nodes touched", ylabel, "95% CI"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (game, label), points in table.items():
        nodes, mean, half, seeds = points[-1]
        half = 0.0 if half <= 1e-9 * mean else half  # interpolation round-off between identical seeds
        lines.append(f"| {game} | {cell(label)} | {seeds} | {nodes:.3g} | {mean:.4g} | ±{half:.2g} |")
    return "\n".join(lines) + "\n"


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


def row_title(key: tuple[str, str]) -> str:
    return key[1] or key[0]


def curve_markdown(rows: list[dict], groups: list[dict], curves: dict[str, list[dict]]) -> str:
    """Per row of `curve_rows`, the mean over seeds of each configuration's measure (chips) at each
    evaluation iteration all its seeds share (runs with a node budget evaluate at node counts: left out)."""
    budget = {r["run"] for r in rows if budgeted(r)}
    out = []
    for key, members in curve_rows(groups).items():
        table = {}
        for name, g in members:
            runs = [curves.get(r) for r in g["runs"].split()]
            if not all(runs) or budget & set(g["runs"].split()):
                continue
            measure = g.get("measure") or "exploitability"
            iterations, _, mean, _ = mean_curve(runs, measure, interpolate=False)
            table[name] = (measure, dict(zip(iterations.tolist(), mean.tolist())), g["seeds"])
        if not table:
            continue
        marks = sorted({i for _, values, _ in table.values() for i in values})
        lines = [f"{row_title(key)}: {', '.join(sorted({LABELS[m] for m, _, _ in table.values()}))}, mean over seeds",
                 "", "| curve | seeds | " + " | ".join(f"T = {int(m):,}" for m in marks) + " |",
                 "|---" * (len(marks) + 2) + "|"]
        for name, (_, values, seeds) in table.items():
            lines.append(f"| {cell(name)} | {seeds} | " + " | ".join(fmt(values.get(m), 5) for m in marks) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out) + ("\n" if out else "")
