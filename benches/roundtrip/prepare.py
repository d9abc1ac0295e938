"""Makes the store every round-trip driver's engine opens: SESSIONS sessions, created through
`hearth acp` with `session/new` the way a client creates them, so that `session/list` has
rows to page through (more than one page: the engine pages by 50).

    python3 prepare.py SESSIONS HEARTH_BINARY CONFIG_FILE

CONFIG_FILE is the drivers' config; its `dataDir` is where the store goes. `session/new` calls
no model: the config's provider only needs a credential. Prints the count of sessions the
store holds, read from the store itself (read-only), so the figure is checked against the
source.

Standard library only, so it runs on the system python3.
"""

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path


def create_sessions(sessions: int, hearth: Path, config: Path) -> None:
    with subprocess.Popen(
        [hearth, "acp", "--config", config], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as agent:
        assert agent.stdin and agent.stdout

        def call(request_id: int, method: str, params: dict) -> None:
            frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            agent.stdin.write(json.dumps(frame) + "\n")
            agent.stdin.flush()
            for line in agent.stdout:  # notifications may come first
                message = json.loads(line)
                if message.get("id") == request_id:
                    if "result" not in message:
                        sys.exit(f"prepare: {method} failed: {line.strip()}")
                    return
            sys.exit(f"prepare: hearth acp ended before answering {method}")

        call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        for request_id in range(1, sessions + 1):
            call(request_id, "session/new", {"cwd": "/tmp", "mcpServers": []})
        agent.stdin.close()  # EOF: the engine commits what it answered and exits
    if agent.returncode != 0:
        sys.exit(f"prepare: hearth acp exited with {agent.returncode}")


def stored(data_dir: Path) -> int:
    with closing(sqlite3.connect(f"file:{data_dir / 'hearth.db'}?mode=ro", uri=True)) as db:
        (count,) = db.execute("SELECT count(*) FROM sessions").fetchone()
    return count


def main() -> None:
    if len(sys.argv) != 4 or not sys.argv[1].isdigit():
        sys.exit("usage: prepare.py SESSIONS HEARTH_BINARY CONFIG_FILE")
    sessions, hearth, config = int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    create_sessions(sessions, hearth, config)
    count = stored(Path(json.loads(config.read_text())["dataDir"]))
    if count != sessions:
        sys.exit(f"prepare: the store holds {count} sessions, not {sessions}")
    print(count)


if __name__ == "__main__":
    main()
