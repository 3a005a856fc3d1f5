#!/usr/bin/env python3
"""Writes small Nsight Systems SQLite exports of made-up NCCL runs, for infracc's tests.

Each scenario is a folder with one export per node (node0.sqlite, node1.sqlite, ...),
each holding the processes (one per GPU) of that node. The tables and columns are those
`nsys export --type sqlite` writes and infracc reads (NVTX_EVENTS, StringIds, PROCESSES,
CUPTI_ACTIVITY_KIND_KERNEL, TARGET_INFO_SYSTEM_ENV); the NVTX strings are the ones the
NVTX-annotated NCCL 2.20.5 of ATLAHS prints (goal_gen/ai/nccl_nvtx_v2.20.5), with the
same printf formats. The numbers are invented but consistent: every rank of a
communicator sees the same rings, trees, sizes, algorithms and protocols, and each work
element splits a collective's elements over the channels as NCCL does.

    python3 tests/nccl/make_nsys_exports.py OUTDIR [SCENARIO[:key=value,...]...]

Without scenarios, writes all of them (one folder each under OUTDIR). The llama scenario
takes nodes=, gpus=, layers= and channels= (a larger run for benchmarks).
"""
import os
import sqlite3
import sys

PROTO = {"LL": 0, "LL128": 1, "Simple": 2}
ALGO = {"Tree": 0, "Ring": 1}
FUNC = {"Broadcast": 0, "Reduce": 1, "AllGather": 2, "ReduceScatter": 3, "AllReduce": 4}
CHUNK_STEPS = {"AllReduce": 4, "AllGather": 4, "ReduceScatter": 4, "Broadcast": 1, "Reduce": 1}
SLICE_STEPS = {"AllReduce": 2, "AllGather": 2, "ReduceScatter": 2, "Broadcast": 1, "Reduce": 1}
STEP_SIZE = {"Simple": 4 * 1024 * 1024 // 8, "LL": 256 * 1024 // 8, "LL128": 4608 * 1024 // 8}


class Gpu:
    """One GPU's process: its NVTX strings and kernels, in time order."""

    def __init__(self, node, device, pid):
        self.node, self.device, self.pid = node, device, pid
        self.nvtx = []      # (start, end, text)
        self.kernels = []   # (start, end, stream, name)
        self.t = 1_000_000 + device * 1_000    # host clock, ns
        self.mark("nsys profiling start, pid: %d" % pid)

    def mark(self, text, length=0):
        self.nvtx.append((self.t, self.t + length, text))
        self.t += 100

    def range(self, text, body):
        start = self.t
        self.t += 100
        body()
        self.t += 100
        self.nvtx.append((start, self.t, text))


class Comm:
    def __init__(self, comm_id, gpus, rings, trees=None, p2p_channels=2):
        self.id, self.gpus, self.rings = comm_id, gpus, rings
        self.trees = trees or []
        self.hash = comm_id ^ 0x5A5A5A5A5A5A5A5A
        self.p2p_channels = p2p_channels

    def rank(self, gpu):
        return self.gpus.index(gpu)


def init_comm(comm):
    n = len(comm.gpus)
    for r, g in enumerate(comm.gpus):
        def body(r=r, g=g):
            g.mark("%d coll channels, 0 nvls channels, %d p2p channels, %d p2p channels per peer, pid %d"
                   % (len(comm.rings), comm.p2p_channels * 2, comm.p2p_channels, g.pid))
            for c, ring in enumerate(comm.rings):
                i = ring.index(r)
                g.mark("commHash 0x%x Rings [%d] %d->%d->%d pid %d"
                       % (comm.hash, c, ring[i - 1], r, ring[(i + 1) % n], g.pid))
            for c, tree in enumerate(comm.trees):
                down, up = tree[r]
                d = (down + [-1, -1, -1])[:3]
                g.mark("commHash 0x%x Trees [%d] %d/%d/%d->%d->%d pid %d"
                       % (comm.hash, c, d[0], d[1], d[2], r, up, g.pid))
        g.range("commHash 0x%x commId 0x%x rank %d nranks %d pid %d"
                % (comm.hash, comm.id, r, n, g.pid), body)


def div_up(a, b):
    return (a + b - 1) // b


def work_elems(func, count, type_size, nranks, nchannels, proto):
    """NCCL-like split of `count` elements over the channels: workCount per channel in
    multiples of 16 bytes, chunkCount the chunk of one ring step."""
    align = max(1, 16 // type_size)
    per = div_up(div_up(count, nchannels), align) * align
    chunk_bytes = STEP_SIZE[proto] * CHUNK_STEPS[func]
    elems, offset = [], 0
    for _ in range(nchannels):
        work = max(0, min(per, count - offset))
        # All-reduce loops over nranks chunks at a time; the others over chunks of the block.
        share = div_up(work, nranks) if func == "AllReduce" else work
        chunk = min(chunk_bytes // type_size, max(align, div_up(share, align) * align))
        last = div_up(div_up(work, nranks), align) * align if work else 0
        elems.append((count, chunk, work, last, offset))
        offset += work
    return elems, chunk_bytes


def collective(comm, func, nbytes, type_size, algo, proto, stream, gaps, root=0, nchannels=None):
    """Every member calls `func` on `nbytes` after its compute gap (ns) on its GPU."""
    nchannels = nchannels or len(comm.rings)
    n = len(comm.gpus)
    count = nbytes // type_size
    for g in comm.gpus:
        elems, chunk_bytes = work_elems(func, count, type_size, n, nchannels, proto)
        start = max(g.kernel_end(stream) + gaps[g], g.t)
        g.t = start
        api = {"AllReduce": "ncclAllReduce(): commHash 0x%x, stream %s, data_size %d, type_size %d, red_op 0, pid %d",
               "AllGather": "ncclAllGather(): commHash 0x%x, stream %s, data_size %d, type_size %d, pid %d",
               "ReduceScatter": "ncclReduceScatter(): commHash 0x%x, stream %s, data_size %d, type_size %d, red_op 0, pid %d",
               "Broadcast": "ncclBroadcast(): commHash 0x%x, stream %s, data_size %d, type_size %d, root %d, pid %d",
               "Reduce": "ncclReduce(): commHash 0x%x, stream %s, data_size %d, type_size %d, red_op 0, root %d, pid %d"}[func]
        args = (comm.hash, stream, nbytes, type_size) + ((root,) if func in ("Broadcast", "Reduce") else ()) + (g.pid,)
        if func == "Reduce":
            args = (comm.hash, stream, nbytes, type_size, root, g.pid)

        def body(g=g, elems=elems, chunk_bytes=chunk_bytes):
            g.mark("collType %d root %d redOp 0 algo %d proto %d commHash 0x%x stream %s data_size %d "
                   "type_size %d chunkSize %d chunkCount %d chunkSteps %d sliceSteps %d stepSize %d pid %d"
                   % (FUNC[func], root, ALGO[algo], PROTO[proto], comm.hash, stream, nbytes, type_size,
                      chunk_bytes, elems[0][1], CHUNK_STEPS[func], SLICE_STEPS[func], STEP_SIZE[proto], g.pid))
            for (cnt, chunk, work, last, off) in elems:
                g.mark("nWarps 16 count %d chunkCount %d workCount %d lastChunkCount %d workOffset %d "
                       "sendbuff 139872 recvbuff 139872 pid %d" % (cnt, chunk, work, last, off, g.pid))
            g.range("ncclLaunchKernel(): pid %d" % g.pid, lambda: None)
        g.range(api % args, body)
        g.launch(stream, "ncclDevKernel_%s_RING_LL(ncclDevComm *, unsigned long, ncclWork *)" % func,
                 start + 5_000, 20_000 + nbytes // 100)


def sendrecv(comm, pairs, nbytes, proto, stream, gaps):
    """One grouped launch per GPU: its sends and recvs of `pairs` (src, dst comm ranks)."""
    for g in comm.gpus:
        me = comm.rank(g)
        ops = [("send", d) for (s, d) in pairs if s == me] + [("recv", s) for (s, d) in pairs if d == me]
        if not ops:
            continue
        start = max(g.kernel_end(stream) + gaps[g], g.t)
        g.t = start
        g.range("ncclGroupStart(): pid %d" % g.pid, lambda: None)
        for kind, peer in ops:
            if kind == "send":
                g.range("ncclSend(): commHash 0x%x, stream %s, data_size %d, type_size 1, receiver_rank %d, pid %d"
                        % (comm.hash, stream, nbytes, peer, g.pid), lambda: None)
            else:
                g.range("ncclRecv(): commHash 0x%x, stream %s, data_size %d, type_size 1, sender_rank %d, pid %d"
                        % (comm.hash, stream, nbytes, peer, g.pid), lambda: None)

        def body(g=g, ops=ops):
            # NCCL splits each transfer over the peer's p2p channels.
            for kind, peer in ops:
                part = div_up(nbytes, comm.p2p_channels)
                for c in range(comm.p2p_channels):
                    b = max(0, min(part, nbytes - c * part))
                    g.mark("Bytes %d nWarps 8 p2pType %d peer %d proto %d countHi32 0 countLo32 %d "
                           "chunkSize 131072 pid %d" % (b, 1 if kind == "send" else 2, peer, PROTO[proto], b, g.pid))
            g.range("ncclLaunchKernel(): pid %d" % g.pid, lambda: None)
        g.range("ncclGroupEnd(): pid %d" % g.pid, body)
        g.launch(stream, "ncclDevKernel_SendRecv(ncclDevComm *, unsigned long, ncclWork *)", start + 5_000,
                 30_000)


def _kernel_end(self, stream):
    ends = [e for (s, e, st, n) in self.kernels if st == stream]
    return max(ends) if ends else self.t


def _launch(self, stream, name, start, length):
    self.kernels.append((start, start + length, stream, name))


Gpu.kernel_end = _kernel_end
Gpu.launch = _launch


def write_node(path, host, gpus):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
        CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL,
            name TEXT NOT NULL, nameEnum INTEGER NOT NULL, value TEXT NOT NULL);
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
            rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
            endGlobalTid INTEGER, textId INTEGER REFERENCES StringIds(id), domainId INTEGER,
            uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
            int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
            deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
            correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
            shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
            registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
            gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
            blockZ INTEGER NOT NULL);
    """)
    db.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'Default', 'Hostname', 1, ?)", (host,))
    db.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'Default', 'OS', 2, 'Linux')")
    strings = {}

    def sid(s):
        if s not in strings:
            strings[s] = len(strings) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[s], s))
        return strings[s]

    for g in gpus:
        end = max([e for (s_, e, t) in g.nvtx] + [e for (s_, e, st, n) in g.kernels]) + 1_000
        g.nvtx.append((end, end, "nsys profiling stopped, pid: %d" % g.pid))
        gpid = (g.pid << 24) | 1
        db.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (gpid, g.pid))
        tid = gpid | 7
        for i, (start, end, text) in enumerate(sorted(g.nvtx)):
            # Marks have no end (eventType 34), ranges do (59, push/pop); like nsys, every
            # other registered string goes through StringIds.
            mark = start == end
            if i % 2:
                db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) "
                           "VALUES (?, ?, ?, ?, ?, 0)", (start, None if mark else end, 34 if mark else 59, sid(text), tid))
            else:
                db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                           "VALUES (?, ?, ?, ?, ?, 0)", (start, None if mark else end, 34 if mark else 59, text, tid))
        streams = {}
        for (start, end, stream, name) in g.kernels:
            sidn = streams.setdefault(stream, 7 + 2 * len(streams))
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, ?, 0, ?, ?, ?, ?, 0, 0, "
                       "96, 2, 1, 1, 640, 1, 1)",
                       (start, end, g.device, sidn, gpid, sid(name), sid(name.split("(")[0]), sid(name)))
        # Other GPU work the tools must ignore.
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, 3, 0, ?, ?, ?, ?, 0, 0, 64, 1, 1, 1, "
                   "256, 1, 1)", (g.t + 50_000, g.t + 60_000, g.device, gpid, sid("ampere_sgemm_128x64_nn"),
                                  sid("ampere_sgemm"), sid("ampere_sgemm_128x64_nn")))
    db.commit()
    db.close()


def cluster(nodes, per_node):
    gpus = [[Gpu(n, d, 4000 + 100 * n + d) for d in range(per_node)] for n in range(nodes)]
    return gpus, [g for node in gpus for g in node]


def standard_comm(flat):
    n = len(flat)
    ring0 = list(range(n))
    # Channel 1: each node's GPUs in reverse order, nodes in order.
    per = n // 2
    ring1 = [b * per + per - 1 - i for b in range(2) for i in range(per)]
    trees = []
    for c in range(2):
        # A chain inside each node, the node leaders joined: what NCCL's trees look like.
        # Channel 0's chains start at each node's first GPU and node 0 is the root;
        # channel 1's start at the last GPU and node 1 is the root.
        def rank(node, pos):
            return node * per + (pos if c == 0 else per - 1 - pos)
        root_node = c
        tree = {}
        for node in range(2):
            for pos in range(per):
                r = rank(node, pos)
                down = [rank(node, pos + 1)] if pos + 1 < per else []
                up = rank(node, pos - 1) if pos > 0 else -1
                if pos == 0 and node == root_node:
                    down.append(rank(1 - node, 0))
                if pos == 0 and node != root_node:
                    up = rank(root_node, 0)
                tree[r] = (down, up)
        trees.append(tree)
    return Comm(0x1234, flat, [ring0, ring1], trees)


def scenario_basic(func, nbytes, algo, proto, type_size=4, root=0):
    def make(out):
        nodes, flat = cluster(2, 4)
        comm = standard_comm(flat)
        init_comm(comm)
        gaps = {g: 50_000 + 1_000 * i for i, g in enumerate(flat)}
        collective(comm, func, nbytes, type_size, algo, proto, "0x5581a0", gaps, root=root)
        collective(comm, func, nbytes, type_size, algo, proto, "0x5581a0", {g: 200_000 for g in flat}, root=root)
        return nodes
    return make


def scenario_sendrecv(proto):
    def make(out):
        nodes, flat = cluster(2, 4)
        comm = standard_comm(flat)
        init_comm(comm)
        n = len(flat)
        pairs = [(r, (r + 1) % n) for r in range(n)] + [(r, (r + 4) % n) for r in range(n)]
        sendrecv(comm, pairs, 65536, proto, "0x5581a0", {g: 10_000 for g in flat})
        return nodes
    return make


def scenario_llama(out, nodes=4, gpus=8, layers=4, channels=1):
    """examples/llama_like.goal's run, traced: 4 nodes x 8 GPUs, tensor parallelism inside
    a node (ring all-reduce of the activations), data parallelism across nodes (ring
    all-reduce of each layer's gradients on a second stream). Larger runs for
    benchmarks: llama:nodes=16,gpus=8,layers=32,channels=4."""
    NODES, GPUS, LAYERS = nodes, gpus, layers
    FWD_NS, BWD_NS = 500_000, 1_000_000
    nodes, flat = cluster(NODES, GPUS)
    tp = [Comm(0x7000 + n, nodes[n], [list(range(GPUS))] * channels) for n in range(NODES)]
    dp = [Comm(0x80000 + d, [nodes[n][d] for n in range(NODES)], [list(range(NODES))] * channels)
          for d in range(GPUS)]
    for c in tp + dp:
        init_comm(c)
    for _ in range(LAYERS):
        for c in tp:
            collective(c, "AllReduce", 16 * 1024 * 1024, 2, "Ring", "Simple", "0x1000", {g: FWD_NS for g in c.gpus},
                       nchannels=channels)
    for _ in range(LAYERS):
        for c in tp:
            collective(c, "AllReduce", 16 * 1024 * 1024, 2, "Ring", "Simple", "0x1000", {g: BWD_NS for g in c.gpus},
                       nchannels=channels)
        for c in dp:
            collective(c, "AllReduce", 48 * 1024 * 1024, 2, "Ring", "Simple", "0x2000", {g: 0 for g in c.gpus},
                       nchannels=channels)
    return nodes


def scenario_one_node(out):
    """One node of 4 GPUs running a bit of everything (the fuzz target's seed)."""
    nodes, flat = cluster(1, 4)
    tree = {0: ([1], -1), 1: ([2, 3], 0), 2: ([], 1), 3: ([], 1)}
    comm = Comm(0x99, flat, [[0, 1, 2, 3], [0, 2, 1, 3]], [tree, tree])
    init_comm(comm)
    gaps = {g: 1_000 for g in flat}
    collective(comm, "AllReduce", 4096, 4, "Ring", "LL", "0x10", gaps)
    collective(comm, "AllReduce", 8192, 2, "Tree", "Simple", "0x10", gaps)
    collective(comm, "AllGather", 1024, 4, "Ring", "LL128", "0x10", gaps)
    collective(comm, "Reduce", 2048, 4, "Ring", "Simple", "0x10", gaps, root=2)
    sendrecv(comm, [(0, 3), (3, 0), (1, 2)], 4096, "Simple", "0x10", gaps)
    return nodes


SCENARIOS = {
    "allreduce-ring-simple": scenario_basic("AllReduce", 1 << 20, "Ring", "Simple"),
    "allreduce-ring-ll": scenario_basic("AllReduce", 8192, "Ring", "LL"),
    "allreduce-tree-ll128": scenario_basic("AllReduce", 65536, "Tree", "LL128"),
    "allgather-ring-ll128": scenario_basic("AllGather", 16384, "Ring", "LL128"),
    "reducescatter-ring-simple": scenario_basic("ReduceScatter", 65536, "Ring", "Simple"),
    "broadcast-ring-ll": scenario_basic("Broadcast", 8192, "Ring", "LL", root=5),
    "sendrecv-simple": scenario_sendrecv("Simple"),
    "sendrecv-ll": scenario_sendrecv("LL"),
    "llama": scenario_llama,
    "one-node": scenario_one_node,
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    names = sys.argv[2:] or list(SCENARIOS)
    for spec in names:
        # name, or name:key=value,... (the scenario's parameters, e.g. llama:nodes=16)
        name, _, params = spec.partition(":")
        if name not in SCENARIOS:
            sys.exit("unknown scenario '%s'; scenarios: %s" % (name, ", ".join(SCENARIOS)))
        kwargs = {k: int(v) for k, v in (p.split("=") for p in params.split(",") if p)}
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        nodes = SCENARIOS[name](folder, **kwargs)
        for n, gpus in enumerate(nodes):
            write_node(os.path.join(folder, "node%d.sqlite" % n), "node%d" % n, gpus)


if __name__ == "__main__":
    main()
