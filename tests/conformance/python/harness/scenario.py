"""What every test module sets up: a temp dir, the mock LLM with a fixture's script, a data
dir, a project dir (the sessions' cwd), and Hearth processes on them."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from .fixtures import Fixture, load_fixture
from .hearth import Hearth
from .mock_llm import MockLlm
from .paths import hearth_path
from .schema import FrameSchemas


class Scenario:
    def __init__(self, work_dir: Path, fixture: Fixture, mock: MockLlm) -> None:
        self.work_dir = work_dir
        self.fixture = fixture
        self.mock = mock
        self.data_dir = work_dir / "data"
        #: The sessions' project dir on the host.
        self.project = work_dir / "project"
        self.project.mkdir()
        #: The cwd of the sessions as Hearth names it (paths.hearth_path): absolute, as ACP requires.
        self.cwd = hearth_path(self.project)
        #: every Hearth started, so all their frames get validated
        self.hearths: list[Hearth] = []
        self._exit_codes: dict[int, int | None] = {}
        #: Set once stop_and_validate() passed: only then is the temp dir removed.
        self.passed = False

    @classmethod
    async def start(cls, fixture_name: str, variables: dict[str, str] | None = None) -> Scenario:
        """``variables``: values for the fixture's ``{{name}}`` placeholders; ``{{workDir}}`` is
        always this scenario's temp dir."""
        work_dir = Path(tempfile.mkdtemp(prefix="hearth-conformance-"))
        fixture = load_fixture(fixture_name, {"workDir": str(work_dir), **(variables or {})})
        mock = await MockLlm.start(fixture.script, work_dir)
        return cls(work_dir, fixture, mock)

    async def hearth(self) -> Hearth:
        """Starts a Hearth on this scenario's data dir, with the fixture's extra config."""
        hearth = await Hearth.launch(
            self.work_dir, self.data_dir, self.mock.base_url, str(len(self.hearths) + 1), self.fixture.config
        )
        self.hearths.append(hearth)
        return hearth

    async def stop(self) -> None:
        """Stops every Hearth and the mock (their exit codes are kept for stop_and_validate)."""
        await self._stop_all()

    async def _stop_all(self) -> None:
        for hearth in self.hearths:
            if id(hearth) not in self._exit_codes:
                self._exit_codes[id(hearth)] = await hearth.stop()
        await self.mock.stop()

    async def stop_and_validate(self) -> None:
        """Stops every Hearth (each must exit 0 at EOF on stdin, unless it was killed) and the
        mock, then asserts that every frame every Hearth wrote validates against the schema.
        Each test module runs this as its last test so a bad frame counts as a failed test."""
        await self._stop_all()
        for hearth in self.hearths:
            if not hearth.killed:
                code = self._exit_codes[id(hearth)]
                assert code == 0, f"Hearth exits 0 at EOF on stdin, got {code} (log: {hearth.stderr_path})"
        schema = FrameSchemas.load()
        problems = [p for h in self.hearths for p in h.transcript.schema_problems(schema)]
        frames = sum(len(h.transcript.incoming()) for h in self.hearths)
        assert frames > 0, "Hearth wrote no frames at all"
        logs = ", ".join(str(h.stderr_path) for h in self.hearths)
        assert not problems, f"{len(problems)} of {frames} frames break the ACP schema (logs: {logs}):\n" + "\n".join(
            problems
        )
        self.passed = True

    async def cleanup(self) -> None:
        """Stops whatever still runs; the temp dir (with Hearth's logs) stays if anything failed."""
        await self._stop_all()
        if self.passed:
            shutil.rmtree(self.work_dir, ignore_errors=True)
        else:
            print(f"kept {self.work_dir} (Hearth logs, config, script) for diagnosis", file=sys.stderr)
