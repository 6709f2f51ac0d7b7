#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench/guest/bench.sh OUTDIR: the benchmark suite, run inside ONE guest boot
# by tests/bench/run (never on the host: it loads modules and writes devices).
#
# Configurations, all on the same emulated PM (/dev/pmem0) and the same origin
# disk (virtio-blk, serial "bench"):
#   raw     /dev/pmem0 itself, O_DIRECT: the physical limit
#   fr      dm-fr on /dev/pmem0 in front of the origin (defaults: sets of 8)
#   frd0    dm-fr with writeback_defer 0 (First Responder's writeback every
#           period, busy or not): a diagnostic, to show what deferring it buys
#   (also, for experiments through BENCH_QD1_CONFIGS, BENCH_2J_CONFIGS and
#   BENCH_ODIRECT_CONFIGS: frwb0, writeback_period
#   0; fr-pN, writeback_period N; fr-dN, writeback_defer N; fr-kN,
#   prefetch_kib N, also for read-mostly and the cold stream through
#   BENCH_RM_CONFIGS and BENCH_SEQ_CONFIGS; fr-jN, writeback_jobs N, also
#   for the overflow runs through BENCH_OVERFLOW_CONFIGS; fr-iN,
#   writeback_idle N, fr-lN, low_watermark N, fr-aN, admit_stream_kib N,
#   fr-bN, admit_background N, and fr-wN, set_ways N (slots of N chunks),
#   anywhere; several joined by "+", as fr-w8+p100)
#   dml     dm-linear over the whole PM: what any dm target pays over raw PM
#   dmlwt   the same with queue/write_cache "write through", as dm-fr reports
#           it: an fsync then sends no flush through device-mapper, so the
#           durable-write floor is like for like (issue 45)
#   wc      dm-writecache, pmem mode, 4 KiB blocks, same PM and origin
#   origin  the bare origin
#   pmfs    (file systems) the file system on /dev/pmem0, no DAX: the limit
#   dax     (ext4) ext4 -o dax on /dev/pmem0
# Every configuration is created fresh for each run and removed after it, and
# each workload runs its configurations interleaved (rotated each repetition)
# BENCH_REPS times (the headline workloads BENCH_HEADLINE_REPS times).  Every
# run is verified: block runs read their whole region back and check each
# block's crc32c header, then a short write+verify run of the same shape
# catches lost or stale writes; file-system runs check every file after a
# remount, then unmount and fsck.
#
# Results: OUTDIR/runs.jsonl (one JSON object per measured run), OUTDIR/fio/
# (fio's JSON output), OUTDIR/log/ (verification logs), OUTDIR/meta.json.
#
# Every run also records the device's queue flags (queue_* in runs.jsonl).
#
# Environment: FR_KO (dm-fr.ko), BENCH_VARMAIL (the varmail binary),
# BENCH_REPS (3), BENCH_HEADLINE_REPS (9: qd1_fsync, 2j_fsync, odirect and the
# file-system varmail job, dm-fr and the FS on raw PM), BENCH_RUNTIME (s, block
# runs, 2), BENCH_HEADLINE_RUNTIME (s, qd1_fsync, 2j_fsync, odirect, 4),
# BENCH_FS_RUNTIME (s, the least a varmail run lasts, 2), BENCH_FS_FSYNCS
# (varmail: fsyncs a run does at least, 3000), BENCH_FS_MAX_RUNTIME (s, the
# most a varmail or oltp run lasts, 20), BENCH_OLTP_IO_SIZE (oltp: bytes of
# 4 KiB writes + fdatasync per job, 8m), BENCH_FS_WC (the file systems that
# also run dm-writecache, ext4), BENCH_OLTP_FS (the file systems that run the
# oltp job, "ext4 xfs": on Btrfs it takes 10-20 s a run),
# BENCH_SETS (default "block load loadsweep fs fslong fsbig fsmixed"; also "fsext"), BENCH_FS ("ext4 xfs btrfs"),
# BENCH_FS_ORIGIN (a diagnostic: the device under the file systems' origin
# area instead of the virtio disk; see FS_ORIGIN below),
# BENCH_MIX_FS and BENCH_STREAM_FS (the file systems that also run the paper
# mix and the fileserver-like job; default ext4 only, for time), BENCH_BLOCK
# (the block workloads to run; default all), BENCH_OVERFLOW_RUNTIME (s,
# overflow_seq and overflow_rand, 60: long enough to write several times the
# PM slice, so that they measure the steady state, not the burst that fills
# the PM), BENCH_FSLONG_RUNTIME (s, the sustained varmail runs, 40) and
# BENCH_FSLONG_FS (the file systems that run them, "btrfs").

