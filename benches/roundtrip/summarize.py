"""Turns the drivers' sample files into the markdown table of README.md / results.md.

    python3 summarize.py SAMPLES_DIR WARMUP COMMAND

SAMPLES_DIR holds `<host>.<round>.txt` files, one latency in nanoseconds per line (see
bench.h). All rounds of a host are pooled. One definition of the statistics for every host,
here, rather than one per language: the nearest-rank percentile (the smallest sample with at
least p % of the samples at or below it), the median being p = 50.

Standard library only, so it runs on the system python3.
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import report  # noqa: E402  (benches/report.py: machine, commit, toolchains)

# Row order and labels; the keys are the sample files' names. Every host is compared with
# `stdio`; `pingpong` is the reference row without Hearth, compared with nothing.
HOSTS = {
    "c": "C, in-process (libhearth; condvar wait)",
    "node": "Node, in-process (hearth-acp; napi threadsafe function → Promise)",
    "python": "Python, in-process (hearth; pyo3, SimpleQueue)",
    "stdio": "stdio (`hearth acp` child; pipes, C driver)",
    "pingpong": "reference, no Hearth: two C threads hand a request back and forth (condvar)",
}
REFERENCE = "pingpong"


def percentile(sorted_samples: list[int], p: float) -> int:
    rank = max(1, math.ceil(p / 100 * len(sorted_samples)))
    return sorted_samples[rank - 1]


def load(samples_dir: Path, host: str) -> list[int]:
    samples: list[int] = []
    for path in sorted(samples_dir.glob(f"{host}.*.txt")):
        samples += (int(line) for line in path.read_text().split())
    if not samples:
        sys.exit(f"summarize: no samples for {host} in {samples_dir}")
    return sorted(samples)


def table(samples_dir: Path) -> str:
    stats = {}
    for host in HOSTS:
        samples = load(samples_dir, host)
        stats[host] = (percentile(samples, 50), percentile(samples, 99), len(samples))
    stdio_median = stats["stdio"][0]
    lines = [
        "| host | median µs | p99 µs | requests | stdio ÷ host (median) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for host, label in HOSTS.items():
        median, p99, count = stats[host]
        ratio = "—" if host == REFERENCE else f"{stdio_median / median:.2f}"
        lines.append(f"| {label} | {median / 1000:.1f} | {p99 / 1000:.1f} | {count} | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit("usage: summarize.py SAMPLES_DIR WARMUP COMMAND")
    samples_dir, warmup, command = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rounds = len(list(samples_dir.glob("stdio.*.txt")))
    print(f"""# Round-trip latency: one `initialize` request → its response

{table(samples_dir)}

- command: `{command}`
- machine: {report.machine()}
- date: {report.now()}; commit {report.commit()}
- toolchains: {report.toolchains()}
- sequential requests (the next one goes out once the previous response is in), in {rounds}
  rounds that interleave the hosts, each driver process warmed up with {warmup} requests
  first (see README.md)""")


if __name__ == "__main__":
    main()
