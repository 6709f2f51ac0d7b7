#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Render the benchmark report from one guest run (bench/guest/bench.sh output).

    report.py --raw DIR --out bench/results

DIR holds runs.jsonl, meta.json, host.json, fio/ and log/.  Writes to --out:
runs.csv (one line per measured run), summary.json ("ratios": name -> median,
"ratio_of_medians": name -> the other estimator, and "spread": name -> [min,
max], among others), results.md and chart.png.

Every ratio is taken between runs of the same repetition (the configurations
of one repetition ran back to back, interleaved), so a ratio's spread is the
min..max of its per-repetition values and its value is their median.  A
repetition whose numerator or denominator run failed verification is dropped
from the ratio ("dropped": name -> count); a ratio with every repetition
dropped is not reported ("unreported").  "spread_ok": whether every
per-repetition value lies within SPREAD_TOL (0.05, relative above 1) of the
median.
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys

# The target's interface lists (dm-fr/core/), read as the kernel and frctl
# compile them: the tunables (fr-tunables.h), with the constants of
# fr-interface.h resolved.
CORE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dm-fr", "core")


def core_list(name, macro):
    """Each MACRO(...) entry of dm-fr/core/NAME: its arguments as strings
    (string literals unquoted, names of fr-interface.h's constants
    resolved)."""
    import re
    consts = {}
    with open(os.path.join(CORE_DIR, "fr-interface.h")) as f:
        for m in re.finditer(r"^#define\s+(FR_[A-Z0-9_]+)\s+(\d+)\s*$", f.read(), re.M):
            consts[m.group(1)] = m.group(2)
    with open(os.path.join(CORE_DIR, name)) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    out = []
    for m in re.finditer(macro + r"\((.*?)\)\s*$", text, re.M | re.S):
        args = re.findall(r'"((?:[^"\\]|\\.)*)"|([^,\s][^,]*?)\s*(?:,|$)', m.group(1))
        out.append([s if s else consts.get(w.strip(), w.strip()) for s, w in args])
    return out


def fr_tunables():
    """[(name, min, max, default, unit, what)] of dm-fr/core/fr-tunables.h."""
    return [tuple(e[:6]) for e in core_list("fr-tunables.h", "FR_TUNABLE")]


def fr_status_fields():
    """[(name, since, keyed)] of dm-fr/core/fr-status.h, in the order printed."""
    return [(e[0], int(e[1]), e[2] == "1") for e in core_list("fr-status.h", "FR_STATUS")]


# Status fields of the fr target after "<start> <len> fr" (docs/target-interface.md),
# from the core's list: the state word and the first version's fields always, those
# appended later (target 1.3, 1.4, 1.6, 1.9) when the line has them, and keyed
# fields (name=value) wherever they stand.
_SF = fr_status_fields()
FR_FIELDS = ["state"] + [n for n, since, keyed in _SF if since == _SF[0][1] and not keyed]
FR_FIELDS_OPTIONAL = [n for n, since, keyed in _SF if since != _SF[0][1] and not keyed]
FR_FIELDS_KEYED = [n for n, since, keyed in _SF if keyed]

CONFIG_NAMES = {
    "raw": "raw PM (/dev/pmem0, O_DIRECT)",
    "fr": "dm-fr",
    "frd0": "dm-fr, writeback_defer 0 (FR's every-period writeback; diagnostic)",
    "frwb0": "dm-fr, writeback_period 0 (watermark writeback only; diagnostic)",
    "dml": "dm-linear over the PM (the floor of any dm target)",
    "dmlwt": "dm-linear over the PM, write cache \"write through\" (dm-fr's flags: no flush per fsync)",
    "wc": "dm-writecache (pmem, 4 KiB)",
    "origin": "bare origin",
    "origin-max": "bare origin, 1 MiB sequential writes, 8 in flight, no flush (the most it takes)",
    "pmfs": "FS on raw PM (no DAX)",
    "dax": "ext4 -o dax on raw PM",
}

BLOCK_WORKLOADS = [
    ("qd1_fsync", "4 KiB random write, QD1, fsync after each", "write IOPS"),
    ("2j_fsync", "4 KiB random write, 2 jobs, fsync after each", "write IOPS"),
    ("odirect", "4 KiB O_DIRECT random write, no fsync", "write IOPS"),
    ("randread", "4 KiB random read of cached data", "read IOPS"),
    ("readmostly", "zipf 1.2, 90% reads / 10% writes, 64 MiB, cold start", "IOPS (r+w)"),
    ("readmostly_warm", "the same again, right after: warm (what the cold run cached)",
     "IOPS (r+w)"),
    ("seqread", "4 KiB reads in order, QD1, 64 MiB, cold start", "read IOPS"),
    ("halfpm", "4 KiB random write over 240 MiB (half the PM)", "write IOPS"),
    ("overflow_seq", "128 KiB sequential write over 256 MiB (4x the 64 MiB PM)", "MiB/s"),
    ("overflow_rand", "4 KiB random write over 256 MiB (4x the 64 MiB PM)",
     "4 KiB writes/s"),
]

FS_JOBS = [
    ("varmail", "varmail-like: create/append/fsync/read/delete small files, 2 threads", "ops/s"),
    ("varmail_sustained", "the varmail-like job held long (fslong; its length: \"run length\" "
     "above): the steady state, the FS's writes gone round its device several times", "ops/s"),
    ("oltp", "OLTP-like: 4 KiB random overwrites + fdatasync, 2 x 8 MiB", "write IOPS"),
    ("fileserver", "fileserver-like: 32 MiB streamed into 8 files, no sync but one at the end", "MiB/s"),
    ("mix", "the paper's synthetic mix (Table 3), scaled: 21 files, 37 MiB, ~6 active", "IOPS (r+w)"),
    ("oltp_large", "OLTP-like on 2 x 32 MiB, PM 32 MiB (larger than PM)", "write IOPS"),
    ("fileserver_large", "fileserver-like, 96 MiB, PM 32 MiB (larger than PM)", "MiB/s"),
]

# The fsmixed set (issue 47): the varmail-like job beside a bulk writer, on a
# 32 MiB PM; "<cfg>-alone" is the job without the other.
MIXED_JOBS = [
    ("fsync", "the varmail-like job beside a 128 MiB buffered stream (alone: -alone)", "ops/s"),
    ("stream", "the 128 MiB buffered stream beside the varmail-like job, over its own time "
     "(alone: -alone)", "MiB/s"),
]

# The measured ceiling beside a goal: the same ratio with dm-fr replaced by the
# best the hardware (or any dm target) allows here.  name -> (ratio, text).
CEILINGS = {
    "durable_randwrite_qd1_vs_raw_pm": ("durable_randwrite_qd1_dm_linear_vs_raw_pm",
                                        "dm-linear over PM vs raw PM"),
    "durable_randwrite_2j_vs_raw_pm": ("durable_randwrite_2j_dm_linear_vs_raw_pm",
                                       "dm-linear over PM vs raw PM"),
    "cached_randread_vs_raw_pm": ("cached_randread_dm_linear_vs_raw_pm",
                                  "dm-linear over PM vs raw PM"),
    "readmostly_warm_vs_raw_pm": ("readmostly_warm_dm_linear_vs_raw_pm",
                                  "dm-linear over PM vs raw PM"),
    "durable_randwrite_qd1_vs_dm_writecache": ("ref_qd1_fsync_raw_pm_vs_dm_writecache",
                                               "raw PM vs dm-writecache"),
    "readmostly_vs_dm_writecache": ("ref_readmostly_raw_pm_vs_dm_writecache",
                                    "raw PM vs dm-writecache"),
    "fsync_fs_vs_origin": ("fsync_fs_raw_pm_fs_vs_origin",
                           "FS on raw PM vs FS on the origin (same FS)"),
    "overflow_rand_write_vs_dm_writecache": ("ref_overflow_rand_origin_max_vs_dm_writecache",
                                             "the origin taking the same bytes at its most "
                                             "vs dm-writecache: 1 MiB writes in order, a loose "
                                             "bound for random writes"),
    "overflow_seq_write_vs_dm_writecache": ("ref_overflow_seq_origin_max_vs_dm_writecache",
                                            "the origin taking the same bytes at its most "
                                            "vs dm-writecache"),
    "overflow_write_vs_dm_writecache": ("ref_overflow_origin_max_vs_dm_writecache",
                                        "the less of the two origin ceilings"),
    "overflow_rand_origin_mib_per_mib_written": (
        "ref_dm_writecache_overflow_rand_origin_mib_per_mib_written",
        "dm-writecache's own, a fully associative cache: fio's random map writes "
        "every block once a pass, so no cache of the PM's size keeps more than 1/32 "
        "of the writes from the origin (bench/results/overflow-model)"),
    "load_time_vs_dm_writecache": ("ref_load_dm_linear_vs_dm_writecache",
                                   "dmsetup create of dm-linear over the same PM vs "
                                   "dm-writecache's load"),
}
for _fs in ("ext4", "xfs", "btrfs"):
    CEILINGS[f"fsync_fs_{_fs}_vs_raw_pm_fs"] = (
        f"fs_{_fs}_varmail_dm_linear_vs_raw_pm_fs",
        "the FS on dm-linear over PM vs on raw PM")
    CEILINGS[f"fsync_fs_{_fs}_sustained_vs_raw_pm_fs"] = (
        f"fs_{_fs}_varmail_sustained_dm_linear_vs_raw_pm_fs",
        "the FS on dm-linear over PM vs on raw PM, sustained")
    # Issue 47's first goal: admission can at most give the fsync job its
    # rate with no stream at all, on the same device.
    CEILINGS[f"mixed_{_fs}_fsync_admit_vs_dm_writecache"] = (
        f"ref_mixed_{_fs}_fsync_admit_alone_vs_dm_writecache",
        "the fsync job on dm-fr with admission and no stream vs on dm-writecache "
        "beside the stream")

# A ratio's spread is "ok" when every per-repetition value lies within this of
# its median: +-0.05 for a ratio up to 1, +-5 % of the median above.
SPREAD_TOL = 0.05

MIX_WINDOW_S = 5.2
QFLAGS = ["write_cache", "fua", "rotational", "logical_block_size", "physical_block_size",
          "minimum_io_size", "optimal_io_size"]

FS_ORDER = ["ext4", "xfs", "btrfs"]

OVERFLOW_PM_MIB = 64  # bench.sh: the PM slice the overflow workloads get

