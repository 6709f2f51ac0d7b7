#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/tools/coreprof.sh DM_FR_SRC OUT.json [N]: build coreprof.c against the
# protocol core in DM_FR_SRC, run it under callgrind and write the instructions
# per operation of each phase (see coreprof.c) as JSON.  Needs valgrind.
set -eu
src=$1 out=$2 n=${3:-10000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# (userspace builds of the core go through the shim in userspace/core)
user=$here/../../userspace/core
gcc -O2 -g -std=gnu11 -include "$user/fr-user.h" -I"$user" -I"$src" -o "$tmp/coreprof" \
	"$here/coreprof.c" "$src/fr-core.c" "$src/fr-recover.c" "$src/fr-format.c" "$user/crc32c.c"
"$tmp/coreprof" "$n" > "$tmp/out.txt"
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$tmp/coreprof" "$n" > /dev/null 2>&1
callgrind_annotate --inclusive=yes "$tmp/cg.out" > "$tmp/ann.txt" 2>/dev/null
python3 - "$tmp/ann.txt" "$tmp/out.txt" "$out" <<'PY'
import json, re, sys
ann, outp, dst = sys.argv[1:]
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
json.dump({"instructions_per_op": {k: round(v) for k, v in per.items()},
           "ops": ops, "pm_chunks": chunks,
           "note": "callgrind Ir, userspace build of dm-fr/fr-core.c with plain-memory "
                   "fr_pm_* primitives (bench/tools/coreprof.c); raw_4k_copy is the copy "
                   "alone, what raw PM does per 4 KiB write"}, open(dst, "w"), indent=1)
print(json.dumps(per))
PY
