# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# tests/vm/lib.sh: the VM test library.
#
# Sourced in the guest for every test case (by tests/vm/guest/exec-case), and on
# the host by tests/vm/boot, tests/vm/run and host-driven (multi-boot) cases.
# See docs/testing.md for how a case is written.  The helpers, by group:
#
#   checks:   log, fail, skip, assert, assert_fail, assert_eq, assert_match
#   requires: have_cmd, have_kmod, have_module, have_pm, have_nvdimm, have_origin
#   module:   fr_load, fr_unload, fr_loaded
#   PM:       pm_dev, pm_wipe, nvdimm_setup, is_dax
#   origins:  origin_disk, origin_dev, scratch_dev
#   dm:       dm_create, fr_table, fr_create, dm_dev, dev_majmin, dm_remove,
#             dm_create_fails
#   I/O:      fio_run, fio_verify, fio_write, fio_check, pattern_write,
#             pattern_check, fr_mount
#   kernel:   dmesg_since_start, dmesg_expect, dmesg_check, bad_kernel_lines
#   cleanup:  on_cleanup, fr_leftovers
#   host:     vm_boot, vm_kernel, vm_module, vm_check_tools
#
# Never call the shell builtin "test" here: a case defines a function of that
# name (blktests style), which would shadow it.  Use [ ] instead.

FR_TOP=${FR_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
FR_KO=${FR_KO:-$FR_TOP/dm-fr/dm-fr.ko}
# Serials of the origin disks tests/vm/run attaches (one per logical block size).
FR_ORIGIN_512=${FR_ORIGIN_512:-fr-origin}
FR_ORIGIN_4K=${FR_ORIGIN_4K:-fr-origin4k}

# Kernel log lines that fail a test or a boot, wherever they appear.
FR_BAD_KERNEL_RE='Oops|BUG:|WARNING:|Call Trace|kernel BUG at|general protection fault|invalid opcode:|KASAN:|UBSAN:|blocked for more than [0-9]+ seconds|soft lockup|hard LOCKUP|detected stall|self-detected stall|Kernel panic|segfault at'

# ---------------------------------------------------------------- checks

log() { echo "# $*"; }

# fail MESSAGE: end the test as failed.
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# skip REASON: inside requires(), record why and return 1; inside test(), end
# the test as skipped.
skip() {
	echo "$*" >> "${FR_TMP:-/tmp}/skip-reason"
	if [ -n "${FR_IN_TEST:-}" ]; then
		echo "SKIP: $*" >&2
		exit 77
	fi
	return 1
}

assert() { "$@" || fail "assertion failed (status $?): $*"; }
assert_fail() { if "$@"; then fail "expected to fail but succeeded: $*"; fi; }
assert_eq() { [ "$1" = "$2" ] || fail "${3:-values differ}: '$1' != '$2'"; }
# assert_match ERE TEXT [MESSAGE]
assert_match() {
	printf '%s\n' "$2" | grep -Eq -- "$1" || fail "${3:-no match}: '$2' does not match /$1/"
}

# ---------------------------------------------------------------- requires
# Each returns 1 (after recording a reason) when the need is not met; use them
# in a case's requires().

have_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || { skip "command $c not found"; return 1; }
	done
}

have_kmod() {
	local m
	for m in "$@"; do
		modinfo "$m" >/dev/null 2>&1 || { skip "kernel module $m not available"; return 1; }
	done
}

# have_module: dm-fr.ko is built for the running kernel.
have_module() {
	[ -e "$FR_KO" ] || { skip "$FR_KO not built"; return 1; }
	local magic
	magic=$(modinfo -F vermagic "$FR_KO" 2>/dev/null)
	[ "${magic%% *}" = "$(uname -r)" ] || skip "$FR_KO is built for ${magic%% *}, not $(uname -r)"
}