GOALS = {  # name -> (comparison, threshold, text); issues 23, 25 and 26's goals
    "durable_randwrite_qd1_vs_raw_pm": (">=", 0.95, ">= 0.95"),
    "durable_randwrite_qd1_vs_dm_writecache": (">=", 1.15, ">= 1.15"),
    "durable_randwrite_2j_vs_raw_pm": (">=", 0.95, ">= 0.95"),
    "odirect_randwrite_vs_raw_pm": (">=", 0.90, ">= 0.90"),
    "cached_randread_vs_raw_pm": (">=", 0.95, ">= 0.95"),
    "readmostly_vs_dm_writecache": (">=", 3.0, ">= 3"),
    "readmostly_warm_vs_raw_pm": (">=", 0.9, ">= 0.9"),  # issue 26
    "cached_randread_vs_dm_linear": (">=", 0.95, ">= 0.95"),  # issue 26
    "fsync_fs_ext4_vs_raw_pm_fs": (">=", 0.90, ">= 0.90"),
    "fsync_fs_xfs_vs_raw_pm_fs": (">=", 0.90, ">= 0.90"),
    "fsync_fs_btrfs_vs_raw_pm_fs": (">=", 0.90, ">= 0.90"),
    # The same goal held long (fslong: 40 s on btrfs by default).
    "fsync_fs_ext4_sustained_vs_raw_pm_fs": (">=", 0.90, ">= 0.90"),
    "fsync_fs_xfs_sustained_vs_raw_pm_fs": (">=", 0.90, ">= 0.90"),
    "fsync_fs_btrfs_sustained_vs_raw_pm_fs": (">=", 0.90, ">= 0.90"),
    "fsync_fs_vs_origin": (">=", 4.0, ">= 4"),
    "overflow_write_vs_dm_writecache": (">=", 1.2, ">= 1.2"),  # issue 25
    "overflow_p999_vs_dm_writecache": ("<=", 2.0, "<= 2"),  # issue 25
    "overflow_written_vs_pm": (">=", 4.0, ">= 4"),  # issue 25: sustained
    # issue 45: the durable-write floors like for like
    "durable_randwrite_qd1_vs_dm_linear_wt": (">=", 0.98, ">= 0.98"),
    "durable_randwrite_2j_vs_dm_linear_wt": (">=", 0.98, ">= 0.98"),
    "odirect_randwrite_vs_dm_linear": (">=", 0.97, ">= 0.97"),
    # issue 45: writeback by need
    "fs_ext4_varmail_fr_vs_dm_linear": (">=", 0.95, ">= 0.95"),
    "fs_xfs_varmail_fr_vs_dm_linear": (">=", 0.95, ">= 0.95"),
    "fs_btrfs_varmail_fr_vs_dm_linear": (">=", 0.95, ">= 0.95"),
    "fs_ext4_varmail_written_back_per_written": ("<=", 0.3, "<= 0.3"),
    "fs_xfs_varmail_written_back_per_written": ("<=", 0.3, "<= 0.3"),
    "fs_btrfs_varmail_written_back_per_written": ("<=", 0.3, "<= 0.3"),
    "readmostly_warm_vs_dm_linear": (">=", 0.95, ">= 0.95"),
    "overflow_rand_origin_mib_per_mib_written": ("<=", 0.85, "<= 0.85"),
    "overflow_rand_origin_kib_per_request": (">=", 6.0, ">= 6"),
    "forced_writeback_fraction": ("<=", 0.001, "<= 0.001"),
    "dram_bytes_per_gib_pm_vs_dm_writecache": ("<=", 0.04, "<= 0.04"),  # issue 25
    "load_time_vs_dm_writecache": ("<=", 0.4, "<= 0.4"),  # issue 26
    # issue 47: the fsync job beside a bulk writer, admission on
    "mixed_ext4_fsync_admit_vs_dm_writecache": (">=", 2.0, ">= 2"),
    "mixed_xfs_fsync_admit_vs_dm_writecache": (">=", 2.0, ">= 2"),
    "mixed_ext4_fsync_admit_vs_alone": (">=", 0.8, ">= 0.8"),
    "mixed_xfs_fsync_admit_vs_alone": (">=", 0.8, ">= 0.8"),
    "mixed_ext4_stream_admit_vs_origin": (">=", 0.9, ">= 0.9"),
    "mixed_xfs_stream_admit_vs_origin": (">=", 0.9, ">= 0.9"),
}


def load_json_loose(path):
    """fio may print notes before its JSON: start at the first '{'."""
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        return None
    i = text.find("{")
    if i < 0:
        return None
    try:
        return json.loads(text[i:])
    except ValueError:
        return None


def pct(lat, key):
    p = (lat or {}).get("percentile") or {}
    for k, v in p.items():
        if abs(float(k) - key) < 1e-6:
            return v / 1000.0  # ns -> us
    return None


def fr_status(line):
    w = (line or "").split()
    if len(w) < 3 + len(FR_FIELDS) or w[2] != "fr":
        return None
    d = {}
    pos = [x for x in w[3:] if "=" not in x]
    for i, f in enumerate(FR_FIELDS + FR_FIELDS_OPTIONAL):
        if i >= len(pos):
            break
        d[f] = int(pos[i]) if pos[i].isdigit() else pos[i]
    for x in w[3:]:
        k, _, v = x.partition("=")
        if v and k in FR_FIELDS_KEYED:
            d[k] = int(v) if v.isdigit() else v
    return d


def fr_delta(before, after):
    a, b = fr_status(before), fr_status(after)
    if not a or not b:
        return None
    d = {f: b[f] - a[f] for f in FR_FIELDS + FR_FIELDS_OPTIONAL + FR_FIELDS_KEYED
         if isinstance(a.get(f), int) and isinstance(b.get(f), int)}
    d["writes"] = d["write_hits"] + d["write_misses"]
    d["forced_per_write"] = d["forced_writebacks"] / d["writes"] if d["writes"] else 0.0
    return d


def origin_delta(before, after):
    """Requests the origin completed during the run, from its
    /sys/block/<dev>/stat before and after: write requests, MiB written,
    flushes (None where the kernel has no flush fields)."""
    a, b = (before or "").split(), (after or "").split()
    if len(a) < 11 or len(b) < 11 or not all(x.isdigit() for x in a + b):
        return None
    a, b = [int(x) for x in a], [int(x) for x in b]
    d = {"origin_writes": b[4] - a[4],
         "origin_write_mib": round((b[6] - a[6]) * 512 / 2**20, 1),
         "origin_flushes": b[15] - a[15] if len(a) > 15 and len(b) > 15 else None}
    d["origin_kib_per_write"] = (round((b[6] - a[6]) / 2 / d["origin_writes"], 1)
                                 if d["origin_writes"] else None)
    return d


def cpu_delta(before, after):
    """The guest's CPU time during the run, from /proc/stat's "cpu" line
    before and after (user nice system idle iowait irq softirq steal ...):
    the share of all its CPUs' time that was busy, and that was in the
    kernel (system, irq, softirq)."""
    a, b = (before or "").split()[1:9], (after or "").split()[1:9]
    if len(a) < 8 or len(b) < 8 or not all(x.isdigit() for x in a + b):
        return None
    d = [int(y) - int(x) for x, y in zip(a, b)]
    total = sum(d)
    if total <= 0:
        return None
    idle = d[3] + d[4]
    return {"guest_cpu_busy": round((total - idle) / total, 3),
            "guest_cpu_kernel": round((d[2] + d[5] + d[6]) / total, 3)}


def metric_of_fio(job, kind, wall_s):
    """(value, p50, p99, p999, sync p50/p99/p99.9) for one fio job of this kind."""
    w, r = job.get("write", {}), job.get("read", {})
    sync = (job.get("sync") or {}).get("lat_ns")
    main = w
    if kind in ("randread", "seqread", "readmostly", "readmostly_warm"):
        main = r
    if kind in ("randread", "seqread"):
        value = r.get("iops", 0)
    elif kind in ("readmostly", "readmostly_warm"):
        value = r.get("iops", 0) + w.get("iops", 0)
    elif kind == "mix":
        value = (r.get("total_ios", 0) + w.get("total_ios", 0)) / MIX_WINDOW_S
        main = r if r.get("total_ios", 0) >= w.get("total_ios", 0) else w
    elif kind in ("overflow_seq",):
        value = w.get("bw_bytes", 0) / 2**20
    elif kind == "overflow_rand":
        # 4 KiB writes a second: bytes, so that the origin's ceiling run
        # (1 MiB writes, bench/jobs/origin-ceiling.fio) reads in the same unit.
        value = w.get("bw_bytes", 0) / 4096
    elif kind in ("fileserver", "fileserver_large", "stream"):
        # Bytes over the wall time of the job (it ends with an fsync).
        value = w.get("io_bytes", 0) / 2**20 / wall_s if wall_s else 0
    else:
        value = w.get("iops", 0)
    lat = main.get("lat_ns") or main.get("clat_ns")
    return (value, pct(lat, 50), pct(lat, 99), pct(lat, 99.9),
            pct(sync, 50), pct(sync, 99), pct(sync, 99.9))


