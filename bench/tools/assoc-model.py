#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""assoc-model: what writes larger than the PM cost against the cache's
associativity and its writeback policy (issue 25, items 1, 2 and 4).

The cache is the placement and write rule of dm-fr/core/fr-slot.c, generalised
from a slot pair to a set of A chunks:

  - origin chunk k of region r = k / R, offset o = k % R, lives in set
    (r * stride + o) mod S, S = C / A sets of A chunks (C chunks of PM),
    stride = R + 1, the default (docs/design.md, "Placement without an
    index"); A = 2 is today's pair;
  - a write is out of place: it needs a chunk of its set that is not its
    key's current copy and is not dirty (an invalid one first, then the
    clean one written longest ago: plan_slot's "prefer a clean one, then
    the older"), and the old copy is dropped after it. If every other chunk
    of the set is dirty, the write waits for a forced writeback of the
    oldest of them (FR_WRITE_NEED_CLEAN).

Time is counted in PM writes (one client write that does not wait costs
1). The origin is one server, as wb_lock makes it: a batch of n chunks costs
n * W + F (W an origin chunk write, F an origin flush), and a chunk is clean
when its batch completes. The writeback worker runs batches of 64 back to
back while anything is dirty (under sustained writes the target's worker
runs pass after pass: a collision turns its deferral off), chosen in PM
order from a wrapping cursor ("positional", today) or chunks of sets whose
every chunk is dirty first ("pressure", item 2). A write that must wait
waits for the worker's batch in flight, and then, if its set still has no
room, for its own forced batch: 64 dirty chunks from the victim on in PM
order ("batch64"; until 2026-11-26 the target wrote that batch even when
the batch it waited for had cleaned the victim: "batch64-always") or the
victim alone
("victim", item 1); or it
writes the victim alone beside the worker's batch, without waiting for it
("parallel": writeback that does not hold one lock from stage to flush,
item 3; the origin takes both at once). The client is one thread at queue
depth 1 (a closed loop).

Reported per configuration: throughput (writes per unit time, 1.00 = PM
speed), forced waits per 1000 writes, and the 99.9th percentile of a
write's time; "burst" over the first PM's worth of writes from an empty
cache, "steady" over 8 PMs' worth after 4 PMs' worth of warm-up.

Usage: assoc-model.py [--chunks C] [--w W] [--f F] [--quick]
       assoc-model.py --check TRACE SLOTS REGION STRIDE N OUT
Prints markdown. Deterministic (fixed seeds).
"""
import argparse
import bisect
import random
import sys

REGION = 256  # chunks per region: 1 MiB of 4 KiB chunks, the default
BATCH = 64    # writeback_jobs, the default


class Cache:
    def __init__(self, chunks, ways, forced, worker, w, f, region=REGION,
                 stride=None):
        self.C, self.A = chunks, ways
        self.S = chunks // ways
        self.region = region
        self.stride = region + 1 if stride is None else stride
        self.key = [-1] * chunks
        self.dirty = [False] * chunks
        self.stamp = [0] * chunks   # the write that put the current data
        self.where = {}
        self.ndirty = 0
        self.full_sets = []         # sets that became all dirty (pressure)
        self.forced, self.worker = forced, worker
        self.w, self.f = w, f
        self.cursor = 0
        self.nwrites = 0
        self.now = 0.0              # the client's clock
        self.batch = None           # the worker's batch in flight
        self.batch_end = 0.0
        self.waits = 0
        self.lat = []

    def set_of(self, k):
        r, o = divmod(k, self.region)
        return (r * self.stride + o) % self.S

    def next_dirty(self, start):
        """The first dirty chunk at or after start in PM order (wrapping)."""
        c = start
        for _ in range(self.C):
            if self.dirty[c]:
                return c
            c = c + 1 if c + 1 < self.C else 0
        return -1

    def positional(self, start, n, taken):
        out, c = [], start
        while len(out) < n:
            c = self.next_dirty(c)
            if c < 0 or c in taken:
                break
            out.append(c)
            taken.add(c)
            c = c + 1 if c + 1 < self.C else 0
        return out, c

    def pick_worker_batch(self):
        taken, out = set(), []
        if self.worker == "pressure":
            while self.full_sets and len(out) < BATCH:
                s = self.full_sets.pop()
                base = s * self.A
                if all(self.dirty[base:base + self.A]):
                    for c in range(base, base + self.A):
                        if c not in taken:
                            out.append(c)
                            taken.add(c)
        more, self.cursor = self.positional(self.cursor, BATCH - len(out),
                                            taken)
        return out + more

    def complete(self, batch):
        """Origin written and flushed: what is still that data is clean."""
        for c, stamp in batch:
            if self.dirty[c] and self.stamp[c] == stamp:
                self.dirty[c] = False
                self.ndirty -= 1

    def run_worker(self, until):
        """The worker's batches that complete by time until."""
        while self.worker != "none":
            if self.batch is not None:
                if self.batch_end > until:
                    return
                self.complete(self.batch)
                start = self.batch_end
                self.batch = None
            else:
                start = max(self.batch_end, 0.0)
            if not self.ndirty or self.worker_idle():
                # Idle: it starts again once something is dirty.
                self.batch_end = until
                return
            chunks = self.pick_worker_batch()
            if not chunks:
                self.batch_end = until
                return
            self.batch = [(c, self.stamp[c]) for c in chunks]
            self.batch_end = max(start, self.batch_end) + \
                self.batch_cost(chunks)

    def worker_idle(self):
        """Whether the worker leaves dirty data alone (a policy's hook)."""
        return False

    def batch_cost(self, chunks):
        """A batch's time on the origin: a write a chunk and a flush."""
        return len(chunks) * self.w + self.f

    def room(self, base, cur):
        free = clean = oldest_dirty = -1
        for c in range(base, base + self.A):
            if c == cur:
                continue
            if self.key[c] < 0:
                return c, -1
            if not self.dirty[c]:
                if clean < 0 or self.stamp[c] < self.stamp[clean]:
                    clean = c
            elif oldest_dirty < 0 or self.stamp[c] < self.stamp[oldest_dirty]:
                oldest_dirty = c
        return clean, oldest_dirty

    def write(self, k):
        self.nwrites += 1
        start = self.now
        self.run_worker(self.now)
        s = self.set_of(k)
        base = s * self.A
        cur = self.where.get(k, -1)
        dst, victim = self.room(base, cur)
        if dst < 0:
            self.waits += 1
            # wb_lock: the worker's batch in flight first (not with
            # "parallel": the victim's origin write beside it).
            if self.batch is not None and \
                    not self.forced.startswith("parallel"):
                self.now = max(self.now, self.batch_end)
                self.complete(self.batch)
                self.batch = None   # the forced batch goes next
                if self.forced != "batch64-always":
                    dst, victim = self.room(base, cur)
            if dst < 0:
                if self.forced.startswith("batch64"):
                    chunks, _ = self.positional(victim, BATCH, set())
                elif self.forced == "parallel-set":
                    # The victim's whole set: one flush for all its dirty
                    # chunks (fr_writeback_from over the victim's slot).
                    chunks = [c for c in range(base, base + self.A)
                              if self.dirty[c]]
                else:
                    chunks = [victim]
                self.forced_chunks = chunks
                if self.forced.startswith("parallel"):
                    self.now += len(chunks) * self.w + self.f
                else:
                    self.now = max(self.now, self.batch_end) + \
                        len(chunks) * self.w + self.f
                    self.batch_end = self.now
                self.complete([(c, self.stamp[c]) for c in chunks])
                dst, victim = self.room(base, cur)
                assert dst >= 0
        if self.key[dst] >= 0:
            del self.where[self.key[dst]]
        if cur >= 0:
            self.key[cur] = -1
            if self.dirty[cur]:
                self.dirty[cur] = False
                self.ndirty -= 1
        self.key[dst] = k
        self.where[k] = dst
        self.dirty[dst] = True
        self.ndirty += 1
        self.stamp[dst] = self.nwrites
        if self.worker == "pressure" and all(self.dirty[base:base + self.A]):
            self.full_sets.append(s)
        self.now += 1.0
        self.lat.append(self.now - start)


def trace(kind, keys, n, seed):
    rnd = random.Random(seed)
    if kind == "uniform":
        for _ in range(n):
            yield rnd.randrange(keys)
    elif kind.startswith("zipf"):
        theta = float(kind[4:])
        cum, acc = [], 0.0
        for i in range(keys):
            acc += 1.0 / (i + 1) ** theta
            cum.append(acc)
        # A random permutation: the hot keys are not all in one region.
        perm = list(range(keys))
        rnd.shuffle(perm)
        for _ in range(n):
            yield perm[bisect.bisect_left(cum, rnd.random() * acc)]
    elif kind == "sequential":
        for i in range(n):
            yield i % keys
    else:
        raise SystemExit("unknown trace " + kind)


def measure(c, keys_iter, n):
    t0, w0 = c.now, c.waits
    c.lat = []
    for _ in range(n):
        c.write(next(keys_iter))
    lat = sorted(c.lat)
    p999 = lat[min(len(lat) - 1, int(len(lat) * 0.999))]
    return n / (c.now - t0), 1000.0 * (c.waits - w0) / n, p999


def run(args, ways, forced, worker, kind, keys):
    C = args.chunks
    c = Cache(C, ways, forced, worker, args.w, args.f)
    it = trace(kind, keys, 13 * C, 1)
    burst = measure(c, it, C)
    measure(c, it, 3 * C)
    steady = measure(c, it, args.steady * C)
    return burst, steady


def check(args):
    """--check: a 2-way cache with the core's geometry and no worker, its
    forced waits on a trace that is written out for bench/tools/
    assoc-check.c to replay through the real core."""
    kind, slots, region, stride, n, out = args.check
    slots, region, stride, n = int(slots), int(region), int(stride), int(n)
    c = Cache(2 * slots, 2, "victim", "none", 0.0, 0.0, region, stride)
    with open(out, "w") as f:
        for k in trace(kind, 4 * 2 * slots, n, 3):
            f.write(f"{k}\n")
            c.write(k)
    print(f"writes {n} forced {c.waits}")


def add_cost_args(ap):
    """The PM's size and the origin's costs (wb-model.py shares them)."""
    ap.add_argument("--chunks", type=int, default=4096)
    ap.add_argument("--w", type=float, default=10.0,
                    help="an origin chunk write, in PM writes (default 10)")
    ap.add_argument("--f", type=float, default=40.0,
                    help="an origin flush, in PM writes (default 40)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_cost_args(ap)
    ap.add_argument("--quick", action="store_true",
                    help="a small run (for the host test)")
    ap.add_argument("--check", nargs=6, metavar=("TRACE", "SLOTS", "REGION",
                                                 "STRIDE", "N", "OUT"),
                    help="write a trace to OUT and print the 2-way model's"
                    " forced waits on it, no worker (bench/tools/"
                    "assoc-check.c replays it through the real core)")
    args = ap.parse_args()
    if args.check:
        check(args)
        return
    args.steady = 8
    traces = ["uniform", "zipf0.9", "zipf1.2", "sequential"]
    ways_list = [2, 4, 8]
    policies = [("batch64", "positional"), ("victim", "positional"),
                ("batch64", "pressure"), ("victim", "pressure"),
                ("parallel", "positional"), ("parallel", "pressure")]
    if args.quick:
        args.chunks, args.steady = 1024, 4
        traces = ["uniform", "sequential"]
        policies = [("batch64", "positional"), ("parallel", "pressure")]
    C = args.chunks
    print(f"# assoc-model: {C} chunks of PM, key space 4 x PM (region"
          f" {REGION} chunks, stride {REGION + 1}); an origin chunk write"
          f" costs {args.w:g} PM writes, a flush {args.f:g}\n")
    print("Each cell: throughput (1.00 = PM speed) / forced waits per 1000"
          " writes / p99.9 of a write's time (PM writes). burst: the first"
          f" PM's worth of writes from an empty cache; steady: {args.steady}"
          " PMs' worth after 4.\n")
    for kind in traces:
        print(f"## {kind}\n")
        print("| phase | forced / worker | " + " | ".join(
            f"{w}-way" for w in ways_list) + " |")
        print("|" + "---|" * (2 + len(ways_list)))
        for forced, worker in policies:
            res = [run(args, w, forced, worker, kind, 4 * C)
                   for w in ways_list]
            for i, phase in enumerate(("burst", "steady")):
                cells = [f"{r[i][0]:.3f} / {r[i][1]:.0f} / {r[i][2]:.0f}"
                         for r in res]
                print(f"| {phase} | {forced} / {worker} | "
                      + " | ".join(cells) + " |")
            sys.stdout.flush()
        print()


if __name__ == "__main__":
    main()
