"""Lanctot 2013, ch. 5 (Figs 5.3 and 5.4): runs the kit presets and writes their tables into docs/mccfr.md.

    python -m benchmarks.reproductions.imperfect_recall [--quick] [--write] [--dir DIR]

The experiments are the presets ``lanctot_fig53`` and ``lanctot_fig54`` (``_quick`` with ``--quick``):
this script only runs them (``rcfr-run +experiment=...`` into ``DIR/<preset>``; running
it again resumes or reuses finished runs), then builds the results block from each sweep's ``curves.md``
and ``metrics.csv`` files, and copies the ``convergence.png`` plots to docs/figures/fig5_{3,4}[_quick].png.
The full Fig 5.4 runs its Bluff(2,1) arms with one seed (seed 0, about 5 minutes and 3.6 GB each), into
``DIR/lanctot_fig54/bluff21``, which the aggregate of the sweep includes. ``--write`` replaces the block
between the markers in docs/mccfr.md (atomically).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from benchmarks import ROOT
from rcfr.experiments.aggregate import aggregate  # noqa: E402
from rcfr.files import atomic_write  # noqa: E402

DOC, FIGURES = ROOT / "docs" / "mccfr.md", ROOT / "docs" / "figures"
START, END = "<!-- imperfect-recall:start -->", "<!-- imperfect-recall:end -->"
BLUFF21 = [f"lanctot_fig54/bluff21_{r}" for r in ("r1", "r2", "r4", "full")]


def sweep(preset: str, directory: Path, *overrides: str) -> None:
    """Run (or resume, or reuse the finished runs of) a preset's sweep into `directory`."""
    subprocess.run([sys.executable, "-m", "rcfr.experiments.run", f"+experiment={preset}", f"hydra.sweep.dir={directory}",
                    "run.progress=false", *overrides], cwd=ROOT, check=True)


def run_seconds(directory: Path) -> str:
    """Wall seconds of the runs under `directory`, summed over the runs (their own, across resumptions)."""
    summaries = [json.loads(p.read_text()) for p in directory.rglob("summary.json")]
    return f"{sum(s['wall_seconds'] for s in summaries):,.0f} s over {len(summaries)} runs"


def fig54_arms(preset: str) -> list[str]:
    """The preset's arms other than Bluff(2,1)'s."""
    from omegaconf import OmegaConf
    arms = str(OmegaConf.load(ROOT / "configs" / "experiment" / f"{preset}.yaml").hydra.sweeper.params["+arm"])
    return [a for a in arms.split(",") if a not in BLUFF21]


def largest_gap(directory: Path) -> dict[str, float]:
    """Per game of Fig 5.3, the largest |full - abstract averaging| exploitability over the evaluations."""
    curves: dict[str, dict[str, list[float]]] = {}
    for path in directory.rglob("metrics.csv"):
        config = (path.parent / "config.yaml").read_text()
        label = re.search(r"^label: (.*) \| (full|abstract) averaging$", config, re.M)
        with path.open() as f:
            curves.setdefault(label.group(1), {})[label.group(2)] = [float(r["exploitability"]) for r in csv.DictReader(f)]
    return {game: max(abs(a - b) for a, b in zip(c["full"], c["abstract"])) for game, c in sorted(curves.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the _quick presets (about two minutes)")
    parser.add_argument("--write", action="store_true", help="replace the results block of docs/mccfr.md")
    parser.add_argument("--dir", type=Path, default=ROOT / "outputs" / "imperfect_recall", help="sweep directories")
    args = parser.parse_args()
    suffix = "_quick" if args.quick else ""
    f53, f54 = (args.dir / f"lanctot_fig5{n}{suffix}" for n in (3, 4))
    sweep(f"lanctot_fig53{suffix}", f53)
    if args.quick:
        sweep("lanctot_fig54_quick", f54)
    else:
        sweep("lanctot_fig54", f54, f"+arm={','.join(fig54_arms('lanctot_fig54'))}")
        sweep("lanctot_fig54", f54 / "bluff21", f"+arm={','.join(BLUFF21)}", "run.seed=0",
              "hydra.launcher.n_jobs=1")  # 3.6 GB per run: one at a time
        aggregate(f54)  # the main sweep's tables and plots, with the Bluff(2,1) runs in them
    seconds = {"5.3": run_seconds(f53), "5.4": run_seconds(f54)}
    FIGURES.mkdir(parents=True, exist_ok=True)
    for number, directory in (("3", f53), ("4", f54)):
        shutil.copyfile(directory / "convergence.png", FIGURES / f"fig5_{number}{suffix}.png")
    gaps = largest_gap(f53)
    command = "python -m benchmarks.reproductions.imperfect_recall" + (" --quick" if args.quick else "")
    text = "\n\n".join([
        f"Command: `{command} --write` (run wall time summed, 2 shared cores under load: "
        + "; ".join(f"Fig {k}: {v}" for k, v in seconds.items()) + ").",
        "**Fig 5.3** (`lanctot_fig53`: vanilla CFR, exploitability in the full game, chips; full vs abstract "
        "averaging):", (f53 / "curves.md").read_text().strip(),
        "Largest |full - abstract| over the evaluations: " + "; ".join(f"{k}: {v:.2e}" for k, v in gaps.items()) + ".",
        f"![Fig 5.3](figures/fig5_3{suffix}.png)",
        "**Fig 5.4** (`lanctot_fig54`: chance-sampled CFR, (R_1^{T,+} + R_2^{T,+})/T in the full game; 95% "
        "bands in the PNG):", (f54 / "curves.md").read_text().strip(),
        f"![Fig 5.4](figures/fig5_4{suffix}.png)"])
    print(text)
    if args.write:
        doc = DOC.read_text()
        pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.S)
        if not pattern.search(doc):
            raise SystemExit(f"{DOC} has no {START} ... {END} block")
        new = pattern.sub(lambda _: f"{START}\n{text}\n{END}", doc)
        atomic_write(DOC, lambda f: f.write(new.encode()))


if __name__ == "__main__":
    main()
