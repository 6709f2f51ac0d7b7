# SPDX-License-Identifier: GPL-2.0-only
# The mixed-read race (the epoch rule, dm-fr.h), for integrity/mixed-read-*:
# a mixed read (PM holds part of it) reads the origin without the stripe
# locks, then overlays what PM holds, trusting the overlay only if nothing
# that can drop a copy happened meanwhile. mixed_read_race makes everything
# that can go wrong happen, in order:
#   1. chunk A is dirty on PM (the older of two dirty chunks in its slot, A
#      and D);
#   2. a read of chunks A and A+1 (A+1 is on the origin only) starts; the
#      origin samples A's old data at once and holds the reply (holdnbd.py:
#      dm-delay cannot do this, it reads the data when it lets the bio go);
#   3. a flush writes A back (the origin now has the new data) and cleans it;
#   4. something evicts A, the older clean copy of the slot: EVICTOR "fill",
#      a read of a third chunk C of the slot, whose fill takes A's place; or
#      "failed-write", a one-block write to D whose merge of the rest of D
#      reads a PM media error (the fault injection build) after the write
#      has taken A's place for the new copy of D, so that the write fails;
#   5. the origin answers the read of step 2.
# The read must return A's new data: the eviction moved its stripe's epoch
# or fill count, so the read tries again.

. "$FR_TOP/tests/vm/tests/lib/common.sh"

mixed_read_requires() {
	have_module && have_pm && have_kmod nbd && have_cmd python3 nbd-client jq openssl
}

frctl() { "$FR_TOP/userspace/frctl/frctl" "$@"; }

MIXED_PORT=10811
CHUNK=4096

# same_slot_keys NR_SLOTS REGION_CHUNKS STRIDE ORIGIN_CHUNKS: print 3 keys
# that share a slot (fr_slot_of, fr-core.h), the first with a successor in
# its region.
same_slot_keys() {
	python3 - "$@" <<-'PY'
	import sys
	nr_slots, rc, stride, nr_keys = (int(a) for a in sys.argv[1:])
	slot = lambda k: ((k // rc % nr_slots) * stride + k % rc) % nr_slots
	by_slot = {}
	for k in range(nr_keys):
	    by_slot.setdefault(slot(k), []).append(k)
	for keys in by_slot.values():
	    if len(keys) >= 3 and keys[0] % rc != rc - 1 and keys[0] + 1 not in keys:
	        print(*keys[:3])
	        break
	PY
}

# mixed_read_race fill|failed-write
mixed_read_race() {
	local evictor=$1
	local file ctl nlog pid nbd pm dev keys a d c hold_ms n t0 reader dchunk
	case $evictor in
	fill) fr_load ;;
	failed-write) FR_KO=$FR_KO_FAULT fr_load ;;
	*) fail "mixed_read_race: unknown evictor '$evictor'" ;;
	esac
	cd "$FR_TMP"
	[ -x "$FR_TOP/userspace/frctl/frctl" ] || fail "frctl is not built"
	# The origin: a 64 MiB file whose chunks A and A+1 hold "old" data,
	# exported by holdnbd.py.
	file=$FR_TMP/origin.img ctl=$FR_TMP/hold nlog=$FR_TMP/holdnbd.log
	truncate -s 64M "$file"
	: > "$nlog"
	modprobe nbd nbds_max=4 || fail "modprobe nbd failed"
	ip link set lo up 2>/dev/null || :
	python3 "$FR_TOP/tests/vm/tests/lib/holdnbd.py" "$file" $MIXED_PORT "$ctl" "$nlog" \
		> "$FR_OUT/holdnbd.out" 2>&1 &
	pid=$!
	nbd=/dev/nbd1
	on_cleanup nbd_stop "$pid" "$nbd"
	for n in $(seq 50); do
		nbd-client -N fr 127.0.0.1 $MIXED_PORT "$nbd" > "$FR_OUT/nbd-client.log" 2>&1 && break
		kill -0 "$pid" 2>/dev/null || { cat "$FR_OUT/holdnbd.out"; fail "holdnbd.py exited"; }
		sleep 0.2
	done
	[ "$(blockdev --getsize64 "$nbd" 2>/dev/null)" = $((64 << 20)) ] ||
		{ cat "$FR_OUT/nbd-client.log"; fail "$nbd is not connected (64 MiB)"; }

	# The geometry, to find three keys of one slot. Pairs, named (also
	# under tests/vm/run --ways): the steps below fill a slot with A and D
	# and evict A with a third key, a pair's eviction.
	pm=$(pm_slice frpm 16)
	udev_noscan frmr
	dev=$(fr_create frmr "$nbd" "$pm" fresh set_ways 2)
	dm_remove frmr
	frctl dump --force --json "$pm" > sb.json 2> sb.err || fail "frctl dump failed: $(cat sb.err)"
	sb() { jq -r "[.. | objects | select(has(\"$1\")) | .$1][0]" sb.json; }
	assert_eq "$(sb chunk_sectors)" $((CHUNK / 512)) "chunk sectors"
	keys=$(same_slot_keys "$(sb nr_slots)" "$(sb region_chunks)" "$(sb stride_slots)" $(((64 << 20) / CHUNK)))
	read -r a d c <<< "$keys"
	[ -n "$c" ] || fail "no three keys share a slot (geometry: $(sb nr_slots) slots)"
	log "keys of one slot: A $a, D $d, C $c"
	pattern_write "$nbd" old 8K $((a * CHUNK))
	dev=$(fr_create frmr "$nbd" "$pm" writeback_period 0 high_watermark 100)

	# 1. A dirty, then D, so that A is the older of the slot's two chunks.
	pattern_write "$dev" new 4K $((a * CHUNK))
	pattern_write "$dev" d 4K $((d * CHUNK))
	assert_eq "$(frs frmr chunks_dirty)" 2 "dirty chunks after writing A and D"
	if [ "$evictor" = failed-write ]; then
		# D's PM chunk (frctl reads the live tags), before the read holds
		# the origin: a suspend would wait for that read.
		dmsetup suspend frmr
		frctl dump --force --json --tags "$pm" > tags.json 2> tags.err ||
			fail "frctl dump failed: $(cat tags.err)"
		dmsetup resume frmr
		dchunk=$(jq -r ".tag_list[] | select(.key == $d and .state == \"valid\") | .chunk" tags.json)
		[ -n "$dchunk" ] || fail "no valid PM chunk holds D ($d)"
		log "D lives in PM chunk $dchunk"
	fi

	# 2. The mixed read of A and A+1; the origin samples and holds it.
	hold_ms=$((6000 * FR_TIMEOUT_SCALE))
	udevadm settle
	echo "$((a * CHUNK)) $((2 * CHUNK)) $hold_ms" > "$ctl"
	dd if="$dev" of="$FR_TMP/read" bs=$((2 * CHUNK)) skip=$((a * CHUNK)) count=1 \
		iflag=direct,skip_bytes status=none &
	reader=$!
	t0=$SECONDS
	until grep -qx "held $((a * CHUNK)) $((2 * CHUNK))" "$nlog"; do
		[ $((SECONDS - t0)) -lt 30 ] || fail "the read of A and A+1 did not reach the origin in 30 s"
		sleep 0.1
	done
	tlog "the read of A and A+1 is held"

	# 3. Writeback: the origin gets A's new data, A is clean.
	dmsetup message frmr 0 flush || fail "flush refused"
	tlog "flushed"
	assert_eq "$(frs frmr chunks_dirty)" 0 "dirty chunks after the flush"

	# 4. Something takes A's place.
	case $evictor in
	fill) evict_by_fill "$dev" "$c" ;;
	failed-write) evict_by_failed_write "$dev" "$d" "$dchunk" ;;
	esac
	! grep -q '^released' "$nlog" ||
		fail "the origin answered the read of A before the eviction: the race was not set up (hold ${hold_ms} ms too short here)"
	tlog "A evicted ($evictor) while the read of A is held"

	# 5. The read completes: A's new data, A+1's old.
	wait "$reader" || fail "the read of A and A+1 failed"
	log "origin reads of A and A+1 held: $(grep -c '^held' "$nlog")"
	echo > "$ctl"
	cmp -s -n $CHUNK "$FR_TMP/read" <(_pattern new $CHUNK) || {
		cmp -s -n $CHUNK "$FR_TMP/read" <(_pattern old $CHUNK) &&
			fail "the mixed read returned A's data from before the writeback: an eviction ($evictor) went unseen"
		fail "the mixed read returned neither A's old nor its new data"
	}
	cmp -s -i $CHUNK:$CHUNK -n $CHUNK "$FR_TMP/read" <(_pattern old $((2 * CHUNK))) ||
		fail "the mixed read returned wrong data for A+1"

	# The device and the origin agree: A and D written, A+1 untouched.
	pattern_check "$dev" new 4K $((a * CHUNK))
	pattern_check "$dev" d 4K $((d * CHUNK))
	dm_remove frmr
	pattern_check "$nbd" new 4K $((a * CHUNK))
	pattern_check "$nbd" d 4K $((d * CHUNK))
	fr_unload
}

