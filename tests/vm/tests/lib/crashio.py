#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""crashio.py: the writer and the checker of the crash cases (crash/*).

  crashio.py write DEV SPEC [--seed N] [--max-writes N] [--max-seconds S]
  crashio.py verify DEV SPEC --acked "S:ID ..." [--seed N] [--report]

SPEC lists the streams, "MODE:ALIGN:MIB,...": stream k writes in its own area
of MIB MiB (areas follow each other from offset 0); MODE is "direct"
(O_DIRECT, no fsync, no FUA: nothing but the write itself) or "dsync"
(O_DIRECT|O_DSYNC: FUA); ALIGN is the write granularity in 512-byte sectors.

write: one thread per stream, each issuing one write at a time (queue depth 1)
from a reproducible sequence: write i of stream k covers 1..128 units of ALIGN
sectors (at most 64 KiB, never crossing a 1 MiB boundary, so the kernel
gets one bio), at a random place in the area.  Every 512-byte sector carries
a stamp: magic, stream, write id, index in the write, the write's length, its
absolute sector, a filler, and a crc32.  After pwrite() returns, the thread
prints "A <stream> <id>" (flushed) on stdout: the console records it outside
the guest's disks.  It runs until killed (or --max-writes/--max-seconds).

verify: for each stream, with L its last recorded acknowledgement, reads the
area and decides what it holds.  With one write in flight at a time and every
write atomic, the area must be exactly the image of writes 0..j for some
j >= L (j: the newest write seen; writes after L may or may not have landed).
Reports per stream: acknowledged writes lost (some surviving sector of a write
<= L is older), torn writes (a write partly present), sectors holding
something no write put there, and sectors differing from image(j).  Exit
status 1 on any of them, unless --report (then 0: the numbers are the result).
"""
import argparse
import mmap
import os
import random
import struct
import sys
import threading
import time
import zlib

SECTOR = 512
MAGIC = b"FRCRASH1"
HDR = struct.Struct("<8sIIHHQ")  # magic, stream, id, idx, nsect, abs sector
MAX_SECT = 128
REGION_SECT = 2048  # 1 MiB


def parse_spec(spec):
    streams, start = [], 0
    for k, part in enumerate(spec.split(",")):
        mode, align, mib = part.split(":")
        align, mib = int(align), int(mib)
        assert mode in ("direct", "dsync") and align in (1, 2, 4, 8)
        nsect = mib << 11
        streams.append(dict(k=k, mode=mode, align=align, start=start, nsect=nsect))
        start += nsect
    return streams


def write_plan(seed, s, i):
    """(offset in the area, length) in sectors of write i of stream s."""
    r = random.Random((seed * 1000003 + s["k"]) * 1000003 + i)
    a = s["align"]
    units = r.randint(1, MAX_SECT // a)
    # Mostly small writes, some large.
    if r.random() < 0.6:
        units = max(1, units // 8)
    n = units * a
    while True:
        off = r.randrange(0, (s["nsect"] - n) // a + 1) * a
        absolute = s["start"] + off
        if absolute // REGION_SECT == (absolute + n - 1) // REGION_SECT:
            return off, n
        n = max(a, ((REGION_SECT - absolute % REGION_SECT) // a) * a)
        if absolute // REGION_SECT == (absolute + n - 1) // REGION_SECT:
            return off, n


def sector_bytes(s, wid, idx, n, absolute):
    hdr = HDR.pack(MAGIC, s["k"], wid, idx, n, absolute)
    fill = struct.pack("<Q", (wid * 2654435761 + idx * 40503 + s["k"]) & 0xFFFFFFFFFFFFFFFF)
    body = hdr + fill * ((SECTOR - 4 - len(hdr)) // 8)
    body += b"\0" * (SECTOR - 4 - len(body))
    return body + struct.pack("<I", zlib.crc32(body))


def payload(s, wid, off, n):
    return b"".join(sector_bytes(s, wid, j, n, s["start"] + off + j) for j in range(n))


def cmd_write(a):
    streams = parse_spec(a.spec)
    out_lock = threading.Lock()
    stop = time.time() + a.max_seconds
    errors = []

    def run(s):
        flags = os.O_WRONLY | os.O_DIRECT
        if s["mode"] == "dsync":
            flags |= os.O_DSYNC
        fd = os.open(a.dev, flags)
        buf = mmap.mmap(-1, MAX_SECT * SECTOR)
        try:
            for i in range(a.max_writes):
                if time.time() > stop:
                    break
                off, n = write_plan(a.seed, s, i)
                data = payload(s, i, off, n)
                buf.seek(0)
                buf.write(data)
                view = memoryview(buf)[: n * SECTOR]
                done = os.pwritev(fd, [view], (s["start"] + off) * SECTOR)
                view.release()
                if done != n * SECTOR:
                    raise OSError("short write: %d of %d" % (done, n * SECTOR))
                with out_lock:
                    sys.stdout.write("A %d %d\n" % (s["k"], i))
                    sys.stdout.flush()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append("stream %d: %s" % (s["k"], e))
        finally:
            os.close(fd)

    threads = [threading.Thread(target=run, args=(s,)) for s in streams]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        print("# write error: " + e, file=sys.stderr)
    print("# writer ended without being killed", flush=True)
    return 1 if errors else 0


def read_area(dev, s):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    try:
        size = s["nsect"] * SECTOR
        buf = mmap.mmap(-1, size)
        got = os.preadv(fd, [buf], s["start"] * SECTOR)
        if got != size:
            raise OSError("short read: %d of %d" % (got, size))
        return bytes(buf)
    finally:
        os.close(fd)


def classify(s, data):
    """Per sector: (id, idx) of a valid stamp, None if zero, 'bad' otherwise."""
    zero = bytes(SECTOR)
    out = []
    for j in range(s["nsect"]):
        sec = data[j * SECTOR:(j + 1) * SECTOR]
        if sec == zero:
            out.append(None)
            continue
        body, crc = sec[:-4], struct.unpack("<I", sec[-4:])[0]
        magic, k, wid, idx, n, absolute = HDR.unpack_from(sec)
        if (magic != MAGIC or zlib.crc32(body) != crc or k != s["k"]
                or absolute != s["start"] + j or idx >= n):
            out.append("bad")
        else:
            out.append((wid, idx))
    return out


def image(seed, s, upto):
    """owner[j] = (id, idx) of the last write <= upto covering sector j."""
    owner = [None] * s["nsect"]
    for i in range(upto + 1):
        off, n = write_plan(seed, s, i)
        for j in range(n):
            owner[off + j] = (i, j)
    return owner


def cmd_verify(a):
    streams = parse_spec(a.spec)
    acked = {}
    for tok in a.acked.split():
        k, wid = tok.split(":")
        acked[int(k)] = int(wid)
    bad_total = 0
    for s in streams:
        last = acked.get(s["k"], -1)
        got = classify(s, read_area(a.dev, s))
        ids = [g[0] for g in got if isinstance(g, tuple)]
        newest = max(ids) if ids else -1
        j = max(last, newest)
        want = image(a.seed, s, j)
        garbage = sum(1 for g in got if g == "bad")
        differ = sum(1 for x, y in zip(got, want) if x != y)
        # Per write: sectors it still owns in image(j), and how many hold it.
        owned, held = {}, {}
        for x, y in zip(got, want):
            if y is None:
                continue
            owned[y[0]] = owned.get(y[0], 0) + 1
            if x == y:
                held[y[0]] = held.get(y[0], 0) + 1
        lost = [w for w in owned if w <= last and held.get(w, 0) < owned[w]]
        lost_sect = sum(owned[w] - held.get(w, 0) for w in lost)
        torn = [w for w in owned if 0 < held.get(w, 0) < owned[w]]
        # Stale: sectors holding an older write than image(j) says (or
        # nothing: zeros where a write landed).
        stale_zero = sum(1 for x, y in zip(got, want) if y is not None and x is None)
        stale_old = sum(1 for x, y in zip(got, want)
                        if y is not None and isinstance(x, tuple) and x[0] < y[0])
        stale = stale_zero + stale_old
        line = ("RESULT stream %d (%s, %d-sector units): acked up to %d, newest seen %d; "
                "lost acked writes %d (%d sectors); torn writes %d; stale sectors %d "
                "(%d zero, %d an older write); garbage sectors %d; sectors differing from image(%d) %d"
                % (s["k"], s["mode"], s["align"], last, newest, len(lost), lost_sect,
                   len(torn), stale, stale_zero, stale_old, garbage, j, differ))
        print(line, flush=True)
        if lost:
            print("#   lost writes (first 10): %s" % sorted(lost)[:10], flush=True)
        if torn:
            print("#   torn writes (first 10): %s" % sorted(torn)[:10], flush=True)
        if lost or torn or garbage or differ:
            bad_total += 1
    return 0 if a.report or not bad_total else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    v = sub.add_parser("verify")
    for q in (w, v):
        q.add_argument("dev")
        q.add_argument("spec")
        q.add_argument("--seed", type=int, default=1)
    w.add_argument("--max-writes", type=int, default=1000000)
    w.add_argument("--max-seconds", type=float, default=600)
    v.add_argument("--acked", default="")
    v.add_argument("--report", action="store_true")
    a = p.parse_args()
    return cmd_write(a) if a.cmd == "write" else cmd_verify(a)


if __name__ == "__main__":
    sys.exit(main())
