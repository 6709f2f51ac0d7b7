#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Damage generator for frctl's tests: a damaged copy of a dm-fr PM image.

    damage.py SRC DST --seed N --mode sb|tags|trunc

  sb     flip 1-3 random bits in the superblock (its first 512 bytes)
  tags   flip 1-8 random bits in the tag area (4096 .. data_offset)
  trunc  cut the image at a random length

Deterministic for a given seed. Prints what it did on one line.
"""
import argparse
import random
import struct
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--mode", choices=("sb", "tags", "trunc"), required=True)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    data = bytearray(open(a.src, "rb").read())
    what = []
    if a.mode == "trunc":
        n = rnd.randrange(0, len(data))
        data = data[:n]
        what.append("truncated to %d bytes" % n)
    else:
        if a.mode == "sb":
            lo, hi, flips = 0, 512, rnd.randint(1, 3)
        else:
            # data_offset is the u64 at byte 64 of the superblock.
            (data_off,) = struct.unpack_from("<Q", data, 64)
            lo, hi, flips = 4096, min(data_off, len(data)), rnd.randint(1, 8)
        for _ in range(flips):
            off = rnd.randrange(lo, hi)
            bit = rnd.randrange(8)
            data[off] ^= 1 << bit
            what.append("bit %d of byte %d" % (bit, off))
    open(a.dst, "wb").write(data)
    print("%s seed %d: %s" % (a.mode, a.seed, ", ".join(what)))


if __name__ == "__main__":
    sys.exit(main())
