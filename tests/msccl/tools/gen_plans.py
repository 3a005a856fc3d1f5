#!/usr/bin/env python3
"""Writes the MSCCL++ execution plans the tests read (tests/msccl/inputs/*.json).

Our own algorithms, written in the JSON schema MSCCL++'s executor reads
(src/core/executor/execution_plan.cc); together they use every operation of its table.
Run from the repository root:  python3 tests/msccl/tools/gen_plans.py
"""
import json
import os

OUT = os.path.join(os.path.dirname(__file__), "..", "inputs")


def L(t, index, size=1):
    return {"type": t, "index": index, "size": size}


def R(buffer_id, index, size=1):
    return {"buffer_id": buffer_id, "index": index, "size": size}


def S(switch_id, index, size=1):
    return {"switch_channel_id": switch_id, "index": index, "size": size}


class Gpu:
    """One GPU's plan: channels and remote buffers are declared on first use."""

    def __init__(self, rank, inputs, outputs, scratch):
        self.rank = rank
        self.chunks = (inputs, outputs, scratch)
        self.channels = []          # (type, peers) entries, as written
        self.switch = []            # switch channel entries
        self.remote = []            # (rank, type letter, access type)
        self.semaphores = []
        self.tbs = []

    def channel(self, ctype, peers):
        """Declares a channel entry; returns the flat indices of its peers."""
        base = sum(len(p) for t, p in self.channels if t == ctype)
        self.channels.append((ctype, list(peers)))
        return {p: base + k for k, p in enumerate(peers)}

    def switch_channel(self, buffer_type, ranks):
        self.switch.append({"channel_type": "switch", "buffer_type": buffer_type,
                            "rank_groups": [{"size": len(ranks), "ranks": list(ranks)}]})
        return len(self.switch) - 1

    def remote_buffer(self, rank, letter, access="memory"):
        key = (rank, letter, access)
        if key not in self.remote:
            self.remote.append(key)
        return self.remote.index(key)

    def tb(self):
        t = Tb(self, len(self.tbs))
        self.tbs.append(t)
        return t

    def to_dict(self):
        chans = [{"channel_type": t, "connected_to": p} for t, p in self.channels] + self.switch
        return {"id": self.rank, "input_chunks": self.chunks[0], "output_chunks": self.chunks[1],
                "scratch_chunks": self.chunks[2],
                "threadblocks": [t.to_dict() for t in self.tbs],
                "channels": chans,
                "remote_buffers": [{"rank": r, "type": l, "access_channel_types": [a]}
                                   for r, l, a in self.remote],
                "semaphores": [{"init_value": v} for v in self.semaphores]}


class Tb:
    """A threadblock: op channel ids index its own channel lists."""

    def __init__(self, gpu, ident):
        self.gpu, self.id, self.ops = gpu, ident, []
        self.chans = {"memory": [], "port": [], "switch": []}
        self.refs = {"memory": [], "port": []}

    def ch(self, ctype, flat):
        lst = self.chans[ctype]
        if flat not in lst:
            lst.append(flat)
        return lst.index(flat)

    def rb(self, access, rid):
        lst = self.refs[access]
        if rid not in lst:
            lst.append(rid)
        return lst.index(rid)

    def remote(self, rank, letter, index, size=1, access="memory"):
        return R(self.rb(access, self.gpu.remote_buffer(rank, letter, access)), index, size)

    def op(self, name, **fields):
        d = {"name": name}
        d.update(fields)
        self.ops.append(d)
        return d

    def to_dict(self):
        return {"id": self.id, "ops": self.ops,
                "channels": [{"channel_type": t, "channel_ids": ids}
                             for t, ids in self.chans.items() if ids],
                "remote_buffer_refs": [{"access_channel_type": t, "remote_buffer_ids": ids}
                                       for t, ids in self.refs.items() if ids]}


def plan(name, collective, gpus, protocol="Simple", **extra):
    d = {"name": name, "collective": collective, "protocol": protocol, "inplace": False,
         "reuse_resources": False, "gpus": [g.to_dict() for g in gpus],
         "num_threads_per_block": 1024, "use_double_scratch_buffer": False,
         "buffer_alignment": 16, "min_message_size": 0, "max_message_size": 2**64 - 1}
    d.update(extra)
    return d