set -u
OUT=${1:?usage: bench.sh OUTDIR}
TOP=${FR_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
JOBS=$TOP/bench/jobs
REPS=${BENCH_REPS:-3}
HREPS=${BENCH_HEADLINE_REPS:-9}
RT=${BENCH_RUNTIME:-2}
HRT=${BENCH_HEADLINE_RUNTIME:-4}
ORT=${BENCH_OVERFLOW_RUNTIME:-60}
FSRT=${BENCH_FS_RUNTIME:-2}
FSYNCS=${BENCH_FS_FSYNCS:-3000}
FSMAXRT=${BENCH_FS_MAX_RUNTIME:-20}
# The fsmixed set: the varmail-like job's least run time (s), and the file
# systems it runs on.
MIXRT=${BENCH_MIXED_RUNTIME:-10}
MIXEDFS=${BENCH_MIXED_FS:-ext4 xfs}
FSLONGRT=${BENCH_FSLONG_RUNTIME:-40}
FSLONG=${BENCH_FSLONG_FS-btrfs}
OLTP_IO_SIZE=${BENCH_OLTP_IO_SIZE:-8m}
FSWC=${BENCH_FS_WC-ext4}
HEADLINE_BLOCK="qd1_fsync 2j_fsync odirect"
SETS=${BENCH_SETS:-block load loadsweep fs fslong fsbig fsmixed}
OLTPFS=${BENCH_OLTP_FS-ext4 xfs}
FSLIST=${BENCH_FS:-ext4 xfs btrfs}
MIXFS=${BENCH_MIX_FS-ext4}	# (empty: none)
STREAMFS=${BENCH_STREAM_FS-ext4}
VARMAIL=${BENCH_VARMAIL:-$TOP/tests/out/bench/bin/varmail}
FR_KO=${FR_KO:-$TOP/dm-fr/dm-fr.ko}
FIO_TIMEOUT=$((ORT > 60 ? ORT + 240 : 300))

mkdir -p "$OUT/fio" "$OUT/log" "$OUT/tmp" || exit 1
cd "$OUT/tmp" || exit 1	# fio leaves verify state files in its working directory
T0=$(date +%s)
log() { echo "bench: [$(( $(date +%s) - T0 ))s] $*"; }
die() { echo "bench: FATAL: $*" >&2; exit 1; }

# rec KEY VALUE ...: append one JSON object (string values) to runs.jsonl.
rec() {
	local args=()
	while [ $# -ge 2 ]; do args+=(--arg "$1" "$2"); shift 2; done
	jq -cn '$ARGS.named' "${args[@]}" >> "$OUT/runs.jsonl"
}

# ------------------------------------------------------------------ devices

modprobe dm-mod && modprobe dm-writecache && modprobe nd_e820 && modprobe nd_pmem &&
	modprobe loop || die "modprobe failed"
for d in $(modinfo -F depends "$FR_KO" | tr , ' '); do modprobe "$d" || die "modprobe $d"; done
insmod "$FR_KO" || die "insmod $FR_KO"
dmsetup targets | grep -q '^fr ' || die "no fr target"
udevadm settle 2>/dev/null
for _ in $(seq 50); do [ -b /dev/pmem0 ] && break; sleep 0.1; done
PM=/dev/pmem0
[ -b $PM ] || die "no /dev/pmem0"
[ "$(cat /sys/block/pmem0/queue/dax)" = 1 ] || die "/dev/pmem0 is not DAX-capable"
ORIGIN=
for b in /sys/block/vd*; do
	[ "$(cat "$b/serial" 2>/dev/null)" = bench ] && ORIGIN=/dev/${b##*/}
done
[ -n "$ORIGIN" ] || die "no origin disk with serial 'bench'"
# origin_stat: the origin's /sys/block/<dev>/stat, one line (requests it
# completed: writes, sectors, flushes...), taken around each measured run;
# bench/report.py splits it on white space.
ORIGIN_STAT=/sys/block/${ORIGIN##*/}/stat
# BENCH_FS_ORIGIN (diagnostic): the device the file-system sets put their
# origin area on instead of the virtio disk, e.g. /dev/pmem1 (tests/bench/run
# --load-pm 3072): an origin as fast as PM, whose writes cost the host no
# emulated disk I/O. Its stat is then the one counted.
FS_ORIGIN=${BENCH_FS_ORIGIN:-$ORIGIN}
[ -b "$FS_ORIGIN" ] || die "BENCH_FS_ORIGIN $FS_ORIGIN is not a block device"
origin_stat() { cat "$ORIGIN_STAT"; }
# cpu_stat: /proc/stat's "cpu" line, the guest's CPU time so far (report.py:
# the share of it a file-system job kept busy, and in the kernel).
cpu_stat() { head -1 /proc/stat; }
# udev would probe (read) every new dm device as it appears, through the cache
# under test, while the next step already runs: stop it.  /dev/dm-N nodes come
# from devtmpfs; dmsetup runs with --noudevsync.
udevadm control --exit 2>/dev/null
DMS="dmsetup --noudevsync"
PM_BYTES=$(blockdev --getsize64 $PM)
# The load-time sets activate a PM of their own, BENCH_LOAD_PM_MIB large
# (tests/bench/run --load-pm: /dev/pmem1, above 4 GiB): on a small PM the
# fixed cost of a dmsetup create hides the part that grows with the PM, and
# a PM in use is many GiB.  0: they use slices of /dev/pmem0.
LOAD_PM=$PM
if [ "${BENCH_LOAD_PM_MIB:-0}" -gt 0 ]; then
	LOAD_PM=/dev/pmem1
	[ -b $LOAD_PM ] || die "no $LOAD_PM (BENCH_LOAD_PM_MIB=$BENCH_LOAD_PM_MIB)"
	[ "$(blockdev --getsize64 $LOAD_PM)" = $((BENCH_LOAD_PM_MIB << 20)) ] ||
		die "$LOAD_PM is not $BENCH_LOAD_PM_MIB MiB"
	[ "$(cat /sys/block/${LOAD_PM##*/}/queue/dax)" = 1 ] || die "$LOAD_PM is not DAX-capable"
fi
LOAD_PM_BYTES=$(blockdev --getsize64 $LOAD_PM)
ORIGIN_BYTES=$(blockdev --getsize64 "$ORIGIN")
MIB=2048	# sectors per MiB

dmdev() { echo "/dev/$($DMS info -c --noheadings -o blkdevname "$1" | tr -d ' ')"; }
dm_gone() { $DMS remove --retry "$1" >/dev/null 2>&1 || $DMS remove --force "$1" >/dev/null 2>&1; }
zero_head() { dd if=/dev/zero of="$1" bs=1M count="${2:-1}" oflag=direct status=none; }
linear() { # NAME DEV START_MIB LEN_MIB -> /dev/dm-N
	$DMS create "$1" --table "0 $(($4 * MIB)) linear $2 $(($3 * MIB))" || die "linear $1"
	dmdev "$1"
}

jq -n --arg kernel "$(uname -r)" --arg pm_bytes "$PM_BYTES" --arg load_pm "$LOAD_PM" \
	--arg load_pm_bytes "$LOAD_PM_BYTES" --arg origin_bytes "$ORIGIN_BYTES" \
	--arg cpus "$(nproc)" --arg mem_kb "$(awk '/MemTotal/ { print $2 }' /proc/meminfo)" \
	--arg fio "$(fio --version)" --arg reps "$REPS" --arg runtime "$RT" --arg fs_runtime "$FSRT" \
	--arg headline_reps "$HREPS" --arg headline_runtime "$HRT" --arg fs_fsyncs "$FSYNCS" \
	--arg fs_max_runtime "$FSMAXRT" --arg oltp_io_size "$OLTP_IO_SIZE" --arg fs_wc "$FSWC" \
	--arg oltp_fs "$OLTPFS" --arg overflow_runtime "$ORT" \
	--arg fslong_runtime "$FSLONGRT" --arg fslong_fs "$FSLONG" \
	--arg sets "$SETS" --arg fr_srcversion "$(modinfo -F srcversion "$FR_KO")" \
	--arg cpu_flags "$(grep -m1 '^flags' /proc/cpuinfo | grep -o 'clwb\|clflushopt' | tr '\n' ' ')" \
	'$ARGS.named' > "$OUT/meta.json"
log "kernel $(uname -r), PM $PM $((PM_BYTES >> 20)) MiB, load-time PM $LOAD_PM $((LOAD_PM_BYTES >> 20)) MiB, origin $ORIGIN $((ORIGIN_BYTES >> 20)) MiB"
# The emulated PM is guest RAM that QEMU backs lazily: the first store to
# each page costs a host page fault (and zeroing).  Touch all of it once, so
# that no configuration pays for the first touch of the PM it uses.
dd if=/dev/zero of=$PM bs=1M count=$((PM_BYTES >> 20)) oflag=direct status=none || die "cannot write $PM"
log "PM touched"

# ------------------------------------------------------------------ configs

# apply_udev_hints DEV: stands in for dm-fr's udev rule (udev/11-dm-fr.rules),
# which the guest's udev, stopped above, does not run: a dm-fr device is not
# rotational (writes land on PM), where a dm device otherwise inherits
# "rotational" from its origin (the virtio disk here: 1) and raw PM says 0.
# btrfs picks its ssd mode by it.  Applied alike to every dm configuration
# (fr*, wc, dml), right after the table load (a table load resets it), so that
# none of them differs from another or from raw PM by it.
apply_udev_hints() {
	local b=${1##*/}	# /dev/dm-N (dmdev)
	echo 0 > "/sys/block/$b/queue/rotational" || die "cannot set $b rotational"
}

# qflags DEV: sets QARGS to rec's KEY VALUE words for the device's flags as the
# block layer reports them (queue_dev dm-3 queue_write_cache "write back" ...).
# Shell builtins only: a fork costs tens of ms under TCG.
QFLAGS="write_cache fua rotational logical_block_size physical_block_size minimum_io_size optimal_io_size"
qflags() {
	local b=${1##*/} f v	# /dev/dm-N, /dev/pmem0, /dev/vdX: no links
	QARGS=(queue_dev "$b")
	for f in $QFLAGS; do
		v='?'
		read -r v < "/sys/block/$b/queue/$f" 2>/dev/null
		QARGS+=("queue_$f" "$v")
	done
}

# mkcfg CFG PMDEV ORIGDEV LEN_SECTORS [fr options...]: create the configuration;
# sets DEV (the device to test), DMNAME (the dm device, or empty) and QARGS
# (its queue flags, qflags).
mkcfg() {
	local cfg=$1 pm=$2 orig=$3 len=$4
	shift 4
	DMNAME=
	case $cfg in
	raw|pmfs|dax) DEV=$pm ;;
	origin|origin-max) DEV=$orig ;;
	dml|dmlwt)
		DMNAME=bdml
		$DMS create bdml --table "0 $(blockdev --getsz "$pm") linear $pm 0" || return 1
		DEV=$(dmdev bdml)
		apply_udev_hints "$DEV"
		if [ "$cfg" = dmlwt ]; then
			echo "write through" > "/sys/block/${DEV##*/}/queue/write_cache" ||
				die "cannot set ${DEV##*/} write through"
		fi
		;;
	fr|frwb0|frd0|fr-p*|fr-d*|fr-k*|fr-j*|fr-i*|fr-l*|fr-a*|fr-b*|fr-w*)
		local opts=(fresh "$@") opt
		case $cfg in
		frwb0) opts+=(writeback_period 0) ;;
		frd0) opts+=(writeback_defer 0) ;;
		fr-*)
			# fr-w8+p100: several options, each a letter and a value.
			for opt in $(tr + ' ' <<< "${cfg#fr-}"); do
				case $opt in
				p*) opts+=(writeback_period "${opt#p}") ;;
				d*) opts+=(writeback_defer "${opt#d}") ;;
				k*) opts+=(prefetch_kib "${opt#k}") ;;
				j*) opts+=(writeback_jobs "${opt#j}") ;;
				i*) opts+=(writeback_idle "${opt#i}") ;;
				l*) opts+=(low_watermark "${opt#l}") ;;
				a*) opts+=(admit_stream_kib "${opt#a}") ;;
				b*) opts+=(admit_background "${opt#b}") ;;
				w*) opts+=(set_ways "${opt#w}") ;;
				*) die "unknown configuration $cfg" ;;
				esac
			done
			;;
		esac
		DMNAME=bfr
		$DMS create bfr --table "0 $len fr $orig $pm ${#opts[@]} ${opts[*]}" || return 1
		DEV=$(dmdev bfr)
		apply_udev_hints "$DEV"
		;;
	wc)
		zero_head "$pm"
		DMNAME=bwc
		$DMS create bwc --table "0 $len writecache p $orig $pm 4096 0" || return 1
		DEV=$(dmdev bwc)
		apply_udev_hints "$DEV"
		;;
	*) return 1 ;;
	esac
	qflags "$DEV"
}

