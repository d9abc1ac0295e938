"""Turns the drivers' result files into the markdown table of README.md / results.md.

    python3 summarize.py RESULTS_DIR STORED_EVENTS EVENTS PAUSE_MS COMMAND [BASE_REV]

RESULTS_DIR holds `<host>.<mode>.<round>.txt` files (mode `live` or `drained`), each one line
`FRAMES ELAPSED_NS DELIVERY_CPU_NS MAIN_CPU_NS` (see README.md). Every run must have counted
STORED_EVENTS frames (what prepare.py found in the store); a run that did not fails the
summary, since its figure would be of some other work. EVENTS is what the data was asked to
hold, PAUSE_MS the drained runs' pause. BASE_REV names the build benches/compare.sh compares
with, whose rows are `<host>@base` (the reference and C).

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
# The hosts benches/compare.sh also measures in the other build.
COMPARED = ("reference", "c")


class Run:
    def __init__(self, path: Path, drained: bool) -> None:
        frames, elapsed, delivery, main = (int(n) for n in path.read_text().split())
        self.frames = frames
        # A drained run's clock starts after the first frame, which its pause held up.
        self.per_second = (frames - drained) / (elapsed / 1e9)
        self.delivery_us = delivery / frames / 1000  # CPU per frame
        self.main_us = main / frames / 1000


def load(results: Path, host: str, mode: str, expected: int) -> list[Run]:
    runs = [Run(path, mode == "drained") for path in sorted(results.glob(f"{host}.{mode}.*.txt"))]
    if not runs:
        sys.exit(f"summarize: no {mode} results for {host} in {results}")
    for run in runs:
        # Right after the load's response the engine announces the session's commands
        # (`available_commands_update`, not in the store): a host that reads its count a moment
        # later has counted that one too.
        if run.frames not in (expected, expected + 1):
            sys.exit(f"summarize: a {mode} {host} run counted {run.frames} session/update frames, the store holds {expected}")
    return runs


def kilo(n: float) -> str:
    return f"{n / 1000:.0f}k"


def rates(runs: list[Run]) -> tuple[float, str]:
    """The median frames/s, and the cell showing it with the slowest and fastest run."""
    per_second = [r.per_second for r in runs]
    median = statistics.median(per_second)
    return median, f"{kilo(median)} ({kilo(min(per_second))} – {kilo(max(per_second))})"


def table(results: Path, expected: int, base_rev: str | None) -> str:
    hosts = report.with_base(HOSTS, COMPARED, base_rev)
    live = {host: load(results, host, "live", expected) for host in hosts}
    drained = {host: load(results, host, "drained", expected) for host in hosts}
    lines = [
        "| host | live frames/s: median (min – max) | ÷ reference | drained frames/s: median (min – max) "
        "| ÷ reference | target | delivery thread CPU µs/frame | main thread CPU µs/frame |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for host, (label, target) in hosts.items():
        live_median, live_cell = rates(live[host])
        drained_median, drained_cell = rates(drained[host])
        # Each host against the reference of its own build.
        reference = report.same_build(host, REFERENCE)
        is_reference = host == reference
        cells = [
            label,
            live_cell,
            "—" if is_reference else f"{live_median / rates(live[reference])[0]:.2f}",
            drained_cell,
            "—" if is_reference else f"{drained_median / rates(drained[reference])[0]:.2f}",
            "—" if target is None else f"≥ {kilo(target)}",
            f"{statistics.median(r.delivery_us for r in live[host]):.2f}",
            f"{statistics.median(r.main_us for r in live[host]):.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) not in (6, 7):
        sys.exit("usage: summarize.py RESULTS_DIR STORED_EVENTS EVENTS PAUSE_MS COMMAND [BASE_REV]")
    results, command = Path(sys.argv[1]), sys.argv[5]
    base_rev = sys.argv[6] if len(sys.argv) == 7 else None
    expected, events, pause_ms = (int(n) for n in sys.argv[2:5])
    rounds = len(list(results.glob(f"{REFERENCE}.live.*.txt")))
    print(f"""# Frame throughput: `session/update` frames of one `session/load` replay → the host

{table(results, expected, base_rev)}

- command: `{command}`
- machine: {report.machine()}
- date: {report.now()}; commit {report.commit()}
- toolchains: {report.toolchains()}
- each run: a fresh engine on a fresh copy of one session of {expected} stored events (asked
  for {events}), `initialize`, then one timed `session/load`, whose {expected} replayed frames
  every run counted. Live: from `send` to the response. Drained: the first frame's callback
  pauses {pause_ms} ms while the engine queues the rest; from its end to the response. CPU per
  frame: live runs. {rounds} rounds that interleave the hosts and modes (see README.md)""")


if __name__ == "__main__":
    main()
