"""The in-process Python host of the throughput harness: ``import hearth`` from the release
wheel (benches/.venv), one engine on a copy of the prepared data directory, one
``session/load`` whose replayed ``session/update`` frames are counted (see README.md).

    benches/.venv/bin/python python_host.py CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE

``on_frame`` does what every driver's callback does and no more: a prefix check and a count,
and for a response, the clock and a wake-up of the main thread. It is plain Python, the
callback a Python host would write, and it runs on the engine's delivery thread with the GIL.
The main thread waits in ``Event.wait``, with the GIL released. Writes
``FRAMES ELAPSED_NS DELIVERY_CPU_NS MAIN_CPU_NS`` to RESULT_FILE, like every driver.
PAUSE_MS > 0 is the drained mode: the first frame's callback sleeps that long, so the engine
queues the rest of the replay meanwhile, and the clock starts when it wakes.
"""

import json
import os
import sys
import threading
import time

import hearth

UPDATE = '{"jsonrpc":"2.0","method":"session/update",'


class Counter:
    def __init__(self, pause_ms: int) -> None:
        self.pause = pause_ms / 1000
        self.resumed_ns: int | None = None
        self.updates = 0
        self.expected = ""  # the prefix of the response awaited
        self.answered_ns = 0
        self.answered = threading.Event()
        self.unexpected: str | None = None

    def on_frame(self, frame: str) -> None:
        if frame.startswith(UPDATE):
            if self.updates == 0 and self.pause:
                time.sleep(self.pause)
                self.resumed_ns = time.perf_counter_ns()
            self.updates += 1
        elif frame.startswith(self.expected):
            self.answered_ns = time.perf_counter_ns()
            self.answered.set()
        else:
            self.unexpected = frame
            self.answered.set()


def thread_cpu() -> tuple[int, int]:
    """On-CPU nanoseconds so far of the engine's delivery thread and of the main thread, from
    the kernel's per-thread accounting (/proc/self/task/TID/schedstat)."""
    delivery = main = 0
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f:
            ns = int(f.read().split()[0])
        if int(tid) == os.getpid():
            main += ns
        else:
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8") as f:
                if f.read().rstrip("\n") == "hearth-delivery":
                    delivery += ns
    return delivery, main


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit("usage: python_host.py CONFIG_FILE SESSION_ID PAUSE_MS RESULT_FILE")
    config_path, session_id, pause_ms, result_path = sys.argv[1:]
    with open(config_path, encoding="utf-8") as f:
        config = f.read()

    counter = Counter(int(pause_ms))
    with hearth.Engine(config, counter.on_frame) as engine:

        def call(request_id: int, method: str, params: dict) -> int:
            """Sends the request; returns when its response arrived (perf_counter_ns)."""
            counter.expected = f'{{"jsonrpc":"2.0","id":{request_id},"result":'
            counter.answered.clear()
            engine.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
            counter.answered.wait()
            if counter.unexpected is not None:
                sys.exit(f"python_host: unexpected frame: {counter.unexpected}")
            return counter.answered_ns

        call(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        delivery_before, main_before = thread_cpu()
        started = time.perf_counter_ns()  # CLOCK_MONOTONIC on Linux, like the C hosts
        answered = call(2, "session/load", {"sessionId": session_id, "cwd": "/tmp", "mcpServers": []})
        delivery_after, main_after = thread_cpu()

    with open(result_path, "w", encoding="utf-8") as f:
        cpu = f"{delivery_after - delivery_before} {main_after - main_before}"
        f.write(f"{counter.updates} {answered - (counter.resumed_ns or started)} {cpu}\n")


if __name__ == "__main__":
    main()