rmcfg() { [ -z "$DMNAME" ] || dm_gone "$DMNAME"; DMNAME=; }

status() { [ -n "$DMNAME" ] && $DMS status "$DMNAME" 2>/dev/null | tr -s ' '; }

# BENCH_TRACE=1: the write bios a dm-fr device receives during each
# file-system job, from the block_bio_queue event (one line each: sector,
# sectors, flags), in trace/ID.txt: the traces bench/tools/wb-model.py
# replays (issue 45). Off by default: the tracing costs the run.
TRACEFS=/sys/kernel/tracing
trace_start() { # DEV
	[ -n "${BENCH_TRACE:-}" ] && [ "$DMNAME" = bfr ] || return 0
	[ -e $TRACEFS/trace ] || mount -t tracefs nodev $TRACEFS || return 0
	local mm maj min
	mm=$(stat -Lc '%t %T' "$1") || return 0
	read -r maj min <<< "$mm"
	echo 0 > $TRACEFS/tracing_on
	echo 65536 > $TRACEFS/buffer_size_kb
	: > $TRACEFS/trace
	echo "dev == $(( (16#$maj << 20) | 16#$min ))" > $TRACEFS/events/block/block_bio_queue/filter
	echo 1 > $TRACEFS/events/block/block_bio_queue/enable
	echo 1 > $TRACEFS/tracing_on
}
trace_stop() { # ID
	[ -n "${BENCH_TRACE:-}" ] && [ "$DMNAME" = bfr ] && [ -e $TRACEFS/trace ] || return 0
	echo 0 > $TRACEFS/tracing_on
	echo 0 > $TRACEFS/events/block/block_bio_queue/enable
	mkdir -p "$OUT/trace"
	# "... block_bio_queue: 254,0 WS 123456 + 8 [comm]": keep writes
	awk '/block_bio_queue:/ { for (i = 1; i <= NF; i++) if ($i == "+") {
		if ($(i - 2) ~ /W/) print $(i - 1), $(i + 1), $(i - 2); break } }' \
		$TRACEFS/trace > "$OUT/trace/$1.txt"
	: > $TRACEFS/trace
}

# fr_field STATUS N: word N of an fr status line (0 = start sector).
fr_field() { echo "$1" | awk -v n="$2" '{ print $(n + 1) }'; }

# fr_wait_clean SECS: wait until dm-fr has nothing dirty (writeback settled).
fr_wait_clean() {
	local n=$(($1 * 10)) s
	while [ $n -gt 0 ]; do
		s=$(status)
		[ "$(fr_field "$s" 7)" = 0 ] && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# rotate N WORDS...: the words rotated left by N.
rotate() {
	local n=$1
	shift
	local a=("$@") k=${#a[@]} i out=()
	for ((i = 0; i < k; i++)); do out+=("${a[$(((i + n) % k))]}"); done
	echo "${out[@]}"
}

# fio_json ID JOB SECTION: the measured run, JSON to fio/ID.json.
fio_json() {
	timeout $FIO_TIMEOUT fio "$2" ${3:+--section="$3"} --output-format=json \
		--output="$OUT/fio/$1.json" > "$OUT/log/$1.stderr" 2>&1
}

# fio_ok ID JOB SECTION: a verification run; status 0 when it found nothing.
# fio_ok ID --section=S... JOB...: the same with several sections and files
# (fio wants the options before the job files).
fio_ok() {
	local log=$OUT/log/$1.log rc=0
	shift
	case $1 in --*) ;; *) set -- --section="$2" "$1" ;; esac
	timeout $FIO_TIMEOUT fio "$@" > "$log" 2>&1 || rc=$?
	[ $rc = 0 ] && ! grep -Eqi 'verify:|bad magic|bad header|crc32c.*(wanted|got)|[^_]err= *[1-9]' "$log"
}

