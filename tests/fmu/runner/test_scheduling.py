"""Scheduling of runs over the workers: the parent reads each worker's messages in bulk."""

from __future__ import annotations

import os
import socket
import struct
from multiprocessing.connection import Connection

from fmu_surrogate.fmu.runner.scheduling import _Inbox


def test_inbox_reads_every_message_whole_however_the_bytes_arrive():
    """Messages framed as ``multiprocessing.connection`` frames them (pickled control messages
    and records alike) come out whole and in order, whether several arrive in one read or one
    arrives over several reads; the end of the connection drops a message cut short (its
    sender died while writing it) after the whole ones."""
    a, b = socket.socketpair()
    sender = Connection(a.detach())
    fd = b.fileno()
    inbox = _Inbox()
    try:
        sender.send(("ready", 1))  # a pickled control message
        sender.send_bytes(b"x" * 5)
        sender.send_bytes(b"")
        got = inbox.read(fd)
        assert [len(m) for m in got[1:]] == [5, 0] and got[1] == b"xxxxx"
        big = os.urandom(600_000)  # more than one read takes
        frame = struct.pack("!i", len(big)) + big
        os.write(sender.fileno(), frame[:3])  # not even the length header yet
        assert inbox.read(fd) == []
        pieces = []
        os.write(sender.fileno(), frame[3:100])
        pieces += inbox.read(fd)
        rest = memoryview(frame)[100:]
        while rest:
            n = os.write(sender.fileno(), rest[:50_000])
            rest = rest[n:]
            pieces += inbox.read(fd)
        assert pieces == [big]
        long_frame = struct.pack("!iQ", -1, 3) + b"abc"  # the header of messages above 2 GiB
        os.write(sender.fileno(), long_frame + struct.pack("!i", 10) + b"cut")
        assert inbox.read(fd) == [b"abc"]
        sender.close()
        assert inbox.read(fd) is None  # the end: the piece of the last message is dropped
    finally:
        b.close()
