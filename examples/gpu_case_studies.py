#!/usr/bin/env python3
"""The case studies of ASTRA-sim 3.0 (§5.2-5.3) on infracc's GPU model, one SVG each.

    python3 examples/gpu_case_studies.py reducescatter -o reducescatter.svg
    python3 examples/gpu_case_studies.py allgather     -o allgather.svg
    python3 examples/gpu_case_studies.py alltoall      -o alltoall.svg
    python3 examples/gpu_case_studies.py outstanding   -o outstanding.svg

Each study writes a GOAL file with one collective statement per rank, lowers it to GPU
kernels (lower-collectives -coll-target=kernels, textbook direct algorithms in put or
get form), unrolls it and runs -sim-model=gpu on the paper's generic GPUs (no fabric
given), then plots the collective's bandwidth (buffer bytes / kernel time) as
docs/gpu-model.md shows. Python's standard library only; --infracc names the binary.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

KiB = 1024
MiB = 1024 * KiB


def run(infracc, ranks, kind, size, transfer, workgroups, extra):
    """Kernel time in ns of one collective over a buffer of `size` bytes (the paper's:
    all-gather's output, reduce-scatter's input, all-to-all's input) on `ranks` generic
    GPUs. GOAL's statements take the block of one rank: size / ranks."""
    with tempfile.TemporaryDirectory() as d:
        goal = os.path.join(d, "coll.goal")
        with open(goal, "w") as f:
            f.write(f"num_ranks {ranks}\n")
            for r in range(ranks):
                f.write(f"rank {r} {{\nl1: {kind} {size // ranks}b algo direct\n}}\n")
        cmd = [infracc, goal, "-passes=lower-collectives,unroll-loadstore",
               "-coll-target=kernels", f"-coll-transfer={transfer}",
               f"-workgroups={workgroups}", "-sim-model=gpu", "-sim-report=json"] + extra
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return json.loads(out)["makespan_ns"]


def size_label(b):
    return f"{b // MiB} MiB" if b >= MiB else f"{b // KiB} KiB"


def svg(path, title, xlabel, xs, xlabels, series):
    """A line chart: x on a log2 axis, y (GB/s) from 0; series = [(name, [y...])]."""
    W, H, L, R, T, B = 640, 400, 70, 170, 40, 60
    ymax = max(max(ys) for _, ys in series) * 1.1 or 1
    lx = [math.log2(x) for x in xs]
    x0, x1 = min(lx), max(lx) if max(lx) > min(lx) else min(lx) + 1

    def px(v):
        return L + (math.log2(v) - x0) / (x1 - x0) * (W - L - R)

    def py(v):
        return H - B - v / ymax * (H - T - B)

    colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
           f'<text x="{(L + W - R) / 2}" y="{H - 20}" text-anchor="middle">{xlabel}</text>',
           f'<text x="18" y="{(T + H - B) / 2}" text-anchor="middle" '
           f'transform="rotate(-90 18 {(T + H - B) / 2})">bandwidth (GB/s)</text>']
    for x, label in zip(xs, xlabels):
        out.append(f'<line x1="{px(x):.1f}" y1="{H - B}" x2="{px(x):.1f}" y2="{H - B + 5}" '
                   f'stroke="black"/>')
        out.append(f'<text x="{px(x):.1f}" y="{H - B + 18}" text-anchor="middle">{label}</text>')
    for i in range(6):
        v = ymax / 1.1 * i / 5
        out.append(f'<line x1="{L - 5}" y1="{py(v):.1f}" x2="{W - R}" y2="{py(v):.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{L - 8}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
    for k, (name, ys) in enumerate(series):
        c = colors[k % len(colors)]
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, ys))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"/>')
        for x, y in zip(xs, ys):
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        out.append(f'<line x1="{W - R + 15}" y1="{T + 20 * k + 10}" x2="{W - R + 35}" '
                   f'y2="{T + 20 * k + 10}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{W - R + 40}" y="{T + 20 * k + 14}">{name}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("study", choices=["reducescatter", "allgather", "alltoall", "outstanding"])
    p.add_argument("-o", "--output", required=True, help="SVG file to write")
    p.add_argument("--infracc", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                     "infracc"))
    a = p.parse_args()
    table = []

    def bw(size, ns):
        return size / ns   # bytes per ns = GB/s

    if a.study in ("reducescatter", "allgather"):
        ranks, wgs = (32, 32) if a.study == "reducescatter" else (16, 60)
        sizes = [256 * KiB, 1 * MiB, 4 * MiB, 16 * MiB]
        # The paper's all-gather insight is about queues: a get's requests wait behind
        # the data its GPU sends. They form only when the GPUs keep enough in flight to
        # fill the scale-up links (1 TiB/s x a 4 us round trip is ~34,000 lines per GPU,
        # ~570 per CU of 60): 4 wavefronts x 128 lines unrolled, up to 1024 per CU.
        params = ["-unroll=8"]
        variants = [("put", []), ("get", [])]
        if a.study == "allgather":
            sizes = [1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB]
            params = ["-unroll=128", "-max-outstanding=1024"]
            variants += [("put, fair", ["-noc-arbitration=fair"]),
                         ("get, fair", ["-noc-arbitration=fair"])]
        series = []
        for name, extra in variants:
            ys = []
            for s in sizes:
                ns = run(a.infracc, ranks, a.study, s, name.split(",")[0], wgs, params + extra)
                table.append((name, size_label(s), ns))
                ys.append(bw(s, ns))
            series.append((name, ys))
        svg(a.output, f"{a.study}: {ranks} GPUs, {wgs} workgroups, get vs put", "buffer size",
            sizes, [size_label(s) for s in sizes], series)
    elif a.study == "alltoall":
        # Get form: the loads cross the scale-up fabric, so the lines a wavefront keeps
        # in flight (the unroll factor) set the pace, until the CU's limit (4 wavefronts
        # x 16 = the default 64 outstanding). In put form the loads are local and the
        # stores are not waited for: the unroll factor hardly matters there.
        unrolls = [1, 2, 4, 8, 16, 32]
        series = []
        for s in [256 * KiB, 16 * MiB]:
            ys = []
            for u in unrolls:
                ns = run(a.infracc, 16, "alltoall", s, "get", 60, [f"-unroll={u}"])
                table.append((size_label(s), f"unroll {u}", ns))
                ys.append(bw(s, ns))
            series.append((size_label(s), ys))
        svg(a.output, "alltoall: 16 GPUs, 60 workgroups, get", "unroll factor", unrolls,
            [str(u) for u in unrolls], series)
    else:
        limits = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        series = []
        for s in [64 * KiB, 4 * MiB]:
            ys = []
            for m in limits:
                ns = run(a.infracc, 32, "allgather", s, "put", 62,
                         ["-unroll=16", f"-max-outstanding={m}"])
                table.append((size_label(s), f"max outstanding {m}", ns))
                ys.append(bw(s, ns))
            series.append((size_label(s), ys))
        svg(a.output, "allgather: 32 GPUs, 62 workgroups, put", "max outstanding requests per CU",
            limits, [str(m) for m in limits], series)
    for row in table:
        print(f"{row[0]:>12}  {row[1]:>22}  {row[2]:14.3f} ns")


if __name__ == "__main__":
    sys.exit(main())
