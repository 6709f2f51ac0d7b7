#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""holdnbd.py: an NBD server that can hold back its replies to reads.

    holdnbd.py FILE PORT CONTROL LOG

Serves FILE (one export, any name) on 127.0.0.1:PORT to one client. A read
whose range meets the byte range in CONTROL ("OFFSET LENGTH MS"; empty or
missing: none) is served from FILE at once, as any read, but its reply is
sent MS milliseconds later; other requests are answered at once, out of
order with the held ones, as NBD allows. A device that samples the data of
a read when the read arrives and completes it later is what dm-delay cannot
give (it holds the bio, so the data is read when it is let go), and what a
test needs to make an origin read return data older than a write that
completed before the read did. Each held read is logged to LOG as
"held OFFSET LENGTH" when its data has been read, "released ..." when
answered. Every request is traced on stdout, with the time.

Speaks the fixed newstyle handshake (NBD_OPT_GO or NBD_OPT_EXPORT_NAME) and
the simple reply form: READ, WRITE (FUA), FLUSH, TRIM (acknowledged, not
passed on), DISC.
"""

import os
import socket
import time
import struct
import sys
import threading

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
REPLY_MAGIC = 0x3E889045565A9
REQ_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698

FLAG_FIXED_NEWSTYLE = 1
FLAG_NO_ZEROES = 2
OPT_EXPORT_NAME, OPT_ABORT, OPT_GO = 1, 2, 7
REP_ACK, REP_INFO = 1, 3
REP_ERR_UNSUP = (1 << 31) | 1
INFO_EXPORT = 0
TFLAG_HAS_FLAGS, TFLAG_SEND_FLUSH, TFLAG_SEND_FUA, TFLAG_SEND_TRIM = 1, 4, 8, 32
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM = 0, 1, 2, 3, 4
CMD_FLAG_FUA = 1
EINVAL = 22


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        if not part:
            raise EOFError
        buf += part
    return bytes(buf)


class Server:
    def __init__(self, path, control, log):
        self.fd = os.open(path, os.O_RDWR)
        self.size = os.fstat(self.fd).st_size
        self.control = control
        self.log = open(log, "a", buffering=1)
        self.send_lock = threading.Lock()
        self.timers = []

    def hold(self, offset, length):
        """Milliseconds to hold a read of [offset, offset + length)."""
        try:
            with open(self.control) as f:
                words = f.read().split()
        except FileNotFoundError:
            return 0
        if len(words) != 3:
            return 0
        start, size, ms = (int(w) for w in words)
        if offset < start + size and start < offset + length:
            return ms
        return 0

    def handshake(self, sock):
        sock.sendall(struct.pack(">QQH", NBDMAGIC, IHAVEOPT,
                                 FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES))
        (cflags,) = struct.unpack(">I", recv_exact(sock, 4))
        tflags = (TFLAG_HAS_FLAGS | TFLAG_SEND_FLUSH | TFLAG_SEND_FUA |
                  TFLAG_SEND_TRIM)
        while True:
            magic, opt, length = struct.unpack(">QII", recv_exact(sock, 16))
            data = recv_exact(sock, length)
            if magic != IHAVEOPT:
                raise ValueError("bad option magic")
            if opt == OPT_EXPORT_NAME:
                sock.sendall(struct.pack(">QH", self.size, tflags) +
                             (b"" if cflags & FLAG_NO_ZEROES else bytes(124)))
                return
            if opt == OPT_GO:
                info = struct.pack(">HQH", INFO_EXPORT, self.size, tflags)
                sock.sendall(struct.pack(">QIII", REPLY_MAGIC, opt, REP_INFO,
                                         len(info)) + info)
                sock.sendall(struct.pack(">QIII", REPLY_MAGIC, opt, REP_ACK, 0))
                return
            if opt == OPT_ABORT:
                sock.sendall(struct.pack(">QIII", REPLY_MAGIC, opt, REP_ACK, 0))
                raise EOFError
            sock.sendall(struct.pack(">QIII", REPLY_MAGIC, opt,
                                     REP_ERR_UNSUP, 0))

    def reply(self, sock, handle, error, data=b""):
        with self.send_lock:
            sock.sendall(struct.pack(">IIQ", SIMPLE_REPLY_MAGIC, error,
                                     handle) + data)

    def release(self, sock, handle, offset, length, data):
        self.log.write("released %d %d\n" % (offset, length))
        self.reply(sock, handle, 0, data)

    def serve(self, sock):
        self.handshake(sock)
        while True:
            magic, flags, cmd, handle, offset, length = struct.unpack(
                ">IHHQQI", recv_exact(sock, 28))
            if magic != REQ_MAGIC:
                raise ValueError("bad request magic")
            print("%.3f cmd %d flags %#x offset %d length %d" %
                  (time.monotonic(), cmd, flags, offset, length), flush=True)
            if cmd == CMD_DISC:
                return
            if cmd == CMD_WRITE:
                data = recv_exact(sock, length)
            if cmd in (CMD_READ, CMD_WRITE, CMD_TRIM) and \
                    offset + length > self.size:
                self.reply(sock, handle, EINVAL,
                           bytes(length) if cmd == CMD_READ else b"")
                continue
            if cmd == CMD_READ:
                data = os.pread(self.fd, length, offset)
                ms = self.hold(offset, length)
                if ms:
                    self.log.write("held %d %d\n" % (offset, length))
                    t = threading.Timer(ms / 1000.0, self.release,
                                        (sock, handle, offset, length, data))
                    t.start()
                    self.timers.append(t)
                else:
                    self.reply(sock, handle, 0, data)
            elif cmd == CMD_WRITE:
                os.pwrite(self.fd, data, offset)
                if flags & CMD_FLAG_FUA:
                    os.fsync(self.fd)
                self.reply(sock, handle, 0)
            elif cmd == CMD_FLUSH:
                os.fsync(self.fd)
                self.reply(sock, handle, 0)
            elif cmd == CMD_TRIM:
                self.reply(sock, handle, 0)
            else:
                self.reply(sock, handle, EINVAL)


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: holdnbd.py FILE PORT CONTROL LOG")
    server = Server(sys.argv[1], sys.argv[3], sys.argv[4])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(sys.argv[2])))
    listener.listen(1)
    sock, _ = listener.accept()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        server.serve(sock)
    except EOFError:
        pass
    for t in server.timers:
        t.join()
    sock.close()


if __name__ == "__main__":
    main()
