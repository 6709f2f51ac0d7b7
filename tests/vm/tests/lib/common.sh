# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# tests/vm/tests/lib/common.sh: helpers shared by the fr target's cases (any
# group).  Sourced by a case after tests/vm/lib.sh; the runner never takes a
# file under lib/ for a case.  Everything here is built on lib.sh's helpers.
#
#   status:  frs, fr_status_log, fr_wait_dirty_zero, tlog
#   PM:      pm_slice (a small DAX-capable PM: dm-linear over the boot's PM),
#            pm_badblocks_reset
#   data:    dev_sum, tree_write, tree_manifest, tree_check
#   fs:      fs_mkfs, fs_fsck, fs_roundtrip
#   kernel:  dmesg_count, recovered_line
#   misc:    msg, msg_fails, holders_empty, excl_open

# tlog MSG: log with the seconds since the case began (where the time goes).
tlog() { log "[${SECONDS}s] $*"; }

# The fields of `dmsetup status` after "<start> <len> fr", in order
# (docs/target-interface.md).
FR_STATUS_FIELDS=(state chunk_sectors chunks_total chunks_valid chunks_dirty
	read_hits read_misses write_hits write_misses forced_writebacks
	writeback_rounds chunks_written_back origin_errors pm_errors read_fills
	cleaner unreadable bad_chunks lost_slots prefetched pinned_waits)

