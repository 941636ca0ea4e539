"""Train ddcfr's discount policy by evolution strategies (issue 37, item 1), and write it where rcfr ships it.

    python -m benchmarks.studies.ddcfr_train [--epochs 150] [--pairs 12] [--seed 0] [--iterations 1000]
                                             [--out rcfr/solvers/data/ddcfr_policy.json]
                                             [--curve benchmarks/results/ddcfr_train.csv]
    python -m benchmarks.studies.ddcfr_train --show "Kuhn;Leduc"   # the shipped policy's schedule on games

The training games are the DDCFR paper's (Xu et al., ICLR 2024, the authors' configs): Kuhn poker (weight 3),
Goofspiel-3, Liar's Dice 1x3 and their 5x3 "small matrix" game (a rock-paper-scissors block beside two rows
that lose 10,000 and 20,000), each run to T = `--iterations`. A policy's score on a game is the paper's
(log E_CFR - log E) / (log E_CFR - log E_DCFR), 0 at CFR's final exploitability and 1 at DCFR's (E floored
at 1e-12), weighted over the games; the objective is their weighted mean.

Evolution strategies, numpy only, one process: each epoch draws `--pairs` Gaussian directions eps (seeded
by `--seed`), evaluates the weights theta +- sigma eps (antithetic pairs) and theta itself, turns the scores
into centred rank utilities (fitness shaping), and takes an Adam ascent step on sum(u_i eps_i) / (n sigma).
Every run is deterministic: the same arguments give the same file. The file holds the best centre theta
seen (by its training score), the arguments, the seed and the training curve; the curve is also written
to `--curve` as CSV, one row per epoch. Both are written atomically (`rcfr.files`).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import time
from pathlib import Path

import numpy as np

import rcfr
from rcfr.files import atomic_write, write_json
from rcfr.games import MatrixGame
from rcfr.solvers import make_solver
from rcfr.solvers.ddcfr import POLICY_FILE, RANGES, TAUS, DiscountPolicy, log_exploitability

ROOT = Path(__file__).resolve().parents[2]
CURVE = ROOT / "benchmarks" / "results" / "ddcfr_train.csv"


def SmallMatrix() -> MatrixGame:
    """The DDCFR authors' small matrix game (their nfg/1.nfg), turn-based: player 0 picks one of five rows,
    player 1 one of three columns without seeing it; rows 0-2 are a skewed rock-paper-scissors, rows 3 and 4
    lose 10,000 and 20,000 whatever the column."""
    return MatrixGame([[0.0, -1.0, 2.0], [1.0, 0.0, -2.0], [-2.0, 2.0, 0.0], [-1e4, -1e4, -1e4],
                       [-2e4, -2e4, -2e4]])


#: label -> (loader, weight in the objective), as in the authors' training configuration
def training_games() -> dict[str, tuple]:
    spiel = lambda s: (lambda: rcfr.load_game("openspiel:" + s))  # noqa: E731
    return {"Kuhn": (spiel("kuhn_poker"), 3.0),
            "Goofspiel-3": (spiel("goofspiel(num_cards=3,imp_info=True,points_order=descending)"), 1.0),
            "Liar's Dice 1x3": (spiel("liars_dice(numdice=1,dice_sides=3)"), 1.0),
            "Small matrix": (lambda: rcfr.compile_game(SmallMatrix()), 1.0)}


def final_log_exploitability(game, name: str, iterations: int, **options) -> float:
    solver = make_solver(name, game, **options).run(iterations)
    return log_exploitability(rcfr.exploitability(game, solver.average_policy()))


def initial_vector(hidden: int, rng: np.random.Generator) -> np.ndarray:
    """Small random weights with output biases at a DCFR-like start: alpha 1.5, beta -0.5, gamma 2, tau 5."""
    policy = DiscountPolicy.from_vector(rng.normal(0.0, 0.3, DiscountPolicy.size(hidden)), hidden)
    policy.w2 *= 0.3
    for i, (name, value) in enumerate((("alpha", 1.5), ("beta", -0.5), ("gamma", 2.0))):
        low, high = RANGES[name]
        policy.b2[i] = math.atanh((value - (low + high) / 2) / ((high - low) / 2))
    policy.b2[3:] = 0.0
    policy.b2[3 + TAUS.index(5)] = 1.0
    return DiscountPolicy(policy.w1, policy.b1, policy.w2, policy.b2).vector()


class Objective:
    """The weighted mean of the paper's per-game scores of a weight vector."""

    def __init__(self, games: dict[str, tuple], iterations: int, hidden: int):
        self.iterations, self.hidden = iterations, hidden
        self.games = {label: loader() for label, (loader, _) in games.items()}
        self.weights = {label: weight for label, (_, weight) in games.items()}
        self.baselines = {label: (final_log_exploitability(g, "cfr", iterations),
                                  final_log_exploitability(g, "dcfr", iterations)) for label, g in self.games.items()}

    def __call__(self, vector: np.ndarray) -> tuple[float, dict[str, float]]:
        policy = DiscountPolicy.from_vector(vector, self.hidden)
        logs, total = {}, 0.0
        for label, game in self.games.items():
            solver = make_solver("ddcfr", game, horizon=self.iterations, policy=policy).run(self.iterations)
            logs[label] = log_exploitability(rcfr.exploitability(game, solver.average_policy()))
            cfr, dcfr = self.baselines[label]
            total += self.weights[label] * (cfr - logs[label]) / (cfr - dcfr)
        return total / sum(self.weights.values()), logs