def allreduce_ring(P=4):
    """Ring reduce-scatter (put into the next GPU's scratch, reduce-send), then a ring
    all-gather of the reduced blocks (put)."""
    gpus = [Gpu(i, P, P, P - 1) for i in range(P)]
    for i, g in enumerate(gpus):
        nxt, prv = (i + 1) % P, (i - 1) % P
        flat = g.channel("memory", sorted({nxt, prv}))
        t = g.tb()
        sig = lambda: t.op("signal", channel_ids=[t.ch("memory", flat[nxt])], channel_type="memory")
        wait = lambda: t.op("wait", channel_ids=[t.ch("memory", flat[prv])], channel_type="memory")
        t.op("put", src_buff=[L("i", (i - 1) % P)], dst_buff=[t.remote(nxt, "s", 0)],
             channel_ids=[t.ch("memory", flat[nxt])], channel_type="memory")
        t.op("nop")
        sig()
        for k in range(P - 1):
            wait()
            b = (i - k - 2) % P
            if k < P - 2:
                t.op("res", src_buff=[L("i", b), L("s", k)],
                     dst_buff=[L("o", b), t.remote(nxt, "s", k + 1)],
                     channel_type="memory", reduce_op="sum")
                t.op("nop")
                sig()
            else:
                t.op("re", src_buff=[L("i", i), L("s", k)], dst_buff=[L("o", i)], reduce_op="sum")
        for s in range(P - 1):
            b = (i - s) % P
            t.op("put", src_buff=[L("o", b)], dst_buff=[t.remote(nxt, "o", b)],
                 channel_ids=[t.ch("memory", flat[nxt])], channel_type="memory")
            t.op("nop")
            sig()
            wait()
    return plan("allreduce_ring", "allreduce", gpus)


def allgather_put(P=4):
    """Direct all-gather, each GPU's block pushed to every peer by two threadblocks that
    split it (tbg_info) and meet at a barrier."""
    gpus = [Gpu(i, 1, P, 0) for i in range(P)]
    for i, g in enumerate(gpus):
        peers = [(i + d) % P for d in range(1, P)]
        flats = [g.channel("memory", peers) for _ in range(2)]
        for tbi in range(2):
            t = g.tb()
            tbg = {"tb_id": tbi, "tbg_size": 2}
            ids = [t.ch("memory", flats[tbi][p]) for p in peers]
            t.op("copy", src_buff=[L("i", 0)], dst_buff=[L("o", i)], tbg_info=tbg)
            t.op("put", src_buff=[L("i", 0)] * len(peers),
                 dst_buff=[t.remote(p, "o", i) for p in peers],
                 channel_ids=ids, channel_type="memory", tbg_info=tbg)
            t.op("nop")
            t.op("signal", channel_ids=ids, channel_type="memory")
            t.op("wait", channel_ids=ids, channel_type="memory")
            t.op("barrier", barrier_id=0, num_threadblocks=2)
    return plan("allgather_put", "allgather", gpus)


def allgather_get(P=4):
    """Direct all-gather by reading: tell every peer the input is ready, wait for theirs,
    read all blocks with one fused get."""
    gpus = [Gpu(i, 1, P, 0) for i in range(P)]
    for i, g in enumerate(gpus):
        peers = [(i + d) % P for d in range(1, P)]
        flat = g.channel("memory", peers)
        t = g.tb()
        ids = [t.ch("memory", flat[p]) for p in peers]
        t.op("copy", src_buff=[L("i", 0)], dst_buff=[L("o", i)])
        t.op("signal", channel_ids=ids, channel_type="memory")
        t.op("wait", channel_ids=ids, channel_type="memory")
        t.op("get", src_buff=[t.remote(p, "i", 0) for p in peers],
             dst_buff=[L("o", p) for p in peers], channel_ids=ids, channel_type="memory")
        t.op("signal", channel_ids=ids, channel_type="memory")
        t.op("wait", channel_ids=ids, channel_type="memory")
    return plan("allgather_get", "allgather", gpus)