# frs NAME FIELD: print one status field of the fr device NAME.
frs() {
	local line i f
	local -a w
	line=$(dmsetup status "$1") || fail "dmsetup status $1 failed"
	read -ra w <<< "$line"
	[ "${w[2]}" = fr ] || fail "$1 is not an fr device: $line"
	[ ${#w[@]} -ge $((3 + ${#FR_STATUS_FIELDS[@]})) ] ||
		fail "status of $1 has ${#w[@]} words, want at least $((3 + ${#FR_STATUS_FIELDS[@]})): $line"
	for i in "${!FR_STATUS_FIELDS[@]}"; do
		f=${FR_STATUS_FIELDS[$i]}
		if [ "$f" = "$2" ]; then
			echo "${w[$((3 + i))]}"
			return 0
		fi
	done
	# A keyed field (1.13 on): "name=value" after the positional ones.
	for i in "${w[@]:$((3 + ${#FR_STATUS_FIELDS[@]}))}"; do
		if [ "${i%%=*}" = "$2" ]; then
			echo "${i#*=}"
			return 0
		fi
	done
	fail "frs: no status field '$2' in: $line"
}

# fr_status_log NAME [LABEL]: log the status of NAME with the field names.
fr_status_log() {
	local line i out=
	local -a w
	line=$(dmsetup status "$1") || fail "dmsetup status $1 failed"
	read -ra w <<< "$line"
	for i in "${!FR_STATUS_FIELDS[@]}"; do
		out="$out ${FR_STATUS_FIELDS[$i]}=${w[$((3 + i))]:-?}"
	done
	out="$out ${w[*]:$((3 + ${#FR_STATUS_FIELDS[@]}))}"
	log "[${SECONDS}s] status ${2:-$1}:$out"
}

# fr_wait_dirty_zero NAME SECONDS: wait until the device has no dirty chunk.
fr_wait_dirty_zero() {
	local n=$(($2 * 10))
	while [ "$(frs "$1" chunks_dirty)" != 0 ]; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

# msg NAME WORDS...: send a message to dm device NAME; fail the test if refused.
msg() {
	local name=$1
	shift
	dmsetup message "$name" 0 "$@" || fail "dmsetup message $name 0 $* was refused"
}

# msg_fails NAME WORDS...: the message must be refused (and not hang).
msg_fails() {
	local name=$1 rc=0
	shift
	timeout 60 dmsetup message "$name" 0 "$@" > /dev/null 2>&1 || rc=$?
	[ $rc != 124 ] || fail "dmsetup message $name 0 $* hung (60 s)"
	[ $rc != 0 ] || fail "dmsetup message $name 0 $* was accepted but must be refused"
}

# pm_slice NAME MIB [OFFSET_MIB]: a DAX-capable PM device of MIB MiB: a
# dm-linear device over the boot's PM at OFFSET_MIB (default 0), removed at
# cleanup.  Its first MiB is zeroed (no old dm-fr or dm-writecache superblock).
# Prints its /dev/dm-N.  A small PM in front of a larger origin is what makes
# slots collide, forced writebacks happen and the cache wrap around.
pm_slice() {
	local name=$1 mib=$2 off=${3:-0} pm total dev
	pm=$(pm_dev)
	total=$(blockdev --getsize64 "$pm")
	[ $(((off + mib) << 20)) -le "$total" ] || fail "pm_slice: $mib MiB at $off MiB does not fit in $pm"
	dev=$(dm_create "$name" "0 $((mib << 11)) linear $pm $((off << 11))")
	is_dax "$dev" || fail "pm_slice: dm-linear over $pm is not DAX-capable"
	pm_wipe "$dev" 1
	echo "$dev"
}

# pm_badblocks_reset DISK: empty pmem DISK's badblocks list, which sysfs can
# only grow: reprobe the namespace (its list is rebuilt from the bus's, which
# is empty) so later cases see none. Nothing may hold the disk open.
pm_badblocks_reset() {
	local disk=$1 ns
	[ -n "$(cat "/sys/block/$disk/badblocks" 2>/dev/null)" ] || return 0
	ns=$(basename "$(readlink -f "/sys/block/$disk/device")")
	echo "$ns" > /sys/bus/nd/drivers/nd_pmem/unbind
	echo "$ns" > /sys/bus/nd/drivers/nd_pmem/bind
	udevadm settle
}

# dev_sum DEV [BYTES]: sha256 of the first BYTES (default: all) of DEV, read
# with direct I/O.
dev_sum() {
	local bytes=${2:-$(blockdev --getsize64 "$1")}
	dd if="$1" bs=1M count="$bytes" iflag=direct,count_bytes status=none | sha256sum | cut -d' ' -f1
}

# dmesg_count ERE: kernel lines since the test began that match ERE.
dmesg_count() { dmesg_since_start | grep -Ec -- "$1" || true; }

# recovered_line: the last "recovered N valid chunks (M dirty)" line dm-fr
# logged since the test began, as "N M" (empty when none).
recovered_line() {
	dmesg_since_start | grep -Eo 'recovered [0-9]+ valid chunks \([0-9]+ dirty\)' | tail -n 1 |
		sed -E 's/recovered ([0-9]+) valid chunks \(([0-9]+) dirty\)/\1 \2/'
}

# holders_empty DEV: no device-mapper (or other) device holds DEV.
holders_empty() {
	local b
	b=$(basename "$(readlink -f "$1")")
	[ -z "$(ls "/sys/class/block/$b/holders" 2>/dev/null)" ]
}

# excl_open DEV: DEV can be opened exclusively (O_EXCL: nobody claims it).
excl_open() {
	python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL))' "$1" 2>/dev/null
}

# ---------------------------------------------------------------- file systems

# fs_mkfs TYPE DEV: make a file system (ext4, xfs or btrfs), quietly.
fs_mkfs() {
	case $1 in
	ext4) mkfs.ext4 -q -F "$2" ;;
	xfs) mkfs.xfs -q -f "$2" ;;
	btrfs) mkfs.btrfs -q -f "$2" ;;
	*) fail "fs_mkfs: unknown type $1" ;;
	esac > "$FR_OUT/mkfs-$1.log" 2>&1 || { cat "$FR_OUT/mkfs-$1.log"; fail "mkfs.$1 on $2 failed"; }
}