have_pm() { [ "${FR_PM_KIND:-none}" != none ] || skip "no emulated PM in this boot"; }
have_nvdimm() { [ "${FR_PM_KIND:-}" = nvdimm ] || skip "no file-backed NVDIMM in this boot"; }

# have_origin [LBS]: the origin disk of that logical block size is attached.
have_origin() { _origin_disk "${1:-512}" >/dev/null || skip "no origin disk with ${1:-512}-byte blocks"; }

# ---------------------------------------------------------------- cleanup

# on_cleanup COMMAND...: run COMMAND when the test ends (last registered, first
# run), whether it passed or not.  The runner checks afterwards that no dm
# device, loop device or mount is left and that dm-fr is unloaded.
on_cleanup() { printf '%q ' "$@" >> "$FR_TMP/cleanup"; echo >> "$FR_TMP/cleanup"; }

_fr_run_cleanups() {
	local f=$FR_TMP/cleanup c
	[ -s "$f" ] || return 0
	tac "$f" > "$f.run"
	: > "$f"
	while IFS= read -r c; do
		[ -n "$c" ] || continue
		eval "$c" || echo "cleanup failed: $c" >&2
	done < "$f.run"
	rm -f "$f.run"
}

# fr_leftovers: print what a test left behind (nothing when clean).
fr_leftovers() {
	local d
	if [ -d /sys/module/dm_fr ]; then echo "module dm_fr loaded"; fi
	for d in /sys/block/dm-*; do
		[ -e "$d" ] || continue
		echo "dm device ${d##*/} ($(cat "$d/dm/name" 2>/dev/null))"
	done
	for d in /sys/block/loop*; do
		[ -e "$d/loop/backing_file" ] || continue
		echo "loop device ${d##*/} ($(cat "$d/loop/backing_file"))"
	done
	grep -E ' /tmp/fr-' /proc/mounts | awk '{ print "mount " $2 }'
}

# Remove whatever fr_leftovers shows, as hard as it takes.
_fr_force_clean() {
	local m d
	for m in $(awk '$2 ~ /^\/tmp\/fr-/ { print $2 }' /proc/mounts | sort -r); do
		umount -l "$m"
	done
	for _ in 1 2 3; do
		for d in $(dmsetup ls 2>/dev/null | awk '$1 != "No" { print $1 }'); do
			dmsetup remove --force --retry "$d" >/dev/null 2>&1
		done
	done
	losetup -D 2>/dev/null
	if [ -d /sys/module/dm_fr ]; then rmmod dm_fr 2>/dev/null; fi
	udevadm settle 2>/dev/null
}

# ---------------------------------------------------------------- kernel log

# bad_kernel_lines < LOG: print the lines that show a kernel problem; status 0
# when there is one.  FR_DMESG_ALLOW (an ERE, set by a case) exempts lines.
bad_kernel_lines() {
	grep -E -- "$FR_BAD_KERNEL_RE" | grep -Ev -- "${FR_DMESG_ALLOW:-^\$^}"
}

# dmesg_since_start: the kernel log since the current test began (all of it
# if the begin marker is gone).
dmesg_since_start() {
	dmesg | awk -v m="${FR_DMESG_MARK:-}" '
		found { print; next }
		m != "" && index($0, m) { found = 1; next }
		{ buf[n++] = $0 }
		END { if (!found) for (i = 0; i < n; i++) print buf[i] }'
}

# dmesg_expect ERE [MESSAGE]: a kernel line since the test began matches ERE.
dmesg_expect() {
	dmesg_since_start | grep -Eq -- "$1" || fail "${2:-expected kernel message not seen}: /$1/"
}

# dmesg_check: no oops/WARN/BUG/... since the test began (the runner also
# checks this after every test).
dmesg_check() {
	local bad
	bad=$(dmesg_since_start | bad_kernel_lines) || return 0
	fail "kernel problem in dmesg: $(printf '%s\n' "$bad" | head -n 5)"
}

# ---------------------------------------------------------------- the module