def reducescatter_get(P=4):
    """Direct reduce-scatter by reading: each GPU reads block i of every peer's input and
    reduces it with its own (read-reduce)."""
    gpus = [Gpu(i, P, 1, 0) for i in range(P)]
    for i, g in enumerate(gpus):
        peers = [(i + d) % P for d in range(1, P)]
        flat = g.channel("memory", peers)
        t = g.tb()
        ids = [t.ch("memory", flat[p]) for p in peers]
        t.op("signal", channel_ids=ids, channel_type="memory")
        t.op("wait", channel_ids=ids, channel_type="memory")
        t.op("rre", src_buff=[L("i", i)] + [t.remote(p, "i", i) for p in peers],
             dst_buff=[L("o", 0)], channel_type="memory", reduce_op="sum")
        t.op("signal", channel_ids=ids, channel_type="memory")
        t.op("wait", channel_ids=ids, channel_type="memory")
    return plan("reducescatter_get", "reducescatter", gpus)


def alltoall(P=4):
    """Direct all-to-all over port channels (a proxy moves the data): the local block is
    copied by threadblock 0, which then lets threadblock 1 (a device semaphore) push every
    peer's block with put-with-signal (the last one also flushes)."""
    gpus = [Gpu(i, P, P, 0) for i in range(P)]
    for i, g in enumerate(gpus):
        peers = [(i + d) % P for d in range(1, P)]
        flat = g.channel("port", peers)
        g.semaphores.append(0)
        t0, t1 = g.tb(), g.tb()
        t0.op("copy", src_buff=[L("i", i)], dst_buff=[L("o", i)])
        t0.op("sem_release", semaphore_ids=[0])
        t1.op("sem_acquire", semaphore_ids=[0])
        for n, p in enumerate(peers):
            name = "pwsf" if n == len(peers) - 1 else "pws"
            t1.op(name, src_buff=[L("i", p)], dst_buff=[t1.remote(p, "o", i, access="port")],
                  channel_ids=[t1.ch("port", flat[p])], channel_type="port")
        ids = [t1.ch("port", flat[p]) for p in peers]
        t1.op("wait", channel_ids=ids, channel_type="port")
        t1.op("flush", channel_ids=ids, channel_type="port")
    return plan("alltoall_port", "alltoall", gpus)


def allreduce_pipeline(P=4, unit=8):
    """All-reduce in one pass per block, in slices of unit_size bytes: each GPU reads its
    block from every peer's input, reduces it and writes it to every peer's output
    (read-reduce-send) inside a pipeline; relaxed signals for the start handshake."""
    gpus = [Gpu(i, P, P, 0) for i in range(P)]
    for i, g in enumerate(gpus):
        peers = [(i + d) % P for d in range(1, P)]
        flat = g.channel("memory", peers)
        t = g.tb()
        ids = [t.ch("memory", flat[p]) for p in peers]
        t.op("rlxsignal", channel_ids=ids, channel_type="memory")
        t.op("rlxwait", channel_ids=ids, channel_type="memory")
        t.op("pipeline", iter_context={"unit_size": unit, "num_chunks": 1}, ops=[
            {"name": "rres", "src_buff": [L("i", i)] + [t.remote(p, "i", i) for p in peers],
             "dst_buff": [L("o", i)] + [t.remote(p, "o", i) for p in peers],
             "channel_type": "memory", "reduce_op": "sum"}])
        t.op("nop")
        t.op("signal", channel_ids=ids, channel_type="memory")
        t.op("wait", channel_ids=ids, channel_type="memory")
    return plan("allreduce_pipeline", "allreduce", gpus)


