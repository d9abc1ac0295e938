#!/usr/bin/env python3
"""How long a loopback TCP peer waits for the first byte, and for all of them, of one write of
N bytes, and of the same bytes written in pieces: the kernel's share of the turn bench's model
step (`core/benches/turn.rs`, steps part), which times a request from `send` to the tap seeing
its first byte. No Hearth in it. Run: `python3 benches/first_byte.py` (median of 300 each)."""

import socket
import statistics
import threading
import time

ROUNDS = 300


def timed(total: int, piece: int) -> tuple[float, float]:
    """Median µs from the write's start to the peer seeing its first byte, and all of them."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    sender = socket.create_connection(listener.getsockname())
    sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    receiver, _ = listener.accept()
    data = memoryview(b"x" * total)
    firsts, alls = [], []
    for _ in range(ROUNDS):
        seen = {}

        def receive() -> None:
            receiver.recv(5, socket.MSG_PEEK)
            seen["first"] = time.perf_counter_ns()
            got = 0
            while got < total:
                got += len(receiver.recv(1 << 20))
            seen["all"] = time.perf_counter_ns()

        reader = threading.Thread(target=receive)
        reader.start()
        time.sleep(0.001)  # the reader is waiting before the write starts
        start = time.perf_counter_ns()
        for at in range(0, total, piece):
            sender.sendall(data[at : at + piece])
        reader.join()
        firsts.append((seen["first"] - start) / 1000)
        alls.append((seen["all"] - start) / 1000)
    for s in (sender, receiver, listener):
        s.close()
    return statistics.median(firsts), statistics.median(alls)


def main() -> None:
    print("| bytes | written as | first byte seen, µs | all received, µs |")
    print("| ---: | --- | ---: | ---: |")
    for total, piece in [(30_000, 30_000), (450_000, 450_000), (450_000, 65_536)]:
        first, everything = timed(total, piece)
        how = "one write" if piece == total else f"pieces of {piece}"
        print(f"| {total} | {how} | {first:.1f} | {everything:.1f} |")


if __name__ == "__main__":
    main()