# bad_dump LOG DEV: for the first blocks a check found bad, what the device
# and the origin hold there (the first 64 bytes).
bad_dump() {
	local off
	for off in $(grep -o 'at file [^ ]* offset [0-9]*' "$1" | awk '{ print $5 }' | head -n 4); do
		echo "offset $off: device $2"
		dd if="$2" bs=4096 skip=$((off / 4096)) count=1 iflag=direct status=none | od -A d -t x1 | head -n 4
		echo "offset $off: origin $ORIGIN"
		dd if="$ORIGIN" bs=4096 skip=$((off / 4096)) count=1 iflag=direct status=none | od -A d -t x1 | head -n 4
	done
	off=$(grep -o 'requested block: offset=[0-9]*, length=[0-9]*' "$1" | head -n 1 | tr -dc '0-9,' )
	if [ -n "$off" ]; then
		local o=${off%%,*} l=${off##*,}
		echo "the first failed request ($l bytes at $o), read again whole and by 4 KiB:"
		local w q
		w=$(dd if="$2" bs="$l" skip="$o" count=1 iflag=direct,skip_bytes status=none | sha256sum)
		q=$(dd if="$2" bs=4096 skip="$o" count=$((l / 4096)) iflag=direct,skip_bytes status=none | sha256sum)
		printf '%s\n%s\n' "$w" "$q"
		# Nothing writes meanwhile: the two must be equal.
		[ "$w" = "$q" ] || echo "SPLIT-READ MISMATCH: one $l-byte read differs from its 4 KiB reads"
	fi
	[ -n "$DMNAME" ] && $DMS status "$DMNAME"
}

# ------------------------------------------------------------------ meminfo

# dram_kb: slab + vmalloc + percpu in use (kB), after reclaimable slab
# (dentries, inodes) was dropped: the median of three readings (slab moves by
# a few hundred kB).  Not the page cache: it is not counted here, and dropping
# it costs the next fio seconds under TCG (fs_run).
dram_kb() {
	local i
	for i in 1 2 3; do
		sync
		echo 2 > /proc/sys/vm/drop_caches
		sleep 0.2
		awk '/^Slab:|^VmallocUsed:|^Percpu:/ { s += $2 } END { print s }' /proc/meminfo
	done | sort -n | sed -n 2p
}

# vmalloc_of MODULE: bytes of vmalloc areas allocated from MODULE's code.
vmalloc_of() { awk -v m="[$1]" 'index($0, m) { s += $2 } END { print s + 0 }' /proc/vmallocinfo; }

# ------------------------------------------------------------------ block level

LEN_BLK=$((4096 * MIB))	# 4 GiB of origin behind the caches
# Origin areas (offsets on the origin, and on a cache in front of it):
#   [0, 320M)     block workloads (writes in [0, 240M), read-mostly in [256M, 320M))
#   [1G, 1.25G)   larger-than-PM workloads
#   [2G, 2.5G)    the file systems
#   [4G, 8G)      the load-time tests (load_origin)

prefill() { # DEV OFFSET_MIB SIZE_MIB: sequential writes with crc32c headers every 4 KiB
	fio --name=prefill --filename="$1" --offset=$(($2))m --size=$(($3))m --rw=write \
		--bs=1m --verify=crc32c --verify_interval=4k --do_verify=0 --direct=1 \
		--ioengine=libaio --iodepth=4 --output="$OUT/log/prefill-$2.log" >/dev/null 2>&1
}

# now_ms; lap NAME: append "NAME=seconds since the last lap" to STEPS.
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
lap() { local t=$(now_ms); STEPS="$STEPS $1=$(( (t - LAP) / 100 ))e-1"; LAP=$t; }

# blk_run WORKLOAD JOBFILE CFG REP PMDEV: one measured block-level run.
blk_run() {
	local wl=$1 job=$2 cfg=$3 rep=$4 pm=$5 id="blk-$1-$3-$4" verify=ok why= s0= s1 t0 t1
	STEPS= LAP=$(now_ms)
	export BENCH_DEV BENCH_RUNTIME=$RT
	case " $HEADLINE_BLOCK " in *" $wl "*) BENCH_RUNTIME=$HRT ;; esac
	case $wl in overflow_*) BENCH_RUNTIME=$ORT ;; esac
	# origin-max: the origin taking the same bytes at its most (the
	# overflow ratios' ceiling), a job file of its own.
	[ "$cfg" = origin-max ] && job=$JOBS/origin-ceiling.fio
	case $wl in
	readmostly|seqread) case $cfg in raw|dml) prefill $PM 256 64 ;; esac ;;
	randread|overflow_*|halfpm) ;;
	*) case $cfg in raw|dml) prefill $PM 0 64 ;; esac ;;
	esac
	lap prefill
	if ! mkcfg "$cfg" "$pm" "$ORIGIN" $LEN_BLK; then
		rec set block workload "$wl" config "$cfg" rep "$rep" verify "FAIL: cannot create"
		return
	fi
	lap create
	BENCH_DEV=$DEV
	if [ "$wl" = randread ]; then
		fio_ok "$id-prep" "$job" prep || { verify=FAIL why="prep"; }
		case $cfg in fr|frwb0|frd0|fr-p*|fr-d*|fr-k*|fr-j*|fr-w*) $DMS message bfr 0 flush; fr_wait_clean 30 ;; esac
		lap prep
	fi
	s0=$(status)
	o0=$(origin_stat)
	# One fio process (fio starts slowly under TCG): "run" (the measured
	# run; its exec_postrun takes the target's status), then with stonewall
	# "warm" (read-mostly: the run again, on what it cached), "check" (read
	# the region back) and "vrun" (write and verify).
	local secs=(--section=run)
	grep -q '^\[warm\]' "$job" && secs+=(--section=warm)
	grep -q '^\[check\]' "$job" && secs+=(--section=check)
	grep -q '^\[vrun\]' "$job" && secs+=(--section=vrun)
	printf '#!/bin/sh\n%s\ncat %s > %s\n' "${DMNAME:+$DMS status $DMNAME > $OUT/tmp/status-after}" \
		"$ORIGIN_STAT" "$OUT/tmp/origin-after" > "$OUT/tmp/postrun.sh"
	chmod +x "$OUT/tmp/postrun.sh"
	rm -f "$OUT/tmp/status-after" "$OUT/tmp/origin-after"
	export BENCH_POSTRUN=$OUT/tmp/postrun.sh
	t0=$(date +%s%N)
	timeout $FIO_TIMEOUT fio "${secs[@]}" "$job" --output-format=json \
		--output="$OUT/fio/$id.json" > "$OUT/log/$id.stderr" 2>&1 || { verify=FAIL; why="$why fio(rc)"; }
	t1=$(date +%s%N)
	s1=$(tr -s ' ' < "$OUT/tmp/status-after" 2>/dev/null)
	o1=$(cat "$OUT/tmp/origin-after" 2>/dev/null)
	lap fio
	if grep -Eqi 'verify:|bad magic|bad header|crc32c.*(wanted|got)' "$OUT/log/$id.stderr" ||
	   [ "$(sed -n '/^{/,$p' "$OUT/fio/$id.json" | jq '[.jobs[].error] | add' 2>/dev/null)" != 0 ]; then
		verify=FAIL why="$why check"
		bad_dump "$OUT/log/$id.stderr" "$DEV" > "$OUT/log/$id-baddump.txt" 2>&1
		grep -q '^SPLIT-READ MISMATCH' "$OUT/log/$id-baddump.txt" &&
			why="$why (a multi-block read returned other data than the same blocks read one by one)"
	fi
	# The multi-block read check, on its own: its result is a correctness
	# row of its own (split_read), the run's verification is "check"'s.
	local split=
	if grep -q '^\[split\]' "$job"; then
		split=ok
		timeout $FIO_TIMEOUT fio --section=split "$job" --output-format=json \
			--output="$OUT/fio/$id-split.json" > "$OUT/log/$id-split.stderr" 2>&1 || split=FAIL
		if grep -Eqi 'verify:|bad magic|bad header|crc32c.*(wanted|got)' "$OUT/log/$id-split.stderr"; then
			split=FAIL
			bad_dump "$OUT/log/$id-split.stderr" "$DEV" > "$OUT/log/$id-split-baddump.txt" 2>&1
		fi
		lap split
	fi
	rmcfg
	lap remove
	rec set block workload "$wl" config "$cfg" rep "$rep" fio "fio/$id.json" \
		status_before "$s0" status_after "$s1" wall_ns $((t1 - t0)) runtime "$BENCH_RUNTIME" \
		origin_before "$o0" origin_after "$o1" ${split:+split_read "$split"} \
		verify "$verify${why:+:$why}" pm_dev "$pm" steps "$STEPS" "${QARGS[@]}"
	log "$wl $cfg rep $rep: $(sed -n '/^{/,$p' "$OUT/fio/$id.json" |
		jq -r '[.jobs[0].write.iops, .jobs[0].read.iops] | map(floor) | join(" w/r ")' 2>/dev/null) IOPS, verify $verify${why:+:$why};$STEPS"
}

