# dm-fr top-level build.
#
#   make              build the kernel module (dm-fr/) and frctl (userspace/frctl/)
#   make check        every test: host tests, the quick VM suite on the real kernel,
#                     and the systemd machine's two-boot quick case
#   make check-host   host-only tests (unit, crash simulator, fuzz seeds, frctl): no VM
#   make check-full   check plus the slow suites (long simulator runs, kernel matrix,
#                     the pairs suite on slots of 2 chunks (the width before 1.19),
#                     the crash campaign, the debug-kernel lane)
#   make check-seeds  the seeded cases over many seeds (off CI): the generated VM
#                     life cycle (lifecycle/dm-ops-random) for SEEDS (default 1-200)
#                     in one boot, and the host's seeded simulator runs for HOST_SEEDS
#   make check-systemd  the systemd test machine's reboot campaign (tests/systemd/run), then
#                     its control without the guard (--control), which must fail its check:
#                     dm-fr installed by make install into a Debian root with systemd,
#                     three devices in /etc/fstab, 22 boots ended by kills, resets,
#                     clean reboots and poweroffs, with absent, late, slow and
#                     unplugged origins
#   make check-crash  the crash campaign: 50+ VM kills, every acknowledged write checked
#                     (CRASH_ARGS: more options for tests/crash/run, e.g. --kills 8)
#   make check-debug  the full VM suite on a debug kernel (lockdep, KASAN, kmemleak)
#                     built from Debian's linux-source (cached: tests/vm/debug-kernel);
#                     DEBUG_PART=K/N runs part K of N of it (tests/vm/run --part)
#   make demo         boot a VM and show dm-fr against the bare origin
#   make bench        the benchmark suite (bench/results/)
#   make deps         install what the above need (Debian packages, a venv for virtme-ng)
#
# KVER selects the kernel to build for and boot: a series ("6.1", the default,
# or "6.12" from bookworm-backports) or a full version string.

KVER ?= 6.1
export KVER
# Guests the quick VM suite runs in at once (tests/vm/run --jobs): one on 2
# cores (two at once made every case 2 to 2.3 times slower: no gain); more
# where there are more cores.
VM_JOBS ?= 1
# The kernels check-full runs the full VM suite on.
MATRIX ?= 6.1 6.12

.PHONY: all module frctl check check-host check-vm check-full check-crash check-debug check-seeds check-systemd \
	check-systemd-quick \
	demo bench deps \
	install clean

all: module frctl

module:
	$(MAKE) -C dm-fr KVER=$$(tests/kver $(KVER))

frctl:
	$(MAKE) -C userspace/frctl

check-host:
	tests/check-host quick

check: deps
	$(MAKE) all
	tests/check

check-vm:
	tests/vm/run --kver $(KVER) --suite quick --jobs $(VM_JOBS)

check-full: deps
	$(MAKE) all
	tests/check-host full
	st=0; for k in $(MATRIX); do \
		tests/install-deps $$k && tests/vm/run --kver $$k --suite full || st=1; \
		tests/vm/run --kver $$k --suite pairs --ways 2 || st=1; \
		tests/crash/run --kver $$k $(CRASH_ARGS) || st=1; \
		tests/systemd/run --kver $$k || st=1; \
		tests/systemd/run --kver $$k --control || st=1; \
	done; \
	$(MAKE) check-debug || st=1; \
	exit $$st

SEEDS ?= 1-200
HOST_SEEDS ?= 1-200
check-seeds: deps
	$(MAKE) all
	$(MAKE) -C tests/host programs
	st=0; tests/host/seeds $(HOST_SEEDS) || st=1; \
	tests/vm/run --kver $(KVER) --seeds $(SEEDS) lifecycle/dm-ops-random || st=1; \
	exit $$st

check-crash: deps
	tests/crash/run --kver $(KVER) $(CRASH_ARGS)

check-systemd: deps
	$(MAKE) all
	st=0; tests/systemd/run --kver $(KVER) || st=1; \
	tests/systemd/run --kver $(KVER) --control || st=1; \
	exit $$st

# make check's part of it (tests/check): two boots, init with a kill, then a
# check and a clean poweroff.
check-systemd-quick:
	tests/systemd/run --kver $(KVER) --quick

check-debug: deps
	tests/vm/debug-kernel/build
	tests/vm/run --kver debug --suite full $(if $(DEBUG_PART),--part $(DEBUG_PART))

demo: deps
	$(MAKE) module
	tests/vm/demo --kver $(KVER)

bench: deps
	$(MAKE) module
	tests/bench/run --kver $(KVER)

deps:
	tests/install-deps $(KVER)

# The module for KVER, frctl, its man page, udev rules and bash completion.
install: all
	$(MAKE) -C dm-fr install KVER=$$(tests/kver $(KVER))
	$(MAKE) -C userspace/frctl install

clean:
	-$(MAKE) -C dm-fr clean
	-$(MAKE) -C userspace/frctl clean
	-$(MAKE) -C tests/host clean
	-$(MAKE) -C userspace/libfrcore clean
