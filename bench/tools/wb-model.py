#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""wb-model: how much a writeback policy writes to the origin (issue 45,
item 1: model it first).

The cache is assoc-model.py's with two chunks a set (the core's slot pair,
its placement and write rule, its forced writeback of the victim alone), and
the same closed-loop client and one-server origin: a batch of n chunks costs
n * W + F in PM writes. What differs is the worker:

  - "today": as the target runs under sustained writes, batches back to back
    while anything is dirty, in PM order from a wrapping cursor (a collision
    makes full passes due for FR_WB_COLLIDED_MS, 250 ms, and under load one
    comes at least that often);
  - "need": writeback by need. Nothing is written back while at most HI of
    the PM is dirty; above it, batches run until at most LO is dirty, the
    chunks of sets whose both chunks are dirty first (the next write there
    would have to wait), then the rest in PM order. A collision still cleans
    its own victim, alone, as today;
  - "need+full": the same, and besides, at any fill level, the sets whose
    both chunks are dirty (only those) as soon as there are any: a write
    there would otherwise wait for its victim.

Counted per run, in the steady state (after 4 PMs' worth of writes, over 8):
chunks written back per chunk written, origin requests per chunk written
back (a batch's chunks are sent sorted by origin offset and adjacent ones
merged, as fr-stage.c does), forced waits per 1000 writes, throughput (1.00
= PM speed).

The traces are synthetic (the bench records no block traces): "uniform/2"
rewrites a working set half the PM's size; "fs-mix" is a file system's
shape, 40 % a journal written in a circle over an eighth of the PM, 30 %
metadata (zipf 1.2 over 1 % of the key space) and 30 % data (uniform over
twice the PM); "uniform/4" and "sequential/4" overflow the PM four times.
A model, not a measurement: it has no idle time (the target also writes
back when idle), one client, and no reads.

With --trace FILE (lines "SECTOR SECTORS FLAGS": the write bios a dm-fr
device received, as `BENCH_TRACE=1 make bench` records them in trace/) the
client writes that trace's 4 KiB chunks instead, once through, from an empty
cache, and the whole run is counted.

Usage: wb-model.py [--chunks C] [--w W] [--f F] [--hi H] [--lo L] [--quick]
       wb-model.py --trace FILE... [--chunks C] [--think T]
Prints markdown. Deterministic (fixed seeds).
"""
import argparse
import importlib.util
import os
import random
import sys

_spec = importlib.util.spec_from_file_location(
    "assoc_model", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "assoc-model.py"))
assoc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(assoc)


class Cache(assoc.Cache):
    def __init__(self, chunks, policy, w, f, hi, lo, think=1.0):
        super().__init__(chunks, 2, "victim",
                         "positional" if policy == "today" else "pressure",
                         w, f)
        self.policy, self.hi, self.lo = policy, hi * chunks, lo * chunks
        self.draining = False
        self.think = think
        self.origin_chunks = 0
        self.origin_requests = 0

    def complete(self, batch):
        # Sent sorted by origin offset, adjacent chunks merged (fr-stage.c).
        keys = sorted(self.key[c] for c, _ in batch if self.key[c] >= 0)
        self.origin_chunks += len(batch)
        self.origin_requests += sum(1 for i, k in enumerate(keys)
                                    if i == 0 or k != keys[i - 1] + 1)
        self.origin_requests += sum(1 for c, _ in batch if self.key[c] < 0)
        super().complete(batch)

    def write(self, k):
        super().write(k)
        # The client's time between writes beyond the PM write itself
        # (a file system's work and fsync waits): the worker's time too.
        self.now += self.think - 1.0

    def full_sets_left(self):
        while self.full_sets and not all(
                self.dirty[2 * self.full_sets[-1]:2 * self.full_sets[-1] + 2]):
            self.full_sets.pop()
        return bool(self.full_sets)

    def pick_worker_batch(self):
        if self.policy == "need+full" and not self.draining:
            out = []
            while self.full_sets and len(out) < assoc.BATCH:
                base = 2 * self.full_sets.pop()
                if self.dirty[base] and self.dirty[base + 1]:
                    out += [base, base + 1]
            return out
        return super().pick_worker_batch()

    def run_worker(self, until):
        if self.policy != "today" and self.batch is None:
            if self.ndirty > self.hi:
                self.draining = True
            elif self.ndirty <= self.lo:
                self.draining = False
            if not self.draining and not (self.policy == "need+full" and
                                          self.full_sets_left()):
                self.batch_end = until
                return
        super().run_worker(until)


def fs_mix(keys, pm, n, seed):
    rnd = random.Random(seed)
    journal, meta = pm // 8, max(16, keys // 100)
    cum, acc = [], 0.0
    for i in range(meta):
        acc += 1.0 / (i + 1) ** 1.2
        cum.append(acc)
    jpos = 0
    for _ in range(n):
        x = rnd.random()
        if x < 0.4:
            yield jpos
            jpos = (jpos + 1) % journal
        elif x < 0.7:
            r = rnd.random() * acc
            lo, hi = 0, meta - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if cum[mid] < r:
                    lo = mid + 1
                else:
                    hi = mid
            yield journal + lo
        else:
            yield journal + meta + rnd.randrange(2 * pm)


def trace(kind, pm, n):
    if kind == "uniform/2":
        return assoc.trace("uniform", pm // 2, n, 1)
    if kind == "uniform/4":
        return assoc.trace("uniform", 4 * pm, n, 1)
    if kind == "sequential/4":
        return assoc.trace("sequential", 4 * pm, n, 1)
    if kind == "fs-mix":
        return fs_mix(4 * pm, pm, n, 1)
    raise SystemExit("unknown trace " + kind)


def run(args, kind, policy):
    C = args.chunks
    c = Cache(C, policy, args.w, args.f, args.hi, args.lo)
    it = trace(kind, C, (4 + args.steady) * C)
    for _ in range(4 * C):
        c.write(next(it))
    o0, r0, w0, t0, n0 = c.origin_chunks, c.origin_requests, c.waits, c.now, c.nwrites
    for _ in range(args.steady * C):
        c.write(next(it))
    n = c.nwrites - n0
    ochunks, oreq = c.origin_chunks - o0, c.origin_requests - r0
    return (ochunks / n, oreq / ochunks if ochunks else 0.0,
            1000.0 * (c.waits - w0) / n, n / (c.now - t0))


def trace_keys(path):
    with open(path) as fh:
        for line in fh:
            f = line.split()
            if len(f) < 2:
                continue
            sector, n = int(f[0]), int(f[1])
            for k in range(sector >> 3, (sector + max(n, 1) - 1 >> 3) + 1):
                yield k


def run_trace(args, path, policy):
    c = Cache(args.chunks, policy, args.w, args.f, args.hi, args.lo,
              args.think)
    for k in trace_keys(path):
        c.write(k)
    n = c.nwrites
    return (n, c.origin_chunks / n if n else 0.0,
            c.origin_requests / c.origin_chunks if c.origin_chunks else 0.0,
            1000.0 * c.waits / n if n else 0.0, n / c.now if c.now else 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    assoc.add_cost_args(ap)
    ap.add_argument("--hi", type=float, default=0.5,
                    help="need: writeback starts above this dirty fraction")
    ap.add_argument("--lo", type=float, default=0.25,
                    help="need: and stops at this one")
    ap.add_argument("--quick", action="store_true",
                    help="a small run (512 chunks, 2 PMs' worth)")
    ap.add_argument("--think", type=float, default=1.0,
                    help="--trace: the client's time per chunk written, in PM"
                    " writes (default 1: back to back)")
    ap.add_argument("--trace", nargs="+", metavar="FILE",
                    help="replay recorded write bios instead (see above)")
    args = ap.parse_args()
    if args.trace:
        print(f"# wb-model: recorded traces, {args.chunks} chunks of PM, 2 a"
              f" slot; an origin chunk write costs {args.w:g} PM writes, a"
              f" flush {args.f:g}; need: from {args.hi:g} down to"
              f" {args.lo:g} dirty; the client takes {args.think:g} per"
              f" chunk written\n")
        print("Each trace once through, from an empty cache.\n")
        print("| trace | chunks written | policy | written back / written |"
              " requests / chunk written back | forced / 1000 | throughput |")
        print("|---|---:|---|---:|---:|---:|---:|")
        for path in args.trace:
            for policy in ("today", "need", "need+full"):
                n, wb, rq, fw, tp = run_trace(args, path, policy)
                print(f"| {os.path.basename(path)} | {n} | {policy} |"
                      f" {wb:.3f} | {rq:.3f} | {fw:.0f} | {tp:.3f} |")
                sys.stdout.flush()
        return
    args.steady = 8
    if args.quick:
        args.chunks, args.steady = 512, 2
    print(f"# wb-model: {args.chunks} chunks of PM, 2 a slot; an origin chunk"
          f" write costs {args.w:g} PM writes, a flush {args.f:g}; need:"
          f" from {args.hi:g} down to {args.lo:g} dirty\n")
    print(f"Steady state ({args.steady} PMs' worth of writes after 4). Per chunk written:"
          " chunks written back; per chunk written back: origin requests (1.00:"
          " no two merged); forced waits per 1000 writes; throughput (1.00 ="
          " PM speed).\n")
    print("| trace | policy | written back / written | requests / chunk"
          " written back | forced / 1000 | throughput |")
    print("|---|---|---:|---:|---:|---:|")
    for kind in ("uniform/2", "fs-mix", "uniform/4", "sequential/4"):
        for policy in ("today", "need", "need+full"):
            wb, rq, fw, tp = run(args, kind, policy)
            print(f"| {kind} | {policy} | {wb:.3f} | {rq:.3f} | {fw:.0f} |"
                  f" {tp:.3f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