# Block workloads: NAME JOBFILE CONFIGS...
BLOCK_SPECS=(
	"qd1_fsync randwrite-fsync-qd1 ${BENCH_QD1_CONFIGS:-raw fr wc dml dmlwt}"
	"2j_fsync randwrite-fsync-2j ${BENCH_2J_CONFIGS:-raw fr wc dml dmlwt}"
	"odirect randwrite-odirect ${BENCH_ODIRECT_CONFIGS:-raw fr wc dml dmlwt}"
	"randread randread-cached raw fr wc dml"
	"readmostly readmostly-zipf ${BENCH_RM_CONFIGS:-raw dml fr wc origin}"
	"seqread seqread-cold ${BENCH_SEQ_CONFIGS:-raw fr wc origin}"
	"halfpm halfpm-randwrite fr"
)
# Larger than PM: the caches get a 64 MiB slice of the PM; dm-fr also on pairs
# (fr-w2), the width before 1.19.
OVERFLOW_SPECS=(
	"overflow_seq overflow-seq ${BENCH_OVERFLOW_CONFIGS:-fr fr-w2 wc origin-max}"
	"overflow_rand overflow-rand ${BENCH_OVERFLOW_CONFIGS:-fr fr-w2 wc origin origin-max}"
)
BLOCK_WL=${BENCH_BLOCK:-qd1_fsync 2j_fsync odirect randread readmostly seqread halfpm overflow_seq overflow_rand}

block_set() {
	local rep wl job spec slice nrep
	log "prefill the origin areas the checks read"
	prefill "$ORIGIN" 0 64
	prefill "$ORIGIN" 256 64
	slice=$(linear bpm64 $PM 0 64)
	for spec in "${BLOCK_SPECS[@]}" "${OVERFLOW_SPECS[@]}"; do
		set -- $spec
		wl=$1 job=$JOBS/$2.fio
		shift 2
		case " $BLOCK_WL " in *" $wl "*) ;; *) continue ;; esac
		local pm=$PM
		case $wl in overflow_*) pm=$slice ;; esac
		nrep=$REPS
		case " $HEADLINE_BLOCK " in *" $wl "*) nrep=$HREPS ;; esac
		for rep in $(seq 1 "$nrep"); do
			for cfg in $(rotate $((rep - 1)) "$@"); do
				blk_run "$wl" "$job" "$cfg" "$rep" "$pm"
			done
		done
	done
	dm_gone bpm64
}

# ------------------------------------------------------------------ file systems

mkfs_of() { # FS DEV
	case $1 in
	ext4) mkfs.ext4 -q -F "$2" ;;
	xfs) mkfs.xfs -q -f "$2" ;;
	btrfs) mkfs.btrfs -q -f "$2" ;;
	esac
}

fsck_of() { # FS DEV
	case $1 in
	ext4) e2fsck -fn "$2" ;;
	xfs) xfs_repair -n "$2" ;;
	btrfs) btrfs check --readonly "$2" ;;
	esac
}

MNT=/tmp/bench-mnt
mkdir -p $MNT

# fs_run FS CFG REP PMDEV ORIGDEV LEN JOBS...: one file-system setup: mkfs,
# mount, prepare every job's files, run the jobs in order (each in its own
# directory), then drop the page cache and check every job's files from the
# device, unmount and fsck.  JOBS: varmail oltp fileserver mix oltp_large
# fileserver_large.
jobfile_of() { # JOB -> its fio job file
	case $1 in
	mix) echo "$JOBS/mix-run.fio" ;;
	*) echo "$JOBS/${1/_/-}.fio" ;;
	esac
}

