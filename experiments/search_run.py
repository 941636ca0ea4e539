"""The search app: ``rcfr-search +experiment=<preset>`` runs one study of
Lanctot's thesis, chapters 6-7 (see docs/search.md), into its run directory: rows as JSON, a
markdown table, and the figure.

Studies: ``estimators`` (Figs 6.2-6.4), ``tournament`` (Table 6.1), ``variance`` (Figs 7.1-7.2),
``performance`` (Fig 7.3, Pig, Can't Stop and Dominion).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List

import hydra
import matplotlib
from hydra.core.config_store import ConfigStore
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError

from rcfr import configs
from rcfr.files import atomic_write
from rcfr.registry import check_choice
from rcfr.search import load_search_game, make_searcher, studies

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import ScalarFormatter  # noqa: E402

log = logging.getLogger("rcfr.experiments.search")
CONFIG_DIR = str(configs.SEARCH_CONFIG_DIR)
STUDIES = ("estimators", "tournament", "variance", "performance")
SOLITAIRES = ("pig_solitaire", "cantstop_solitaire", "dominion_solitaire")


@dataclass
class EstimatorsConfig:
    goal: int = 100
    games: int = 3
    samples: int = 30
    max_turns: int = 40
    algorithms: Dict[str, Any] = field(default_factory=dict)   # label -> {name, options}


@dataclass
class TournamentConfig:
    pairs: int = 10
    # game label -> {name, params, players: {label: {name, options}}, pairings: [[p1, p2], ...]}
    games: Dict[str, Any] = field(default_factory=dict)


@dataclass
class VarianceConfig:
    methods: List[str] = field(default_factory=lambda: list(studies.VARIANCE_METHODS))
    simulations: List[int] = field(default_factory=lambda: [16, 32, 64, 128, 256, 512])
    runs: int = 100
    games: int = 100          # the performance study: games per point
    game: str = "pig_solitaire"   # the variance study: pig_solitaire only
    params: Dict[str, Any] = field(default_factory=dict)   # the game's parameters (its defaults if empty)
    c: float = 100.0


@dataclass
class SearchConfig:
    study: str = "estimators"
    seed: int = 0
    estimators: EstimatorsConfig = field(default_factory=EstimatorsConfig)
    tournament: TournamentConfig = field(default_factory=TournamentConfig)
    variance: VarianceConfig = field(default_factory=VarianceConfig)


ConfigStore.instance().store(name="search_schema", node=SearchConfig)


def typed(cfg: DictConfig) -> SearchConfig:
    """The composed config as a `SearchConfig`; a key the schema lacks (even one added with ``+``)
    fails here, before any work."""
    merged = OmegaConf.merge(OmegaConf.structured(SearchConfig), OmegaConf.to_container(cfg))
    return OmegaConf.to_object(merged)


def validate(cfg) -> None:
    """Every name and option checked before any work."""
    check_choice("study", cfg.study, STUDIES)
    if cfg.study == "estimators":
        game = load_search_game("pig", goal=cfg.estimators.goal)
        for spec in cfg.estimators.algorithms.values():
            make_searcher(spec["name"], game, **spec.get("options", {}))
    elif cfg.study == "tournament":
        for label, spec in cfg.tournament.games.items():
            game = load_search_game(spec["name"], **spec.get("params", {}))
            for player in spec["players"].values():
                make_searcher(player["name"], game, **player.get("options", {}))
            for pair in spec["pairings"]:
                for p in pair:
                    check_choice(f"player in {label} pairings", p, spec["players"])
    else:
        for m in cfg.variance.methods:
            check_choice("variance method", m, studies.VARIANCE_METHODS)
        solitaires = ("pig_solitaire",) if cfg.study == "variance" else SOLITAIRES
        check_choice(f"{cfg.study} game", cfg.variance.game, solitaires)
        game = load_search_game(cfg.variance.game, **cfg.variance.params)
        for m in cfg.variance.methods:     # e.g. antithetic variates on a game without a pairing (Dominion)
            make_searcher("mcts", game, simulations=1, **studies.VARIANCE_METHODS[m])


def run(cfg, out: Path, plots: bool = True) -> list[dict]:
    validate(cfg)
    progress = lambda row: log.info("%s", row)  # noqa: E731
    if cfg.study == "estimators":
        e = cfg.estimators
        rows = studies.estimator_quality(e.algorithms, goal=e.goal, games=e.games, samples=e.samples,
                                         max_turns=e.max_turns, seed=cfg.seed, progress=progress)
        if plots:
            plot_estimators(rows, out, e.goal)
    elif cfg.study == "tournament":
        rows = []
        for spec in cfg.tournament.games.values():
            game = load_search_game(spec["name"], **spec.get("params", {}))
            rows += studies.tournament(game, [tuple(p) for p in spec["pairings"]], spec["players"],
                                       pairs=cfg.tournament.pairs, seed=cfg.seed, progress=progress)
    else:
        v = cfg.variance
        methods = {m: studies.VARIANCE_METHODS[m] for m in v.methods}
        if cfg.study == "variance":
            rows = studies.root_variance(methods, list(v.simulations), runs=v.runs, **v.params,
                                         c=v.c, seed=cfg.seed, progress=progress)
            if plots:
                plot_variance(rows, out, game_words(v.game, v.params))
        else:
            def checkpoint(rows):
                log.info("%d games: %s", rows[0]["games"], rows)
                write_results(out, rows)
            rows = studies.solitaire_performance(methods, list(v.simulations), games=v.games, game=v.game,
                                                 params=v.params, c=v.c, seed=cfg.seed, checkpoint=checkpoint)
            if plots:
                plot_performance(rows, out, v.game, game_words(v.game, v.params))
    write_results(out, rows)
    return rows


def write_results(out: Path, rows: list[dict]) -> None:
    atomic_write(out / "results.json", lambda f: f.write(json.dumps(rows, indent=1).encode()))
    atomic_write(out / "results.md", lambda f: f.write(markdown(rows).encode()))


def markdown(rows: list[dict]) -> str:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(r.get(k, "")) for k in keys) + " |" for r in rows]
    return "\n".join(lines) + "\n"


#: the search games' registry names in words, for plot titles
GAME_WORDS = {"pig": "Pig", "pig_solitaire": "solitaire Pig", "einstein": "EinStein Würfelt Nicht!",
              "cantstop": "Can't Stop", "cantstop_solitaire": "solitaire Can't Stop"}


def game_words(name: str, params=None) -> str:
    """ "solitaire Pig (turns=10, cap=200)" for a plot title."""
    params = ", ".join(f"{k}={v}" for k, v in dict(params or {}).items())
    return GAME_WORDS.get(name, name) + (f" ({params})" if params else "")


def summary(rows: list[dict]) -> str:
    """The console's short table: the study's main number per method (rows) and budget (columns);
    every row is in results.md / results.json."""
    if rows and {"method", "simulations"} <= set(rows[0]):
        if "variance" in rows[0]:
            picked, title = [r for r in rows if r["quantity"] == "difference"], \
                f"variance of the roll - stop estimate over {rows[0]['runs']} searches, by simulations"
            key = "variance"
        else:
            picked, title, key = rows, "mean final score (95% CI half-width), by simulations per move", "mean_score"
        budgets = sorted({r["simulations"] for r in picked})
        lines = [title, "", "| method | " + " | ".join(map(str, budgets)) + " |", "|---" * (len(budgets) + 1) + "|"]
        for method in dict.fromkeys(r["method"] for r in picked):
            at = {r["simulations"]: r for r in picked if r["method"] == method}
            cells = [f"{at[b][key]:.4g}" + (f" ± {at[b][key + '_ci95']:.2g}" if key + "_ci95" in at[b] else "")
                     if b in at else "-" for b in budgets]
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"
    return markdown(rows) if len(rows) <= 20 else markdown(rows[:20]) + f"... and {len(rows) - 20} more rows\n"


def _log2_x(ax) -> None:
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(ScalarFormatter())


def _save(fig, out: Path, name: str) -> None:
    fig.tight_layout()
    atomic_write(out / f"{name}.png", lambda f: fig.savefig(f, format="png", dpi=110))
    plt.close(fig)


def plot_estimators(rows, out, goal: int = 100):
    """Figs 6.2-6.4: per game, MSE, variance, regret and bias of each algorithm against the turn."""
    for g in sorted({r["game"] for r in rows}):
        fig, axes = plt.subplots(2, 2, figsize=(11, 7))
        for ax, key, title in zip(axes.flat, ("mse", "variance", "regret", "bias"),
                                  ("MSE of returned value", "Variance of returned value",
                                   "Regret of returned move", "Bias of returned value")):
            for label in dict.fromkeys(r["algorithm"] for r in rows):
                pts = [(r["turn"], r[key]) for r in rows if r["game"] == g and r["algorithm"] == label]
                ax.plot(*zip(*pts), marker="o", ms=3, label=label)
            ax.set(title=f"Pig (goal {goal}), game #{g}: {title}", xlabel="turn",
                   ylabel="regret (points)" if key == "regret" else "points" if key == "bias" else "points²")
            if key in ("mse", "variance"):   # sparse widths of 2 dwarf the rest on a linear scale
                ax.set_yscale("symlog", linthresh=1.0)
            ax.grid(alpha=0.3)
        axes[0, 0].legend()
        _save(fig, out, f"pig_game{g}")


def plot_variance(rows, out, game: str = "solitaire Pig"):
    """Fig 7.1 (UCT: bias^2, variance, MSE of the roll estimate and of the roll-stop difference) and
    Fig 7.2 (variance of the difference per method, log-log)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    names = {"mse": "mean squared error", "bias2": "squared bias", "variance": "variance"}
    for ax, quantity in zip(axes, ("roll", "difference")):
        pts = [r for r in rows if r["method"] == "UCT" and r["quantity"] == quantity]
        for key, marker, style in zip(("mse", "bias2", "variance"), "os^", ("-", "--", ":")):
            ax.plot([r["simulations"] for r in pts], [r[key] for r in pts], marker=marker, mfc="none",
                    linestyle=style, label=names[key])
        what = "roll value" if quantity == "roll" else "roll - stop difference"
        ax.set(yscale="log", xlabel="simulations per search", ylabel="points²", title=f"{what} estimate")
        _log2_x(ax)
        ax.legend()
        ax.grid(alpha=0.3)
    fig.suptitle(f"{game}: error of UCT's estimates at the first decision "
                 f"({rows[0]['runs'] if rows else 0} searches per budget)", fontsize=10)
    _save(fig, out, "fig7_1")
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for i, method in enumerate(dict.fromkeys(r["method"] for r in rows)):
        pts = [r for r in rows if r["method"] == method and r["quantity"] == "difference"]
        ax.plot([r["simulations"] for r in pts], [r["variance"] for r in pts], marker="osD^v<>"[i % 7], mfc="none",
                label=method)
    ax.set(yscale="log", xlabel="simulations per search", ylabel="variance of the roll - stop estimate (points²)",
           title=f"{game}: variance reduction in UCT")
    _log2_x(ax)
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    _save(fig, out, "fig7_2")


