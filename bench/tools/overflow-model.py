#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""overflow-model: what random writes larger than the PM cost the origin, by
associativity and writeback policy, beside a model of dm-writecache (issue
45: the random-overflow goals, >= 1.0x dm-writecache, <= 0.85 origin bytes
per byte written, origin requests >= 6 KiB).

assoc-model.py and wb-model.py price an origin write per chunk. Measured,
the origin here is bound by requests, not bytes: in overflow_rand both
caches got about 11,000 requests a second from it, dm-fr's of 4.1 KiB and
dm-writecache's of 5.6 KiB (bench/results/wb-drain). So here a batch
written back costs Q per origin request (adjacent chunks merged into one),
B per chunk in it, and F for the flush that ends it; a conflicted write's
victim, written alone, costs Q1 + B + F. The unit is a 4 KiB write of the
client to PM (raw PM at QD1: 25,000 a second, 40 us). The defaults are
fitted to overflow_rand's measured rates (bench/results/wb-drain, runs.csv):
Q 0.9 (the origin took 27,000 random 4 KiB writes a second at depth,
origin-max), Q1 15 (1,700 a second at QD1), F 150: dm-fr's mean write took
26 us longer than dm-writecache's, at 3.5 forced waits per 1000 writes,
7.4 ms a wait, of which the flush is the most (the host's fdatasync).

dm-fr (A chunks a set; A = 2 is the core's slot pair; assoc-model.py's
placement and write rule, a conflicted write's victim written alone beside
the worker's batch, as the target does):

  - "drain": the target today under sustained writes, a collision makes
    full passes due: batches back to back while anything is dirty, in PM
    order from a wrapping cursor, each sorted by origin offset and adjacent
    chunks merged (fr-stage.c);
  - "need": nothing written back while at most HI of the PM is dirty; above
    it, batches down to LO, the sets whose chunks are all dirty first;
  - "need+adj": the same, each chunk of a batch extended by the dirty
    copies of the origin chunks after it (k + 1, k + 2, ...), found
    anywhere in the cache: chunk k + 1 of the same region is in the next
    set, one lookup (dm-writecache does the same through its tree);
  - "sets": at any level, a set with A - 1 dirty chunks (2 of a pair) is
    written back at once, extended as need+adj; above HI, the rest in PM
    order down to LO: every set keeps a chunk a write can use.

dm-writecache ("wc", pmem mode, as drivers/md/dm-writecache.c works): any
block holds any origin block; a write takes a free block (an overwrite too:
pmem mode writes out of place and frees the old block); written-back
blocks are freed; writeback starts above HI dirty and stops at LO (its
defaults 50 % and 45 %), takes the oldest dirty block and extends it by
the next origin blocks while they are cached; a write that finds no free
block waits for the batch in flight.

The client is one thread at queue depth 1 writing uniform random 4 KiB
chunks over four times the PM (overflow_rand). Steady state: 8 PMs' worth
of writes after 4. Per chunk written: origin chunks, origin requests
(their size in chunks), forced waits; and the throughput (1.00 = PM
speed) and its ratio to dm-writecache's.

A model, not a measurement: one origin server (a batch at a time; the
victim of a conflicted write beside it), no idle time, no reads.

--victim set: a conflicted write writes back every dirty chunk of its
victim's set with one flush (a range over the victim's slot, as a write of
several chunks does), not the victim alone.

Usage: overflow-model.py [--chunks C] [--q Q] [--q1 Q1] [--b B] [--f F]
                         [--hi H] [--lo L] [--ways A...] [--victim chunk|set ...]
                         [--quick]
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

BATCH = 1024  # writeback_jobs, the target's default since 1.11


class Origin:
    """What the origin was given, and what a batch costs it."""

    def __init__(self, q, q1, b, f):
        self.q, self.q1, self.b, self.f = q, q1, b, f
        self.chunks = self.requests = self.flushes = 0

    def cost(self, keys, flush=True):
        keys = sorted(keys)
        req = sum(1 for i, k in enumerate(keys)
                  if i == 0 or k != keys[i - 1] + 1)
        self.chunks += len(keys)
        self.requests += req
        self.flushes += 1 if flush else 0
        return req * self.q + len(keys) * self.b + (self.f if flush else 0)


class SetCache(assoc.Cache):
    """dm-fr: sets of A chunks, a worker by policy."""

    def __init__(self, chunks, ways, policy, origin, hi, lo,
                 victim="chunk"):
        super().__init__(chunks, ways,
                         "parallel-set" if victim == "set" else "parallel",
                         "positional" if policy == "drain" else "pressure",
                         0.0, 0.0)
        self.policy, self.origin = policy, origin
        self.hi, self.lo = hi * chunks, lo * chunks
        self.draining = False
        # "sets": a set with this many dirty chunks is cleaned at once.
        self.mark = max(2, ways - 1)
        self.hot, self.hot_set = [], set()

    def extend(self, out, taken, n):
        """Each chunk's dirty origin successors, found by lookup."""
        more = []
        for c in out:
            k = self.key[c] + 1
            while len(out) + len(more) < max(n, len(out)) + n // 4:
                n = self.where.get(k, -1)
                if n < 0 or not self.dirty[n] or n in taken:
                    break
                more.append(n)
                taken.add(n)
                k += 1
        return out + more

    def hot_batch(self):
        taken, out = set(), []
        while self.hot and len(out) < BATCH:
            s = self.hot.pop(0)
            self.hot_set.discard(s)
            base = s * self.A
            for c in range(base, base + self.A):
                if self.dirty[c] and c not in taken:
                    out.append(c)
                    taken.add(c)
        if self.draining and len(out) < BATCH:
            n = max(1, min(BATCH, self.ndirty - int(self.lo))) - len(out)
            if n > 0:
                more, self.cursor = self.positional(self.cursor, n, taken)
                out += more
        return self.extend(out, taken, len(out))

    def pick_worker_batch(self):
        if self.policy == "sets":
            return self.hot_batch()
        taken, out = set(), []
        n = BATCH if self.policy == "drain" else \
            max(1, min(BATCH, self.ndirty - int(self.lo)))
        if self.worker == "pressure":
            while self.full_sets and len(out) < n:
                base = self.full_sets.pop() * self.A
                if all(self.dirty[base:base + self.A]):
                    for c in range(base, base + self.A):
                        if c not in taken:
                            out.append(c)
                            taken.add(c)
        if len(out) < n:
            more, self.cursor = self.positional(self.cursor, n - len(out),
                                                taken)
            out += more
        if self.policy == "need+adj":
            out = self.extend(out, taken, n)
        return out

    def worker_idle(self):
        if self.policy == "drain":
            return False
        if self.ndirty > self.hi:
            self.draining = True
        elif self.ndirty <= self.lo:
            self.draining = False
        return not self.draining and not (self.policy == "sets" and self.hot)

    def batch_cost(self, chunks):
        return self.origin.cost([self.key[c] for c in chunks])

    def write(self, k):
        # assoc.Cache.write with the victim's own origin write priced here.
        before = self.waits
        w, f = self.w, self.f
        self.w, self.f = 0.0, 0.0
        super().write(k)
        self.w, self.f = w, f
        s = self.set_of(k)
        base = s * self.A
        if self.policy == "sets" and s not in self.hot_set and \
                sum(self.dirty[base:base + self.A]) >= self.mark:
            self.hot.append(s)
            self.hot_set.add(s)
        if self.waits != before:
            # The victim (or its set's dirty chunks) beside the worker's
            # batch: the client waits for the first request alone, the
            # others queued behind it, and one flush.
            keys = sorted(self.key[c] for c in self.forced_chunks)
            req = sum(1 for i, k in enumerate(keys)
                      if i == 0 or k != keys[i - 1] + 1)
            self.now += self.origin.q1 + (req - 1) * self.origin.q + \
                len(keys) * self.origin.b + self.origin.f
            self.origin.chunks += len(keys)
            self.origin.requests += req
            self.origin.flushes += 1


class WritecacheModel:
    """dm-writecache, pmem mode: fully associative, LRU writeback."""

    def __init__(self, chunks, origin, hi=0.5, lo=0.45):
        self.C, self.origin = chunks, origin
        self.hi, self.lo = hi * chunks, lo * chunks
        self.dirty = {}            # key -> the write that put it (oldest first)
        self.inflight = 0          # blocks the batch in flight holds
        self.batch, self.batch_end = None, 0.0
        self.draining = False
        self.now, self.nwrites, self.waits = 0.0, 0, 0

    def pick(self):
        # As writecache_writeback(): until what is left is at the low mark.
        n = max(1, min(BATCH, len(self.dirty) - int(self.lo)))
        out, taken = [], set()
        for k in self.dirty:       # insertion order: the oldest write first
            if len(out) >= n:
                break
            if k in taken:
                continue
            while k in self.dirty and k not in taken and len(out) < n:
                out.append(k)
                taken.add(k)
                k += 1
        return out

    def run_worker(self, until):
        while True:
            if self.batch is not None:
                if self.batch_end > until:
                    return
                self.inflight = 0
                start, self.batch = self.batch_end, None
            else:
                start = max(self.batch_end, 0.0)
            if len(self.dirty) > self.hi:
                self.draining = True
            elif len(self.dirty) <= self.lo:
                self.draining = False
            if not self.draining:
                self.batch_end = until
                return
            keys = self.pick()
            for k in keys:
                del self.dirty[k]
            self.inflight = len(keys)
            self.batch = keys
            self.batch_end = max(start, self.batch_end) + \
                self.origin.cost(keys)

    def write(self, k):
        self.nwrites += 1
        self.run_worker(self.now)
        used = len(self.dirty) + self.inflight
        if used >= self.C:
            # No free block: wait for the batch in flight to free its own.
            self.waits += 1
            if self.batch is None:
                self.run_worker(self.now)
            self.now = max(self.now, self.batch_end)
            self.run_worker(self.now)
        self.dirty.pop(k, None)    # out of place: the old block is freed
        self.dirty[k] = self.nwrites
        self.now += 1.0


def keys_of(kind, keys, seed=1):
    """fio's random writes: "map" as fio runs them by default (a random
    map: every block once, in random order, before any again), "iid"
    independent draws (norandommap)."""
    rnd = random.Random(seed)
    while True:
        if kind == "iid":
            yield rnd.randrange(keys)
            continue
        perm = list(range(keys))
        rnd.shuffle(perm)
        yield from perm


def steady(cache, origin, kind, keys, C, n_steady):
    it = keys_of(kind, keys)
    for _ in range(4 * C):
        cache.write(next(it))
    o = (origin.chunks, origin.requests, origin.flushes)
    w0, t0 = cache.waits, cache.now
    for _ in range(n_steady * C):
        cache.write(next(it))
    n = n_steady * C
    ch, rq = origin.chunks - o[0], origin.requests - o[1]
    return {
        "written_back": ch / n,
        "request": ch / rq if rq else 0.0,
        "flushes": 1000.0 * (origin.flushes - o[2]) / n,
        "forced": 1000.0 * (cache.waits - w0) / n,
        "throughput": n / (cache.now - t0),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=4096)
    ap.add_argument("--q", type=float, default=0.9,
                    help="an origin request among a batch's, in PM writes"
                    " (default 0.9)")
    ap.add_argument("--q1", type=float, default=15.0,
                    help="an origin request alone (default 15)")
    ap.add_argument("--b", type=float, default=0.1,
                    help="each chunk in a request (default 0.1)")
    ap.add_argument("--f", type=float, default=150.0,
                    help="an origin flush (default 150)")
    ap.add_argument("--hi", type=float, default=0.5)
    ap.add_argument("--lo", type=float, default=0.45)
    ap.add_argument("--ways", type=int, nargs="+", default=[2, 8, 16])
    ap.add_argument("--trace", choices=("map", "iid"), default="map",
                    help="fio's random map (its default), or independent"
                    " draws")
    ap.add_argument("--victim", choices=("chunk", "set"), nargs="+",
                    default=["chunk"],
                    help="what a conflicted write writes back: its victim"
                    " alone (the target to 1.19), or every dirty chunk of"
                    " the victim's set with one flush")
    ap.add_argument("--quick", action="store_true",
                    help="a small run (for the host test)")
    args = ap.parse_args()
    C, n_steady = args.chunks, 8
    if args.quick:
        C, n_steady = 1024, 2
    keys = 4 * C
    print(f"# overflow-model: {C} chunks of PM, random 4 KiB writes"
          f" ({args.trace}) over {keys} (4x the PM); an origin request costs {args.q:g} PM"
          f" writes in a batch, {args.q1:g} alone, each chunk in it"
          f" {args.b:g}, a flush {args.f:g};"
          f" need: from {args.hi:g} down to {args.lo:g} dirty\n")
    print(f"Steady state ({n_steady} PMs' worth of writes after 4). Per chunk"
          " written: chunks written back, forced waits and flushes per 1000;"
          " chunks per origin request; throughput (1.00 = PM speed) and its"
          " ratio to the dm-writecache model's.\n")
    print("| cache | policy | written back / written | chunks / request |"
          " forced / 1000 | flushes / 1000 | throughput | vs dm-writecache |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    origin = Origin(args.q, args.q1, args.b, args.f)
    wc = steady(WritecacheModel(C, origin, args.hi, args.lo), origin,
                args.trace, keys, C, n_steady)
    rows = [("dm-writecache", "LRU, adjacent", wc)]
    for ways in args.ways:
        for victim in args.victim:
            for policy in ("drain", "need", "need+adj", "sets"):
                origin = Origin(args.q, args.q1, args.b, args.f)
                cache = SetCache(C, ways, policy, origin, args.hi, args.lo,
                                 victim)
                name = policy if victim == "chunk" else \
                    policy + ", victim's set"
                rows.append((f"dm-fr {ways}-way", name,
                             steady(cache, origin, args.trace, keys, C,
                                    n_steady)))
                sys.stdout.flush()
    for name, policy, r in rows:
        print(f"| {name} | {policy} | {r['written_back']:.3f} |"
              f" {r['request']:.2f} | {r['forced']:.1f} | {r['flushes']:.2f} |"
              f" {r['throughput']:.3f} |"
              f" {r['throughput'] / wc['throughput']:.2f} |")


if __name__ == "__main__":
    main()
