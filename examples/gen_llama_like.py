#!/usr/bin/env python3
"""Writes examples/llama_like.goal: one training step of a Llama-like model, per GPU.

32 GPUs as 4 nodes x 8 GPUs; tensor parallelism (TP) over the 8 GPUs of a node, data
parallelism (DP) over the 4 GPUs with the same index on different nodes. For every
layer: forward compute, then a ring allreduce of the activations inside the TP group;
backward in reverse layer order: compute, TP allreduce, then a ring allreduce of the
layer's gradients across the DP group on cpu stream 1, overlapping with the backward
of the layers below it. An optimizer step waits for every gradient allreduce.

Ring allreduce over n ranks: 2(n-1) steps; in step i every rank sends one chunk to its
right neighbour and receives one from its left; both wait for the previous step's
receive. Each allreduce has its own tag, so every message is told apart by (source,
destination, tag) and the order within the ring.

    python3 examples/gen_llama_like.py > examples/llama_like.goal
"""

NODES, GPUS, LAYERS = 4, 8, 4
FWD_NS, BWD_NS, OPT_NS = 500_000, 1_000_000, 200_000
TP_CHUNK = 2 * 1024 * 1024          # 16 MiB of activations / 8 GPUs
DP_CHUNK = 12 * 1024 * 1024         # 48 MiB of gradients per layer / 4 GPUs


class Rank:
    def __init__(self):
        self.lines = []
        self.n = 0

    def op(self, text, *deps):
        self.n += 1
        label = f"l{self.n}"
        self.lines.append(f"{label}: {text}")
        for d in deps:
            if d is not None:
                self.lines.append(f"{label} requires {d}")
        return label


def ring_allreduce(rank, group, me, chunk, tag, after, cpu):
    """Appends a ring allreduce over `group` (global ranks) for member `me`."""
    n = len(group)
    right, left = group[(me + 1) % n], group[(me - 1) % n]
    cpu_clause = f" cpu {cpu}" if cpu else ""
    prev = after
    last_send = None
    for _ in range(2 * (n - 1)):
        last_send = rank.op(f"send {chunk}b to {right} tag {tag}{cpu_clause}", prev)
        prev = rank.op(f"recv {chunk}b from {left} tag {tag}{cpu_clause}", prev)
    return prev, last_send


def main():
    total = NODES * GPUS
    ranks = [Rank() for _ in range(total)]
    for r, rank in enumerate(ranks):
        node, gpu = divmod(r, GPUS)
        tp_group = [node * GPUS + g for g in range(GPUS)]
        dp_group = [n * GPUS + gpu for n in range(NODES)]
        prev = None
        for layer in range(LAYERS):
            prev = rank.op(f"calc {FWD_NS}", prev)
            prev, _ = ring_allreduce(rank, tp_group, gpu, TP_CHUNK, layer, prev, 0)
        grads = []
        for layer in reversed(range(LAYERS)):
            prev = rank.op(f"calc {BWD_NS}", prev)
            prev, _ = ring_allreduce(rank, tp_group, gpu, TP_CHUNK, LAYERS + layer, prev, 0)
            done, last = ring_allreduce(rank, dp_group, node, DP_CHUNK, 2 * LAYERS + layer,
                                        prev, 1)
            grads += [done, last]
        rank.op(f"calc {OPT_NS}", prev, *grads)
    out = [f"num_ranks {total}"]
    for r, rank in enumerate(ranks):
        out.append("")
        out.append(f"rank {r} {{")
        out += rank.lines
        out.append("}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