# fr_load [PARAMS]: load dm-mod and what dm-fr.ko depends on, then insmod the
# freshly built dm-fr.ko ($FR_KO: set FR_KO=$FR_KO_FAULT for the fault
# injection build); the "fr" target must then be registered.
fr_load() {
	local dep
	[ -e "$FR_KO" ] || fail "$FR_KO is missing (make module)"
	modprobe dm-mod || fail "modprobe dm-mod failed"
	for dep in $(modinfo -F depends "$FR_KO" | tr , ' '); do
		modprobe "$dep" || fail "modprobe $dep (needed by dm-fr) failed"
	done
	insmod "$FR_KO" "$@" || fail "insmod $FR_KO failed"
	on_cleanup _fr_unload_quiet
	dmsetup targets | grep -q '^fr ' || fail "target fr is not registered after insmod"
}

_fr_unload_quiet() { if fr_loaded; then rmmod dm_fr; fi; }

fr_loaded() { [ -d /sys/module/dm_fr ]; }

# fr_unload: rmmod dm-fr (every dm-fr device must be gone first).
fr_unload() {
	rmmod dm_fr || fail "rmmod dm_fr failed"
	! fr_loaded || fail "dm_fr still loaded after rmmod"
}

# ---------------------------------------------------------------- PM

is_dax() { # is_dax DEV
	local b
	b=$(basename "$(readlink -f "$1")")
	[ "$(cat "/sys/block/$b/queue/dax" 2>/dev/null)" = 1 ]
}

# nvdimm_setup [MiB...]: give the NVDIMM labels and fsdax namespaces of these
# sizes (default: one namespace filling the region), unless it already has
# fsdax namespaces (a later boot on the same --state: they are kept).
nvdimm_setup() {
	local s
	modprobe nfit && modprobe nd_pmem || fail "cannot load nfit/nd_pmem"
	udevadm settle
	if [ -n "$(ndctl list -N -m fsdax 2>/dev/null)" ]; then
		return 0
	fi
	{
		ndctl disable-region all &&
		ndctl init-labels -f all &&
		ndctl enable-region all
	} >/dev/null 2>&1 || fail "ndctl could not initialise the NVDIMM labels"
	if [ $# = 0 ]; then
		ndctl create-namespace -m fsdax >/dev/null || fail "ndctl create-namespace failed"
	fi
	for s in "$@"; do
		ndctl create-namespace -m fsdax -s "${s}M" >/dev/null ||
			fail "ndctl create-namespace -s ${s}M failed"
	done
	udevadm settle
}

# pm_dev [N]: print the Nth (default 0th) DAX-capable PM block device of this
# boot, setting it up first (memmap: nd_e820 + nd_pmem; nvdimm: fsdax
# namespaces via nvdimm_setup).  Its content is left as it is.
pm_dev() {
	local n=${1:-0} devs d i=0
	case ${FR_PM_KIND:-none} in
	memmap) modprobe nd_e820 && modprobe nd_pmem || fail "cannot load nd_e820/nd_pmem" ;;
	nvdimm) nvdimm_setup ;;
	*) fail "this boot has no emulated PM" ;;
	esac
	udevadm settle
	for _ in $(seq 50); do
		devs=$(ls /sys/block | grep '^pmem' | sort -V)
		[ -z "$devs" ] || break
		sleep 0.1
	done
	for d in $devs; do
		is_dax "/dev/$d" || continue
		if [ $i = "$n" ]; then
			echo "/dev/$d"
			return 0
		fi
		i=$((i + 1))
	done
	fail "no DAX-capable PM device number $n (found: ${devs:-none})"
}

# pm_wipe DEV [MiB]: zero the first MiB (default 8) of DEV, where a PM format
# keeps its superblock: the next user sees no old format.
pm_wipe() {
	dd if=/dev/zero of="$1" bs=1M count="${2:-8}" oflag=direct status=none ||
		fail "cannot wipe $1"
}