# fs_fsck TYPE DEV: a read-only check of an unmounted file system; fails the
# test (with the checker's output) unless it is clean.
fs_fsck() {
	local log=$FR_OUT/fsck-$1-$(date +%s%N).log rc=0
	case $1 in
	ext4) e2fsck -fn "$2" ;;
	xfs) xfs_repair -n "$2" ;;
	btrfs) btrfs check --readonly "$2" ;;
	*) fail "fs_fsck: unknown type $1" ;;
	esac > "$log" 2>&1 || rc=$?
	if [ $rc != 0 ]; then
		tail -n 30 "$log" >&2
		fail "fsck of $1 on $2 is not clean (status $rc; $log)"
	fi
}

# tree_write DIR SEED: a file workload in DIR: a directory tree of files of
# 1 KiB .. 1 MiB (content: SEED's pattern), then overwrites in place, appends,
# renames, deletes, hard links and an fsync'd fio job with crc32c verification;
# about 14 MiB in all.  Ends with sync.
tree_write() {
	local d=$1 seed=$2 i sz
	mkdir -p "$d/a/b/c" "$d/x" "$d/y"
	for i in $(seq 1 20); do
		sz=$(( (i * i * 2711) % 1024 + 1 ))
		_pattern "$seed-f$i" $((sz << 10)) > "$d/a/f$i"
	done
	for i in $(seq 1 12); do
		_pattern "$seed-s$i" $((i * 777)) > "$d/a/b/c/s$i"
	done
	# Overwrite the middle of some files in place, append to others.
	for i in 3 7 11; do
		_pattern "$seed-o$i" 8192 | dd of="$d/a/f$i" bs=4096 seek=1 conv=notrunc status=none
	done
	for i in 4 8; do
		_pattern "$seed-p$i" 100000 >> "$d/a/f$i"
	done
	mv "$d/a/f5" "$d/x/moved5"
	rm -f "$d/a/f6" "$d/a/b/c/s2"
	ln "$d/a/f9" "$d/y/link9"
	sync
	fio --name=fsjob --directory="$d/x" --rw=randwrite --bsrange=4k-64k --size=2M \
		--numjobs=2 --ioengine=psync --fsync=8 --verify=crc32c --verify_fatal=1 \
		--randrepeat=1 --randseed=7 > "$FR_OUT/fio-fsjob-$seed.log" 2>&1 ||
		{ tail -n 20 "$FR_OUT/fio-fsjob-$seed.log" >&2; fail "fio in the file system failed"; }
	sync
}

# tree_manifest DIR: sha256 of every file under DIR (sorted, relative paths).
tree_manifest() {
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}

# tree_check DIR MANIFEST: the files under DIR are exactly those of MANIFEST.
tree_check() {
	local now
	now=$(tree_manifest "$1")
	if [ "$now" != "$2" ]; then
		diff <(printf '%s\n' "$2") <(printf '%s\n' "$now") | head -n 20 >&2
		fail "files under $1 differ from the manifest"
	fi
	[ -n "$now" ] || fail "no files under $1"
}

# fs_roundtrip TYPE ORIGIN PM NAME: a file system of TYPE on a new fr device
# NAME over ORIGIN with PM: mkfs, mount, tree_write, a manifest, unmount, fsck
# clean; remove the fr device (no flush) and create it again without fresh
# (recovery), mount, the same files, unmount, fsck clean; then "flush" and
# remove, and the ORIGIN ALONE is a clean file system with the same files.
# Leaves the final manifest in FS_MANIFEST.
fs_roundtrip() {
	local type=$1 origin=$2 pm=$3 name=$4 dev mnt man
	dev=$(fr_create "$name" "$origin" "$pm" fresh)
	fs_mkfs "$type" "$dev"
	mnt=$(fr_mount "$dev")
	tree_write "$mnt" "$name-$type"
	man=$(tree_manifest "$mnt")
	log "[${SECONDS}s] $type: $(printf '%s\n' "$man" | wc -l) files, $(du -sh "$mnt" | cut -f1) used"
	umount "$mnt"
	fr_status_log "$name" "$type before reload"
	fs_fsck "$type" "$dev"

	dm_remove "$name"
	dev=$(fr_create "$name" "$origin" "$pm")
	log "[${SECONDS}s] $type: reloaded, $(recovered_line | awk '{ print $1 " valid, " $2 " dirty chunks recovered" }')"
	mount "$dev" "$mnt" || fail "mount of $type after the reload failed"
	tree_check "$mnt" "$man"
	# The file system keeps working after the reload.
	_pattern "$name-after" 3M > "$mnt/after-reload"
	sync
	man=$(tree_manifest "$mnt")
	umount "$mnt"
	fs_fsck "$type" "$dev"

	msg "$name" flush
	assert_eq "$(frs "$name" chunks_dirty)" 0 "dirty after flush"
	dm_remove "$name"
	fs_fsck "$type" "$origin"
	mount -o ro "$origin" "$mnt" || fail "mount of the origin alone failed"
	tree_check "$mnt" "$man"
	umount "$mnt"
	FS_MANIFEST=$man
}