def read_runs(raw):
    rows = []
    with open(os.path.join(raw, "runs.jsonl")) as fh:
        for line in fh:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    out = []
    for r in rows:
        s = r.get("set")
        if s in ("load", "loadsweep"):
            out.append(r)
            continue
        kind = r.get("workload") or r.get("job")
        row = {"set": s, "fs": r.get("fs", ""), "workload": kind, "config": r.get("config"),
               "rep": int(r.get("rep", 0)), "verify": r.get("verify", ""),
               "split_read": r.get("split_read"),
               "value": None, "p50_us": None, "p99_us": None, "p999_us": None,
               "sync_p50_us": None, "sync_p99_us": None, "sync_p999_us": None,
               "forced_writebacks": None, "fr_writes": None, "forced_per_write": None,
               "read_hits": None, "read_misses": None, "read_fills": None,
               "prefetched": None, "pinned_waits": None, "drains": None,
               "chunks_written_back": None, "fsyncs": None, "runtime_s": None,
               "written_mib": None, "queue_dev": r.get("queue_dev"),
               "origin_writes": None, "origin_write_mib": None,
               "origin_kib_per_write": None, "origin_flushes": None,
               "guest_cpu_busy": None, "guest_cpu_kernel": None}
        for q in QFLAGS:
            row["queue_" + q] = r.get("queue_" + q)
        wall_s = int(r.get("wall_ns") or 0) / 1e9
        path = os.path.join(raw, r["fio"]) if r.get("fio") else None
        data = load_json_loose(path) if path else None
        if data is not None:
            if kind in ("varmail", "varmail_sustained", "fsync"):
                row["value"] = data.get("ops_per_sec")
                row["fsyncs"] = data.get("fsyncs")
                row["runtime_s"] = data.get("secs")
                lat = data.get("op_lat_us", {})
                row["p50_us"], row["p99_us"], row["p999_us"] = (
                    lat.get("p50"), lat.get("p99"), lat.get("p99.9"))
                lat = data.get("fsync_lat_us", {})
                row["sync_p50_us"], row["sync_p99_us"], row["sync_p999_us"] = (
                    lat.get("p50"), lat.get("p99"), lat.get("p99.9"))
                if data.get("errors"):
                    row["verify"] = "FAIL: varmail data errors"
            elif data.get("jobs"):
                jobs = [j for j in data["jobs"] if j.get("jobname") == "run"] or data["jobs"]
                (row["value"], row["p50_us"], row["p99_us"], row["p999_us"],
                 row["sync_p50_us"], row["sync_p99_us"], row["sync_p999_us"]) = \
                    metric_of_fio(jobs[0], kind, wall_s)
                n = (((jobs[0].get("sync") or {}).get("lat_ns")) or {}).get("N")
                row["fsyncs"] = n if n else None
                rt = jobs[0].get("job_runtime") or (jobs[0].get("write") or {}).get("runtime")
                row["runtime_s"] = rt / 1000.0 if rt else None
                wb = (jobs[0].get("write") or {}).get("io_bytes")
                row["written_mib"] = round(wb / 2**20, 1) if wb else None
        od = origin_delta(r.get("origin_before"), r.get("origin_after"))
        if od:
            row.update(od)
        cd = cpu_delta(r.get("cpu_before"), r.get("cpu_after"))
        if cd:
            row.update(cd)
        d = fr_delta(r.get("status_before"), r.get("status_after"))
        if d:
            row["forced_writebacks"] = d["forced_writebacks"]
            row["fr_writes"] = d["writes"]
            row["forced_per_write"] = d["forced_per_write"]
            for k in ("read_hits", "read_misses", "read_fills", "chunks_written_back",
                      "prefetched", "pinned_waits", "drains"):
                row[k] = d.get(k)
        out.append(row)
        # The read-mostly job's warm phase: a row of its own (no status
        # delta: the counters above are the cold phase's).
        warm = [j for j in (data or {}).get("jobs", []) if j.get("jobname") == "warm"]
        if kind == "readmostly" and warm:
            wrow = dict(row, workload="readmostly_warm", forced_writebacks=None,
                        fr_writes=None, forced_per_write=None, read_hits=None,
                        read_misses=None, read_fills=None, prefetched=None, pinned_waits=None,
                        drains=None,
                        chunks_written_back=None, fsyncs=None, origin_writes=None,
                        origin_write_mib=None, origin_kib_per_write=None,
                        origin_flushes=None)
            (wrow["value"], wrow["p50_us"], wrow["p99_us"], wrow["p999_us"],
             wrow["sync_p50_us"], wrow["sync_p99_us"], wrow["sync_p999_us"]) = \
                metric_of_fio(warm[0], "readmostly_warm", wall_s)
            rt = warm[0].get("job_runtime")
            wrow["runtime_s"] = rt / 1000.0 if rt else None
            out.append(wrow)
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def group(rows, s, kind, cfg, fs=""):
    return [r for r in rows if r.get("set") == s and r.get("workload") == kind
            and r.get("config") == cfg and r.get("fs", "") == fs]


def paired_ratio(rows, s, kind, a, b, fs="", field="value"):
    """Per-repetition ratios a/b of the metric (or of another field of the
    rows, such as p999_us): (median, min, max, list, dropped),
    over the repetitions where both runs passed verification; dropped = how
    many repetitions with both runs were left out for a failed verification
    (median, min, max None when all were).  None when there is no pair at all."""
    ga = {r["rep"]: r for r in group(rows, s, kind, a, fs)}
    gb = {r["rep"]: r for r in group(rows, s, kind, b, fs)}
    vals, xs, ys, dropped = [], [], [], 0
    for k in sorted(ga):
        if k not in gb:
            continue
        x, y = ga[k], gb[k]
        if x["verify"] != "ok" or y["verify"] != "ok":
            dropped += 1
            continue
        if x[field] and y[field]:
            vals.append(x[field] / y[field])
            xs.append(x[field])
            ys.append(y[field])
    return ratio_of(vals, dropped,
                    statistics.median(xs) / statistics.median(ys) if xs else None)


def ratio_of(vals, dropped=0, of_medians=None):
    """(median of vals, min, max, vals, dropped, of_medians): of_medians is
    the other estimator, the ratio of the two configurations' medians over
    the same repetitions (None where the ratio is not of two series)."""
    if not vals:
        return (None, None, None, [], dropped, None) if dropped else None
    return (statistics.median(vals), min(vals), max(vals), vals, dropped, of_medians)


def spread_ok(med_, vals):
    """True/False: every value within SPREAD_TOL of the median; None for n < 2."""
    if med_ is None or len(vals) < 2:
        return None
    tol = SPREAD_TOL * max(1.0, abs(med_))
    return all(abs(v - med_) <= tol + 1e-12 for v in vals)


def fmt(x, nd=3):
    if x is None:
        return "-"
    if isinstance(x, float):
        if x == 0:
            return "0"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        if abs(x) >= 100:
            return f"{x:.0f}"
        if abs(x) < 0.01:
            return f"{x:.2e}"
        return f"{x:.{nd}g}" if abs(x) < 1 else f"{x:.{nd}g}"
    return str(x)


