#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""dmio: device-mapper ioctls and direct block I/O for a case's one process.

A case that makes hundreds of device-mapper calls and small reads and writes
(lifecycle/dm-ops-random) spends most of its time under TCG starting
processes: about 120 ms a dmsetup, 60 ms a dd or sha256sum, and a dmsetup
that changes a device also waits for udev. This server runs once, as a bash
coprocess (lib/dmio.sh), and does each call in-process: the same ioctls
dmsetup makes (linux/dm-ioctl.h, version 4), with no udev synchronisation,
and O_DIRECT reads and writes hashed here.

Requests, one a line, words separated by tabs:
    info NAME                      -> "ATTR:MINOR" (dmsetup's attr field:
                                      L live table, I inactive, s suspended,
                                      r/w), empty when there is no device
    create NAME [TABLE]            create; with a table also load and resume,
                                   and remove the device again if either
                                   fails (what dmsetup create does)
    load NAME TABLE | resume NAME | suspend NAME [noflush] | clear NAME
    remove NAME
    status NAME [inactive] | table NAME [inactive]  -> the target lines
    message NAME SECTOR TEXT       -> the target's answer, if any
    write DEV BLOCK COUNT          COUNT random 4 KiB blocks at BLOCK, O_DIRECT
                                   -> the first 16 hex digits of their sha256
    read DEV BLOCK COUNT           -> the same digest of what is read
    hex N                          -> N random bytes in hex