fs_run() {
	local fs=$1 cfg=$2 rep=$3 pm=$4 orig=$5 len=$6
	shift 6
	local jobs=("$@") j id verify=ok why= s0 s1 t0 t1 c0 c1 mopt= base="fs-$fs-$cfg${RUN_TAG:-}-$rep"
	local -A res
	# What is recorded: one row a job, two for fsync+stream (run together).
	local recjobs=("${jobs[@]/fsync+stream/fsync stream}")
	local preps=() checks=()
	export BENCH_DIR=$MNT/d BENCH_RUNTIME=$FSRT BENCH_FS_MAX_RUNTIME=$FSMAXRT BENCH_OLTP_IO_SIZE=$OLTP_IO_SIZE
	[ $cfg = dax ] && mopt="-o dax"
	STEPS= LAP=$(now_ms)
	if ! mkcfg "$cfg" "$pm" "$orig" "$len"; then
		rec set fs fs "$fs" config "$cfg" rep "$rep" verify "FAIL: cannot create"
		return
	fi
	if ! mkfs_of "$fs" "$DEV" > "$OUT/log/$base-mkfs.log" 2>&1 ||
	   ! mount $mopt "$DEV" $MNT 2> "$OUT/log/$base-mount.log"; then
		rec set fs fs "$fs" config "$cfg" rep "$rep" verify "FAIL: mkfs/mount"
		rmcfg
		return
	fi
	for j in "${jobs[@]}"; do
		mkdir -p "$MNT/d/${j%+stream}"
		case $j in
		oltp|oltp_large) preps+=("$(jobfile_of $j)"); checks+=("$(jobfile_of $j)") ;;
		mix) preps+=("$JOBS/mix-prep.fio"); checks+=("$JOBS/mix-check.fio") ;;
		fileserver|fileserver_large) checks+=("$(jobfile_of $j)") ;;
		stream|fsync+stream) mkdir -p "$MNT/d/stream"; checks+=("$JOBS/stream.fio") ;;
		esac
	done
	lap create+mkfs
	local pids=() p	# one fio per file, side by side, as for the checks below
	for j in "${preps[@]}"; do
		timeout $FIO_TIMEOUT fio --section=prep "$j" > "$OUT/log/$base-prep-$(basename "$j" .fio).log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || { verify=FAIL why="$why prep"; }
	done
	if [ ${#preps[@]} -gt 0 ]; then
		sync
	fi
	lap prep
	for j in "${jobs[@]}"; do
		id=$base-$j
		s0=$(status)
		o0=$(origin_stat)
		c0=$(cpu_stat)
		trace_start "$DEV"
		t0=$(date +%s%N)
		case $j in
		varmail)
			# At least FSRT s and FSYNCS fsyncs, at most FSMAXRT s.
			timeout $FIO_TIMEOUT "$VARMAIL" run $MNT/d/varmail "$OUT/log/$id.state" "$FSRT" 2 200 \
				"$FSYNCS" "$FSMAXRT" \
				> "$OUT/fio/$id.json" 2> "$OUT/log/$id.stderr" ||
				{ verify=FAIL why="$why varmail"; } ;;
		varmail_sustained)
			# FSLONGRT s: the file system's writes go round the whole
			# device several times (the steady state, not the first pass).
			timeout $FIO_TIMEOUT "$VARMAIL" run $MNT/d/$j "$OUT/log/$id.state" "$FSLONGRT" 2 200 \
				0 $((FSLONGRT + 20)) \
				> "$OUT/fio/$id.json" 2> "$OUT/log/$id.stderr" ||
				{ verify=FAIL why="$why varmail"; } ;;
		mix) fio_json "$id" "$(jobfile_of $j)" "" || { verify=FAIL why="$why mix(rc)"; } ;;
		fsync|fsync+stream)
			# The fsmixed set: the varmail-like job for MIXRT s at
			# least, and with +stream the bulk writer beside it
			# (bench/jobs/stream.fio, timed on its own).
			local sp= sid=$base-stream st0 st1
			if [ "$j" = fsync+stream ]; then
				( st0=$(date +%s%N)
				  fio_json "$sid" "$JOBS/stream.fio" run; rc=$?
				  echo "$rc $(( $(date +%s%N) - st0 ))" > "$OUT/log/$sid.rc" ) &
				sp=$!
			fi
			timeout $FIO_TIMEOUT "$VARMAIL" run $MNT/d/fsync "$OUT/log/$base-fsync.state" "$MIXRT" 2 200 \
				0 $((MIXRT + 20)) \
				> "$OUT/fio/$base-fsync.json" 2> "$OUT/log/$base-fsync.stderr" ||
				{ verify=FAIL why="$why varmail"; }
			if [ -n "$sp" ]; then
				wait "$sp"
				read -r st0 st1 < "$OUT/log/$sid.rc"
				[ "$st0" = 0 ] || { verify=FAIL why="$why stream(rc)"; }
				res[stream]="$s0|$(status)|$st1|$o0|$(origin_stat)|$c0|$(cpu_stat)"
			fi ;;
		stream) fio_json "$base-stream" "$JOBS/stream.fio" run || { verify=FAIL why="$why stream(rc)"; } ;;
		*) fio_json "$id" "$(jobfile_of $j)" run || { verify=FAIL why="$why $j(rc)"; } ;;
		esac
		t1=$(date +%s%N)
		trace_stop "$id"
		s1=$(status)
		res[${j%+stream}]="$s0|$s1|$((t1 - t0))|$o0|$(origin_stat)|$c0|$(cpu_stat)"
		lap $j
	done
	# Every job's files, read back from the device: unmounted and mounted
	# again, so nothing is read from the page cache.  (Not drop_caches: that
	# also drops fio's and the tools' own pages, which the guest then reads
	# back from the host's file system, several seconds per fio under TCG.)
	sync
	umount $MNT && mount $mopt "$DEV" $MNT || { verify=FAIL why="$why remount"; }
	lap remount
	for j in varmail varmail_sustained fsync; do
		case " ${recjobs[*]} " in *" $j "*)
			"$VARMAIL" check $MNT/d/$j "$OUT/log/$base-$j.state" > "$OUT/log/$base-$j-check.log" 2>&1 ||
				{ verify=FAIL why="$why $j-check"; }
			lap vcheck ;;
		esac
	done
	# One fio per job file: given several files, fio applies --section to
	# the first only and runs the others' every section (their writes too).
	# They run side by side: most of a short fio's time is its start.
	pids=()
	for c in "${checks[@]}"; do
		fio_ok "$base-check-$(basename "$c" .fio)" --section=check "$c" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || { verify=FAIL why="$why check"; }
	done
	lap check
	umount $MNT || { verify=FAIL why="$why umount"; umount -l $MNT; }
	fsck_of "$fs" "$DEV" > "$OUT/log/$base-fsck.log" 2>&1 || { verify=FAIL why="$why fsck"; }
	lap umount+fsck
	for j in ${recjobs[*]}; do
		IFS='|' read -r s0 s1 t0 o0 o1 c0 c1 <<< "${res[$j]:-||0||||}"
		rec set "${FS_SET:-fs}" fs "$fs" config "$cfg${RUN_TAG:-}" rep "$rep" job "$j" fio "fio/$base-$j.json" \
			status_before "$s0" status_after "$s1" wall_ns "$t0" \
			origin_before "$o0" origin_after "$o1" cpu_before "$c0" cpu_after "$c1" \
			verify "$verify${why:+:$why}" pm_dev "$pm" steps "$STEPS" "${QARGS[@]}"
	done
	rmcfg
	log "fs $fs $cfg rep $rep: verify $verify${why:+:$why};$STEPS"
}

# The fsync-heavy jobs (varmail-like: the headline file-system ratios;
# OLTP-like) on every file system, followed in the same mount by the streaming
# job and the paper mix where asked (BENCH_STREAM_FS, BENCH_MIX_FS).  The
# first BENCH_REPS repetitions run every job on every configuration
# (dm-writecache only on BENCH_FS_WC, for time); the repetitions after them,
# up to BENCH_HEADLINE_REPS, run the varmail job alone on the FS on raw PM, on
# dm-linear over PM and on dm-fr (the headline ratio's two sides and its
# ceiling). BENCH_FS_CONFIGS and BENCH_FS_HEADLINE_CONFIGS override the two
# lists (experiments: frwb0 and the other fr variants of mkcfg).
fs_set() {
	local rep fs cfg cfgs orfs jobs nrep=$REPS
	[ "$HREPS" -gt "$nrep" ] && nrep=$HREPS
	orfs=$(linear bfsorigin "$FS_ORIGIN" 2048 512)
	for rep in $(seq 1 "$nrep"); do
		for fs in $FSLIST; do
			if [ "$rep" -le "$REPS" ]; then
				jobs=varmail
				case " $OLTPFS " in *" $fs "*) jobs="$jobs oltp" ;; esac
				case " $STREAMFS " in *" $fs "*) jobs="$jobs fileserver" ;; esac
				case " $MIXFS " in *" $fs "*) jobs="$jobs mix" ;; esac
				cfgs=${BENCH_FS_CONFIGS:-pmfs dml fr origin}
				case " $FSWC " in *" $fs "*) cfgs="$cfgs wc" ;; esac
			else
				jobs=varmail cfgs=${BENCH_FS_HEADLINE_CONFIGS:-pmfs dml fr}
			fi
			for cfg in $(rotate $((rep - 1)) $cfgs); do
				fs_run "$fs" "$cfg" "$rep" $PM "$orfs" $((512 * MIB)) $jobs
			done
		done
	done
	dm_gone bfsorigin
}