def rank_utilities(scores: np.ndarray) -> np.ndarray:
    """Centred rank-based utilities (the NES fitness shaping the DDCFR code uses): the best gets the most,
    the worse half nothing before centring; they sum to zero."""
    n = len(scores)
    rank = np.empty(n)
    rank[np.argsort(-scores, kind="stable")] = np.arange(1, n + 1)
    up = np.maximum(0.0, math.log(n / 2 + 1) - np.log(rank))
    return up / up.sum() - 1.0 / n


class Adam:
    def __init__(self, size: int, lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m, self.v, self.t = np.zeros(size), np.zeros(size), 0

    def step(self, gradient: np.ndarray) -> np.ndarray:
        """The ascent step for `gradient`."""
        self.t += 1
        self.m = self.b1 * self.m + (1 - self.b1) * gradient
        self.v = self.b2 * self.v + (1 - self.b2) * gradient ** 2
        m, v = self.m / (1 - self.b1 ** self.t), self.v / (1 - self.b2 ** self.t)
        return self.lr * m / (np.sqrt(v) + self.eps)


def train(epochs: int, pairs: int, sigma: float, lr: float, seed: int, hidden: int, iterations: int,
          out: Path, curve: Path, games: dict[str, tuple] | None = None, quiet: bool = False) -> dict:
    rng = np.random.default_rng(seed)
    objective = Objective(training_games() if games is None else games, iterations, hidden)
    theta = initial_vector(hidden, rng)
    adam = Adam(len(theta), lr)
    rows, best = [], (-math.inf, theta.copy(), {})
    settings = {"epochs": epochs, "pairs": pairs, "sigma": sigma, "lr": lr, "seed": seed, "hidden": hidden,
                "iterations": iterations, "games": {k: w for k, w in objective.weights.items()},
                "baselines_log10": {k: list(v) for k, v in objective.baselines.items()}}
    start = time.process_time()
    for epoch in range(epochs + 1):
        score, logs = objective(theta)
        rows.append({"epoch": epoch, "score": score, **{f"log10 {k}": v for k, v in logs.items()},
                     "cpu_seconds": time.process_time() - start})
        if score > best[0]:
            best = (score, theta.copy(), logs)
        if not quiet:
            print(f"epoch {epoch:4d}  score {score:.4f}  " + "  ".join(f"{k} {10 ** v:.2e}" for k, v in logs.items())
                  + f"  ({rows[-1]['cpu_seconds']:.0f} CPU s)", flush=True)
        if epoch == epochs:
            break
        eps = rng.normal(size=(pairs, len(theta)))
        directions = np.concatenate([eps, -eps])
        scores = np.array([objective(theta + sigma * d)[0] for d in directions])
        utilities = rank_utilities(scores)
        theta = theta + adam.step(utilities @ directions / (len(directions) * sigma))
        if epoch % 10 == 9:
            _save(out, curve, best, settings, rows)
    return _save(out, curve, best, settings, rows)


def _save(out: Path, curve: Path, best, settings: dict, rows: list[dict]) -> dict:
    score, vector, logs = best
    policy = DiscountPolicy.from_vector(vector, settings["hidden"])
    training = {"command": "python -m benchmarks.studies.ddcfr_train", **settings, "best_score": score,
                "best_log10": logs, "epochs_done": rows[-1]["epoch"], "cpu_seconds": rows[-1]["cpu_seconds"],
                "curve": [[r["epoch"], round(r["score"], 6)] for r in rows]}
    data = policy.to_dict(training)
    DiscountPolicy.from_dict(data)  # what is written must load
    write_json(out, data)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(curve, lambda f: f.write(text.getvalue().encode()))
    return data


def show(policy_path: Path, labels: list[str], iterations: int) -> None:
    """The schedule a policy file chooses on suite games (`benchmarks.reproductions.tabular_frontier`'s), one
    line per decision at iterations 0, 1, 2, 5, 10, 20, ... and the final exploitability."""
    from benchmarks.reproductions.tabular_frontier import load
    policy = DiscountPolicy.load(policy_path)
    for label in labels:
        game = load(label)
        solver = make_solver("ddcfr", game, horizon=iterations, policy=policy).run(iterations)
        value = rcfr.exploitability(game, solver.average_policy())
        print(f"{label}: {len(solver.decisions)} decisions, exploitability at T = {iterations}: {value:.3e}")
        marks, mark = set(), 1
        while mark <= iterations:
            marks.update({mark, 2 * mark, 5 * mark})
            mark *= 10
        shown, last = set(), None
        for d in solver.decisions:
            due = [m for m in sorted(marks | {0}) if m <= d["iteration"] and m not in shown]
            if due or d is solver.decisions[-1]:
                shown.update(due)
                key = (round(d["alpha"], 2), round(d["beta"], 2), round(d["gamma"], 2), d["tau"])
                if key != last or d is solver.decisions[-1]:
                    print(f"  t {d['iteration']:5d}  E {d['exploitability']:.2e}  alpha {d['alpha']:.2f}  "
                          f"beta {d['beta']:.2f}  gamma {d['gamma']:.2f}  tau {d['tau']}")
                last = key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--pairs", type=int, default=12, help="antithetic pairs per epoch")
    parser.add_argument("--sigma", type=float, default=0.05)
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hidden", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=1000, help="T of every training run")
    parser.add_argument("--out", type=Path, default=POLICY_FILE)
    parser.add_argument("--curve", type=Path, default=CURVE)
    parser.add_argument("--show", metavar="GAMES", help="train nothing: print the schedule the --out file chooses on "
                        "these suite games (labels of benchmarks.reproductions.tabular_frontier, ';'-separated)")
    args = parser.parse_args()
    if args.show:
        show(args.out, args.show.split(";"), args.iterations)
        return
    for name in ("epochs", "pairs", "hidden", "iterations"):
        if getattr(args, name) < (0 if name == "epochs" else 1):
            parser.error(f"--{name} must be {'>= 0' if name == 'epochs' else '>= 1'}")
    if not (args.sigma > 0 and args.lr > 0 and math.isfinite(args.sigma) and math.isfinite(args.lr)):
        parser.error("--sigma and --lr must be finite and > 0")
    data = train(args.epochs, args.pairs, args.sigma, args.lr, args.seed, args.hidden, args.iterations,
                 args.out, args.curve)
    print(f"wrote {args.out} (best score {data['training']['best_score']:.4f}, sha256 {data['sha256'][:16]}) "
          f"and {args.curve}")


if __name__ == "__main__":
    main()