def plot_performance(rows, out, game, title: str | None = None):
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for i, method in enumerate(dict.fromkeys(r["method"] for r in rows)):
        pts = [r for r in rows if r["method"] == method]
        ax.errorbar([r["simulations"] for r in pts], [r["mean_score"] for r in pts],
                    yerr=[r["mean_score_ci95"] for r in pts], marker="osD^v<>"[i % 7], mfc="none", capsize=3,
                    label=method)
    ax.set(xlabel="simulations per move", ylabel="mean final score (points; 95% CI)",
           title=f"{title or game}: UCT with variance reduction")
    _log2_x(ax)
    ax.legend()
    ax.grid(alpha=0.3)
    _save(fig, out, f"fig7_3_{game}")


@hydra.main(version_base="1.3", config_path="pkg://rcfr.configs.search", config_name="config")
def main(cfg: DictConfig) -> None:
    out = Path(HydraConfig.get().runtime.output_dir)
    try:
        rows = run(typed(cfg), out)
    except (ValueError, ConfigKeyError) as err:
        raise SystemExit(f"config error: {err}") from None
    print(summary(rows))
    plots = sorted(str(p) for p in out.glob("*.png"))
    print(f"all {len(rows)} rows: {out / 'results.md'}" + (f"\nplots: {', '.join(plots)}" if plots else ""))


if __name__ == "__main__":
    main()