# The varmail job for FSLONGRT s (40) on the file systems of FSLONG
# (btrfs: a copy-on-write FS writes across its whole device, which here is
# twice what the PM holds without a collision, and a 10 s run covers only
# the first pass over it): the FS on raw PM, on dm-linear over PM and on
# dm-fr, each its own fresh FS.
fslong_set() {
	local rep fs cfg orfs
	[ -n "$FSLONG" ] || return 0
	orfs=$(linear bfsorigin "$FS_ORIGIN" 2048 512)
	for rep in $(seq 1 "$REPS"); do
		for fs in $FSLONG; do
			for cfg in $(rotate $((rep - 1)) ${BENCH_FSLONG_CONFIGS:-pmfs dml fr}); do
				fs_run "$fs" "$cfg" "$rep" $PM "$orfs" $((512 * MIB)) varmail_sustained
			done
		done
	done
	dm_gone bfsorigin
}

# ext4 -o dax on the PM, on the fsync-heavy jobs (a reference beside pmfs).
fsext_set() {
	local rep orfs
	case " $FSLIST " in *" ext4 "*) ;; *) return 0 ;; esac
	orfs=$(linear bfsorigin "$FS_ORIGIN" 2048 512)
	for rep in $(seq 1 "$REPS"); do
		fs_run ext4 dax "$rep" $PM "$orfs" $((512 * MIB)) varmail oltp
	done
	dm_gone bfsorigin
}

# Larger than PM: ext4 on the 512 MiB origin area, dm-fr gets 32 MiB of PM.
# (dm-writecache is left out here for time: larger than PM is compared with
# it at block level, overflow_*; BENCH_FSBIG_CONFIGS puts it back.)
fsbig_set() {
	local rep cfg orfs slice
	orfs=$(linear bfsorigin "$FS_ORIGIN" 2048 512)
	slice=$(linear bpm32 $PM 0 32)
	for rep in $(seq 1 "$REPS"); do
		for cfg in $(rotate $((rep - 1)) ${BENCH_FSBIG_CONFIGS:-fr origin}); do
			fs_run ext4 "$cfg" "$rep" "$slice" "$orfs" $((512 * MIB)) oltp_large fileserver_large
		done
	done
	dm_gone bpm32
	dm_gone bfsorigin
}

# The fsync-heavy job beside a bulk sequential writer (issue 47): on a 32 MiB
# PM, the varmail-like job (its least run time BENCH_MIXED_RUNTIME s) and the
# stream (bench/jobs/stream.fio, four times the PM: 128 MiB, buffered, one
# fsync; background writeback from 8 MiB dirty) side by side, on dm-fr with admission off (fr) and on
# (BENCH_MIXED_ADMIT, default fr-a4096: streams past 4 MiB around PM;
# fr-bN: page-cache writeback around PM from N % dirty), on dm-writecache
# and on the bare origin; and each alone, the fsync job on dm-fr with
# admission on and the stream on the origin (config "<cfg>-alone"): the two
# sides of the issue's "its own rate" ratios; with BENCH_MIXED_WC_ALONE=1
# the job alone on dm-writecache too (what the stream costs it). Rows: set fsmixed, jobs fsync
# (ops/s, p99) and stream (MiB/s over its own time).
fsmixed_set() {
	local rep fs cfg orfs slice admit=${BENCH_MIXED_ADMIT:-fr-a4096}
	orfs=$(linear bfsorigin "$FS_ORIGIN" 2048 512)
	slice=$(linear bpm32 $PM 0 32)
	export BENCH_STREAM_SIZE=128m
	# A bulk writer much larger than the page cache lets stay dirty, as on a
	# machine whose stream outgrows its dirty limits: background writeback
	# from 8 MiB (it would take 10 % of the guest's RAM, more than the
	# stream, and write it all at the final fsync). The same for every
	# configuration.
	local bg
	bg=$(sysctl -n vm.dirty_background_bytes)
	sysctl -q vm.dirty_background_bytes=8388608 || die "cannot set vm.dirty_background_bytes"
	FS_SET=fsmixed
	for rep in $(seq 1 "$REPS"); do
		for fs in $MIXEDFS; do
			for cfg in $(rotate $((rep - 1)) ${BENCH_MIXED_CONFIGS:-fr $admit wc origin}); do
				fs_run "$fs" "$cfg" "$rep" "$slice" "$orfs" $((512 * MIB)) fsync+stream
			done
			RUN_TAG=-alone fs_run "$fs" "${admit%% *}" "$rep" "$slice" "$orfs" $((512 * MIB)) fsync
			# What the stream costs dm-writecache (BENCH_MIXED_WC_ALONE=1).
			[ "${BENCH_MIXED_WC_ALONE:-0}" = 0 ] ||
				RUN_TAG=-alone fs_run "$fs" wc "$rep" "$slice" "$orfs" $((512 * MIB)) fsync
			RUN_TAG=-alone fs_run "$fs" origin "$rep" "$slice" "$orfs" $((512 * MIB)) stream
		done
	done
	FS_SET=
	if [ "$bg" = 0 ]; then
		sysctl -q vm.dirty_background_ratio=10
	else
		sysctl -q vm.dirty_background_bytes="$bg"
	fi
	dm_gone bpm32
	dm_gone bfsorigin
}

# ------------------------------------------------------------------ DRAM and load time

