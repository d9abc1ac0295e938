"""Turns the drivers' result files into the markdown table of README.md / results.md.

    python3 summarize.py RESULTS_DIR STORED_EVENTS EVENTS COMMAND

RESULTS_DIR holds `<host>.<round>.txt` files, each one line `FRAMES ELAPSED_NS
DELIVERY_CPU_NS MAIN_CPU_NS` (see README.md). Every run must have counted STORED_EVENTS
frames (what prepare.py found in the store); a run that did not fails the summary, since its
figure would be of some other work. EVENTS is what the data was asked to hold.

Standard library only, so it runs on the system python3.
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import report  # noqa: E402  (benches/report.py: machine, commit, toolchains)

# Row order, labels and targets (frames/s); the keys are the result files' names.
HOSTS = {
    "reference": ("reference: the engine's Rust `Host` trait, counting only (no binding)", None),
    "c": ("C, in-process (libhearth; `on_frame` on the delivery thread)", 500_000),
    "node": ("Node, in-process (hearth-acp; threadsafe function → `onFrame` on the JS thread)", 150_000),
    "python": ("Python, in-process (hearth; `on_frame` on the delivery thread, with the GIL)", 150_000),
}
REFERENCE = "reference"


class Run:
    def __init__(self, path: Path) -> None:
        frames, elapsed, delivery, main = (int(n) for n in path.read_text().split())
        self.frames = frames
        self.per_second = frames / (elapsed / 1e9)
        self.delivery_us = delivery / frames / 1000  # CPU per frame
        self.main_us = main / frames / 1000


def load(results: Path, host: str, expected: int) -> list[Run]:
    runs = [Run(path) for path in sorted(results.glob(f"{host}.*.txt"))]
    if not runs:
        sys.exit(f"summarize: no results for {host} in {results}")
    for run in runs:
        if run.frames != expected:
            sys.exit(f"summarize: a {host} run counted {run.frames} session/update frames, the store holds {expected}")
    return runs


def kilo(n: float) -> str:
    return f"{n / 1000:.0f}k"


def table(results: Path, expected: int) -> str:
    runs = {host: load(results, host, expected) for host in HOSTS}
    reference = statistics.median(r.per_second for r in runs[REFERENCE])
    lines = [
        "| host | frames/s (median) | min – max | ÷ reference | target | delivery thread CPU µs/frame "
        "| main thread CPU µs/frame | ceiling from CPU, frames/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for host, (label, target) in HOSTS.items():
        rates = [r.per_second for r in runs[host]]
        median = statistics.median(rates)
        delivery = statistics.median(r.delivery_us for r in runs[host])
        main = statistics.median(r.main_us for r in runs[host])
        busiest = max(delivery, main)
        ratio = "—" if host == REFERENCE else f"{median / reference:.2f}"
        cells = [
            label,
            kilo(median),
            f"{kilo(min(rates))} – {kilo(max(rates))}",
            ratio,
            "—" if target is None else f"≥ {kilo(target)}",
            f"{delivery:.2f}",
            f"{main:.2f}",
            kilo(1e6 / busiest) if busiest > 0 else "—",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit("usage: summarize.py RESULTS_DIR STORED_EVENTS EVENTS COMMAND")
    results, expected, events, command = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    rounds = len(list(results.glob(f"{REFERENCE}.*.txt")))
    print(f"""# Frame throughput: `session/update` frames of one `session/load` replay → the host

{table(results, expected)}

- command: `{command}`
- machine: {report.machine()}
- date: {report.now()}; commit {report.commit()}
- toolchains: {report.toolchains()}
- each run: a fresh engine on a fresh copy of one session of {expected} stored events (asked
  for {events}), `initialize`, then one timed `session/load`, whose {expected} replayed frames
  every run counted; {rounds} rounds that interleave the hosts (see README.md)""")


if __name__ == "__main__":
    main()