# ---------------------------------------------------------------- origins

_origin_disk() { # LBS -> /dev/vdX of the attached origin disk
	local serial b
	case $1 in
	512) serial=$FR_ORIGIN_512 ;;
	4096) serial=$FR_ORIGIN_4K ;;
	*) return 1 ;;
	esac
	for b in /sys/block/vd*; do
		[ "$(cat "$b/serial" 2>/dev/null)" = "$serial" ] || continue
		echo "/dev/${b##*/}"
		return 0
	done
	return 1
}

# origin_disk [LBS]: the whole origin disk (a host sparse file, virtio-blk,
# cache=none) with 512 (default) or 4096-byte logical blocks.
origin_disk() {
	_origin_disk "${1:-512}" || fail "no origin disk with ${1:-512}-byte blocks attached"
}

# origin_dev [-b LBS] [-s SIZE] [-z]: print a block device to use as an origin.
#   -b  logical block size, 512 (default) or 4096
#   -s  size (bytes, or K/M/G): a loop device (direct I/O) over the next unused
#       slice of the origin disk, so one test can take several; without -s, the
#       whole disk
#   -z  zero it first (quick: the host file gets holes)
# Cleanup is automatic.
origin_dev() {
	local lbs=512 size= zero= OPTIND=1 o disk bytes off total dev
	while getopts b:s:z o; do
		case $o in
		b) lbs=$OPTARG ;;
		s) size=$OPTARG ;;
		z) zero=1 ;;
		*) fail "origin_dev: bad option" ;;
		esac
	done
	disk=$(origin_disk "$lbs") || exit 1
	if [ -z "$size" ]; then
		dev=$disk
	else
		bytes=$(numfmt --from=iec "$size") || fail "origin_dev: bad size $size"
		off=$(cat "$FR_TMP/origin-off-$lbs" 2>/dev/null || echo 0)
		total=$(blockdev --getsize64 "$disk")
		[ $((off + bytes)) -le "$total" ] ||
			fail "origin_dev: ${size} more does not fit on $disk ($total bytes, $off used)"
		modprobe loop
		dev=$(losetup -f --show --direct-io=on --sector-size "$lbs" \
			--offset "$off" --sizelimit "$bytes" "$disk") || fail "losetup on $disk failed"
		on_cleanup losetup -d "$dev"
		echo $((off + bytes)) > "$FR_TMP/origin-off-$lbs"
	fi
	if [ -n "$zero" ]; then
		blkdiscard -f -z "$dev" >/dev/null 2>&1 || blkdiscard -f "$dev" >/dev/null 2>&1 ||
			fail "cannot zero $dev"
	fi
	echo "$dev"
}

# scratch_dev SIZE [LBS]: a loop device over a file in guest RAM: a plain,
# non-DAX block device (a "PM" that is not PM, for instance).
scratch_dev() {
	local f dev
	f=$(mktemp "$FR_TMP/scratch.XXXXXX")
	truncate -s "$1" "$f"
	modprobe loop
	dev=$(losetup -f --show --sector-size "${2:-512}" "$f") || fail "losetup $f failed"
	on_cleanup losetup -d "$dev"
	echo "$dev"
}

# guest_tool NAME: build tests/vm/tools/NAME.c into $FR_TMP (once per case)
# and print the program's path.  The guest shares the host's compiler.
guest_tool() {
	local src=$FR_TOP/tests/vm/tools/$1.c bin=$FR_TMP/tools/$1
	if [ ! -x "$bin" ]; then
		mkdir -p "$FR_TMP/tools"
		cc -O2 -Wall -pthread -o "$bin" "$src" >&2 || fail "cannot build $src"
	fi
	echo "$bin"
}

# ---------------------------------------------------------------- device mapper

# dm_dev NAME: the /dev/dm-N node of a dm device (usable with O_DIRECT
# whether or not udev made /dev/mapper/NAME).
dm_dev() {
	local b
	b=$(dmsetup info -c --noheadings -o blkdevname "$1" 2>/dev/null) || fail "no dm device $1"
	echo "/dev/${b// /}"
}