# load_time CFG PMS ORIG ID: on the PM slice PMS, create CFG with writeback
# held off, fill the cache completely, remove it and time the create of the
# full PM (dm-fr: recovery at preresume; dm-writecache: its constructor and
# resume read every entry); then read everything back through the loaded
# cache and check it, and remove it. Right before the timed create, time
# the create of dm-linear over the same PM slice: the floor any target's
# activation pays here (table load, resume, udev, dm core). Sets LT_FILL
# (bytes), LT_FILL_NS, LT_LOAD_NS, LT_FLOOR_NS, LT_SFULL, LT_SLOADED (status
# lines), LT_TABLE and LT_WHY (empty if all went well).
load_time() {
	local cfg=$1 pms=$2 orig=$3 id=$4 s t0 t1 opts=() len
	LT_WHY=
	len=$(blockdev --getsz "$orig")
	case $cfg in
	fr)
		opts=(writeback_period 0 high_watermark 100 low_watermark 100)
		mkcfg fr "$pms" "$orig" "$len" "${opts[@]}" || LT_WHY="$LT_WHY create-load"
		;;
	wc)
		zero_head "$pms"
		DMNAME=bwc
		$DMS create bwc --table "0 $len writecache p $orig $pms 4096 4 high_watermark 100 low_watermark 99" ||
			LT_WHY="$LT_WHY create-load"
		DEV=$(dmdev bwc)
		;;
	esac
	s=$(status)
	case $cfg in
	fr) LT_FILL=$(( $(fr_field "$s" 5) * 4096 )) ;;	# chunks_total
	wc) LT_FILL=$(( ($(echo "$s" | awk '{ print $5 }') - 64) * 4096 )) ;;	# total blocks, less a margin
	esac
	export BENCH_DEV=$DEV BENCH_SIZE=$((LT_FILL >> 20))m
	t0=$(date +%s%N)
	fio_ok "$id-fill" "$JOBS/fill.fio" fill || LT_WHY="$LT_WHY fill"
	t1=$(date +%s%N)
	LT_FILL_NS=$((t1 - t0))
	LT_SFULL=$(status)
	LT_TABLE=$($DMS table "$DMNAME")
	# The same table without "fresh": recover (or resume) what is there.
	[ "$cfg" = fr ] && LT_TABLE="0 $len fr $orig $pms ${#opts[@]} ${opts[*]}"
	rmcfg
	sync
	# Each timed create starts with udev idle: not still handling the
	# removal just before it.
	udevadm settle 2>/dev/null
	t0=$(date +%s%N)
	$DMS create bfloor --table "0 $(blockdev --getsz "$pms") linear $pms 0" ||
		LT_WHY="$LT_WHY floor"
	t1=$(date +%s%N)
	LT_FLOOR_NS=$((t1 - t0))
	dm_gone bfloor
	udevadm settle 2>/dev/null
	t0=$(date +%s%N)
	$DMS create "b$cfg" --table "$LT_TABLE" || LT_WHY="$LT_WHY reload"
	t1=$(date +%s%N)
	LT_LOAD_NS=$((t1 - t0))
	DMNAME=b$cfg
	DEV=$(dmdev "$DMNAME")
	LT_SLOADED=$(status)
	BENCH_DEV=$DEV
	fio_ok "$id-check" "$JOBS/fill.fio" check || LT_WHY="$LT_WHY check"
	rmcfg
}

# load_origin MIB: the origin behind a load-time test of a MIB MiB PM, at
# least 1 GiB and as large as the PM (a cache fills all of it), from 4 GiB on.
load_origin() {
	local mib=$(($1 > 1024 ? $1 : 1024))
	[ $(((4096 + mib) << 20)) -le "$ORIGIN_BYTES" ] ||
		die "the origin has no room for a $1 MiB load-time test"
	linear blorig "$ORIGIN" 4096 $mib
}

# load_run CFG REP: the DRAM a cache takes on a 64 MiB slice of the PM and on
# the whole PM (512 MiB); then the load time of the whole load-time PM, full
# (load_time).
LOAD_MIB=$((LOAD_PM_BYTES >> 20))
[ "$LOAD_PM" != "$PM" ] || LOAD_MIB=256
load_run() {
	local cfg=$1 rep=$2 orig id="load-$1-$2" m0 m1 m2 m3 v0 v1
	local verify=ok why= mod pms
	case $cfg in
	fr) mod=dm_fr ;;
	wc) mod=dm_writecache ;;
	esac
	orig=$(load_origin $LOAD_MIB)
	pms=$(linear blpm $PM 0 64)
	m0=$(dram_kb)
	mkcfg "$cfg" "$pms" "$orig" $((1024 * MIB)) || why="$why create-small"
	m1=$(dram_kb)
	rmcfg
	dm_gone blpm
	m2=$(dram_kb)
	v0=$(vmalloc_of $mod)
	mkcfg "$cfg" $PM "$orig" $((1024 * MIB)) || why="$why create"
	m3=$(dram_kb)
	v1=$(vmalloc_of $mod)
	rmcfg
	pms=$(linear blpm $LOAD_PM 0 $LOAD_MIB)
	load_time "$cfg" "$pms" "$orig" "$id"
	why="$why$LT_WHY"
	[ -z "$why" ] || verify=FAIL
	rec set load config "$cfg" rep "$rep" dram_small_kb $((m1 - m0)) dram_full_kb $((m3 - m2)) \
		vmalloc_mod_bytes $((v1 - v0)) pm_small_mib 64 pm_full_mib $((PM_BYTES >> 20)) \
		load_pm_mib $LOAD_MIB fill_bytes "$LT_FILL" fill_ns "$LT_FILL_NS" status_full "$LT_SFULL" \
		load_ns "$LT_LOAD_NS" load_floor_ns "$LT_FLOOR_NS" status_loaded "$LT_SLOADED" \
		table "$LT_TABLE" verify "$verify${why:+:$why}"
	log "load $cfg rep $rep: DRAM 64 MiB PM $((m1 - m0)) kB, whole PM $((m3 - m2)) kB (vmalloc $((v1 - v0)) B); load of a full $LOAD_MIB MiB PM $((LT_LOAD_NS / 1000000)) ms (dm-linear $((LT_FLOOR_NS / 1000000)) ms); verify $verify$why"
	dm_gone blpm
	dm_gone blorig
}

load_set() {
	local rep cfg
	for rep in $(seq 1 "$REPS"); do
		for cfg in $(rotate $((rep - 1)) fr wc); do
			load_run "$cfg" "$rep"
		done
	done
}

# The load time of a full PM against its size (BENCH_LOAD_SWEEP_MIB, slices
# of the load-time PM), once each for dm-fr and dm-writecache: how activation
# grows, for the projection to a large PM (report.py fits a line to these
# and to the load set's loads of the whole load-time PM).
LOAD_SWEEP_MIB=${BENCH_LOAD_SWEEP_MIB:-64 512 1024 2048}
loadsweep_set() {
	local mib cfg orig pms verify
	for mib in $LOAD_SWEEP_MIB; do
		[ $((mib << 20)) -le "$LOAD_PM_BYTES" ] || continue
		for cfg in fr wc; do
			orig=$(load_origin "$mib")
			pms=$(linear blpm $LOAD_PM 0 "$mib")
			load_time "$cfg" "$pms" "$orig" "loadsweep-$cfg-$mib"
			verify=ok
			[ -z "$LT_WHY" ] || verify="FAIL:$LT_WHY"
			rec set loadsweep config "$cfg" rep 1 load_pm_mib "$mib" fill_bytes "$LT_FILL" \
				load_ns "$LT_LOAD_NS" load_floor_ns "$LT_FLOOR_NS" status_loaded "$LT_SLOADED" \
				verify "$verify"
			log "loadsweep $cfg: load of a full $mib MiB PM $((LT_LOAD_NS / 1000000)) ms (dm-linear $((LT_FLOOR_NS / 1000000)) ms); verify $verify"
			dm_gone blpm
			dm_gone blorig
		done
	done
}

# ------------------------------------------------------------------ main

for s in $SETS; do
	log "=== $s"
	case $s in fs*) ORIGIN_STAT=/sys/block/${FS_ORIGIN##*/}/stat ;; *) ORIGIN_STAT=/sys/block/${ORIGIN##*/}/stat ;; esac
	"${s}_set"
done
log "done: $(wc -l < "$OUT/runs.jsonl") runs, $(grep -c '"verify":"FAIL' "$OUT/runs.jsonl") failed verification"
dmesg > "$OUT/dmesg.txt"