def allreduce_pipeline_reuse(P=2, unit=32, scratch_chunks=2**21):
    """Two-GPU all-reduce in a pipeline of unit_size slices through a reused scratch
    (reuse_resources): 2^21 scratch chunks of MSCCL++'s 64 MiB scratch are 32 bytes
    each, so every iteration's slice lands in the same scratch bytes."""
    gpus = [Gpu(i, P, P, scratch_chunks) for i in range(P)]
    for i, g in enumerate(gpus):
        j = 1 - i
        g.channel("memory", [j])
        t = g.tb()
        ch = [t.ch("memory", 0)]
        t.op("pipeline", iter_context={"unit_size": unit, "num_chunks": 1}, ops=[
            {"name": "put", "src_buff": [L("i", j)], "dst_buff": [t.remote(j, "s", i)],
             "channel_ids": ch, "channel_type": "memory"},
            {"name": "signal", "channel_ids": ch, "channel_type": "memory"},
            {"name": "wait", "channel_ids": ch, "channel_type": "memory"},
            {"name": "re", "src_buff": [L("i", i), L("s", j)], "dst_buff": [L("o", i)],
             "reduce_op": "sum"},
            {"name": "put", "src_buff": [L("o", i)], "dst_buff": [t.remote(j, "o", i)],
             "channel_ids": ch, "channel_type": "memory"},
            {"name": "signal", "channel_ids": ch, "channel_type": "memory"},
            {"name": "wait", "channel_ids": ch, "channel_type": "memory"}])
    return plan("allreduce_pipeline_reuse", "allreduce", gpus, reuse_resources=True)


def allreduce_nvls(P=4):
    """All-reduce with NVLink SHARP: each GPU load-reduces its block from the switch
    group's inputs and stores the sum into every member's output (glres)."""
    gpus = [Gpu(i, P, P, 0) for i in range(P)]
    for i, g in enumerate(gpus):
        peers = [(i + d) % P for d in range(1, P)]
        flat = g.channel("memory", peers)
        sin = g.switch_channel("i", range(P))
        sout = g.switch_channel("o", range(P))
        t = g.tb()
        ids = [t.ch("memory", flat[p]) for p in peers]
        t.op("rlxsignal", channel_ids=ids, channel_type="memory")
        t.op("rlxwait", channel_ids=ids, channel_type="memory")
        t.op("glres", src_buff=[S(t.ch("switch", sin), i)], dst_buff=[S(t.ch("switch", sout), i)],
             channel_type="switch", reduce_op="sum")
        t.op("nop")
        t.op("signal", channel_ids=ids, channel_type="memory")
        t.op("wait", channel_ids=ids, channel_type="memory")
    return plan("allreduce_nvls", "allreduce", gpus)


def allgather_nvls(P=4):
    """All-gather with a multicast store of each GPU's block (gstore)."""
    gpus = [Gpu(i, 1, P, 0) for i in range(P)]
    for i, g in enumerate(gpus):
        peers = [(i + d) % P for d in range(1, P)]
        flat = g.channel("memory", peers)
        sout = g.switch_channel("o", range(P))
        t = g.tb()
        ids = [t.ch("memory", flat[p]) for p in peers]
        t.op("signal", channel_ids=ids, channel_type="memory")
        t.op("wait", channel_ids=ids, channel_type="memory")
        t.op("gstore", src_buff=[L("i", 0)], dst_buff=[S(t.ch("switch", sout), i)],
             channel_type="switch")
        t.op("nop")
        t.op("signal", channel_ids=ids, channel_type="memory")
        t.op("wait", channel_ids=ids, channel_type="memory")
    return plan("allgather_nvls", "allgather", gpus)


def allreduce_ll():
    """Two-GPU all-reduce in LL packets: send the peer its block as packets, reduce the
    received packets into the own block and send the result back as packets (gpu 0 also
    keeps a packet copy), unpack what comes back. No semaphores: the flags synchronise."""
    gpus = [Gpu(i, 2, 2, 3) for i in range(2)]
    for i, g in enumerate(gpus):
        j = 1 - i
        g.channel("memory", [j])
        t = g.tb()
        t.op("ppkt", src_buff=[L("i", j)], dst_buff=[t.remote(j, "s", 0)],
             channel_ids=[t.ch("memory", 0)], channel_type="memory")
        if i == 0:
            t.op("recspkt", src_buff=[L("i", i), L("s", 0)],
                 dst_buff=[L("o", i), L("s", 2), t.remote(j, "s", 1)],
                 channel_type="memory", reduce_op="sum")
        else:
            t.op("respkt", src_buff=[L("i", i), L("s", 0)],
                 dst_buff=[L("o", i), t.remote(j, "s", 1)], channel_type="memory", reduce_op="sum")
        t.op("upkt", src_buff=[L("s", 1)], dst_buff=[L("o", j)])
    return plan("allreduce_ll", "allreduce", gpus, protocol="LL")


