"""The table of benches/sessions/run.sh: frames per second into each host while SESSIONS
sessions stream at once. Each result file holds "FRAMES NANOSECONDS" of one run.

    summarize.py RESULTS_DIR SESSIONS WORDS COMMAND
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import report  # noqa: E402

LABELS = {
    "c": "C, in-process (libhearth; on_frame, mutex)",
    "node": "Node, in-process (hearth-acp; onFrame, JSON.parse per frame)",
}


def main() -> None:
    results, sessions, words, command = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    print(f"# {sessions} sessions streaming at once into one host ({words} words each)\n")
    print("| host | frames/s median | min | max | frames per run | first prompt → last answer, median ms | runs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for host, label in LABELS.items():
        runs = [tuple(map(int, f.read_text().split())) for f in sorted(results.glob(f"{host}.*.txt"))]
        if not runs:
            continue
        rates = [frames / (ns / 1e9) for frames, ns in runs]
        frames = statistics.median(f for f, _ in runs)
        ms = statistics.median(ns for _, ns in runs) / 1e6
        print(
            f"| {label} | {statistics.median(rates):,.0f} | {min(rates):,.0f} | {max(rates):,.0f} "
            f"| {frames:,.0f} | {ms:,.1f} | {len(runs)} |"
        )
    print()
    print(f"- command: `{command}`")
    print(f"- machine: {report.machine()}")
    print(f"- date: {report.now()}; commit {report.commit()}")
    print(f"- toolchains: {report.toolchains()}")
    print(
        "- every run checked each session's chunks complete and in order, and each prompt "
        "answered once, after its last chunk"
    )


if __name__ == "__main__":
    main()
