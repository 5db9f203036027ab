"""``codemode doctor``: which jail layers confine the worker backend on this host, and for each
one, in one line, what it stops and what is lost without it (``--json``: the same as data)."""

from __future__ import annotations

import json
from typing import TextIO

import sandbox
from sandbox.jail import LAYERS

from .exits import EXIT_FAILED, EXIT_OK

__all__ = ["LAYER_ROLES", "command"]

#: Per layer (``sandbox.jail.LAYERS``): (what it stops, what a snippet that broke the Python
#: layers could do without it).
LAYER_ROLES: dict[str, tuple[str, str]] = {
    "seccomp": ("every syscall but compute and the worker's channel (open, socket, exec, fork, kill)",
                "an escaped snippet could open files, connect out and start processes"),
    "user-namespace": ("host uids and capabilities (the other namespaces are made inside it)",
                       "a non-root host cannot make the other namespaces"),
    "network-namespace": ("every network but a loopback that is down",
                          "a socket (if the filter also failed) would reach the host's network"),
    "ipc-namespace": ("the host's System V IPC and POSIX message queues",
                      "shared memory and queues of host processes are reachable"),
    "uts-namespace": ("changing the host's hostname", "the host name is the host's own"),
    "mount-namespace": ("mounts seen or changed outside the worker",
                        "mount changes and the host's mount table are shared"),
    "pid-namespace": ("seeing or signalling the host's processes",
                      "the host's process list is visible and its processes can be signalled"),
    "chroot": ("the host's file tree (the root is an empty directory)",
               "a path opened by an escaped snippet is the host's path"),
    "uid": ("the host user's files and signals to its processes (an unused uid)",
            "the worker acts with the host user's rights"),
    "rlimits": ("runaway memory, CPU time, file size and process count",
                "a snippet can exhaust the host's memory or CPU"),
}


_UNKNOWN = ("what the sandbox's jail sets it up for", "that part of the confinement")


def _roles() -> list[tuple[str, tuple[str, str]]]:
    return [(layer, LAYER_ROLES.get(layer, _UNKNOWN)) for layer in LAYERS]


def _lines(status: sandbox.JailStatus) -> list[str]:
    out = []
    for layer, (stops, lost) in _roles():
        if layer in status.active:
            out.append(f"  {layer:<18} on   stops {stops}; without it {lost}")
        elif layer in status.missing:
            out.append(f"  {layer:<18} off  {status.missing[layer]}; without it {lost}")
    return out


def command(stdout: TextIO, *, as_json: bool = False) -> int:
    """Exit 0 when the worker backend gets its full jail here, 1 when it would refuse to run."""
    import platform

    host = f"{platform.system()} {platform.machine()}"
    try:
        status = sandbox.jail_status("worker")
    except TimeoutError as exc:
        if as_json:
            stdout.write(json.dumps({"host": host, "verdict": "unknown", "error": str(exc)}) + "\n")
        else:
            stdout.write(f"worker jail: unknown ({exc})\n")
        return EXIT_FAILED
    if as_json:
        layers = [
            {"layer": layer, "on": layer in status.active, "stops": stops, "without_it": lost,
             **({"why_off": status.missing[layer]} if layer in status.missing else {})}
            for layer, (stops, lost) in _roles()
            if layer in status.active or layer in status.missing
        ]
        verdict = {"host": host, "verdict": "full" if status.full else "weak", "layers": layers}
        if not status.full:
            verdict["refusal"] = status.refusal()
        stdout.write(json.dumps(verdict) + "\n")
        return EXIT_OK if status.full else EXIT_FAILED
    stdout.write(f"worker jail on {host}:\n" + "\n".join(_lines(status)) + "\n")
    if status.full:
        stdout.write("verdict: full (the syscall filter is in force)\n")
        return EXIT_OK
    stdout.write(f"verdict: weak; the worker backend refuses to run: {status.refusal()}\n")
    return EXIT_FAILED