# dev_majmin DEV: MAJ:MIN of a block device (as dm prints devices in tables).
dev_majmin() { printf '%d:%d\n' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")"; }

# frctl_state_reset: what frctl leaves in the guest for the next case: the
# origins' guards (fr-guard-* devices, frctl(8) GUARD), the origins registry
# (/etc/frctl/origins: the guest's /etc is an overlay of the host's) and
# /run/frctl. Register it after the origin (cleanups run last first), so
# that the guards let go of it before it goes.
frctl_state_reset() {
	local n
	for n in $(dmsetup info -c --noheadings -o name 2>/dev/null | grep '^fr-guard-'); do
		dmsetup remove --retry "$n"
	done
	rm -f /etc/frctl/origins /etc/frctl/origins.new
	rm -rf /run/frctl
}

# dm_create NAME TABLE: create a dm device (removed at cleanup) and print its
# /dev/dm-N.
dm_create() {
	dmsetup create "$1" --table "$2" || fail "dmsetup create $1 --table '$2' failed"
	on_cleanup _dm_remove_quiet "$1"
	udevadm settle 2>/dev/null
	dm_dev "$1"
}

_dm_remove_quiet() {
	if dmsetup info "$1" >/dev/null 2>&1; then
		dmsetup remove --retry "$1"
	fi
}

# dm_remove NAME: remove a dm device; fails the test if it cannot.
dm_remove() {
	udevadm settle 2>/dev/null
	dmsetup remove --retry "$1" || fail "dmsetup remove $1 failed"
	! dmsetup info "$1" >/dev/null 2>&1 || fail "$1 still exists after dmsetup remove"
}

# fr_table ORIGIN PM [OPT...]: the table line of an fr target spanning ORIGIN:
#   0 <origin sectors> fr <origin> <pm> <#opts> [<opts>...]
# With FR_WAYS set (tests/vm/run --ways), a table that formats (fresh) and
# names no width formats slots of FR_WAYS chunks; else the target's default
# (sets of 8, from 1.19).
fr_table() {
	local origin=$1 pm=$2 sectors
	shift 2
	sectors=$(blockdev --getsz "$origin") || fail "cannot size $origin"
	if [ -n "${FR_WAYS:-}" ] && [[ " $* " == *" fresh "* ]] &&
	   [[ " $* " != *" set_ways "* ]]; then
		set -- "$@" set_ways "$FR_WAYS"
	fi
	echo "0 $sectors fr $origin $pm $# $*"
}

# fr_create NAME ORIGIN PM [OPT...]: create an fr device over ORIGIN with PM
# and print its /dev/dm-N.
fr_create() {
	local name=$1
	shift
	dm_create "$name" "$(fr_table "$@")"
}

# dm_create_fails NAME TABLE: the table must be refused.  Prints dmsetup's
# error output (which carries the target's ti->error) and checks that no
# device is left.
dm_create_fails() {
	local err
	if err=$(dmsetup create "$1" --table "$2" 2>&1); then
		_dm_remove_quiet "$1"
		fail "table was accepted but must be refused: $2"
	fi
	udevadm settle 2>/dev/null
	if dmsetup info "$1" >/dev/null 2>&1; then
		dmsetup remove --retry "$1"
		fail "refused table left device $1 behind"
	fi
	printf '%s\n' "$err"
}

# ---------------------------------------------------------------- I/O

