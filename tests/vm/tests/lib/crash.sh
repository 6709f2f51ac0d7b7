# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# tests/vm/tests/lib/crash.sh: both halves of the crash cases
# (crash/fr-vm-killed, crash/writecache-vm-killed), sourced by them.
#
# Host: crash_run TARGET ACKS boots twice on one state directory with a
# file-backed NVDIMM (--pm nvdimm) and an origin disk.  Guest (through
# tests/vm/guest/call CASE crash_guest TARGET PHASE):
#   TARGET  fr (dm-fr) or wc (dm-writecache, "writecache p ORIGIN PM 4096 0")
#   PHASE   write: the PM set up fresh, the device created, crashio.py write
#                  until the host kills the VM
#           verify: the device created again from the PM (recovery),
#                  crashio.py verify with the completions the host recorded
#                  (FR_ACKED); for fr also flush, remove, and the origin alone
#
# The PM is an 8 MiB dm-linear slice of the NVDIMM's fsdax namespace, much
# less than the 48 MiB the streams write: the cache wraps, collides and evicts
# during the run.  The device spans the first 48 MiB of the origin disk.
# dm-fr runs watermark-driven (writeback_period 0, high 70 %, low 40 %), so
# the crash leaves many dirty chunks, and forced writebacks of colliding
# chunks are in flight when the VM dies.

. "$FR_TOP/tests/vm/tests/lib/common.sh"

CRASH_IO=$FR_TOP/tests/vm/tests/lib/crashio.py
CRASH_SECTORS=$((48 << 11))
CRASH_FR_OPTS=(writeback_period 0 high_watermark 70 low_watermark 40)

requires() {
	have_cmd python3
}

# crash_run TARGET ACKS: boot 1 runs the writer on TARGET and is killed once
# stream 0 has ACKS recorded completions; boot 2 verifies with the completions
# boot 1's console recorded.  Sets CRASH_RC (boot 2's status) and CRASH_OUT
# (boot 2's output file); fails the test if boot 1 was not killed mid-run.
crash_run() {
	local target=$1 acks=$2 st=$FR_OUT/state rc k last acked= envs=()
	rm -rf "$st"
	mkdir -p "$st"
	[ -z "${FR_CRASH_REPORT:-}" ] || envs+=(--env FR_CRASH_REPORT=1)
	rc=0
	vm_boot --state "$st" --pm nvdimm:128 --origin fr-origin:64M --timeout 900 --quiet \
		"${envs[@]}" --kill-on "^A 0 $acks\$" \
		-- tests/vm/guest/call "$FR_CASE" crash_guest "$target" write || rc=$?
	log "boot 1: status $rc, $(grep -c '^A ' "$st/boot-1.out") completions recorded"
	grep -E '^(#|FAIL|boot:)' "$st/boot-1.out" | sed 's/^/#   /'
	[ $rc = 0 ] || fail "boot 1 was not killed mid-workload (status $rc; see $st/boot-1.out)"
	grep -q '^WRITER START' "$st/boot-1.out" || fail "the writer never started"
	for k in 0 1 2; do
		last=$(grep -E "^A $k [0-9]+\$" "$st/boot-1.out" | tail -n 1 | cut -d' ' -f3)
		[ -z "$last" ] || acked="$acked $k:$last"
	done
	log "recorded completions (stream:last id):$acked"
	CRASH_RC=0
	vm_boot --state "$st" --pm nvdimm:128 --origin fr-origin:64M --timeout 900 --quiet \
		"${envs[@]}" --env "FR_ACKED=$acked" \
		-- tests/vm/guest/call "$FR_CASE" crash_guest "$target" verify || CRASH_RC=$?
	CRASH_OUT=$st/boot-2.out
	log "boot 2: status $CRASH_RC"
	grep -E '^(#|FAIL|RESULT|ORIGIN|CONTROL|KERNEL|boot:)' "$CRASH_OUT" | sed 's/^/#   /'
}

