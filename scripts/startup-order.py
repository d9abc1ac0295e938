#!/usr/bin/env python3
"""The functions `hearth acp` runs from exec until it has answered `initialize` and a
`session/list` (a client's first requests; the agent's store, runtime and threads start between
them), for the linker.

`cli/build.rs` hands `cli/startup-order.txt` to the linker (`--symbol-ordering-file`), which
places those functions side by side. Start-up then touches about 1 MB of code instead of
code strewn over the whole 17 MB, and the kernel maps (and counts in RSS) only the pages
around what ran: `benches/README.md`, "Cold start". The list is x86_64 Linux's.

    scripts/startup-order.py record   # rebuild the list from the release `hearth` (valgrind)
    scripts/startup-order.py check    # does the release `hearth` still follow the list?

The names are the compiler's mangled ones. They hold across code changes, but not across a
new Rust toolchain or new versions of the dependencies that define them: `check` (run by
`benches/run.sh`) fails when the list has gone stale, and `record` renews it. Some names
are one build's only, and `check` does not count them: LLVM's `.llvm.<hash>` (a hash of
the code unit, its paths included) and GCC's clones in the C code (`.constprop.0`, ...).
"""

import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ORDER = REPO / "cli" / "startup-order.txt"
REQUESTS = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize",'
    '"params":{"protocolVersion":1,"clientCapabilities":{}}}\n'
    '{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}\n'
)
# What `check` accepts: most of the list is still in the binary, and what is there is packed.
LEAST_FOUND = 0.9
MOST_SPAN = 2 * 1024 * 1024
# The names another build (another checkout path, another GCC) may not reproduce.
ONE_BUILDS = re.compile(r"\.llvm\.\d+|\.(constprop|isra|part|cold)\.\d+")


def release_hearth() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    return target / "release" / "hearth"


def record(hearth: Path) -> None:
    """Builds `hearth` as the release build does (`scripts/lib/release-build.sh`: the symbol
    names depend on the features the build's packages unify), runs `hearth acp` under
    callgrind through `REQUESTS` and EOF, on a new store and then on the same
    store again, and writes the names of the binary's own functions that ran (every thread)."""
    subprocess.run(
        ["bash", "-c", "source scripts/lib/common.sh && source scripts/lib/release-build.sh "
         "&& release_build_native"],
        cwd=REPO, check=True,
    )
    names = set()
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "config.json"
        # A file store and a provider, as an editor's user has them.
        config.write_text(
            '{"dataDir": "%s", "providers": {"openai": {"baseUrl": "http://127.0.0.1:9/v1", '
            '"apiKey": "unused"}}}' % (Path(scratch) / "data")
        )
        profile = Path(scratch) / "callgrind.out"
        for _ in ("a new store", "the store reopened"):
            subprocess.run(
                [
                    "valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
                    f"--callgrind-out-file={profile}", str(hearth), "acp", "--config", str(config),
                ],
                input=REQUESTS, text=True, capture_output=True, check=True,
            )
            names |= functions_of(profile, hearth)
    if not names:
        sys.exit(f"callgrind saw no function of {hearth} run: nothing written")
    ORDER.write_text("".join(f"{name}\n" for name in sorted(names)))
    print(f"{ORDER.relative_to(REPO)}: {len(names)} functions")


def functions_of(profile: Path, binary: Path) -> set:
    """The named functions callgrind saw run in `binary` (`ob=` then `fn=` lines)."""
    names, current, binary = set(), None, binary.resolve()
    for line in profile.read_text().splitlines():
        if line.startswith("ob="):
            current = Path(line[3:]).resolve()
        elif line.startswith("fn=") and current == binary:
            # `'2`: callgrind's mark for a function's recursive calls.
            name = line[3:].split("'")[0]
            # Unnamed code (an address) and callgrind's own "(below main)".
            if not name.startswith(("0x", "(")):
                names.add(name)
    return names


def check(hearth: Path) -> int:
    """Fails when the binary defines too few of the listed functions, or does not keep the
    ones it defines together (the ordering did not reach the linker)."""
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        print("startup order: x86_64 Linux's only; nothing to check here")
        return 0
    if not hearth.exists():
        print(f"startup order: no {hearth}: build it first (scripts/lib/release-build.sh)")
        return 1
    listed = {name for name in ORDER.read_text().split() if not ONE_BUILDS.search(name)}
    nm = subprocess.run(
        ["nm", "--defined-only", str(hearth)], capture_output=True, text=True, check=True
    ).stdout
    # A generic function may be defined once per codegen unit: every copy counts.
    defined = {}
    for parts in (line.split() for line in nm.splitlines()):
        if len(parts) == 3 and parts[1] in "tTwW":
            defined.setdefault(parts[2], []).append(int(parts[0], 16))
    found = [name for name in listed if name in defined]
    addresses = [address for name in found for address in defined[name]]
    span = max(addresses) - min(addresses) if addresses else 0
    print(
        f"startup order: {len(found)} of the {len(listed)} functions every build names "
        f"found in {hearth}, "
        f"spanning {span // 1024} KiB"
    )
    if not listed or len(found) < LEAST_FOUND * len(listed):
        print("the list is stale (a new toolchain or dependencies): run scripts/startup-order.py record")
        return 1
    if span > MOST_SPAN:
        print("the functions are not together: the linker did not get cli/startup-order.txt")
        return 1
    return 0


def main() -> int:
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    hearth = release_hearth()
    if command == "record":
        record(hearth)
        return 0
    if command == "check":
        return check(hearth)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