# ---------------------------------------------------------------- udev

# udev_noscan GLOB: udev leaves the dm devices whose names match GLOB alone
# (no blkid probe, no other rules) until the case ends: for a case that
# counts its device's reads or fills, or whose origin reads take seconds
# (udev's probe of it would hold every dmsetup call up for minutes). Hold
# udev this way rather than with "udevadm control --stop-exec-queue": events
# queued while it was stopped were still unprocessed two minutes after the
# restart in a CI run (systemd 252).
udev_noscan() {
	mkdir -p /run/udev/rules.d
	echo "SUBSYSTEM==\"block\", ENV{DM_NAME}==\"$1\", ENV{DM_NOSCAN}=\"1\", ENV{DM_UDEV_DISABLE_OTHER_RULES_FLAG}=\"1\", ENV{UDEV_DISABLE_PERSISTENT_STORAGE_RULES_FLAG}=\"1\"" \
		> /run/udev/rules.d/57-fr-test-noscan.rules
	udevadm control --reload-rules
	on_cleanup udev_noscan_off
}

udev_noscan_off() {
	rm -f /run/udev/rules.d/57-fr-test-noscan.rules
	udevadm control --reload-rules
}

# nbd_stop PID DEV: disconnect NBD device DEV and stop its server PID (and
# the server's children).
nbd_stop() { # PID DEV
	nbd-client -d "$2" > /dev/null 2>&1
	if kill -0 "$1" 2>/dev/null; then
		pkill -P "$1" 2>/dev/null
		kill "$1"
		wait "$1" 2>/dev/null
	fi
	return 0
}

# ---------------------------------------------------------------- refusals

# fr_refused WHY TABLE ERE [dmsetup create options...]: the table must be
# refused (no device left behind) with a new "fr: " kernel line whose reason
# matches ERE.  Logs the reason.
fr_refused() {
	local why=$1 table=$2 want=$3 before reason err
	shift 3
	before=$(dmesg_count ': fr: ')
	if err=$(dmsetup create frbad "$@" --table "$table" 2>&1); then
		_dm_remove_quiet frbad
		fail "$why: accepted, but must be refused: $table"
	fi
	udevadm settle 2>/dev/null
	if dmsetup info frbad >/dev/null 2>&1; then
		dmsetup remove --retry frbad
		fail "$why: the refused table left a device behind"
	fi
	[ "$(dmesg_count ': fr: ')" -gt "$before" ] || fail "$why: refused without an 'fr: <reason>' kernel line ($err)"
	reason=$(dmesg_since_start | grep ': fr: ' | tail -n 1 | sed 's/.*: fr: //')
	log "$why: refused: $reason"
	printf '%s\n' "$reason" | grep -Eq -- "$want" || fail "$why: the reason '$reason' does not match /$want/"
}

# ---------------------------------------------------------------- block tracing