# fio_run NAME [FIO ARGS...]: run one fio job; fail on any error or verify
# failure.  The log goes to $FR_OUT/fio-NAME.log and its summary to stdout.
fio_run() {
	local name=$1 log rc
	shift
	log=$FR_OUT/fio-$name.log
	rc=0
	# In scratch space: fio saves verify state files in its working folder.
	(cd "${FR_TMP:-/tmp}" && fio --name="$name" --output-format=normal "$@") > "$log" 2>&1 || rc=$?
	grep -E 'IOPS=|err=' "$log" | sed 's/^ */  /'
	if [ $rc != 0 ] || grep -Eqi 'verify:|bad magic|bad header|crc32c.*(wanted|got)|[^_]err= *[1-9]' "$log"; then
		tail -n 30 "$log" >&2
		fail "fio $name failed (status $rc); log: $log"
	fi
}

# The job fio_verify/fio_write/fio_check run: random 4k writes with crc32c
# headers over 64 MiB from the start of DEV, direct I/O, QD 8.  Any fio option
# given after DEV overrides these (e.g. --rw=write --bs=64k --size=16M
# --offset=1M).  crc32c verification proves each block holds a block fio wrote
# for that offset, intact; it cannot tell an older fio write of the same job from
# the latest one (start from zeroed space, or use pattern_write/pattern_check,
# when stale data is the risk).
FR_FIO_JOB=(--direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite --bs=4k
	--size=64M --randrepeat=1 --randseed=1 --verify=crc32c --verify_fatal=1
	--verify_dump=0)

# fio_verify NAME DEV [FIO ARGS...]: write, then read back and verify every
# block written.
fio_verify() {
	local n=$1 d=$2
	shift 2
	fio_run "$n" --filename="$d" "${FR_FIO_JOB[@]}" --do_verify=1 "$@"
}

# fio_write NAME DEV [FIO ARGS...]: the write half (with verify headers) only.
fio_write() {
	local n=$1 d=$2
	shift 2
	fio_run "$n" --filename="$d" "${FR_FIO_JOB[@]}" --do_verify=0 "$@"
}

# fio_check NAME DEV [FIO ARGS...]: read back and verify what fio_write wrote
# with the same arguments (e.g. after a reload or a reboot).
fio_check() {
	local n=$1 d=$2
	shift 2
	fio_run "$n" --filename="$d" "${FR_FIO_JOB[@]}" --verify_only "$@"
}

# _pattern SEED BYTES: a reproducible pseudo-random byte stream (AES-CTR keyed
# by SEED), different for every SEED.
_pattern() {
	local key
	key=$(printf '%s' "$1" | md5sum | cut -c1-32)
	openssl enc -aes-128-ctr -nosalt -K "$key" -iv 0 < /dev/zero 2>/dev/null | head -c "$2"
}

# pattern_write DEV SEED SIZE [OFFSET]: write SIZE bytes of SEED's stream at
# OFFSET (default 0; sizes in bytes or with K/M/G, multiples of 4 KiB), direct
# I/O, then fsync.
pattern_write() {
	local size off
	size=$(numfmt --from=iec "$3") && off=$(numfmt --from=iec "${4:-0}") || fail "pattern_write: bad size"
	_pattern "$2" "$size" | dd of="$1" bs=4096 seek="$off" oflag=direct,seek_bytes \
		iflag=fullblock conv=fsync status=none 2>&1 || fail "pattern_write to $1 failed"
}

# pattern_check DEV SEED SIZE [OFFSET]: the bytes there are SEED's stream
# (read with direct I/O); fails with the first differing byte otherwise.
pattern_check() {
	local size off diff
	size=$(numfmt --from=iec "$3") && off=$(numfmt --from=iec "${4:-0}") || fail "pattern_check: bad size"
	diff=$(cmp <(_pattern "$2" "$size") \
		<(dd if="$1" bs=4096 skip="$off" count="$size" iflag=direct,skip_bytes,count_bytes status=none) 2>&1) ||
		fail "data at $1 offset $off differs from pattern '$2': $diff"
}

