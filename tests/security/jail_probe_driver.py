"""Started by `jailprobe.UnprivilegedProbe` as an unprivileged user: the host that is not root.

Reads {"code": ...} lines, runs each as a probe in a jailed worker, writes one JSON line per run;
{"session": [first, second, idle]} runs two probes in one session (`jailprobe.probe_session`).
"""

from __future__ import annotations

import json
import os
import sys

import anyio

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository root
sys.path.insert(0, HERE)

from jailprobe import probe_once, probe_runtime, probe_session  # noqa: E402


def main() -> None:
    runtime = probe_runtime()
    status = runtime.jail_status()
    print(json.dumps({"uid": os.getuid(), "pid": os.getpid(), "jail": status.to_json()}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if "session" in request:
            answer = anyio.run(probe_session, runtime, *request["session"])
        else:
            answer = anyio.run(probe_once, runtime, request["code"])
        print(json.dumps(answer), flush=True)
    runtime.close()


if __name__ == "__main__":
    main()
