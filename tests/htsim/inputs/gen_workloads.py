#!/usr/bin/env python3
"""Writes the GOAL workloads of the htsim tests and validation runs.

    gen_workloads.py <kind> <ranks> <bytes> > out.goal

kinds:
  permutation  rank i sends to (i + ranks/2 + 1) mod ranks (no rank to itself)
  incast       every rank but 0 sends to rank 0
  ring         ring allreduce: 2(P-1) steps of bytes/P to the next rank; step k's
               send requires step k-1's recv (as LogGOPSim's schedgen writes it)
  multistep    three phases: two sends per rank, a calc that needs both recvs,
               two sends that need the calc (one dependency set shared by two
               flows), then one send per rank that needs both phase-2 recvs
"""
import sys


def emit(ranks, ops_of):
    out = [f"num_ranks {ranks}"]
    for r in range(ranks):
        out.append(f"rank {r} {{")
        out.extend(ops_of(r))
        out.append("}")
    return "\n".join(out) + "\n"


def permutation(P, b):
    def ops(r):
        dst = (r + P // 2 + 1) % P
        src = (r - P // 2 - 1) % P
        return [f"l1: send {b}b to {dst} tag 0", f"l2: recv {b}b from {src} tag 0"]
    return emit(P, ops)


def incast(P, b):
    def ops(r):
        if r == 0:
            return [f"l{s}: recv {b}b from {s} tag 0" for s in range(1, P)]
        return [f"l1: send {b}b to 0 tag 0"]
    return emit(P, ops)


def ring(P, b):
    chunk = b // P
    def ops(r):
        nxt, prv = (r + 1) % P, (r - 1) % P
        lines, label = [], 0
        for step in range(2 * (P - 1)):
            lines.append(f"l{label + 1}: send {chunk}b to {nxt} tag {step}")
            lines.append(f"l{label + 2}: recv {chunk}b from {prv} tag {step}")
            if step:
                lines.append(f"l{label + 1} requires l{label}")
            label += 2
        return lines
    return emit(P, ops)


def multistep(P, b):
    def ops(r):
        a, c = (r + 1) % P, (r + P // 2) % P
        a_from, c_from = (r - 1) % P, (r - P // 2) % P
        d, e = (r + 2) % P, (r + 3) % P
        d_from, e_from = (r - 2) % P, (r - 3) % P
        f, f_from = (r + P - 1) % P, (r + 1) % P
        return [
            f"l1: send {b}b to {a} tag 1", f"l2: send {b}b to {c} tag 2",
            f"l3: recv {b}b from {a_from} tag 1", f"l4: recv {b}b from {c_from} tag 2",
            "l5: calc 2000", "l5 requires l3", "l5 requires l4",
            f"l6: send {b}b to {d} tag 3", f"l7: send {2 * b}b to {e} tag 4",
            "l6 requires l5", "l7 requires l5",
            f"l8: recv {b}b from {d_from} tag 3", f"l9: recv {2 * b}b from {e_from} tag 4",
            f"l10: send {b}b to {f} tag 5", "l10 requires l8", "l10 requires l9",
            f"l11: recv {b}b from {f_from} tag 5",
        ]
    return emit(P, ops)


if __name__ == "__main__":
    kind, P, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sys.stdout.write({"permutation": permutation, "incast": incast, "ring": ring,
                      "multistep": multistep}[kind](P, b))
