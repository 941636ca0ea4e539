"""Exact exploitability with and without the compiled tree (issue 20): time and peak memory.

    python -m benchmarks.speed.rules_evaluation                                 # leduc, goofspiel(cards=6)
    python -m benchmarks.speed.rules_evaluation --games leduc "liars_dice(dice1=2, dice2=1)"

Per game, two fresh subprocesses, so that each peak is its own:

* *compiled*: compile the game (no cache; time reported apart), draw a random policy
  (`Policy.random(game, 0)`), time `rcfr.evaluate` (the first call builds the sequence-form views: included,
  since a game compiled for one evaluation pays them), convert the policy to a `CodePolicy` and save it;
  peak resident MiB of the whole process;
* *rules*: load the rules and the saved `CodePolicy` only, time `rcfr.evaluation.rules.evaluate` (numba
  code warm), and the same with float32 probabilities; peak resident MiB of the process, and its growth
  during the walk (the walk's own memory beside the policy).

Times are wall seconds on whatever machine runs it (state how busy it was). The two paths' values must
agree to 1e-9 (the tests check 1e-12 on small games).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import ROOT

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


from benchmarks.speed.large_games import parse  # noqa: E402  (same spelling of game specs)

DEFAULT = ["leduc", "goofspiel(cards=6)"]


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def compiled_side(spec: str, path: str) -> dict:
    import numpy as np

    import rcfr
    from rcfr.policy.rules import CodePolicy
    from rcfr.tree import compile_game
    name, params = parse(spec)
    rules = rcfr.make_rules(name, **params)
    compile_game(rcfr.make_rules("kuhn"))  # numba code loaded before timing
    start = time.perf_counter()
    game = compile_game(rules)
    compile_s = time.perf_counter() - start
    policy = rcfr.Policy.random(game, 0)
    start = time.perf_counter()
    result = rcfr.evaluate(game, policy)
    evaluate_s = time.perf_counter() - start
    start = time.perf_counter()
    code_policy = CodePolicy.from_policy(policy)
    convert_s = time.perf_counter() - start
    code_policy.save(path)
    return dict(histories=game.num_histories, infosets=game.num_infosets, sequences=game.num_sequences,
                compile_s=compile_s, evaluate_s=evaluate_s, convert_s=convert_s, peak_mib=_peak_mib(),
                exploitability=result.exploitability, value=result.value,
                policy_mib=code_policy.nbytes() / 2**20, dtype=str(np.dtype(code_policy.probs.dtype)))


def rules_side(spec: str, path: str) -> dict:
    import numpy as np

    import rcfr
    from rcfr.evaluation import rules as evaluation
    from rcfr.policy.rules import CodePolicy
    name, params = parse(spec)
    rules = rcfr.make_rules(name, **params)
    kuhn = rcfr.make_rules("kuhn")  # numba code loaded before timing
    evaluation.evaluate(kuhn, CodePolicy.from_policy(rcfr.Policy.uniform(rcfr.load_game("kuhn", cache=False))))
    policy = CodePolicy.load(rules, path)
    before = _peak_mib()
    start = time.perf_counter()
    raw = evaluation.walk(rules, policy)
    walk_s = time.perf_counter() - start
    grew = _peak_mib() - before
    single = policy.astype(np.float32)
    result32 = evaluation.evaluate(rules, single)
    exploitability = (raw["br0"] + raw["br1"]) / 2
    return dict(walk_s=walk_s, peak_mib=_peak_mib(), walk_growth_mib=grew, visited=int(raw["histories"]),
                depth=int(raw["depth"]), exploitability=exploitability, value=raw["value"],
                float32_error=result32.exploitability - exploitability,
                histories_per_s=raw["histories"] / walk_s)


def run(side: str, spec: str, path: str) -> dict:
    out = subprocess.run([sys.executable, "-m", __spec__.name, "--side", side, "--path", path, "--games", spec],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if out.returncode:
        raise SystemExit(f"{spec} ({side}) failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=DEFAULT)
    parser.add_argument("--side", choices=["compiled", "rules"], help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        fn = compiled_side if args.side == "compiled" else rules_side
        print(json.dumps(fn(args.games[0], args.path)))
        return
    head = ("| game | histories | infosets | compile s | compiled eval s | compiled peak MiB | "
            "rules eval s | rules peak MiB | walk growth MiB | policy MiB | Mhist/s | |Δ| | float32 Δ |")
    print(head)
    print("|" + "---|" * head.count(" | ") + "---|")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.games:
            path = str(Path(tmp) / "policy.npz")
            a = run("compiled", spec, path)
            b = run("rules", spec, path)
            gap = abs(a["exploitability"] - b["exploitability"])
            if gap > 1e-9:
                raise SystemExit(f"{spec}: the two paths disagree by {gap}")
            print(f"| {spec} | {a['histories']:,} | {a['infosets']:,} | {a['compile_s']:.2f} | "
                  f"{a['evaluate_s']:.2f} | {a['peak_mib']:.0f} | {b['walk_s']:.2f} | {b['peak_mib']:.0f} | "
                  f"{b['walk_growth_mib']:.0f} | {a['policy_mib']:.1f} | {b['histories_per_s'] / 1e6:.2f} | "
                  f"{gap:.1e} | {b['float32_error']:.1e} |", flush=True)


if __name__ == "__main__":
    main()