A TABLE is "START LEN TYPE PARAMS", one target.
Each answer is one line: "RC<TAB>TEXT", RC 0 or an errno, TEXT the result or
the error (newlines as " | "). EOF on stdin ends the server.
"""
import errno
import fcntl
import hashlib
import mmap
import os
import struct
import sys

DM_IOCTL = 0xfd
DM_NAME_LEN, DM_UUID_LEN = 128, 129
# struct dm_ioctl: version[3], data_size, data_start, target_count,
# open_count, flags, event_nr, padding, dev, name, uuid, data[7].
HDR = struct.Struct("=3IIIIiIII Q 128s 129s 7s")
SPEC = struct.Struct("=QQiI16s")	# struct dm_target_spec
assert HDR.size == 312 and SPEC.size == 40

(DM_VERSION, DM_REMOVE_ALL, DM_LIST_DEVICES, DM_DEV_CREATE, DM_DEV_REMOVE,
 DM_DEV_RENAME, DM_DEV_SUSPEND, DM_DEV_STATUS, DM_DEV_WAIT, DM_TABLE_LOAD,
 DM_TABLE_CLEAR, DM_TABLE_DEPS, DM_TABLE_STATUS, DM_LIST_VERSIONS,
 DM_TARGET_MSG) = range(15)

SUSPEND = 1 << 1
STATUS_TABLE = 1 << 4
ACTIVE_PRESENT = 1 << 5
INACTIVE_PRESENT = 1 << 6
BUFFER_FULL = 1 << 8
READONLY = 1 << 0
NOFLUSH = 1 << 11
QUERY_INACTIVE = 1 << 12
DATA_OUT = 1 << 16

BUF = 16384
BLOCK = 4096


def ioc(nr):
    # _IOWR(0xfd, nr, struct dm_ioctl)
    return (3 << 30) | (HDR.size << 16) | (DM_IOCTL << 8) | nr


class DmError(Exception):
    def __init__(self, err, what):
        super().__init__(what)
        self.errno = err


CONTROL = os.open("/dev/mapper/control", os.O_RDWR)


def dm(cmd, name, flags=0, payload=b""):
    """One ioctl; returns (header fields, the data area after data_start)."""
    size = HDR.size + max(len(payload), BUF)
    buf = bytearray(size)
    HDR.pack_into(buf, 0, 4, 0, 0, size, HDR.size, 0, 0, flags, 0, 0, 0,
                  name.encode(), b"", b"")
    buf[HDR.size:HDR.size + len(payload)] = payload
    if cmd == DM_TABLE_LOAD:
        struct.pack_into("=I", buf, 20, 1)	# target_count
    try:
        fcntl.ioctl(CONTROL, ioc(cmd), buf, True)
    except OSError as e:
        raise DmError(e.errno, "%s: %s" % (name, os.strerror(e.errno)))
    h = HDR.unpack_from(buf, 0)
    return h, bytes(buf[h[4]:h[3]])


def table_payload(table):
    w = table.split(None, 3)
    if len(w) < 3:
        raise DmError(errno.EINVAL, "bad table line: " + table)
    params = (w[3] if len(w) > 3 else "").encode() + b"\0"
    params += b"\0" * (-(SPEC.size + len(params)) % 8)
    return SPEC.pack(int(w[0]), int(w[1]), 0, 0, w[2].encode()) + params


def targets(data, count):
    """The target lines of a DM_TABLE_STATUS answer."""
    out, off = [], 0
    for _ in range(count):
        start, length, _st, nxt, ttype = SPEC.unpack_from(data, off)
        text = data[off + SPEC.size:].split(b"\0", 1)[0].decode()
        out.append("%d %d %s %s" % (start, length,
                                    ttype.split(b"\0", 1)[0].decode(), text))
        off = nxt
    return "\n".join(out)


def info(name):
    try:
        h, _ = dm(DM_DEV_STATUS, name)
    except DmError as e:
        if e.errno == errno.ENXIO:
            return ""
        raise
    flags, dev = h[7], h[10]
    attr = ("L" if flags & ACTIVE_PRESENT else "-") + \
        ("I" if flags & INACTIVE_PRESENT else "-") + \
        ("s" if flags & SUSPEND else "-") + \
        ("r" if flags & READONLY else "w")
    minor = (dev & 0xff) | ((dev >> 12) & 0xfff00)
    return "%s:%d" % (attr, minor)


def status(name, table, inactive):
    flags = (STATUS_TABLE if table else 0) | \
        (QUERY_INACTIVE if inactive else 0)
    h, data = dm(DM_TABLE_STATUS, name, flags)
    return targets(data, h[5])


def message(name, sector, text):
    payload = struct.pack("=Q", int(sector)) + text.encode() + b"\0"
    h, data = dm(DM_TARGET_MSG, name, 0, payload)
    if h[7] & DATA_OUT:
        return data.split(b"\0", 1)[0].decode()
    return ""


def create(name, table=None):
    dm(DM_DEV_CREATE, name)
    if table is None:
        return ""
    try:
        dm(DM_TABLE_LOAD, name, 0, table_payload(table))
        dm(DM_DEV_SUSPEND, name)	# resume
    except DmError:
        try:
            dm(DM_DEV_REMOVE, name)
        except DmError:
            pass
        raise
    return ""


ALIGNED = mmap.mmap(-1, 64 * BLOCK)	# page-aligned, for O_DIRECT


def blockio(write, dev, block, count):
    n = int(count) * BLOCK
    if n > len(ALIGNED):
        raise DmError(errno.EINVAL, "at most %d blocks" % (len(ALIGNED) // BLOCK))
    view = memoryview(ALIGNED)[:n]
    fd = os.open(dev, (os.O_WRONLY if write else os.O_RDONLY) | os.O_DIRECT)
    try:
        if write:
            view[:] = os.urandom(n)
            done = os.pwritev(fd, [view], int(block) * BLOCK)
        else:
            done = os.preadv(fd, [view], int(block) * BLOCK)
        if done != n:
            raise DmError(errno.EIO, "short %s: %d of %d bytes" %
                          ("write" if write else "read", done, n))
    finally:
        os.close(fd)
    return hashlib.sha256(view).hexdigest()[:16]


def serve(req):
    op, a = req[0], req[1:]
    if op == "info":
        return info(a[0])
    if op == "create":
        return create(a[0], a[1] if len(a) > 1 else None)
    if op == "load":
        dm(DM_TABLE_LOAD, a[0], 0, table_payload(a[1]))
        return ""
    if op == "resume":
        dm(DM_DEV_SUSPEND, a[0])
        return ""
    if op == "suspend":
        dm(DM_DEV_SUSPEND, a[0],
           SUSPEND | (NOFLUSH if a[1:] == ["noflush"] else 0))
        return ""
    if op == "clear":
        dm(DM_TABLE_CLEAR, a[0])
        return ""
    if op == "remove":
        dm(DM_DEV_REMOVE, a[0])
        return ""
    if op in ("status", "table"):
        return status(a[0], op == "table", a[1:] == ["inactive"])
    if op == "message":
        return message(a[0], a[1], a[2])
    if op in ("write", "read"):
        return blockio(op == "write", a[0], a[1], a[2])
    if op == "hex":
        return os.urandom(int(a[0])).hex()
    raise DmError(errno.EINVAL, "unknown request " + op)


def main():
    for line in sys.stdin:
        req = line.rstrip("\n").split("\t")
        try:
            rc, text = 0, serve(req)
        except DmError as e:
            rc, text = e.errno, str(e)
        except OSError as e:
            rc, text = e.errno or errno.EIO, str(e)
        except (IndexError, ValueError) as e:
            rc, text = errno.EINVAL, "bad request %r: %s" % (line, e)
        sys.stdout.write("%d\t%s\n" % (rc, text.replace("\n", " | ")))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
