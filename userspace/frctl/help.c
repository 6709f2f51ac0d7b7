// SPDX-License-Identifier: GPL-2.0-only
/*
 * The --help text of every verb. Pinned by tests/help/VERB.txt: a change here
 * must change those files too (and docs/frctl.8).
 */
#include <string.h>

#include "frctl.h"

/* Where a verb's help lists the tunables (tunables_help). */
#define TUNABLES_HERE	"@tunables@\n"

static const struct verb_help helps[] = {
{ NULL,
"Usage: frctl [--version] [--help] <command> [<args>]\n"
"\n"
"Set up, watch, check and take apart dm-fr devices (persistent memory in\n"
"front of a block device).\n"
"\n"
"Commands:\n"
"  format        write a new dm-fr superblock on a PM device\n"
"  create        create a dm-fr device from a PM and an origin\n"
"  remove        remove a dm-fr device (--flush: detach cleanly)\n"
"  status        show dm-fr devices and their counters\n"
"  flush         write all dirty data back to the origin\n"
"  attach        put a PM in front of a device-mapper device in use\n"
"  detach        take the PM away from a device in use, writing it back\n"
"  replace       detach a device in use from its PM and attach another\n"
"  resize        take the origin's new length, online\n"
"  check         verify the PM metadata offline\n"
"  repair        apply the recovery offline and write it back\n"
"  dump          show the superblock and a summary of the tags\n"
"  probe         print udev properties of a PM device\n"
"  autoactivate  activate a PM's device once its origin is present (udev)\n"
"  guard         keep the origins of dm-fr devices from being used alone\n"
"\n"
"'frctl <command> --help' describes a command. See frctl(8).\n" },
{ "format",
"Usage: frctl format --pm DEV --origin DEV [options]\n"
"\n"
"Write a new, empty dm-fr superblock on a PM device (or an image file),\n"
"bound to an origin: its length, a stable name for it and a fresh uuid.\n"
"Whatever the PM cached before is lost.\n"
"\n"
"Options:\n"
"  --pm DEV            the PM device (an fsdax namespace such as /dev/pmem0)\n"
"                      or an image file\n"
"  --origin DEV        the origin block device (or image file) to cache\n"
"  --chunk-size SIZE   bytes per chunk: 4k, 8k, 16k or 32k (default 4k)\n"
"  --region-size SIZE  origin bytes placed side by side on the PM: a\n"
"                      power-of-two number of chunks, at most 1024\n"
"                      (default 1M, less on a very small PM)\n"
"  --stride N          slots between the starts of consecutive regions\n"
"                      (default: chunks per region + 1)\n"
"  --origin-id ID      record ID as the origin's name instead of the one\n"
"                      frctl picks (a /dev/disk/by-id name or a path)\n"
"  --origin-sectors N  format for an origin of N sectors; replaces --origin\n"
"                      (then --origin-id is needed)\n"
"  --uuid UUID         use this uuid instead of a random one\n"
"  -f, --force         overwrite an existing dm-fr superblock\n"
"  -j, --json          print the new superblock as JSON\n"
"  -h, --help          show this help\n"
"\n"
"Exit status: 0 formatted, 8 operational error, 16 usage error.\n" },
{ "create",
"Usage: frctl create [options] NAME --pm DEV --origin DEV\n"
"\n"
"Create the dm-fr device /dev/mapper/NAME (/dev/fr/NAME with the udev\n"
"rules), with DM UUID FR-<uuid of the PM>, caching the origin on a PM that\n"
"frctl format prepared for it. Data a crash left dirty on the PM is\n"
"recovered by the kernel before the device is usable.\n"
"\n"
"Options:\n"
"  --pm DEV                the PM device\n"
"  --origin DEV            the origin; must be the one the PM was formatted\n"
"                          for\n"
"  --format                format the PM first, as frctl format does (what\n"
"                          the PM held is lost); accepts --chunk-size,\n"
"                          --region-size, --stride, --origin-id and --uuid\n"
TUNABLES_HERE
"  --cleaner               start in cleaner mode (writes go through)\n"
"  --no-read-fill          do not cache data read from the origin\n"
"  -f, --force             accept an origin other than the recorded one\n"
"  -n, --dry-run           print the dmsetup command instead of running it\n"
"  -h, --help              show this help\n"
"\n"
"Exit status: 0 created, 8 operational error, 16 usage error.\n" },
{ "remove",
"Usage: frctl remove [options] NAME\n"
"\n"
"Remove a dm-fr device. Without --flush, dirty data stays on the PM, which\n"
"is safe (it is recovered when the device is created again) but leaves the\n"
"origin alone out of date.\n"
"\n"
"Options:\n"
"  --flush      detach cleanly: cleaner mode, write everything back, then\n"
"               remove; afterwards the origin alone holds all the data\n"
"  --retry      retry for a few seconds while the device is busy\n"
"  -h, --help   show this help\n"
"\n"
"Exit status: 0 removed, 8 operational error, 16 usage error.\n" },
{ "status",
"Usage: frctl status [options] [NAME...]\n"
"\n"
"Show dm-fr devices (all of them without NAME): state, hit ratios, dirty\n"
"data, writeback and errors.\n"
"\n"
"Options:\n"
"  -j, --json          JSON with raw counters and full key names\n"
"  -w, --watch         refresh every interval until interrupted\n"
"  -i, --interval SEC  seconds between two samples (default 1); given\n"
"                      without --watch, sample twice to show rates\n"
"  -c, --count N       with --watch, stop after N refreshes\n"
"  -h, --help          show this help\n"
"\n"
"Exit status: 0 shown, 8 operational error (no such dm-fr device), 16 usage\n"
"error.\n" },
{ "flush",
"Usage: frctl flush [options] NAME\n"
"\n"
"Write every dirty chunk of a dm-fr device back to its origin and flush the\n"
"origin (dmsetup message NAME 0 flush). On a terminal a progress bar shows\n"
"the dirty data draining. Ctrl-C stops the kernel's flush at its next batch:\n"
"what was written back stays written back, the rest stays dirty on the PM.\n"
"\n"
"Options:\n"
"  -q, --quiet   no progress bar\n"
"  -h, --help    show this help\n"
"\n"
"Exit status: 0 flushed, 8 operational error, 16 usage error,\n"
"32 interrupted.\n" },
{ "attach",
"Usage: frctl attach [options] NAME --pm DEV\n"
"\n"
"Put a PM in front of the device-mapper device NAME while it is in use (a\n"
"mounted LVM logical volume, dm-linear, dm-crypt, ...). NAME keeps its name\n"
"and device number; its table moves to a hidden device, NAME-frorigin,\n"
"which becomes the origin, and NAME becomes a dm-fr device over it. The PM\n"
"is formatted for it (what it held is lost). A disk or partition that is\n"
"not a device-mapper device cannot be attached to in use: see frctl(8),\n"
"ATTACH.\n"
"\n"
"Options:\n"
"  --pm DEV                the PM device (an fsdax namespace)\n"
"  --chunk-size SIZE       the PM's geometry, as for frctl format (default\n"
"  --region-size SIZE      4k chunks, 1M regions, the stride that follows)\n"
"  --stride N\n"
TUNABLES_HERE
"  -f, --force             format a PM that has a dm-fr superblock\n"
"  -q, --quiet             say nothing when done\n"
"  -h, --help              show this help\n"
"\n"
"Exit status: 0 attached, 8 operational error (nothing changed), 16 usage\n"
"error.\n" },
{ "detach",
"Usage: frctl detach [options] NAME\n"
"\n"
"Take the PM away from the dm-fr device NAME while it is in use: cleaner\n"
"mode (new data goes through to the origin) while the dirty data drains,\n"
"with a progress bar on a terminal; then the table under the cache goes\n"
"back in its place (the hidden origin's of frctl attach, else a linear map\n"
"of the origin), after the kernel wrote back the rest during the suspend.\n"
"NAME keeps its name and device number. The PM's superblock is wiped.\n"
"Ctrl-C or --timeout leaves NAME attached and consistent, back in the mode\n"
"it was in.\n"
"\n"
"Options:\n"
"  -t, --timeout S   give up after S seconds\n"
"  -j, --json        a JSON object per line: phase, dirty_chunks,\n"
"                    dirty_bytes, rate_bytes_per_s, eta_s, elapsed_s\n"
"  -q, --quiet       no progress bar\n"
"  -h, --help        show this help\n"
"\n"
"Exit status: 0 detached, 8 operational error (still attached), 16 usage\n"
"error, 32 interrupted or timed out (still attached).\n" },
{ "replace",
"Usage: frctl replace [options] NAME --pm DEV\n"
"\n"
"Replace the PM of the dm-fr device NAME while it is in use: frctl detach\n"
"(everything written back to the origin; the old PM's superblock wiped),\n"
"then frctl attach of the new PM with the tunables NAME ran with. NAME keeps\n"
"its name and device number and runs without a cache in between. A PM that\n"
"is failing but readable is replaced so; see frctl(8), REPLACE.\n"
"\n"
"Options:\n"
"  --pm DEV          the new PM (an fsdax namespace); it is formatted\n"
"  -t, --timeout S   give up the detach after S seconds (still attached)\n"
"  -j, --json        the detach's progress as JSON lines (as detach)\n"
"  -f, --force       format a new PM that has a dm-fr superblock\n"
"  -q, --quiet       no progress bar\n"
"  -h, --help        show this help\n"
"\n"
"Exit status: 0 replaced, 8 operational error, 16 usage error, 32\n"
"interrupted or timed out (still on the old PM).\n" },
{ "resize",
"Usage: frctl resize [options] NAME\n"
"\n"
"Give the dm-fr device NAME its origin's new length while it is in use:\n"
"after lvextend (or a larger disk), NAME grows to the origin's size; then\n"
"grow the file system on it. With --size, NAME shrinks (or grows) to SIZE;\n"
"a shrink is refused below the end of an ext4, XFS or Btrfs on NAME (shrink\n"
"the file system first), and by the kernel while dirty data lies past the\n"
"new end (frctl flush first). The PM's superblock takes the new length\n"
"crash-safely. A device made by frctl attach is refused (see frctl(8)).\n"
"\n"
"Options:\n"
"  -s, --size SIZE   the new length (bytes, or with K, M, G, T), at most the\n"
"                    origin's; without it, the origin's size\n"
"  -j, --json        one JSON object: name, old_sectors, new_sectors, resized\n"
"  -q, --quiet       say nothing when done\n"
"  -h, --help        show this help\n"
"\n"
"Exit status: 0 resized (or already that length), 8 operational error\n"
"(nothing changed), 16 usage error.\n" },
{ "check",
"Usage: frctl check [options] DEV|IMAGE\n"
"\n"
"Verify the dm-fr metadata of a PM device or image offline with the kernel\n"
"module's own recovery logic, changing nothing: the superblock, every tag,\n"
"the pair invariants and interrupted multi-chunk writes.\n"
"\n"
"Options:\n"
"  -f, --force    check a PM although an active device uses it\n"
"  -j, --json     print the result as JSON\n"
"  -h, --help     show this help\n"
"\n"
"Exit status: 0 no errors (recovery after a crash may be pending: the\n"
"kernel completes it at load, frctl repair offline), 4 errors found,\n"
"8 operational error (not a dm-fr PM, cannot open it), 16 usage error.\n" },
{ "repair",
"Usage: frctl repair [options] DEV|IMAGE\n"
"\n"
"Apply the kernel module's recovery to a PM device or image offline and\n"
"write the result back: settle interrupted multi-chunk writes, drop\n"
"superseded copies and clear corrupt tags (the data a corrupt tag held is\n"
"lost: the origin's copy of that chunk is used again).\n"
"\n"
"Options:\n"
"  -n, --dry-run  report what would be done and change nothing\n"
"  -j, --json     print the result as JSON\n"
"  -h, --help     show this help\n"
"\n"
"Exit status: 0 nothing to do, 1 repaired, 4 not repairable (a damaged\n"
"superblock; with --dry-run: errors found), 8 operational error, 16 usage\n"
"error.\n" },
{ "dump",
"Usage: frctl dump [options] DEV|IMAGE\n"
"\n"
"Show the superblock of a PM device or image and a summary of its tags.\n"
"\n"
"Options:\n"
"  -j, --json     print JSON (raw integers, full key names)\n"
"  -t, --tags     also list every tag with its valid flag set\n"
"  -f, --force    read a PM although an active device uses it\n"
"  -h, --help     show this help\n"
"\n"
"Exit status: 0 shown, 4 damaged superblock, 8 operational error, 16 usage\n"
"error.\n" },
{ "probe",
"Usage: frctl probe [options] DEV\n"
"\n"
"Print udev properties (KEY=value lines) for a device that carries a dm-fr\n"
"superblock, and nothing for any other device; for IMPORT{program} in udev\n"
"rules. The properties are FR_SUPERBLOCK=1, FR_VERSION, FR_UUID,\n"
"FR_UUID_HEX, FR_ORIGIN_ID, FR_ORIGIN_SECTORS, FR_CHUNK_SIZE, FR_NR_CHUNKS\n"
"and FR_PM_BYTES.\n"
"\n"
"Options:\n"
"  -v, --verbose  say on stderr why a device is not reported\n"
"  -h, --help     show this help\n"
"\n"
"Exit status: 0 found, 2 no dm-fr superblock, 4 damaged or truncated\n"
"superblock, 8 cannot read the device or a superblock of a newer format,\n"
"16 usage error.\n" },
{ "autoactivate",
"Usage: frctl autoactivate [options] --pm DEV\n"
"       frctl autoactivate [options] --pending\n"
"\n"
"Create the dm-fr device of a PM once its origin is present; run by the udev\n"
"rules through systemd-run. Does nothing when the device exists already.\n"
"When the origin is missing, the PM is remembered in /run/frctl/pending and\n"
"--pending tries those again (when another block device appears).\n"
"The device is named after /etc/frctl/frtab (lines: NAME UUID [options]),\n"
"else fr-<first 8 hex digits of the uuid>; the option noauto there turns\n"
"auto-activation off for that PM.\n"
"\n"
"Options:\n"
"  --pm DEV      the PM device that appeared\n"
"  --pending     retry the PM devices waiting for their origin\n"
"  -h, --help    show this help\n"
"\n"
"Exit status: 0 activated, present already, or waiting for the origin;\n"
"8 operational error; 16 usage error.\n" },
{ "guard",
"Usage: frctl guard --udev DEV [LINK...]\n"
"       frctl guard --hold DEV [LINK...]\n"
"       frctl guard --forget DEV [--force]\n"
"       frctl guard --list\n"
"\n"
"An origin keeps its file system's signature, and while its newest data\n"
"waits on the PM the bare origin is a stale copy. The origins frctl knows\n"
"(/etc/frctl/origins, written by format, create and autoactivate, and the\n"
"PMs waiting in /run/frctl/pending) are hidden by the udev rule\n"
"61-dm-fr-origin.rules (no by-uuid or by-label link, SYSTEMD_READY=0) and\n"
"held by a 4 KiB device-mapper device, fr-guard-<uuid>, so that a mount of\n"
"the bare origin fails as busy. The dm-fr device is still created over it.\n"
"\n"
"Options:\n"
"  --udev DEV    print udev properties (FR_ORIGIN, FR_ORIGIN_PM, FR_ORIGIN_ID)\n"
"                if DEV is an origin, else nothing; LINK: its links this event\n"
"  --hold DEV    hold the origin DEV unless a dm-fr device or a guard does\n"
"  --forget DEV  drop the hold and the registry's lines: DEV is to be used\n"
"                alone (refused while its dm-fr device exists, or while its\n"
"                PM waits unactivated, unless --force)\n"
"  --list        the registry: PM uuid, origin id, and whether it is held\n"
"  -f, --force   with --forget: even while its PM waits unactivated\n"
"  -h, --help    show this help\n"
"\n"
"Exit status: 0 done (--udev: always); 8 operational error; 16 usage error.\n" },
};

int print_help(const char *verb, FILE *f)
{
	size_t i;

	for (i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		if ((!verb && !helps[i].verb) ||
		    (verb && helps[i].verb && !strcmp(verb, helps[i].verb))) {
			const char *t = helps[i].text;
			const char *at = strstr(t, TUNABLES_HERE);

			/* The tunables' lines come from their one list. */
			if (at) {
				fwrite(t, 1, (size_t)(at - t), f);
				tunables_help(f);
				t = at + strlen(TUNABLES_HERE);
			}
			fputs(t, f);
			return 0;
		}
	}
	return -1;
}
