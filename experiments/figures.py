"""The sweep's plots: exploitability against size, iterations, seconds, nodes touched and CPU seconds."""

from __future__ import annotations

import io
from collections import defaultdict
from pathlib import Path

import numpy as np

from rcfr.files import atomic_write

from .display import GAME_WORDS, fmt, game_title, is_poker, label_words, split_label
from .measures import LABELS
from .pooling import curve_rows, game_sequences, mean_curve, plotted

PLOT_NAMES = ("exploitability_vs_size", "exploitability_vs_state_bytes", "convergence", "exploitability_vs_nodes",
              "exploitability_vs_cpu_seconds")


#: the x axes of the per-evaluation curve plots of budgeted runs: metrics column -> axis label
CURVE_AXES = {"nodes_touched": "nodes touched",
              "cpu_seconds": "solve CPU seconds (process; compilation and evaluation excluded)"}


MARKERS = "osD^v<>ph*XP8dH"


LINESTYLES = ("-", "--", ":")


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
                        label=label_words(name), **style(curves.index(name)))
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
    files = save_figure(fig, directory, "exploitability_vs_nodes" if axis == "nodes_touched" else f"exploitability_vs_{axis}")
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


def save_figure(fig, directory: Path, name: str) -> list[Path]:
    paths = []
    for ext in ("png", "svg"):
        path = directory / f"{name}.{ext}"
        buffer = io.BytesIO()
        fig.savefig(buffer, format=ext, dpi=120, bbox_inches="tight")
        atomic_write(path, lambda f: f.write(buffer.getvalue()))
        paths.append(path)
    return paths


def style(i: int) -> dict:
    """Curve `i` of a panel: its own colour (tab10's ten, then their light shades with a dashed line) and
    its own hollow marker, so that no two of up to 15 curves look alike and points on top of each
    other stay visible."""
    import matplotlib.pyplot as plt
    colour = plt.cm.tab10(i % 10) if (i // 10) % 2 == 0 else plt.cm.tab20(2 * (i % 10) + 1)
    return {"color": colour, "marker": MARKERS[i % len(MARKERS)], "mfc": "none",
            "linestyle": LINESTYLES[(i // 10) % len(LINESTYLES)]}


def _draw_finals(ax, by_label: dict, column: str, x: str, floor: float) -> None:
    """One line per label through its configurations' final means at x, with their 95% intervals."""
    for i, (label, points) in enumerate(sorted(by_label.items())):
        points.sort(key=lambda g: g[x])
        seeds = max(g["seeds"] for g in points)
        ax.errorbar([g[x] for g in points], [g[column] for g in points],
                    yerr=log_errors([g[column] for g in points], [g[f"{column}_ci95"] or 0.0 for g in points], floor),
                    capsize=3, markersize=7, **style(i),
                    label=label_words(label) if seeds == 1 else f"{label_words(label)} (n={seeds})")


def _plot_sizes(directory: Path, games: list[str], done: list[dict], groups: list[dict],
                x: str = "representation_pct") -> list[Path]:
    """Final exploitability against representation size (% of the game's sequences, linear and log x) or
    against the bytes a solver keeps between iterations (``x="state_bytes"``, log x), one row per game."""
    import matplotlib.pyplot as plt

    scales = ("linear", "log") if x == "representation_pct" else ("log",)
    fig, axes = plt.subplots(len(games), len(scales), figsize=(5.5 * len(scales) + (0 if len(scales) > 1 else 2),
                                                             4 * len(games)), squeeze=False, layout="constrained")
    for row, game in enumerate(games):
        column, unit = ("exploitability_mbb", "exploitability (mbb/g)") if is_poker(game) \
            else ("exploitability", "exploitability (chips)")
        points_all = [g for g in done if g["game"] == game and g.get(x) is not None]
        by_label = defaultdict(list)
        for g in points_all:
            by_label[g["label"]].append(g)
        floor = log_floor([g[column] for g in points_all])
        for ax, scale in zip(axes[row], scales):
            _draw_finals(ax, by_label, column, x, floor)
            ax.set_xscale(scale)
            ax.set_yscale("log")
            ax.set_xlabel(f"representation size (% of the game's {game_sequences(groups, game) or 0:,.0f} sequences)"
                          if x == "representation_pct" else "bytes kept between iterations (solver.state_bytes())")
            ax.set_ylabel(unit)
            iterations = sorted({g["iteration"] for g in points_all})
            after = f" after {iterations[0]:,} iterations" if len(iterations) == 1 else ""
            ax.set_title(f"{game_title(game, game_sequences(groups, game))}\nfinal exploitability{after} "
                         f"({scale} x axis)", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
        if by_label:
            axes[row][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
    files = save_figure(fig, directory, "exploitability_vs_size" if x == "representation_pct"
                        else "exploitability_vs_state_bytes")
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
    held = {g.get("state_bytes") for g in done} - {None}
    if len(held) > 1:
        files += _plot_sizes(directory, games, done, groups, "state_bytes")

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
            mean = mean_curve(runs, plotted(g)[0])
            if mean is not None:
                shown.append((label_words(name), g))
                means.append(mean)
            else:  # seeds that share no range of iterations: one curve per seed, none dropped
                for run, curve in zip(g["runs"].split(), runs):
                    shown.append((f"{label_words(name)} [{run}]", {**g, "seeds": 1}))
                    means.append(mean_curve([curve], plotted(g)[0]))
        # on a log axis a 95% band reaching zero or below is drawn down to half the lowest mean instead
        floor = 0.5 * min((float(np.min(m[2][m[2] > 0])) for m in means if np.any(m[2] > 0)), default=1e-12)
        for i, ((name, g), (iterations, seconds, mbb, half)) in enumerate(zip(shown, means)):
            if len(sizes_per_label[(g["game"], g["label"])]) > 1:
                name += f" ({fmt(g['representation_pct'], 3)}%)"
            if g["seeds"] > 1:
                name += f" (mean of {g['seeds']} seeds)"
            if name in names:  # the same label and size in two configurations: say which runs
                name += f" [{g['runs'].split()[0]}]"
            names.add(name)
            for ax, xs in zip(axes[row], (iterations, seconds)):
                ax.plot(xs, mbb, markersize=4, label=name, **style(i))
                if g["seeds"] > 1:
                    ax.fill_between(xs, np.maximum(mbb - half, floor), mbb + half, color=style(i)["color"],
                                    alpha=0.15, linewidth=0)
        ylabel = " / ".join(sorted({plotted(g)[1] for _, g in members}))
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
    files += save_figure(fig, directory, "convergence")
    plt.close(fig)
    return files
