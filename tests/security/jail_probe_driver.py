"""Started by `jailprobe.UnprivilegedProbe` as an unprivileged user: the host that is not root.

Reads {"code": ...} lines, runs each as a probe in a jailed worker, writes one JSON line per run.
"""

from __future__ import annotations

import json
import os
import sys

import anyio

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository root
sys.path.insert(0, HERE)

from jailprobe import LIMITS, probe_runtime  # noqa: E402

import sandbox  # noqa: E402


def main() -> None:
    runtime = probe_runtime()
    status = runtime.jail_status()
    print(json.dumps({"uid": os.getuid(), "pid": os.getpid(), "jail": status.to_json()}), flush=True)
    for line in sys.stdin:
        code = json.loads(line)["code"]

        async def go(code: str = code) -> sandbox.RunResult:
            return await runtime.run(code, bindings={}, limits=LIMITS)

        result = anyio.run(go)
        print(json.dumps({"value": result.value, "error": None if result.ok else str(result.error),
                          "jail": result.jail}), flush=True)
    runtime.close()


if __name__ == "__main__":
    main()