# evict_by_fill DEV C: a read of C fills it into A's place.
evict_by_fill() {
	local dev=$1 c=$2 fills t0
	fills=$(frs frmr read_fills)
	dd if="$dev" of=/dev/null bs=$CHUNK skip="$c" count=1 iflag=direct status=none ||
		fail "the read of C failed"
	tlog "read C"
	t0=$SECONDS
	while [ "$(frs frmr read_fills)" = "$fills" ]; do
		[ $((SECONDS - t0)) -lt 10 ] || fail "the read of C filled nothing in 10 s"
		sleep 0.1
	done
}

# evict_by_failed_write DEV D DCHUNK: D's PM chunk reads as a media error;
# a one-block write to D takes A's chunk for D's new copy (evicting A),
# then fails merging the rest of D from DCHUNK.
evict_by_failed_write() {
	local dev=$1 d=$2 dchunk=$3 valid pmerr ss
	local P=/sys/module/dm_fr/parameters
	ss=$(blockdev --getss "$dev")
	[ "$ss" -lt $CHUNK ] || fail "logical blocks of $ss bytes: no write to D is partial"
	valid=$(frs frmr chunks_valid) pmerr=$(frs frmr pm_errors)
	assert_eq "$valid" 2 "valid chunks before the write to D (A and D)"
	echo "$dchunk" > $P/fault_pm_chunk
	echo 1 > $P/fault_pm
	if _pattern d2 "$ss" | dd of="$dev" bs="$ss" seek=$((d * CHUNK / ss)) count=1 \
		oflag=direct status=none 2> "$FR_TMP/write-d.err"; then
		fail "the write to D succeeded: its merge read no media error"
	fi
	tlog "write of $ss bytes to D failed: $(head -n 1 "$FR_TMP/write-d.err")"
	grep -q "Input/output error" "$FR_TMP/write-d.err" ||
		fail "the write to D failed, but not with EIO: $(head -n 1 "$FR_TMP/write-d.err")"
	assert_eq "$(frs frmr chunks_valid)" 1 "valid chunks after the failed write (A evicted, D kept)"
	[ "$(frs frmr pm_errors)" -gt "$pmerr" ] || fail "pm_errors did not count the failed merge"
	echo 0 > $P/fault_pm
}
