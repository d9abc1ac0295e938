"""The in-process Python host: ``import hearth`` from the release wheel ../build.sh installs into
benches/.venv, sequential round trips of one method.

    benches/.venv/bin/python python_host.py REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE METHOD

The command line, the requests and what is timed are those of every driver (see bench.h).

How the main thread waits for the response that ``on_frame`` receives on the engine's
delivery thread: a ``queue.SimpleQueue``, with its bound ``put`` as the callback itself.
- ``put`` is a C function, so the delivery thread runs no Python bytecode while it holds the
  GIL, and hands the main thread the frame itself, which is checked there.
- ``get`` blocks on a lock with the GIL released, which the engine's thread needs to call
  ``put`` at all.
Measured on the benchmark machine (12 interleaved rounds of 3,000 requests each), median:
SimpleQueue 47 µs, a bare ``_thread.lock`` released by a lambda 68 µs, ``threading.Event``
78 µs, ``queue.Queue`` 83 µs. The lock carries no frame and still loses, because the lambda
runs bytecode on the delivery thread; Event and Queue are Python code over such locks.
"""

import queue
import sys
import time

import hearth

PREFIX = '{"jsonrpc":"2.0","id":'

# The params of each method a driver can time (bench.h says why these two).
PARAMS = {
    "initialize": '{"protocolVersion":1,"clientCapabilities":{}}',
    "session/list": "{}",
}


def response_id(frame: str) -> int:
    """Same check as ../common.h's response_id: a prefix, no JSON parser, so no host pays for one."""
    if not frame.startswith(PREFIX):
        return -1
    comma = frame.find(",", len(PREFIX))
    if comma < 0 or not frame.startswith(',"result":', comma):
        return -1
    digits = frame[len(PREFIX) : comma]
    return int(digits) if digits.isdigit() else -1


def request(request_id: int, method: str) -> str:
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}","params":{PARAMS[method]}}}'


def main() -> None:
    if len(sys.argv) != 6 or sys.argv[5] not in PARAMS:
        sys.exit("usage: python_host.py REQUESTS WARMUP SAMPLES_FILE CONFIG_FILE initialize|session/list")
    requests, warmup = int(sys.argv[1]), int(sys.argv[2])
    samples_path, config_path, method = sys.argv[3], sys.argv[4], sys.argv[5]
    with open(config_path, encoding="utf-8") as f:
        config = f.read()

    responses: queue.SimpleQueue[str] = queue.SimpleQueue()
    with hearth.Engine(config, responses.put) as engine:

        def round_trip(request_id: int, frame: str) -> None:
            engine.send(frame)
            response = responses.get()
            if response_id(response) != request_id:
                sys.exit(f"python_host: unexpected frame: {response}")

        # The engine answers nothing before `initialize`: one first, untimed, whatever METHOD is.
        round_trip(1, request(1, "initialize"))
        request_id = 2
        for _ in range(warmup):
            round_trip(request_id, request(request_id, method))
            request_id += 1
        samples = []
        for _ in range(requests):
            frame = request(request_id, method)  # built before the clock starts
            start = time.perf_counter_ns()  # CLOCK_MONOTONIC on Linux, like the C hosts
            round_trip(request_id, frame)
            samples.append(time.perf_counter_ns() - start)
            request_id += 1

    with open(samples_path, "w", encoding="utf-8") as f:
        f.writelines(f"{ns}\n" for ns in samples)


if __name__ == "__main__":
    main()
