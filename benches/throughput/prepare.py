"""Makes the data directory every throughput driver replays: one session whose event log holds
about EVENTS events, written by the real engine (`hearth run`) against the scripted mock LLM.

    python3 prepare.py EVENTS BIN_DIR DATA_DIR

BIN_DIR holds the release `hearth` and `hearth-mock-llm`. Prints `SESSION_ID STORED_EVENTS`:
the session to load and how many of its stored events carry a `session/update`, which is the
number of frames its replay must produce.

The turn: the model calls the `todo` tool EVENTS / 4 times in one response, then says "done".
Each call stores four events (the tool call, its in-progress and completed updates, the plan);
the prompt, the title and the answer add three. The session's workspace is /tmp, as in the
drivers' `session/load`. `todo` touches no file and asks no permission,
so the turn runs as fast as the engine can store it.

Standard library only, so it runs on the system python3.
"""

import json
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path


def script(events: int) -> dict:
    todo = json.dumps({"todos": [{"content": "step", "status": "pending"}]})
    calls = [{"toolCall": {"id": f"c{i}", "name": "todo", "arguments": todo}} for i in range(max(1, events // 4))]
    return {"responses": [{"events": calls}, {"events": [{"text": "done"}]}]}


def record_turn(events: int, bin_dir: Path, data_dir: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        script_path = Path(scratch, "script.json")
        script_path.write_text(json.dumps(script(events)))
        # The mock serves until its stdin closes, and prints its base URL first.
        with subprocess.Popen(
            [bin_dir / "hearth-mock-llm", "--script", script_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        ) as mock:
            assert mock.stdin and mock.stdout
            base_url = mock.stdout.readline().strip()
            config = Path(scratch, "config.json")
            # A window no recording fills: past 80% of the default 128,000 tokens (from about
            # 15,000 events on) the turn would compact its context and ask the model for a
            # summary the script does not have.
            config.write_text(
                json.dumps(
                    {
                        "providers": {"openai": {"baseUrl": base_url, "apiKey": "bench", "maxRetries": 0}},
                        "models": [{"id": "bench", "contextWindow": 1_000_000_000}],
                    }
                )
            )
            run = subprocess.run(
                [bin_dir / "hearth", "run", "-p", "plan", "--config", config, "--data-dir", data_dir]
                + ["--model", "bench", "--mode", "bypass", "--cwd", "/tmp", "--output", "jsonl"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            mock.stdin.close()
        if run.returncode != 0:
            sys.exit(f"prepare: hearth run failed ({run.returncode}):\n{run.stderr}")


def stored(data_dir: Path) -> tuple[str, int]:
    """The session and its count of events that replay as a `session/update`, read from the
    store itself (read-only), so the drivers' counts are checked against the source."""
    with closing(sqlite3.connect(f"file:{data_dir / 'hearth.db'}?mode=ro", uri=True)) as db:
        sessions = [row[0] for row in db.execute("SELECT id FROM sessions")]
        if len(sessions) != 1:
            sys.exit(f"prepare: expected one session in {data_dir}, found {len(sessions)}")
        (count,) = db.execute(
            "SELECT count(*) FROM events WHERE session_id = ? AND update_json IS NOT NULL", sessions
        ).fetchone()
    return sessions[0], count


def main() -> None:
    if len(sys.argv) != 4 or not sys.argv[1].isdigit():
        sys.exit("usage: prepare.py EVENTS BIN_DIR DATA_DIR")
    events, bin_dir, data_dir = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    record_turn(events, bin_dir, data_dir)
    session, count = stored(data_dir)
    print(session, count)


if __name__ == "__main__":
    main()