def ifmt(x):
    return "-" if x is None else f"{x:,.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    raw, out = args.raw, args.out
    os.makedirs(out, exist_ok=True)
    meta = load_json_loose(os.path.join(raw, "meta.json")) or {}
    host = load_json_loose(os.path.join(raw, "host.json")) or {}
    rows = read_runs(raw)
    perf = [r for r in rows if r.get("set") in ("block", "fs", "fsmixed")]
    loads = [r for r in rows if r.get("set") == "load"]
    sweeps = [r for r in rows if r.get("set") == "loadsweep"]

    # ---------------------------------------------------------------- runs.csv
    cols = ["set", "fs", "workload", "config", "rep", "value", "p50_us", "p99_us", "p999_us",
            "sync_p50_us", "sync_p99_us", "sync_p999_us", "forced_writebacks", "fr_writes",
            "forced_per_write", "read_hits", "read_misses", "read_fills", "prefetched",
            "chunks_written_back", "pinned_waits", "drains", "fsyncs", "runtime_s", "written_mib",
            "origin_writes",
            "origin_write_mib", "origin_kib_per_write", "origin_flushes",
            "guest_cpu_busy", "guest_cpu_kernel", "queue_dev"] + \
        ["queue_" + q for q in QFLAGS] + ["verify"]
    with open(os.path.join(out, "runs.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in perf:
            w.writerow({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()})
    with open(os.path.join(out, "load.csv"), "w", newline="") as fh:
        lc = ["config", "rep", "dram_small_kb", "dram_full_kb", "load_pm_mib",
              "vmalloc_mod_bytes", "pm_small_mib", "pm_full_mib", "fill_bytes", "fill_ns",
              "load_ns", "load_floor_ns", "status_full", "status_loaded", "verify"]
        w = csv.DictWriter(fh, fieldnames=lc, extrasaction="ignore")
        w.writeheader()
        for r in loads:
            w.writerow(r)

    # ---------------------------------------------------------------- ratios
    ratios, spread, per_rep, notes, dropped, unreported = {}, {}, {}, {}, {}, {}
    of_medians = {}

    def put(name, pr, note=None):
        if pr is None:
            return
        if note:
            notes[name] = note
        if pr[4]:
            dropped[name] = pr[4]
        if pr[0] is None:
            unreported[name] = pr[4]
            return
        ratios[name] = round(pr[0], 4)
        spread[name] = [round(pr[1], 4), round(pr[2], 4)]
        per_rep[name] = [round(v, 4) for v in pr[3]]
        if len(pr) > 5 and pr[5] is not None:
            of_medians[name] = round(pr[5], 4)

    B = "block"
    put("durable_randwrite_qd1_vs_raw_pm", paired_ratio(perf, B, "qd1_fsync", "fr", "raw"))
    put("durable_randwrite_qd1_vs_dm_writecache", paired_ratio(perf, B, "qd1_fsync", "fr", "wc"))
    put("durable_randwrite_2j_vs_raw_pm", paired_ratio(perf, B, "2j_fsync", "fr", "raw"))
    put("odirect_randwrite_vs_raw_pm", paired_ratio(perf, B, "odirect", "fr", "raw"))
    put("cached_randread_vs_raw_pm", paired_ratio(perf, B, "randread", "fr", "raw"))
    put("readmostly_vs_dm_writecache", paired_ratio(perf, B, "readmostly", "fr", "wc"))
    put("readmostly_warm_vs_raw_pm", paired_ratio(perf, B, "readmostly_warm", "fr", "raw"))

    def overflow_pair(a, name, both, note):
        """a vs dm-writecache on overflow_seq and overflow_rand, as ratios
        NAME % "seq" and NAME % "rand", and the lower of the two as BOTH."""
        seq = paired_ratio(perf, B, "overflow_seq", a, "wc")
        rnd = paired_ratio(perf, B, "overflow_rand", a, "wc")
        put(name % "seq", seq)
        put(name % "rand", rnd)
        low = min([x for x in (seq, rnd) if x and x[0] is not None], key=lambda x: x[0], default=None)
        put(both, low, note)

    overflow_pair("fr", "overflow_%s_write_vs_dm_writecache", "overflow_write_vs_dm_writecache",
                  "the worse of overflow_seq_write_vs_dm_writecache and "
                  "overflow_rand_write_vs_dm_writecache")
    lseq = paired_ratio(perf, B, "overflow_seq", "fr", "wc", field="p999_us")
    lrnd = paired_ratio(perf, B, "overflow_rand", "fr", "wc", field="p999_us")
    put("overflow_seq_p999_vs_dm_writecache", lseq)
    put("overflow_rand_p999_vs_dm_writecache", lrnd)
    worst = max([x for x in (lseq, lrnd) if x and x[0] is not None], key=lambda x: x[0], default=None)
    put("overflow_p999_vs_dm_writecache", worst,
        "p99.9 write latency, dm-fr over dm-writecache: the worse of sequential and random")
    # Sustained (issue 25): what dm-fr wrote per run, in PM slices (64 MiB),
    # the less of the two workloads in each repetition.
    per = {}
    for kind in ("overflow_seq", "overflow_rand"):
        for r in group(perf, B, kind, "fr"):
            if r.get("written_mib"):
                per.setdefault(r["rep"], []).append(r["written_mib"] / OVERFLOW_PM_MIB)
    put("overflow_written_vs_pm", ratio_of([min(v) for _, v in sorted(per.items())]),
        f"bytes dm-fr wrote per overflow run over the {OVERFLOW_PM_MIB} MiB PM slice, the less"
        " of sequential and random")
    # dm-linear over the PM: the floor any dm target pays over raw PM, and
    # dm-fr against that floor.
    for kind, name in (("qd1_fsync", "durable_randwrite_qd1"), ("2j_fsync", "durable_randwrite_2j"),
                       ("odirect", "odirect_randwrite"),
                       ("randread", "cached_randread"), ("readmostly_warm", "readmostly_warm")):
        put(f"{name}_dm_linear_vs_raw_pm", paired_ratio(perf, B, kind, "dml", "raw"))
        put(f"{name}_vs_dm_linear", paired_ratio(perf, B, kind, "fr", "dml"))
    # Like for like (issue 45): dm-linear with dm-fr's device flags (write
    # through), so neither sends a flush per fsync through device-mapper.
    for kind, name in (("qd1_fsync", "durable_randwrite_qd1"), ("2j_fsync", "durable_randwrite_2j"),
                       ("odirect", "odirect_randwrite")):
        put(f"{name}_dm_linear_wt_vs_raw_pm", paired_ratio(perf, B, kind, "dmlwt", "raw"))
        put(f"{name}_vs_dm_linear_wt", paired_ratio(perf, B, kind, "fr", "dmlwt"))
    # Reference ratios (dm-writecache and the diagnostics).
    for kind in ("qd1_fsync", "2j_fsync", "odirect", "randread", "readmostly"):
        put(f"ref_{kind}_dm_writecache_vs_raw_pm", paired_ratio(perf, B, kind, "wc", "raw"))
        put(f"ref_{kind}_origin_vs_raw_pm", paired_ratio(perf, B, kind, "origin", "raw"))
    for kind in ("qd1_fsync", "readmostly"):
        put(f"ref_{kind}_raw_pm_vs_dm_writecache", paired_ratio(perf, B, kind, "raw", "wc"))
    for kind in ("qd1_fsync", "2j_fsync", "odirect"):
        put(f"diag_{kind}_fr_writeback_defer0_vs_raw_pm", paired_ratio(perf, B, kind, "frd0", "raw"))
    put("ref_readmostly_fr_vs_origin", paired_ratio(perf, B, "readmostly", "fr", "origin"))
    put("ref_seqread_fr_vs_origin", paired_ratio(perf, B, "seqread", "fr", "origin"))
    put("ref_seqread_fr_vs_dm_writecache", paired_ratio(perf, B, "seqread", "fr", "wc"))
    put("ref_seqread_fr_vs_raw_pm", paired_ratio(perf, B, "seqread", "fr", "raw"))
    put("ref_overflow_seq_fr_vs_origin", paired_ratio(perf, B, "overflow_seq", "fr", "origin"))
    put("ref_overflow_rand_fr_vs_origin", paired_ratio(perf, B, "overflow_rand", "fr", "origin"))
    # The ceiling of the overflow ratios: a cache in front of the origin
    # writes back nearly every block of a working set four times its PM
    # (dm-fr's chunks_written_back over its writes, in runs.csv), and no
    # faster than the origin takes the same bytes in its best pattern
    # (bench/jobs/origin-ceiling.fio). A cache that keeps blocks dirty longer
    # absorbs some random rewrites and can pass it by that share.
    overflow_pair("origin-max", "ref_overflow_%s_origin_max_vs_dm_writecache",
                  "ref_overflow_origin_max_vs_dm_writecache",
                  "the less of ref_overflow_seq_origin_max_vs_dm_writecache and "
                  "ref_overflow_rand_origin_max_vs_dm_writecache: the ceiling of the worse of the two")

    fss = sorted({r["fs"] for r in perf if r.get("set") == "fs"},
                 key=lambda f: FS_ORDER.index(f) if f in FS_ORDER else 9)
    worst_or = None
    for fs in fss:
        for job in ("varmail", "varmail_sustained", "oltp", "fileserver", "mix"):
            a = paired_ratio(perf, "fs", job, "fr", "pmfs", fs)
            b = paired_ratio(perf, "fs", job, "fr", "origin", fs)
            c = paired_ratio(perf, "fs", job, "fr", "wc", fs)
            put(f"fs_{fs}_{job}_fr_vs_raw_pm_fs", a)
            put(f"fs_{fs}_{job}_fr_vs_origin", b)
            put(f"fs_{fs}_{job}_fr_vs_dm_writecache", c)
            put(f"ref_fs_{fs}_{job}_dm_writecache_vs_raw_pm_fs",
                paired_ratio(perf, "fs", job, "wc", "pmfs", fs))
            if fs == "ext4":
                put(f"ref_fs_ext4_{job}_dax_vs_raw_pm_fs", paired_ratio(perf, "fs", job, "dax", "pmfs", fs))
            if job in ("varmail", "varmail_sustained"):
                # The headline: the fsync-heavy job on dm-fr vs the same FS on
                # raw PM, for each file system (and held long: fslong),
                # with its ceiling, the FS on dm-linear over PM.
                held = job == "varmail_sustained"
                put(f"fsync_fs_{fs}{'_sustained' if held else ''}_vs_raw_pm_fs", a,
                    "varmail-like job, sustained" if held else "varmail-like job")
                put(f"fs_{fs}_{job}_dm_linear_vs_raw_pm_fs",
                    paired_ratio(perf, "fs", job, "dml", "pmfs", fs))
                put(f"fs_{fs}_{job}_fr_vs_dm_linear",
                    paired_ratio(perf, "fs", job, "fr", "dml", fs))
            if job == "varmail":
                ceil = paired_ratio(perf, "fs", job, "pmfs", "origin", fs)
                put(f"ref_fs_{fs}_varmail_raw_pm_fs_vs_origin", ceil)
                if b and b[0] is not None and (worst_or is None or b[0] < worst_or[1][0]):
                    worst_or = (fs, b, ceil)
    if worst_or:
        put("fsync_fs_vs_origin", worst_or[1], f"varmail-like job, worst file system: {worst_or[0]}")
        put("fsync_fs_raw_pm_fs_vs_origin", worst_or[2],
            f"varmail-like job, {worst_or[0]} on raw PM vs on the origin: the ceiling of "
            "fsync_fs_vs_origin")
    for job in ("oltp_large", "fileserver_large"):
        put(f"fs_ext4_{job}_fr_vs_dm_writecache", paired_ratio(perf, "fs", job, "fr", "wc", "ext4"))
        put(f"fs_ext4_{job}_fr_vs_origin", paired_ratio(perf, "fs", job, "fr", "origin", "ext4"))

    # Issue 47: the fsync job beside a bulk writer (fsmixed), admission on
    # (the configuration that is neither fr, wc, origin nor "-alone").
    mcfgs = sorted({r["config"] for r in perf if r.get("set") == "fsmixed"})
    # (the one whose fsync job also ran alone: bench.sh's BENCH_MIXED_ADMIT)
    admit = next((c[:-len("-alone")] for c in mcfgs
                  if c.startswith("fr-") and c.endswith("-alone")), None)
    others = [c for c in mcfgs if c.startswith("fr-") and not c.endswith("-alone") and c != admit]
    for fs in sorted({r["fs"] for r in perf if r.get("set") == "fsmixed"}):
        if not admit:
            break
        put(f"mixed_{fs}_fsync_admit_vs_dm_writecache",
            paired_ratio(perf, "fsmixed", "fsync", admit, "wc", fs),
            f"{admit}: the varmail-like job's ops/s beside the stream, on dm-fr with admission "
            "on vs on dm-writecache")
        put(f"mixed_{fs}_fsync_admit_vs_alone",
            paired_ratio(perf, "fsmixed", "fsync", admit, admit + "-alone", fs),
            f"{admit}: beside the stream vs alone on the same device")
        put(f"mixed_{fs}_stream_admit_vs_origin",
            paired_ratio(perf, "fsmixed", "stream", admit, "origin", fs),
            f"{admit}: the stream's MiB/s beside the fsync job, vs the same on the bare origin")
        put(f"ref_mixed_{fs}_stream_admit_vs_origin_alone",
            paired_ratio(perf, "fsmixed", "stream", admit, "origin-alone", fs))
        put(f"ref_mixed_{fs}_fsync_admit_vs_fr",
            paired_ratio(perf, "fsmixed", "fsync", admit, "fr", fs))
        for o in others:
            put(f"ref_mixed_{fs}_fsync_{o}_vs_fr".replace("-", "_"),
                paired_ratio(perf, "fsmixed", "fsync", o, "fr", fs))
            put(f"ref_mixed_{fs}_fsync_{o}_vs_dm_writecache".replace("-", "_"),
                paired_ratio(perf, "fsmixed", "fsync", o, "wc", fs))
            put(f"ref_mixed_{fs}_stream_{o}_vs_origin".replace("-", "_"),
                paired_ratio(perf, "fsmixed", "stream", o, "origin", fs))
        put(f"ref_mixed_{fs}_fsync_fr_vs_dm_writecache",
            paired_ratio(perf, "fsmixed", "fsync", "fr", "wc", fs))
        put(f"ref_mixed_{fs}_fsync_admit_vs_origin",
            paired_ratio(perf, "fsmixed", "fsync", admit, "origin", fs))
        put(f"ref_mixed_{fs}_fsync_p99_admit_vs_dm_writecache",
            paired_ratio(perf, "fsmixed", "fsync", admit, "wc", fs, field="p99_us"))
        put(f"ref_mixed_{fs}_fsync_p99_admit_vs_fr",
            paired_ratio(perf, "fsmixed", "fsync", admit, "fr", fs, field="p99_us"))
        put(f"ref_mixed_{fs}_stream_fr_vs_origin_alone",
            paired_ratio(perf, "fsmixed", "stream", "fr", "origin-alone", fs))
        put(f"ref_mixed_{fs}_stream_dm_writecache_vs_origin_alone",
            paired_ratio(perf, "fsmixed", "stream", "wc", "origin-alone", fs))
        # The ceiling of the first goal: admission can at most give the
        # job its rate with no stream at all (the job alone on the same
        # device), against dm-writecache's beside the stream; and what the
        # stream costs dm-writecache (wc-alone: BENCH_MIXED_WC_ALONE=1).
        put(f"ref_mixed_{fs}_fsync_admit_alone_vs_dm_writecache",
            paired_ratio(perf, "fsmixed", "fsync", admit + "-alone", "wc", fs),
            f"ceiling: {admit} with no stream vs dm-writecache beside it")
        put(f"ref_mixed_{fs}_fsync_dm_writecache_vs_alone",
            paired_ratio(perf, "fsmixed", "fsync", "wc", "wc-alone", fs),
            "dm-writecache: beside the stream vs alone")

    # Issue 45: what writeback sends the origin, per run of dm-fr (medians of
    # the verified runs, with their spread): chunks written back per chunk
    # written in the varmail runs, and in the overflow runs the origin's MiB
    # per MiB written and its KiB per write request.
    def per_run(name, rows, fn, note):
        vals = [fn(r) for r in rows if r["verify"] == "ok"]
        vals = [v for v in vals if v is not None]
        if not vals:
            return
        ratios[name] = round(statistics.median(vals), 4)
        spread[name] = [round(min(vals), 4), round(max(vals), 4)]
        per_rep[name] = [round(v, 4) for v in vals]
        notes[name] = note

    def wb_per_written(r):
        w, c = r.get("fr_writes"), r.get("chunks_written_back")
        return c / w if w and c is not None else None
    for fs in fss:
        per_run(f"fs_{fs}_varmail_written_back_per_written", group(perf, "fs", "varmail", "fr", fs),
                wb_per_written, "dm-fr's chunks_written_back over the chunks written, during the run")
    def origin_per_written(r):
        if r.get("origin_write_mib") is None or not r.get("written_mib"):
            return None
        return r["origin_write_mib"] / r["written_mib"]
    def origin_rows(name, rows_, who):
        """What a configuration sent the origin, as rows name % metric."""
        per_run(name % "origin_mib_per_mib_written", rows_, origin_per_written,
                f"the origin's MiB written (its /sys/block stat) over the MiB fio wrote, "
                f"during the run, {who}")
        per_run(name % "origin_kib_per_request", rows_,
                lambda r: r.get("origin_kib_per_write"),
                f"the origin's KiB per write request during the run, {who}")
    for kind in ("overflow_rand", "overflow_seq"):
        for cfg, pre, who in (("fr", "", "dm-fr"), ("wc", "ref_dm_writecache_", "dm-writecache")):
            origin_rows(f"{pre}{kind}_%s", group(perf, B, kind, cfg), who)

    # Sets (fr-wN: set_ways N) where a run has them, beside the pairs: vs
    # dm-writecache and vs dm-fr on pairs, and what they send the origin.
    wcfgs = sorted({r["config"] for r in perf if r.get("set") == B
                    and r.get("workload", "").startswith("overflow_")
                    and r.get("config", "").startswith("fr-w")})
    for cfg in wcfgs:
        tag = cfg.replace("-", "_")
        for kind in ("overflow_rand", "overflow_seq"):
            put(f"ref_{kind}_{tag}_vs_dm_writecache", paired_ratio(perf, B, kind, cfg, "wc"))
            put(f"ref_{kind}_{tag}_vs_fr", paired_ratio(perf, B, kind, cfg, "fr"))
            origin_rows(f"ref_{kind}_{tag}_%s", group(perf, B, kind, cfg),
                        f"dm-fr with set_ways {cfg[4:]}")
    for cfg in (["fr"] + wcfgs) if wcfgs else []:
        tag = cfg.replace("-", "_")
        for kind in ("overflow_rand", "overflow_seq"):
            per_run(f"ref_{kind}_{tag}_forced_per_write", group(perf, B, kind, cfg),
                    lambda r: r.get("forced_per_write"),
                    f"forced writebacks per chunk written during the run ({cfg})")

    # Forced writebacks per write while the working set fits in half the PM.
    hp = [r["forced_per_write"] for r in group(perf, B, "halfpm", "fr")
          if r["forced_per_write"] is not None and r["verify"] == "ok"]
    if hp:
        ratios["forced_writeback_fraction"] = round(statistics.median(hp), 6)
        spread["forced_writeback_fraction"] = [round(min(hp), 6), round(max(hp), 6)]
        per_rep["forced_writeback_fraction"] = [round(x, 6) for x in hp]
        notes["forced_writeback_fraction"] = ("forced writebacks / chunks written, 4 KiB random "
                                              "writes over 240 MiB with a 512 MiB PM")

    # DRAM and load time.
    def load_by(cfg):
        return {int(r["rep"]): r for r in loads if r.get("config") == cfg}
    lf, lw = load_by("fr"), load_by("wc")
    dram = {}
    for cfg, lr in (("fr", lf), ("wc", lw)):
        if not lr:
            continue
        full_mib = int(next(iter(lr.values())).get("pm_full_mib", 512))
        small_mib = int(next(iter(lr.values())).get("pm_small_mib", 64))
        tot = [int(r["dram_full_kb"]) * 1024 for r in lr.values()]
        small = [int(r["dram_small_kb"]) * 1024 for r in lr.values()]
        slope = [(int(r["dram_full_kb"]) - int(r["dram_small_kb"])) * 1024 /
                 ((full_mib - small_mib) / 1024) for r in lr.values()]
        dram[cfg] = {"pm_full_mib": full_mib, "pm_small_mib": small_mib,
                     "bytes_full_pm": med(tot), "bytes_small_pm": med(small),
                     "bytes_per_gib_total": med(tot) / (full_mib / 1024),
                     "bytes_per_gib_marginal": med(slope),
                     "vmalloc_module_bytes": med([int(r["vmalloc_mod_bytes"]) for r in lr.values()]),
                     "load_pm_mib": int(next(iter(lr.values())).get("load_pm_mib", full_mib)),
                     "load_ms": med([int(r["load_ns"]) / 1e6 for r in lr.values()]),
                     "load_ms_all": [round(int(r["load_ns"]) / 1e6, 1) for r in lr.values()],
                     "load_floor_ms": med([int(r["load_floor_ns"]) / 1e6 for r in lr.values()
                                           if r.get("load_floor_ns")]),
                     "verify": "ok" if all(r["verify"] == "ok" for r in lr.values()) else
                               "; ".join(r["verify"] for r in lr.values() if r["verify"] != "ok"),
                     "status_full": next(iter(lr.values())).get("status_full"),
                     "status_loaded": next(iter(lr.values())).get("status_loaded")}
    if "fr" in dram and "wc" in dram:
        both = sorted(set(lf) & set(lw))
        reps_ = [k for k in both if lf[k]["verify"] == "ok" and lw[k]["verify"] == "ok"]
        ndrop = len(both) - len(reps_)
        tot_r = [(int(lf[k]["dram_full_kb"]) / max(1, int(lw[k]["dram_full_kb"]))) for k in reps_]
        ld_r = [int(lf[k]["load_ns"]) / int(lw[k]["load_ns"]) for k in reps_]
        put("dram_bytes_per_gib_pm_vs_dm_writecache", ratio_of(tot_r, ndrop),
            "DRAM (slab + vmalloc + percpu) taken by the table load on the whole PM, dm-fr over "
            "dm-writecache, per repetition; both PMs the same size, so per GiB alike")
        mf, mw = dram["fr"]["bytes_per_gib_marginal"], dram["wc"]["bytes_per_gib_marginal"]
        if mf is not None and mw:
            ratios["dram_marginal_bytes_per_gib_pm_vs_dm_writecache"] = round(mf / mw, 4)
            notes["dram_marginal_bytes_per_gib_pm_vs_dm_writecache"] = (
                "growth of the DRAM from a 64 MiB PM to the whole PM, per GiB (medians)")
        put("load_time_vs_dm_writecache", ratio_of(ld_r, ndrop),
            f"dmsetup create of a full {dram['fr']['load_pm_mib']} MiB PM (dm-fr: recovery; "
            "dm-writecache: resume), per repetition")
        # The floor: dm-linear over the same PM slice, created right before
        # dm-writecache's load in the same run.
        fl_r = [int(lw[k]["load_floor_ns"]) / int(lw[k]["load_ns"]) for k in reps_
                if lw[k].get("load_floor_ns")]
        if fl_r:
            put("ref_load_dm_linear_vs_dm_writecache", ratio_of(fl_r),
                "dmsetup create of dm-linear over the PM slice vs dm-writecache's load of it "
                "full, per repetition: the least any target's load can be here")

    # Load time against PM size: a least-squares line per target, and what it
    # gives for 1 TiB of PM (a projection from small PMs under emulation).
    # The load set's loads of the whole load-time PM are one more point
    # (their median), at a size the sweep leaves to it.
    sweep = {}
    for cfg in ("fr", "wc"):
        pts = [(int(r["load_pm_mib"]), int(r["load_ns"]) / 1e6) for r in sweeps
               if r.get("config") == cfg and r.get("verify") == "ok"]
        lr = [r for r in loads if r.get("config") == cfg and r.get("verify") == "ok"
              and r.get("load_pm_mib")]
        if lr and int(lr[0]["load_pm_mib"]) not in {m for m, _ in pts}:
            pts.append((int(lr[0]["load_pm_mib"]), med([int(r["load_ns"]) / 1e6 for r in lr])))
        pts.sort()
        if not pts:
            continue
        ent = {"points_mib_ms": [[m, round(t, 1)] for m, t in pts]}
        if len(pts) >= 2:
            n = len(pts)
            mx = sum(m for m, _ in pts) / n
            my = sum(t for _, t in pts) / n
            sxx = sum((m - mx) ** 2 for m, _ in pts)
            if sxx:
                slope = sum((m - mx) * (t - my) for m, t in pts) / sxx
                ent["ms_per_gib"] = round(slope * 1024, 1)
                ent["ms_fixed"] = round(my - slope * mx, 1)
                # A line that falls is the noise of single loads, not a
                # property of the target: no projection from it.
                if slope > 0:
                    ent["projected_ms_1tib"] = round(my + slope * (1024 * 1024 - mx), 0)
                else:
                    ent["spread_ms"] = round(max(t for _, t in pts) - min(t for _, t in pts), 1)
        sweep[cfg] = ent

    # ---------------------------------------------------------------- per-config tables
    def cfg_table(s, kind, cfgs, fs=""):
        lines = []
        for cfg in cfgs:
            g = group(perf, s, kind, cfg, fs)
            if not g:
                continue
            vals = [r["value"] for r in g if r["value"] is not None]
            fp = [r["forced_per_write"] for r in g if r["forced_per_write"] is not None]
            fsy = [r["fsyncs"] for r in g if r["fsyncs"] is not None]
            ver = "ok" if all(r["verify"] == "ok" for r in g) else \
                "; ".join(sorted({r["verify"] for r in g if r["verify"] != "ok"}))
            lines.append({"config": cfg, "median": med(vals),
                          "min": min(vals) if vals else None, "max": max(vals) if vals else None,
                          "n": len(vals), "p50": med([r["p50_us"] for r in g]),
                          "p99": med([r["p99_us"] for r in g]), "p999": med([r["p999_us"] for r in g]),
                          "sync_p50": med([r["sync_p50_us"] for r in g]),
                          "sync_p99": med([r["sync_p99_us"] for r in g]),
                          "sync_p999": med([r["sync_p999_us"] for r in g]),
                          "forced_per_write": med(fp) if fp else None,
                          "forced": sum(r["forced_writebacks"] or 0 for r in g) if fp else None,
                          "read_fills": med([r["read_fills"] for r in g]),
                          "prefetched": med([r.get("prefetched") for r in g]),
                          "fsyncs": med(fsy), "fsyncs_min": min(fsy) if fsy else None,
                          "fsyncs_max": max(fsy) if fsy else None,
                          "runtime_s": med([r["runtime_s"] for r in g]),
                          "origin_writes": med([r.get("origin_writes") for r in g]),
                          "origin_kib_per_write": med([r.get("origin_kib_per_write")
                                                       for r in g]),
                          "origin_flushes": med([r.get("origin_flushes") for r in g]),
                          "verify": ver})
        return lines

    tables = {}
    for kind, _, _ in BLOCK_WORKLOADS:
        tables[f"block/{kind}"] = cfg_table("block", kind, ["raw", "dml", "dmlwt", "fr", "frd0", "wc", "origin",
                                                               "origin-max"])
    for fs in fss:
        for job, _, _ in FS_JOBS:
            t = cfg_table("fs", job, ["pmfs", "dax", "dml", "fr", "frwb0", "wc", "origin"], fs)
            if t:
                tables[f"fs/{fs}/{job}"] = t
    mixed = sorted({r["config"] for r in perf if r.get("set") == "fsmixed"})
    for fs in sorted({r["fs"] for r in perf if r.get("set") == "fsmixed"}):
        for job, _, _ in MIXED_JOBS:
            t = cfg_table("fsmixed", job, mixed, fs)
            if t:
                tables[f"fsmixed/{fs}/{job}"] = t

    # The device flags as the block layer reported them, per configuration
    # (one line per distinct set of flags; the dm-N name left out).
    flags = {}
    for r in perf:
        if r.get("queue_dev") is None:
            continue
        key = (r["config"],) + tuple(str(r.get("queue_" + q)) for q in QFLAGS)
        f = flags.setdefault(key, {"config": r["config"], "runs": 0, "devs": set(), "where": set(),
                                   **{q: r.get("queue_" + q) for q in QFLAGS}})
        f["runs"] += 1
        f["devs"].add(r["queue_dev"].rstrip("0123456789") + "N" if r["queue_dev"].startswith("dm-")
                      else r["queue_dev"])
        f["where"].add(r["set"] if r["set"] == "block" else f'fs {r["fs"]}')
    cfg_order = ["raw", "pmfs", "dax", "dml", "dmlwt", "fr", "frd0", "frwb0", "wc", "origin", "origin-max"]
    flag_rows = sorted(flags.values(), key=lambda f: (cfg_order.index(f["config"])
                                                      if f["config"] in cfg_order else 99,
                                                      f["config"], sorted(f["where"])))
    for f in flag_rows:
        f["devs"] = ", ".join(sorted(f["devs"]))
        f["where"] = ", ".join(sorted(f["where"]))

    runs_ok = [r["verify"] == "ok" for r in perf] + [r.get("verify") == "ok" for r in loads + sweeps]
    all_verified = bool(runs_ok) and all(runs_ok)
    # dm-fr's own runs apart: a failure of another configuration (dm-writecache
    # returning wrong data, bench/README.md) is not one of dm-fr's.
    fr_ok = [r.get("verify") == "ok" for r in perf + loads + sweeps
             if str(r.get("config") or "").startswith("fr")]
    fr_verified = bool(fr_ok) and all(fr_ok)
    failed = sorted({f'{r.get("set")}/{r.get("fs") or ""}/{r.get("workload") or r.get("config")}/'
                     f'{r.get("config")} rep {r.get("rep")}: {r.get("verify")}' for r in perf + loads + sweeps
                     if r.get("verify") != "ok"})

    # The multi-block read check (bench.sh: "split"): per configuration, how
    # many runs' 128 KiB reads back returned the data the 4 KiB check did.
    split_reads = {}
    for r in perf:
        # (a warm row is the same run's second phase: the same check)
        if r.get("split_read") and not r["workload"].endswith("_warm"):
            e = split_reads.setdefault(f'{r["workload"]}/{r["config"]}', {"ok": 0, "failed": 0})
            e["ok" if r["split_read"] == "ok" else "failed"] += 1

    def goal_met(name):
        if name not in GOALS or name not in ratios:
            return None
        op, thr, _ = GOALS[name]
        return ratios[name] >= thr if op == ">=" else ratios[name] <= thr

    summary = {
        "ratios": ratios,
        "ratio_of_medians": of_medians,
        "spread": spread,
        "per_repetition": per_rep,
        "spread_ok": {k: spread_ok(ratios[k], per_rep.get(k, [])) for k in ratios},
        "dropped": dropped,
        "unreported": unreported,
        "ceilings": {k: {"ratio": v[0], "what": v[1], "median": ratios.get(v[0])}
                     for k, v in CEILINGS.items()},
        "notes": notes,
        "goals": {k: v[2] for k, v in GOALS.items()},
        "goal_met": {k: goal_met(k) for k in GOALS if k in ratios},
        "dram": dram,
        "load_sweep": sweep,
        "all_verified": all_verified,
        "fr_verified": fr_verified,
        "verification_failures": failed,
        "split_reads": split_reads,
        "meta": {**meta, **host},
        "tables": tables,
        "device_flags": flag_rows,
        "coreprof": load_json_loose(os.path.join(raw, "coreprof.json")),
    }
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1, sort_keys=False)

    write_markdown(out, summary, fss)
    try:
        chart(out, summary, fss)
    except Exception as e:  # the report must not be lost for a chart
        print(f"report: chart failed: {e}", file=sys.stderr)
        raise
    print(f"report: {len(perf)} runs, {len(ratios)} ratios, all verified: {all_verified}")
    for k in GOALS:
        if k in ratios:
            so = summary["spread_ok"].get(k)
            print(f"  {k:45s} {ratios[k]:<10} [{spread[k][0]}, {spread[k][1]}]  goal {GOALS[k][2]}"
                  f"  {'met' if goal_met(k) else 'NOT met'}"
                  f"  spread {'ok' if so else 'n/a' if so is None else 'NOT ok'}"
                  + (f"  ({dropped[k]} repetition(s) dropped)" if dropped.get(k) else ""))
        elif k in unreported:
            print(f"  {k:45s} not reported: all {unreported[k]} repetition(s) failed verification")


def write_markdown(out, S, fss):
    m = S["meta"]
    r, sp, notes = S["ratios"], S["spread"], S["notes"]
    L = []
    L.append("# dm-fr benchmark results\n")
    L.append("Generated by `make bench` (tests/bench/run, bench/guest/bench.sh, bench/report.py). "
             "Every number below comes from ONE guest boot under QEMU TCG (software emulation): "
             "absolute rates mean nothing, ratios taken within the boot do. Each configuration was "
             "created fresh for each run; the configurations of a workload ran interleaved (rotated "
             "each repetition), and a ratio is the median of its per-repetition ratios, with the "
             "min..max as its spread. Every run's data was read back and checked; \"all runs "
             "verified\" below says whether every check passed (the failures: Verification).\n")
    L.append("| | |\n|---|---|")
    pm_mib = int(m.get("pm_bytes", 0)) >> 20
    or_mib = int(m.get("origin_bytes", 0)) >> 20
    load_pm = m.get("load_pm", "/dev/pmem0")
    load_pm_mib = int(m.get("load_pm_bytes", 0)) >> 20
    for k, v in (("date (UTC)", m.get("date")), ("guest kernel", m.get("kernel")),
                 ("PM", f"{pm_mib} MiB, memmap (legacy e820) /dev/pmem0, DAX, written once in "
                        "full before the runs; dm-linear slices of it: 64 MiB for the block "
                        "larger-than-PM runs, 32 MiB for the file-system ones" +
                        (", 256 MiB for the load test" if load_pm == "/dev/pmem0" else "")),
                 *((("load-time PM", f"{load_pm_mib} MiB, memmap (legacy e820) {load_pm}, DAX, "
                     "above 4 GiB: the load set activates all of it, the sweep slices of it"),)
                   if load_pm != "/dev/pmem0" else ()),
                 ("origin", f"{or_mib} MiB virtio-blk, sparse host file, cache=none; "
                            "file systems on a 512 MiB area of it"),
                 ("guest", f"{m.get('cpus')} vCPUs, {int(m.get('mem_kb', 0)) >> 10} MiB RAM "
                           f"(TCG, -cpu max: {m.get('cpu_flags', '').strip()})"),
                 ("host load (1/5/15 min)", f"before {m.get('host_load_before')}, "
                                            f"after {m.get('host_load_after')} "
                                            f"({m.get('host_cpus')} host CPUs)"),
                 ("repetitions", f"{m.get('reps')}; qd1_fsync, 2j_fsync and the varmail job "
                                 f"(FS on raw PM and dm-fr): {m.get('headline_reps', m.get('reps'))}"),
                 ("run length", f"block: {m.get('runtime')} s per run, qd1_fsync and 2j_fsync "
                                f"{m.get('headline_runtime', m.get('runtime'))} s; varmail: at least "
                                f"{m.get('fs_runtime')} s and {m.get('fs_fsyncs', '-')} fsyncs, at most "
                                f"{m.get('fs_max_runtime', '-')} s; oltp: {m.get('oltp_io_size', '-')} "
                                f"of writes + fdatasyncs per job, at most {m.get('fs_max_runtime', '-')} s; "
                                f"other file-system jobs {m.get('fs_runtime')} s or by size"
                                + (f"; overflow_seq and overflow_rand {m['overflow_runtime']} s"
                                   if m.get("overflow_runtime") else "")
                                + (f"; varmail_sustained (fslong) {m['fslong_runtime']} s on "
                                   f"{m.get('fslong_fs') or 'no file system'}"
                                   if m.get("fslong_runtime") else "")),
                 ("dm-writecache in the file-system set", m.get("fs_wc", "every file system")),
                 ("dm-fr's tunables", "at their defaults unless a configuration above says "
                                      "otherwise: " + ", ".join(f"{t[0]} {t[3]} {t[4]}"
                                                                for t in fr_tunables())),
                 ("fio", m.get("fio")), ("qemu", m.get("qemu")),
                 ("git", f"{m.get('git')} (dm-fr/ files modified in the work tree: "
                         f"{m.get('git_dirty_dm_fr')})"),
                 ("dm-fr.ko", m.get("module_note")),
                 ("bench time", f"{m.get('bench_seconds')} s for tests/bench/run (boot included)"),
                 ("all runs verified", "yes" if S["all_verified"] else "NO (see Verification)"),
                 ("all dm-fr runs verified", "yes" if S.get("fr_verified") else "NO (see Verification)")):
        L.append(f"| {k} | {v} |")
    L.append("\n![ratios](chart.png)\n")

    pr, dr, un, so = S["per_repetition"], S["dropped"], S["unreported"], S["spread_ok"]

    def nrep(k):
        n = len(pr.get(k, []))
        return f"{n}" + (f" ({dr[k]} dropped)" if dr.get(k) else "")

    def sok(k):
        v = so.get(k)
        return "n/a (1 repetition)" if v is None else "yes" if v else "**NO**"

    L.append("## Headline ratios (summary.json \"ratios\")\n")
    om = S.get("ratio_of_medians", {})
    L.append("Each ratio is the median of its per-repetition ratios; \"of medians\" is the other "
             "estimator, the ratio of the two configurations' medians over the same repetitions "
             "(\"-\" where the ratio is not of two series); \"spread ok\" says whether "
             f"every repetition lies within +-{SPREAD_TOL} of the median ({SPREAD_TOL * 100:.0f} % of it "
             "above 1). n = repetitions in the ratio; a repetition whose numerator or denominator "
             "run failed verification is dropped. \"ceiling\" is the same ratio with dm-fr "
             "replaced by the best this platform allows (what it is: below the table); a goal "
             "above its ceiling cannot be met here by any target.\n")
    L.append("| ratio | median | of medians | spread (min..max) | n | spread ok | goal | met | ceiling |\n"
             "|---|---|---|---|---|---|---|---|---|")
    C = S["ceilings"]
    for k in GOALS:
        c = C.get(k, {})
        ctext = "-"
        if c.get("median") is not None:
            ctext = fmt(c["median"])
            op, thr, _ = GOALS[k]
            if (op == ">=" and c["median"] < thr) or (op == "<=" and c["median"] > thr):
                ctext += " (goal above it)"
        if k in r:
            met = S["goal_met"].get(k)
            L.append(f"| {k} | **{fmt(r[k])}** | {fmt(om[k]) if k in om else '-'} | "
                     f"{fmt(sp[k][0])} .. {fmt(sp[k][1])} | {nrep(k)} | "
                     f"{sok(k)} | {GOALS[k][2]} | {'yes' if met else '**no**'} | {ctext} |")
        elif k in un:
            L.append(f"| {k} | not reported | - | - | 0 ({un[k]} dropped) | - | {GOALS[k][2]} | "
                     f"**unknown**: every repetition failed verification | {ctext} |")
    L.append("")
    bad = [k for k in GOALS if so.get(k) is False]
    if bad:
        L.append("**The spread is NOT within +-0.05 of the median** (these medians are not "
                 "stable enough to decide their goal): " + ", ".join(bad) + ".\n")
    elif any(so.get(k) for k in GOALS):
        L.append("Every headline ratio with more than one repetition has its spread within "
                 "+-0.05 of its median.\n")
    else:
        L.append("No headline ratio has more than one repetition: no spread to judge.\n")
    drop = [k for k in GOALS if dr.get(k)]
    if drop:
        L.append("Repetitions dropped for a failed verification: " +
                 ", ".join(f"{k} ({dr[k]})" for k in drop) + ".\n")
    for k in GOALS:
        if k in notes:
            L.append(f"- {k}: {notes[k]}")
    for k in GOALS:
        c = C.get(k)
        if c:
            L.append(f"- ceiling of {k}: {c['ratio']} ({c['what']})")
    L.append("\n## Reference and diagnostic ratios\n")
    L.append("| ratio | median | spread | n | spread ok |\n|---|---|---|---|---|")
    for k in sorted(set(r) | set(un)):
        if k in GOALS:
            continue
        if k not in r:
            L.append(f"| {k} | not reported | - | 0 ({un[k]} dropped) | - |")
            continue
        s = sp.get(k)
        L.append(f"| {k} | {fmt(r[k])} | {fmt(s[0]) + ' .. ' + fmt(s[1]) if s else '-'} | "
                 f"{nrep(k) if k in pr else '-'} | {sok(k) if k in pr else '-'} |")
    for k in sorted(notes):
        if k not in GOALS and k in r:
            L.append(f"\n- {k}: {notes[k]}")

    fl = S.get("device_flags") or []
    if fl:
        L.append("\n## Device flags per configuration\n")
        L.append("As the block layer reported them (/sys/block/X/queue/*) right after each "
                 "configuration was created, at every run; one line per distinct set. dm "
                 "configurations (dm-fr, dm-writecache, dm-linear over PM) get rotational = 0 from "
                 "the bench (bench/guest/bench.sh apply_udev_hints, standing in for dm-fr's udev "
                 "rule, which the guest's stopped udev does not run); the file systems' origin is a "
                 "dm-linear slice of the virtio disk and keeps its flags.\n")
        L.append("| config | device | where | runs | write_cache | fua | rotational | logical bs | "
                 "physical bs | minimum io | optimal io |\n|---|---|---|---|---|---|---|---|---|---|---|")
        for f in fl:
            L.append(f"| {CONFIG_NAMES.get(f['config'], f['config'])} | {f['devs']} | {f['where']} | "
                     f"{f['runs']} | " + " | ".join(str(f.get(q)) for q in QFLAGS) + " |")

    def origin_cell(t):
        if t.get("origin_writes") is None:
            return "-"
        return (f"{ifmt(t['origin_writes'])}, {fmt(t.get('origin_kib_per_write'))}, "
                f"{ifmt(t.get('origin_flushes'))}")

    def table(title, rows, unit, sync=False):
        L.append(f"\n### {title}\n")
        hdr = f"| config | {unit} (median) | min .. max | n | p50 us | p99 us | p99.9 us |"
        sep = "|---|---|---|---|---|---|---|"
        if sync:
            hdr += " fsync p50 / p99 / p99.9 us | fsyncs per run (median, min .. max) |"
            sep += "---|---|"
        hdr += (" forced writebacks / write | read fills (prefetched) | origin writes, KiB each, "
                "flushes | verified |")
        sep += "---|---|---|---|"
        L.append(hdr)
        L.append(sep)
        for t in rows:
            line = (f"| {CONFIG_NAMES.get(t['config'], t['config'])} | {fmt(t['median'])} | "
                    f"{fmt(t['min'])} .. {fmt(t['max'])} | {t['n']} | {fmt(t['p50'])} | "
                    f"{fmt(t['p99'])} | {fmt(t['p999'])} |")
            if sync:
                line += (f" {fmt(t['sync_p50'])} / {fmt(t['sync_p99'])} / {fmt(t['sync_p999'])} |"
                         f" {ifmt(t['fsyncs'])} ({ifmt(t['fsyncs_min'])} .. {ifmt(t['fsyncs_max'])}) |")
            line += (f" {fmt(t['forced_per_write']) if t['forced_per_write'] is not None else '-'} | "
                     f"{fmt(t['read_fills'])}"
                     f"{' (' + fmt(t['prefetched']) + ')' if t.get('prefetched') is not None else ''}"
                     f" | {origin_cell(t)} | {t['verify']} |")
            L.append(line)

    L.append("\n## Block level\n")
    L.append("Region sizes, offsets and the exact fio options are in bench/jobs/*.fio. Latencies "
             "are fio's total latency (submission to completion) of the main operation; for "
             "fsync jobs the fsync latency is given apart. The origin's requests are what its "
             "/sys/block/<dev>/stat counted during the measured run (write requests as the "
             "disk got them, after the block layer's merging; flushes).")
    for kind, title, unit in BLOCK_WORKLOADS:
        rows = S["tables"].get(f"block/{kind}")
        if rows:
            table(f"{title} (`{kind}`)", rows, unit, sync=kind.endswith("fsync"))
    L.append("\n## File-system level\n")
    L.append("Each configuration gets a fresh 512 MiB file system (mkfs on the device), then the "
             "jobs run in this order on it; afterwards every job's files are read back from the "
             "device (after an unmount and mount) and checked, and the file system is unmounted "
             "and checked "
             "(e2fsck -fn, xfs_repair -n, btrfs check --readonly). varmail latencies are per "
             "op (one pass of create, append, reads), the fsync apart; fio latencies are per "
             "write (oltp: the fdatasync apart). The fsync count is per run: varmail's fsyncs, "
             "oltp's fdatasyncs.")
    for fs in fss:
        for job, title, unit in FS_JOBS:
            rows = S["tables"].get(f"fs/{fs}/{job}")
            if rows:
                table(f"{fs}: {title} (`{job}`)", rows, unit,
                      sync=job.startswith("oltp") or job.startswith("varmail"))
    mk = sorted(k for k in S["tables"] if k.startswith("fsmixed/"))
    if mk:
        L.append("\n## The fsync job beside a bulk writer (fsmixed, issue 47)\n")
        L.append("On a 32 MiB PM, a fresh 512 MiB file system: the varmail-like job (its least "
                 "run time BENCH_MIXED_RUNTIME) and a 128 MiB buffered sequential writer with one "
                 "fsync (bench/jobs/stream.fio) side by side; fr-aN is dm-fr with "
                 "admit_stream_kib N (streams past N KiB around PM), fr-bN with admit_background "
                 "N; \"-alone\" runs one job without the other. Both jobs' data are checked after.")
    for k in mk:
        _, fs, job = k.split("/")
        title, unit = next((t, u) for j, t, u in MIXED_JOBS if j == job)
        table(f"{fs}: {title} (`{job}`)", S["tables"][k], unit, sync=job == "fsync")
    d = S.get("dram") or {}
    if d:
        L.append("\n## DRAM and load time of a full PM\n")
        L.append("DRAM = the change of Slab + VmallocUsed + Percpu in /proc/meminfo (after "
                 "dropping reclaimable slab) across the table load; dm-fr's fixed buffers (read fills "
                 "256 KiB, writeback copies 128 KiB) are kmalloc'd and counted there (from target "
                 "1.13: until then the fill buffers were pages this did not count). "
                 "Load = the wall time of `dmsetup create` of "
                 "a full PM that was just removed (dm-fr recovers at preresume; dm-writecache "
                 "reads its entries in its constructor and resume); the data is then read back "
                 "through the loaded cache and checked.\n")
        L.append("| | dm-fr | dm-writecache |\n|---|---|---|")
        fr, wc = d.get("fr", {}), d.get("wc", {})

        def kib(x):
            return "-" if x is None else f"{x / 1024:,.0f} KiB"
        for label, key, f in (
                (f"DRAM, 64 MiB PM", "bytes_small_pm", kib),
                (f"DRAM, whole PM ({fr.get('pm_full_mib', '?')} MiB)", "bytes_full_pm", kib),
                ("DRAM per GiB of PM (whole PM)", "bytes_per_gib_total", kib),
                ("DRAM per GiB of PM (marginal, 64 MiB -> whole PM)", "bytes_per_gib_marginal", kib),
                ("vmalloc areas of the module (vmallocinfo)", "vmalloc_module_bytes", kib),
                (f"load of a full {fr.get('load_pm_mib', '?')} MiB PM, ms (median)", "load_ms", lambda x: fmt(x)),
                ("load, ms (each repetition)", "load_ms_all", lambda x: ", ".join(map(str, x or []))),
                ("dm-linear over the same PM, created in the same run, ms (median)", "load_floor_ms",
                 lambda x: fmt(x)),
                ("status when full", "status_full", lambda x: f"`{x}`"),
                ("status after the load", "status_loaded", lambda x: f"`{x}`"),
                ("verified", "verify", lambda x: x)):
            L.append(f"| {label} | {f(fr.get(key))} | {f(wc.get(key))} |")
    sw = S.get("load_sweep") or {}
    if sw:
        L.append("\n### Load time against PM size\n")
        L.append("The same load test on slices of the load-time PM, once each (`loadsweep`), and "
                 "the median of the load set's loads of all of it; a least-squares "
                 "line per target gives the fixed cost, the cost per GiB and a projection to 1 TiB "
                 "(from small PMs under software emulation: an order of magnitude, not a promise).\n")
        sizes = sorted({m for e in sw.values() for m, _ in e.get("points_mib_ms", [])})
        L.append("| PM, MiB | " + " | ".join(str(m) for m in sizes) +
                 " | fixed, ms | ms per GiB | 1 TiB, projected |")
        L.append("|---|" + "---|" * (len(sizes) + 3))
        def proj_cell(e):
            proj = e.get("projected_ms_1tib")
            if proj is not None:
                return f"{proj / 1000:.1f} s"
            if e.get("spread_ms") is not None:
                return f"none: no growth above the noise (the points span {fmt(e['spread_ms'])} ms)"
            return "-"
        for cfg, name in (("fr", "dm-fr"), ("wc", "dm-writecache")):
            e = sw.get(cfg)
            if not e:
                continue
            pts = dict((m, t) for m, t in e.get("points_mib_ms", []))
            L.append(f"| {name}, ms | " + " | ".join(fmt(pts.get(m)) if m in pts else "-" for m in sizes) +
                     f" | {fmt(e.get('ms_fixed'))} | {fmt(e.get('ms_per_gib'))} | "
                     f"{proj_cell(e)} |")
    cp = S.get("coreprof")
    if cp:
        L.append("\n## The protocol core, instructions per operation (callgrind)\n")
        L.append(cp.get("note", "") + ".\n")
        L.append("| operation | instructions |\n|---|---|")
        for k, v in cp.get("instructions_per_op", {}).items():
            L.append(f"| {k} | {v} |")
    L.append("\n## Verification\n")
    sr = S.get("split_reads", {})
    if sr:
        L.append("The read-mostly region is verified by 4 KiB reads (the size the mix reads and "
                 "writes), which decide the run; then read back again by 128 KiB reads, over cached "
                 "and uncached blocks, a correctness result of its own (docs/vs-dm-writecache.md, "
                 "peers/mixed-span-read):\n")
        L.append("| workload/configuration | 128 KiB reads right | wrong |\n|---|---|---|")
        for k, v in sorted(sr.items()):
            L.append(f"| {k} | {v['ok']} | {'**' + str(v['failed']) + '**' if v['failed'] else 0} |")
        L.append("")
    if S["all_verified"]:
        L.append("Every run passed its checks.")
    else:
        L.append("These runs FAILED a check (their numbers must not be trusted; every ratio "
                 "leaves out the repetitions in which they ran, see \"dropped\" above):\n")
        for f in S["verification_failures"]:
            L.append(f"- {f}")
        if dr:
            L.append("\nRepetitions dropped from ratios for a failed verification: " +
                     ", ".join(f"{k} ({v})" for k, v in sorted(dr.items())) + ".")
        if un:
            L.append("\nNot reported at all (every repetition dropped): " +
                     ", ".join(sorted(un)) + ".")
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write("\n".join(L) + "\n")


def chart(out, S, fss):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r, sp = S["ratios"], S["spread"]
    fig, axes = plt.subplots(1, 3, figsize=(18, 6.5), gridspec_kw={"width_ratios": [1.25, 1, 1]})

    # Panel 1: headline ratios against their goals (log scale).
    names = [k for k in GOALS if k in r]
    ax = axes[0]
    ys = list(range(len(names)))[::-1]
    for y, k in zip(ys, names):
        v, lo, hi = r[k], sp[k][0], sp[k][1]
        met = S["goal_met"].get(k)
        v_plot = max(v, 1e-5)
        ax.barh(y, v_plot, color="#4c9a4c" if met else "#c0504d", alpha=0.85)
        ax.errorbar(v_plot, y, xerr=[[max(v_plot - max(lo, 1e-5), 0)], [max(hi - v_plot, 0)]],
                    fmt="none", ecolor="black", capsize=3)
        thr = GOALS[k][1]
        ax.plot([thr, thr], [y - 0.4, y + 0.4], color="black", lw=2)
        ax.text(max(v_plot, thr) * 1.15, y, f"{fmt(v)}  (goal {GOALS[k][2]})", va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels(names, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(1e-5 if any(r[k] < 0.01 for k in names) else 0.05, 100)
    ax.axvline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_title("dm-fr: headline ratios (bar: median; whisker: min..max;\n"
                 "black tick: goal; green: goal met)", fontsize=10)

    # Panel 2: block level, throughput relative to raw PM.
    ax = axes[1]
    kinds = ["qd1_fsync", "2j_fsync", "odirect", "randread", "readmostly"]
    cfgs = ["fr", "dml", "wc", "origin"]
    colors = {"fr": "#1f77b4", "dml": "#9ecae1", "wc": "#ff7f0e", "origin": "#7f7f7f",
              "pmfs": "#2ca02c", "dax": "#98df8a"}
    width = 0.2
    for i, cfg in enumerate(cfgs):
        vals, los, his = [], [], []
        for kind in kinds:
            key = {"wc": f"ref_{kind}_dm_writecache_vs_raw_pm",
                   "origin": f"ref_{kind}_origin_vs_raw_pm",
                   "dml": {"qd1_fsync": "durable_randwrite_qd1_dm_linear_vs_raw_pm",
                           "2j_fsync": "durable_randwrite_2j_dm_linear_vs_raw_pm",
                           "randread": "cached_randread_dm_linear_vs_raw_pm"}.get(kind)}.get(cfg)
            if cfg == "fr":
                key = {"qd1_fsync": "durable_randwrite_qd1_vs_raw_pm",
                       "2j_fsync": "durable_randwrite_2j_vs_raw_pm",
                       "odirect": "odirect_randwrite_vs_raw_pm",
                       "randread": "cached_randread_vs_raw_pm"}.get(kind)
            if kind == "readmostly" and cfg == "fr":
                # fr / raw = (fr / wc) * (wc / raw) is not paired; use the table medians.
                t = {x["config"]: x["median"] for x in S["tables"].get("block/readmostly", [])}
                v = t.get("fr") / t["raw"] if t.get("fr") and t.get("raw") else None
                vals.append(v or 0)
                los.append(0)
                his.append(0)
                continue
            v = r.get(key) if key else None
            s = sp.get(key) if key else None
            vals.append(v or 0)
            los.append((v - s[0]) if v and s else 0)
            his.append((s[1] - v) if v and s else 0)
        xs = [j + (i - 1.5) * width for j in range(len(kinds))]
        ax.bar(xs, vals, width, label=CONFIG_NAMES[cfg], color=colors[cfg],
               yerr=[los, his], capsize=2)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(0.95, color="red", lw=0.6, ls="--")
    ax.set_xticks(range(len(kinds)))
    ax.set_xticklabels(["durable\nQD1", "durable\n2 jobs", "O_DIRECT\nno fsync", "cached\nread",
                        "read-mostly\n(cold)"], fontsize=8)
    ax.set_ylabel("throughput / raw PM (same boot)")
    ax.set_title("Block level, relative to raw /dev/pmem0\n(red dashed: the 0.95 goal)", fontsize=10)
    ax.legend(fontsize=7)

    # Panel 3: the fsync-heavy file-system jobs, relative to the same FS on raw PM.
    ax = axes[2]
    jobs = [("varmail", "varmail"), ("oltp", "OLTP")]
    labels, groups = [], []
    for fs in fss:
        for job, jl in jobs:
            t = {x["config"]: x["median"] for x in S["tables"].get(f"fs/{fs}/{job}", [])}
            if not t.get("pmfs"):
                continue
            labels.append(f"{fs}\n{jl}")
            groups.append(t)
    fcfgs = ["fr", "wc", "origin", "dax"]
    for i, cfg in enumerate(fcfgs):
        vals = [(g.get(cfg) or 0) / g["pmfs"] for g in groups]
        xs = [j + (i - 1.5) * width for j in range(len(groups))]
        ax.bar(xs, vals, width, label=CONFIG_NAMES[cfg], color=colors.get(cfg, "#1f77b4"))
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(0.90, color="red", lw=0.6, ls="--")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("ops/s / same FS on raw PM (medians)")
    ax.set_title("fsync-heavy file-system jobs\n(red dashed: the 0.90 goal)", fontsize=10)
    ax.legend(fontsize=7)

    m = S["meta"]
    fig.suptitle(f"dm-fr vs raw PM, dm-writecache and the bare origin - one TCG boot, "
                 f"kernel {m.get('kernel')}, PM {int(m.get('pm_bytes', 0)) >> 20} MiB, "
                 f"{m.get('date', '')}, host load {m.get('host_load_before', '?')}", fontsize=11)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "chart.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
