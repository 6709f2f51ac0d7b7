# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# tests/vm/tests/target/lib/crash-host.sh: the host side of the crash cases.

requires() {
	have_cmd python3
}

# crash_run TARGET ACKS: boot 1 runs the writer on TARGET (fr or wc) and is
# killed once stream 0 has ACKS recorded completions; boot 2 verifies with the
# completions boot 1's console recorded.  Sets CRASH_RC (boot 2's status) and
# CRASH_ACKED; fails the test if boot 1 was not killed as planned.
crash_run() {
	local target=$1 acks=$2 st=$FR_OUT/state rc k last envs=()
	rm -rf "$st"
	mkdir -p "$st"
	envs=(--env "FR_KO=$FR_KO")
	[ -z "${FR_CRASH_REPORT:-}" ] || envs+=(--env FR_CRASH_REPORT=1)
	rc=0
	vm_boot --state "$st" --pm nvdimm:128 --origin fr-origin:64M --timeout 900 --quiet \
		"${envs[@]}" --kill-on "^A 0 $acks\$" -- "tests/vm/tests/target/lib/crash-guest $target write" || rc=$?
	log "boot 1: status $rc, $(grep -c '^A ' "$st/boot-1.out") completions recorded"
	grep -E '^(#|FAIL|boot:)' "$st/boot-1.out" | sed 's/^/#   /'
	[ $rc = 0 ] || fail "boot 1 was not killed mid-workload (status $rc; see $st/boot-1.out)"
	grep -q '^WRITER START' "$st/boot-1.out" || fail "the writer never started"
	CRASH_ACKED=
	for k in 0 1 2; do
		last=$(grep -E "^A $k [0-9]+\$" "$st/boot-1.out" | tail -n 1 | cut -d' ' -f3)
		[ -z "$last" ] || CRASH_ACKED="$CRASH_ACKED $k:$last"
	done
	log "recorded completions (stream:last id):$CRASH_ACKED"
	CRASH_RC=0
	vm_boot --state "$st" --pm nvdimm:128 --origin fr-origin:64M --timeout 900 --quiet \
		"${envs[@]}" --env "FR_ACKED=$CRASH_ACKED" -- "tests/vm/tests/target/lib/crash-guest $target verify" || CRASH_RC=$?
	log "boot 2: status $CRASH_RC"
	grep -E '^(#|FAIL|RESULT|ORIGIN|KERNEL|boot:)' "$st/boot-2.out" | sed 's/^/#   /'
}