# bio_trace_start DEV: record every bio queued to DEV (the block_bio_queue
# tracepoint, filtered by device) until bio_trace_stop.
bio_trace_start() {
	local t=/sys/kernel/tracing mm
	[ -d $t/events/block ] || mount -t tracefs nodev $t 2>/dev/null ||
		fail "cannot mount tracefs"
	[ -d $t/events/block/block_bio_queue ] || fail "no block_bio_queue tracepoint"
	mm=$(dev_majmin "$1")
	echo 0 > $t/tracing_on
	echo > $t/trace
	echo "dev == $(( (${mm%:*} << 20) | ${mm#*:} ))" > $t/events/block/block_bio_queue/filter ||
		fail "cannot filter block_bio_queue by $1"
	echo 1 > $t/events/block/block_bio_queue/enable
	echo 1 > $t/tracing_on
}

# bio_trace_stop: stop recording; print "RWBS SECTOR NR" for each bio queued
# (RWBS as blktrace spells it: a leading F is a PREFLUSH, an F after W is
# FUA, "FN" an empty flush).
bio_trace_stop() {
	local t=/sys/kernel/tracing
	echo 0 > $t/tracing_on
	echo 0 > $t/events/block/block_bio_queue/enable
	echo 0 > $t/events/block/block_bio_queue/filter
	sed -nE 's/.*block_bio_queue: [0-9]+,[0-9]+ ([A-Z]+) ([0-9]+) \+ ([0-9]+).*/\1 \2 \3/p' $t/trace
	echo > $t/trace
}

# io_start DIR: fio passes in DIR (in a mounted file system) until io_stop;
# each pass writes 4 KiB blocks at random (direct I/O, QD 4) and reads every
# one back against its crc32c. Returns after the first pass, so that what a
# case changes next happens under I/O. Each pass's status: $FR_TMP/io.status.
io_start() {
	local dir=$1
	rm -f "$FR_TMP/io-stop" "$FR_TMP/io.status"
	mkdir -p "$dir"
	(
		i=0
		while [ ! -e "$FR_TMP/io-stop" ]; do
			i=$((i + 1))
			rc=0
			fio --name="pass$i" --directory="$dir" --rw=randwrite --bs=4k --size=4M \
				--direct=1 --ioengine=libaio --iodepth=4 --verify=crc32c \
				--verify_fatal=1 --randseed=$((1000 + i)) \
				> "$FR_OUT/io-$i.log" 2>&1 || rc=$?
			echo "$i $rc" >> "$FR_TMP/io.status"
		done
	) &
	IO_PID=$!
	until [ -s "$FR_TMP/io.status" ]; do sleep 0.2; done
}

# io_stop MIN: stop the passes; every one passed, and there were MIN at least.
io_stop() {
	touch "$FR_TMP/io-stop"
	wait "$IO_PID" || fail "the I/O loop failed"
	awk '$2 != 0 { bad = bad " " $1 } END { if (bad) exit 1 }' "$FR_TMP/io.status" ||
		fail "fio passes failed: $(awk '$2 != 0' "$FR_TMP/io.status" | head -3)"
	[ "$(wc -l < "$FR_TMP/io.status")" -ge "$1" ] ||
		fail "only $(wc -l < "$FR_TMP/io.status") fio passes ran"
}

# writeback_eager: the flusher writes back what is dirty at once (256 KiB
# dirty, every 100 ms), as admission's stream rule needs; the sysctls are
# restored at cleanup.
writeback_eager() {
	on_cleanup writeback_restore "$(sysctl -n vm.dirty_background_bytes)" \
		"$(sysctl -n vm.dirty_writeback_centisecs)" "$(sysctl -n vm.dirty_background_ratio)"
	sysctl -q vm.dirty_background_bytes=262144 vm.dirty_writeback_centisecs=10 ||
		fail "cannot make background writeback eager"
}

# writeback_restore BG CS RATIO: the sysctls as they were (a ratio, if the
# byte count was 0: the kernel refuses 0 for it, and setting one clears the
# other).
writeback_restore() {
	sysctl -q vm.dirty_writeback_centisecs="$2"
	if [ "$1" = 0 ]; then
		sysctl -q vm.dirty_background_ratio="$3"
	else
		sysctl -q vm.dirty_background_bytes="$1"
	fi
}