# crash_guest TARGET PHASE: the guest side (see the top of this file).
crash_guest() {
	local target=$1 phase=$2 spec pm origin dev rc orc
	spec=${FR_CRASH_SPEC:-direct:8:16,dsync:8:16,direct:1:16}
	[ "$target" = fr ] || spec=${FR_CRASH_SPEC:-direct:8:16,dsync:8:16}
	cd "$FR_TMP"
	pm=$(dm_create frpm "0 $((8 << 11)) linear $(pm_dev) 0")
	is_dax "$pm" || fail "the PM slice is not DAX-capable"
	origin=$(origin_disk 512)
	log "boot $FR_BOOT_N: $target $phase; PM $pm (slice of $(pm_dev)), origin $origin"

	case $target in
	fr)
		fr_load
		if [ "$phase" = write ]; then
			pm_wipe "$pm" 1
			dev=$(dm_create frc "0 $CRASH_SECTORS fr $origin $pm $((${#CRASH_FR_OPTS[@]} + 1)) fresh ${CRASH_FR_OPTS[*]}")
		else
			dev=$(dm_create frc "0 $CRASH_SECTORS fr $origin $pm ${#CRASH_FR_OPTS[@]} ${CRASH_FR_OPTS[*]}")
			echo "KERNEL $(dmesg | grep -Eo 'fr: .*recovered .*' | tail -n 1)"
			fr_status_log frc "after recovery"
		fi
		;;
	wc)
		modprobe dm-writecache || fail "modprobe dm-writecache failed"
		if [ "$phase" = write ]; then
			pm_wipe "$pm" 1
		else
			# What the origin alone holds, before dm-writecache recovers.
			python3 "$CRASH_IO" verify "$origin" "$spec" --acked "${FR_ACKED:-}" --report |
				sed 's/^RESULT/ORIGIN-ALONE/'
		fi
		dev=$(dm_create frc "0 $CRASH_SECTORS writecache p $origin $pm 4096 0")
		log "dm-writecache status: $(dmsetup status frc)"
		;;
	*) fail "unknown target $target" ;;
	esac

	if [ "$phase" = write ]; then
		[ "$target" != fr ] || fr_status_log frc "before the writer"
		echo "WRITER START"
		python3 -u "$CRASH_IO" write "$dev" "$spec" --max-seconds 600
		fail "the writer ended before the VM was killed"
	fi

	rc=0
	python3 "$CRASH_IO" verify "$dev" "$spec" --acked "${FR_ACKED:-}" \
		${FR_CRASH_REPORT:+--report} || rc=$?
	[ "$target" != wc ] || crash_wc_more "$dev" "$pm" "$origin" "$spec"
	if [ "$target" = fr ]; then
		fr_status_log frc "after verify"
		msg frc flush
		assert_eq "$(frs frc chunks_dirty)" 0 "dirty after flush"
		dm_remove frc
		echo "# the origin alone, after flush:"
		orc=0
		python3 "$CRASH_IO" verify "$origin" "$spec" --acked "${FR_ACKED:-}" > "$FR_TMP/origin.out" || orc=$?
		sed 's/^RESULT/ORIGIN/' "$FR_TMP/origin.out"
		[ $orc = 0 ] || fail "the origin alone does not hold what dm-fr held"
		fr_unload
	else
		log "dm-writecache status after verify: $(dmsetup status frc)"
		dm_remove frc
	fi
	dmesg_check
	[ $rc = 0 ] || fail "verification failed"
}

# crash_wc_more DEV PM ORIGIN SPEC: after the crash check of dm-writecache, a
# control without any crash in the same boot: a fresh dm-writecache, the same
# writer stopped after 300 writes per stream, checked at once (CONTROL), and
# again after a clean remove and re-create (CONTROL-RELOAD); then the same on
# the bare origin (CONTROL-RAW) and on dm-writecache in ssd mode over a RAM
# loop device (CONTROL-SSD).  Losses in the pmem controls are not crash
# semantics (dm-writecache's pmem path has been seen returning stale data
# under stress on these emulated machines without any crash).
crash_wc_more() {
	local dev=$1 pm=$2 origin=$3 spec=$4 acked= k
	dm_remove frc
	pm_wipe "$pm" 1
	blkdiscard -f -z -l $((CRASH_SECTORS << 9)) "$origin" || fail "cannot zero the origin"
	dev=$(dm_create frc "0 $CRASH_SECTORS writecache p $origin $pm 4096 0")
	python3 "$CRASH_IO" write "$dev" "$spec" --max-writes 300 > "$FR_TMP/control.acks" ||
		fail "the control writer failed"
	for k in $(seq 0 $(($(tr -cd , <<< "$spec" | wc -c)))); do
		acked="$acked $k:299"
	done
	python3 "$CRASH_IO" verify "$dev" "$spec" --acked "$acked" --report | sed 's/^RESULT/CONTROL/'
	dm_remove frc
	dev=$(dm_create frc "0 $CRASH_SECTORS writecache p $origin $pm 4096 0")
	python3 "$CRASH_IO" verify "$dev" "$spec" --acked "$acked" --report | sed 's/^RESULT/CONTROL-RELOAD/'
	dm_remove frc

	# The same without dm-writecache (the writer and checker on the origin
	# itself), and with dm-writecache in ssd mode on a RAM loop device.
	blkdiscard -f -z -l $((CRASH_SECTORS << 9)) "$origin" || fail "cannot zero the origin"
	python3 "$CRASH_IO" write "$origin" "$spec" --max-writes 300 > /dev/null || fail "the raw control writer failed"
	python3 "$CRASH_IO" verify "$origin" "$spec" --acked "$acked" --report | sed 's/^RESULT/CONTROL-RAW/'
	blkdiscard -f -z -l $((CRASH_SECTORS << 9)) "$origin" || fail "cannot zero the origin"
	dev=$(dm_create frc "0 $CRASH_SECTORS writecache s $origin $(scratch_dev 8M) 4096 0")
	python3 "$CRASH_IO" write "$dev" "$spec" --max-writes 300 > /dev/null || fail "the ssd-mode control writer failed"
	python3 "$CRASH_IO" verify "$dev" "$spec" --acked "$acked" --report | sed 's/^RESULT/CONTROL-SSD/'
}
