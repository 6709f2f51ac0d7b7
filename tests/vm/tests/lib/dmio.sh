# SPDX-License-Identifier: GPL-2.0-only
# dmio: device-mapper calls and direct block I/O without a process each
# (lib/dmio.py, a coprocess started once). Source it, call dmio_start, then:
#   dmio REQUEST WORD...   sets DMIO_RC (0 or an errno) and DMIO_OUT (the
#                          answer, or the error); returns 0 when DMIO_RC is 0
# Requests are dmio.py's (info, create, load, resume, suspend, clear, remove,
# status, table, message, write, read, hex). The server dying (an oops in an
# ioctl kills it) fails the case.

dmio_start() {
	coproc DMIO { exec python3 -u "$FR_TOP/tests/vm/tests/lib/dmio.py"; }
	DMIO_IN=${DMIO[1]} DMIO_OUTFD=${DMIO[0]}
	dmio hex 1 || fail "dmio server does not answer: $DMIO_OUT"
}

dmio() {
	local IFS=$'\t' line
	printf '%s\n' "$*" >&"$DMIO_IN" 2>/dev/null ||
		fail "dmio server is gone (killed?) at: $*"
	IFS= read -r line <&"$DMIO_OUTFD" ||
		fail "dmio server died during: $* (dmesg: $(dmesg | tail -n 3 | tr '\n' ' '))"
	DMIO_RC=${line%%$'\t'*} DMIO_OUT=${line#*$'\t'}
	[ "$DMIO_RC" = 0 ]
}
