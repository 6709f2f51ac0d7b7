#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/tools/coreprof.sh DM_FR_SRC OUT.json [N]: build coreprof.c against the
# protocol core in DM_FR_SRC, run it under callgrind and write the instructions
# per operation of each phase (see coreprof.c) as JSON.  Needs valgrind.
# Also builds it with -DCOREPROF_COUNT and adds what each operation stores to
# PM (pm_costs_per_op: fences, tag stores, PM lines; no valgrind needed).
set -eu
src=$1 out=$2 n=${3:-10000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# (userspace builds of the core go through the shim in userspace/libfrcore)
user=$here/../../userspace/libfrcore
for v in coreprof:-UCOREPROF_COUNT coreprof-count:-DCOREPROF_COUNT\ -DFR_USER_RMW_HOOK; do
	# shellcheck disable=SC2086 # the build's flags, split
	gcc -O2 -g -std=gnu11 ${v#*:} -include "$user/fr-user.h" -I"$user" -I"$src/core" -I"$src" \
		-o "$tmp/${v%%:*}" "$here/coreprof.c" "$src"/core/*.c "$user/crc32c.c"
done
"$tmp/coreprof" "$n" > "$tmp/out.txt"
"$tmp/coreprof-count" "$n" > "$tmp/count.txt"
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$tmp/coreprof" "$n" > /dev/null 2>&1
callgrind_annotate --inclusive=yes "$tmp/cg.out" > "$tmp/ann.txt" 2>/dev/null
python3 - "$tmp/ann.txt" "$tmp/out.txt" "$out" "$tmp/count.txt" <<'PY'
import json, re, sys
ann, outp, dst, countp = sys.argv[1:]
first = open(outp).readline()
chunks, ops = map(int, re.findall(r"chunks (\d+), ops per phase (\d+)", first)[0])
ir = {}
for line in open(ann):
    m = re.match(r"\s*([\d,]+) \([^)]*\)\s+\S*:(phase_\w+)", line)
    if m and m.group(2).split(".")[0] not in ir:
        ir[m.group(2).split(".")[0]] = int(m.group(1).replace(",", ""))
per = {"write_miss": ir["phase_write_miss"] / ops,
       "write_hit": ir["phase_write_hit"] / (2 * ops),
       "read_hit": ir["phase_read_hit"] / ops,
       "raw_4k_copy": ir["phase_raw_copy"] / ops,
       "writeback_per_chunk": ir["phase_writeback"] / ops,
       "recovery_per_chunk": ir["phase_recover"] / chunks}
# "cost KIND ops=N units=U field=sum/min/max ...": per unit (an operation;
# a chunk for writeback and recovery), and per batch for writeback.
costs = {}
for line in open(countp):
    f = line.split()
    if not f or f[0] != "cost":
        continue
    kv = dict(x.split("=") for x in f[2:])
    units, nops = int(kv.pop("units")), int(kv.pop("ops"))
    c = {"ops": nops, "per": "chunk" if f[1] in ("writeback", "recovery") else "op"}
    for k, v in kv.items():
        s, lo, hi = map(int, v.split("/"))
        c[k] = round(s / units, 4) if units else 0
        if f[1] == "writeback":
            c[k + "_per_batch"] = [lo, hi]
        elif lo != hi:
            c[k + "_range"] = [lo, hi]
    costs[f[1]] = c
json.dump({"instructions_per_op": {k: round(v) for k, v in per.items()},
           "pm_costs_per_op": costs,
           "ops": ops, "pm_chunks": chunks,
           "note": "callgrind Ir, userspace build of dm-fr/core/ with plain-memory "
                   "fr_pm_* primitives (bench/tools/coreprof.c); raw_4k_copy is the copy "
                   "alone, what raw PM does per 4 KiB write; pm_costs_per_op from the "
                   "-DCOREPROF_COUNT build: fences (fr_pm_fence), store8 (8-byte tag "
                   "stores), lines (distinct 64-byte PM lines stored to), line_writes "
                   "(distinct lines per fence epoch), bytes stored; per chunk for "
                   "writeback (batches of 1024 chunks, the default writeback_jobs) and recovery (of the whole image)"},
          open(dst, "w"), indent=1)
print(json.dumps(per))
PY