# fr_mount DEV [MOUNT OPTIONS...]: mount DEV on a fresh /tmp/fr-mnt.* (unmounted
# at cleanup) and print the mount point.
fr_mount() {
	local dev=$1 mnt
	shift
	mnt=$(mktemp -d /tmp/fr-mnt.XXXXXX)
	mount "$@" "$dev" "$mnt" || fail "mount $dev failed"
	on_cleanup _fr_umount "$mnt"
	echo "$mnt"
}

_fr_umount() { if mountpoint -q "$1"; then umount "$1"; fi; rmdir "$1"; }

# ---------------------------------------------------------------- host side

# vm_kernel [SERIES|VERSION]: the kernel version to boot, with a clear error
# when it, its headers or its image are missing.
vm_kernel() {
	local ver
	ver=$("$FR_TOP/tests/kver" "${1:-${KVER:-6.1}}") || return 1
	[ -r "/boot/vmlinuz-$ver" ] || {
		echo "/boot/vmlinuz-$ver is not readable (run as root)" >&2
		return 1
	}
	echo "$ver"
}

# vm_check_tools: what booting needs on the host; sets VNG.
vm_check_tools() {
	local t missing=
	VNG=$FR_TOP/.venv/bin/vng
	[ -x "$VNG" ] || missing="$missing virtme-ng($VNG)"
	for t in qemu-system-x86_64 setsid numfmt; do
		command -v $t >/dev/null 2>&1 || missing="$missing $t"
	done
	if [ -n "$missing" ]; then
		echo "missing:$missing (run tests/install-deps as root, or make deps)" >&2
		return 1
	fi
	# vng calls virtme-run, which lives beside it.
	PATH=$FR_TOP/.venv/bin:$PATH
	export PATH
}

# vm_module VERSION [fault]: build dm-fr.ko for that kernel from the current
# dm-fr/ sources, in a private copy (tests/out/build-VERSION/; the work tree's
# own dm-fr/dm-fr.ko may be for another kernel), and print its path.  With
# "fault", the test-only build with PM fault injection (dm-fr/fr-fault.h), in
# tests/out/build-VERSION-fault/.
vm_module() {
	local ver=$1 b=$FR_TOP/tests/out/build-$1${2:+-$2} f mk=
	[ "${2:-}" != fault ] || mk=FR_FAULT_INJECT=1
	mkdir -p "$b" || return 1
	(
		flock 9
		# The glue and core/ (the kernel-free core), as in dm-fr/.
		mkdir -p "$b/core"
		for f in "$b"/*.[ch] "$b"/core/*.[ch] "$b"/Kbuild; do
			[ -e "$f" ] && [ ! -e "$FR_TOP/dm-fr/${f#"$b"/}" ] && rm -f "$f"
		done
		for f in "$FR_TOP"/dm-fr/*.[ch] "$FR_TOP"/dm-fr/core/*.[ch] "$FR_TOP"/dm-fr/Kbuild; do
			case ${f##*/} in *.mod.c) continue ;; esac
			cmp -s "$f" "$b/${f#"$FR_TOP"/dm-fr/}" || cp -p "$f" "$b/${f#"$FR_TOP"/dm-fr/}"
		done
		make -s -C "/lib/modules/$ver/build" M="$b" $mk modules 2>&1 |
			grep -v '^Skipping BTF generation' >&2
		[ "${PIPESTATUS[0]}" = 0 ]
	) 9> "$b/.lock" || { echo "dm-fr does not build for $ver" >&2; return 1; }
	echo "$b/dm-fr.ko"
}

# vm_bad_kernel_lines < CONSOLE: as bad_kernel_lines (the host's name for it).
vm_bad_kernel_lines() { bad_kernel_lines; }

# vm_boot [BOOT OPTIONS] -- COMMAND: tests/vm/boot with this run's kernel; for
# host-driven cases.
# FR_KO (set by tests/vm/run) goes to the guest with it.
vm_boot() {
	"$FR_TOP/tests/vm/boot" --kver "${FR_KVER:-${KVER:-6.1}}" \
		${FR_KO:+--env "FR_KO=$FR_KO"} "$@"
}
