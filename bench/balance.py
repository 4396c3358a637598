#!/usr/bin/env python3
"""Block load balancing on seed 001's case shape: 256 blocks on a 16 x 16 layout with a 90%
difference in size between the smallest and the largest, faces between neighbours; P = 32,
48, 64, 72, 96, 120, 128. Imbalance (max/mean load) and cut face cells for METIS, greedy
and the round-robin assignment.

Usage: bench/balance.py [--work DIR] [--json OUT] [--quick]
"""
import argparse
import json
import os
import pathlib
import random
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
BUILD = pathlib.Path(os.environ.get("ANABRANCH_BUILD", HERE.parent / "build"))
AB = os.environ.get("ANABRANCH", str(BUILD / "src/cli/anabranch"))


def cosa_case(path):
    rng = random.Random(1)
    blocks, faces = [], []
    for i in range(256):
        f = 0.1 if i == 0 else 1.0 if i == 1 else 0.1 + 0.9 * rng.random()  # smallest = 10% of the largest
        s = f ** (1 / 3)
        blocks.append({"id": i + 1, "cells": [max(2, round(96 * s)), max(2, round(64 * s)), max(2, round(32 * s))]})
    for r in range(16):
        for c in range(16):
            i = r * 16 + c + 1
            if c < 15:
                faces.append({"a": i, "b": i + 1, "cells": 32 * 32})
            if r < 15:
                faces.append({"a": i, "b": i + 16, "cells": 32 * 32})
    path.write_text(json.dumps({"blocks": blocks, "faces": faces}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", default="bench-work")
    p.add_argument("--json")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    w = pathlib.Path(a.work)
    w.mkdir(parents=True, exist_ok=True)
    case = w / "cosa-256.json"
    cosa_case(case)
    procs = [32, 128] if a.quick else [32, 48, 64, 72, 96, 120, 128]
    rows = []
    print(f"{'P':>4} {'round-robin':>12} {'greedy':>8} {'metis':>8} {'pieces':>7} {'cut: rr':>9} {'greedy':>9} {'metis':>9}")
    for n in procs:
        res = {}
        for m in ("greedy", "metis"):
            out = subprocess.run([AB, "balance", str(case), "-n", str(n), "--method", m, "--json"], check=True, capture_output=True, text=True)
            res[m] = json.loads(out.stdout)
        g, m = res["greedy"], res["metis"]
        rows.append(dict(procs=n, roundrobin=g["roundrobin_imbalance"], greedy=g["imbalance"], metis=m["imbalance"], pieces=m["pieces"],
                         cut_roundrobin=g["roundrobin_cut_cells"], cut_greedy=g["cut_cells"], cut_metis=m["cut_cells"]))
        print(f"{n:>4} {g['roundrobin_imbalance']:>12.3f} {g['imbalance']:>8.3f} {m['imbalance']:>8.3f} {m['pieces']:>7} "
              f"{g['roundrobin_cut_cells']:>9.0f} {g['cut_cells']:>9.0f} {m['cut_cells']:>9.0f}")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