def reducescatter_ll(P=3):
    """Reduce-scatter in LL packets: every GPU sends each peer that peer's block as
    packets, then reduces the packets it received into its output (gpu 2 keeps a packet
    copy of the result)."""
    gpus = [Gpu(i, P, 1, P) for i in range(P)]
    for i, g in enumerate(gpus):
        peers = [(i + d) % P for d in range(1, P)]
        flat = g.channel("memory", peers)
        t = g.tb()
        for p in peers:   # my block for p lands in p's scratch slot of sender i
            slot = (i - p - 1) % P
            t.op("ppkt", src_buff=[L("i", p)], dst_buff=[t.remote(p, "s", slot)],
                 channel_ids=[t.ch("memory", flat[p])], channel_type="memory")
        srcs = [L("i", i)] + [L("s", (p - i - 1) % P) for p in peers]
        if i == P - 1:
            t.op("recpkt", src_buff=srcs, dst_buff=[L("o", 0), L("s", P - 1)], reduce_op="sum")
        else:
            t.op("repkt", src_buff=srcs, dst_buff=[L("o", 0)], reduce_op="sum")
    return plan("reducescatter_ll", "reducescatter", gpus, protocol="LL")


def allgather_ll(P=3):
    """Ring all-gather in LL packets: pack the own block, forward blocks around the ring
    as packets (read-put-packets), unpack every block."""
    gpus = [Gpu(i, 1, P, P) for i in range(P)]
    for i, g in enumerate(gpus):
        nxt = (i + 1) % P
        g.channel("memory", [nxt])
        t = g.tb()
        t.op("cpkt", src_buff=[L("i", 0)], dst_buff=[L("s", i)])
        for s in range(P - 1):
            b = (i - s) % P
            t.op("rppkt", src_buff=[L("s", b)], dst_buff=[t.remote(nxt, "s", b)],
                 channel_ids=[t.ch("memory", 0)], channel_type="memory")
        for b in range(P):
            t.op("upkt", src_buff=[L("s", b)], dst_buff=[L("o", b)])
    return plan("allgather_ll", "allgather", gpus, protocol="LL")


def allgather_nvls_ll(P=2):
    """All-gather as LL packets multicast into every member's scratch (gstorepkt)."""
    gpus = [Gpu(i, 1, P, 2 * P) for i in range(P)]
    for i, g in enumerate(gpus):
        sw = g.switch_channel("s", range(P))
        t = g.tb()
        t.op("cpkt", src_buff=[L("i", 0)], dst_buff=[L("s", P + i)])
        t.op("gstorepkt", src_buff=[L("s", P + i)], dst_buff=[S(t.ch("switch", sw), i)],
             channel_type="switch")
        for b in range(P):
            t.op("upkt", src_buff=[L("s", b)], dst_buff=[L("o", b)])
    return plan("allgather_nvls_ll", "allgather", gpus, protocol="LL")


PLANS = {
    "allreduce_ring": allreduce_ring,
    "allgather_put": allgather_put,
    "allgather_get": allgather_get,
    "reducescatter_get": reducescatter_get,
    "alltoall_port": alltoall,
    "allreduce_pipeline": allreduce_pipeline,
    "allreduce_pipeline_reuse": allreduce_pipeline_reuse,
    "allreduce_nvls": allreduce_nvls,
    "allgather_nvls": allgather_nvls,
    "allreduce_ll": allreduce_ll,
    "reducescatter_ll": reducescatter_ll,
    "allgather_ll": allgather_ll,
    "allgather_nvls_ll": allgather_nvls_ll,
}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, make in PLANS.items():
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(make(), f, indent=2)
            f.write("\n")
        print(name)
