"""Turns the drivers' sample files into the markdown table of README.md / results.md.

    python3 summarize.py SAMPLES_DIR WARMUP SESSIONS COMMAND [BASE_REV]

SAMPLES_DIR holds `<host>.<method>.<round>.txt` files, one latency in nanoseconds per line
(see bench.h); METHOD is `initialize` or `list` (`session/list`). All rounds of a host's
method are pooled. SESSIONS is how many sessions the store held. BASE_REV names the build
benches/compare.sh compares with, whose rows are `<host>@base` (C and stdio). One definition of the statistics for every host,
here, rather than one per language: the nearest-rank percentile (the smallest sample with at
least p % of the samples at or below it), the median being p = 50.

Standard library only, so it runs on the system python3.
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import report  # noqa: E402  (benches/report.py: machine, commit, toolchains)

# Row order, labels and the methods each row times; the keys are the sample files' names.
# Every host is compared with `stdio`. The two references are compared with nothing:
# `pingpong` is the thread hand-offs without Hearth, `query` the list's SQLite query without
# the engine (the figure that `session/list` − `initialize` is to be read against).
BOTH = ("initialize", "list")
HOSTS = {
    "c": ("C, in-process (libhearth; condvar wait)", BOTH),
    "node": ("Node, in-process (hearth-acp; napi threadsafe function → Promise)", BOTH),
    "python": ("Python, in-process (hearth; pyo3, SimpleQueue)", BOTH),
    "stdio": ("stdio (`hearth acp` child; pipes, C driver)", BOTH),
    "pingpong": ("reference, no Hearth: two C threads hand a request back and forth (condvar)", ("initialize",)),
    "query": ("reference, no engine: the list's page query alone (SQLite via rusqlite, read-only connection)", ("list",)),
}
REFERENCES = ("pingpong", "query")
# The hosts benches/compare.sh also measures in the other build.
COMPARED = ("c", "stdio")


def percentile(sorted_samples: list[int], p: float) -> int:
    rank = max(1, math.ceil(p / 100 * len(sorted_samples)))
    return sorted_samples[rank - 1]


def load(samples_dir: Path, run: str) -> list[int]:
    samples: list[int] = []
    for path in sorted(samples_dir.glob(f"{run}.*.txt")):
        samples += (int(line) for line in path.read_text().split())
    if not samples:
        sys.exit(f"summarize: no samples for {run} in {samples_dir}")
    return sorted(samples)


def micros(ns: int) -> str:
    return f"{ns / 1000:.1f}"


def table(samples_dir: Path, base_rev: str | None) -> str:
    hosts = report.with_base(HOSTS, COMPARED, base_rev)
    # (host, method) → (median, p99, count), in ns
    stats = {}
    for host, (_, methods) in hosts.items():
        for method in methods:
            samples = load(samples_dir, f"{host}.{method}")
            stats[host, method] = (percentile(samples, 50), percentile(samples, 99), len(samples))
    lines = [
        "| host | `initialize` median µs | p99 µs | `session/list` median µs | p99 µs "
        "| list − initialize (medians) µs | requests per method | stdio ÷ host (`initialize` median) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for host, (label, methods) in hosts.items():
        init, listed = stats.get((host, "initialize")), stats.get((host, "list"))
        cells = [label]
        for figures in (init, listed):
            cells += [micros(figures[0]), micros(figures[1])] if figures else ["—", "—"]
        cells.append(micros(listed[0] - init[0]) if init and listed else "—")
        cells.append(str(max(stats[host, method][2] for method in methods)))
        # Each host against stdio of its own build.
        stdio_median = stats[report.same_build(host, "stdio"), "initialize"][0]
        cells.append("—" if host in REFERENCES else f"{stdio_median / init[0]:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: summarize.py SAMPLES_DIR WARMUP SESSIONS COMMAND [BASE_REV]")
    samples_dir, warmup, sessions, command = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    base_rev = sys.argv[5] if len(sys.argv) == 6 else None
    rounds = len(list(samples_dir.glob("stdio.initialize.*.txt")))
    print(f"""# Round-trip latency: one request → its response (`initialize`, `session/list`)

{table(samples_dir, base_rev)}

- command: `{command}`
- machine: {report.machine()}
- date: {report.now()}; commit {report.commit()}
- toolchains: {report.toolchains()}
- sequential requests (the next one goes out once the previous response is in), in {rounds}
  rounds that interleave the hosts and methods, each driver process warmed up with {warmup}
  requests first (see README.md)
- every engine opens one file store of {sessions} sessions made with `session/new`;
  `session/list` answers its first page (50 sessions and a `nextCursor`)""")


if __name__ == "__main__":
    main()
