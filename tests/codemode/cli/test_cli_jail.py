"""The CLI's view of the worker jail: `codemode doctor`, `--allow-weak-jail`, and the refusal."""

from __future__ import annotations

import io
import json

import pytest

import sandbox
from codemode.cli import main
from codemode.cli import options as cli_module

LAYER_STOPS = "every syscall but compute and the worker's channel (open, socket, exec, fork, kill)"


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


def test_doctor_lists_every_layer_and_passes_with_the_filter() -> None:
    code, out, err = cli("doctor")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("worker jail on Linux ")
    assert "  seccomp            on   stops every syscall but compute and the worker's channel (open, socket, " \
           "exec, fork, kill); without it an escaped snippet could open files, connect out and start processes" in lines
    assert any(line.startswith("  network-namespace  on   stops ") for line in lines)
    layers = lines[1:-1]  # one line per layer, each saying what it stops and what is lost without it
    assert layers and all(" stops " in line and "; without it " in line for line in layers)
    assert lines[-1] == "verdict: full (the syscall filter is in force)"


def test_every_jail_layer_has_its_doctor_line() -> None:
    from codemode.cli.doctor import LAYER_ROLES
    from sandbox.jail import LAYERS

    assert list(LAYER_ROLES) == list(LAYERS)


def test_doctor_json_is_one_object_with_every_layer() -> None:
    from codemode.cli.doctor import LAYER_ROLES

    code, out, err = cli("doctor", "--json")
    assert (code, err) == (0, "") and out.count("\n") == 1
    report = json.loads(out)
    assert report["verdict"] == "full" and report["host"].startswith("Linux ")
    names = [layer["layer"] for layer in report["layers"]]
    assert names == [n for n in LAYER_ROLES if n in names] and "seccomp" in names
    seccomp = report["layers"][names.index("seccomp")]
    assert seccomp["on"] is True and seccomp["stops"] and seccomp["without_it"] and "why_off" not in seccomp


def test_doctor_fails_and_says_why_without_the_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    weak = sandbox.JailStatus(active=("rlimits",), missing={"seccomp": "the libseccomp binding could not be loaded: x"})
    monkeypatch.setattr(cli_module.sandbox, "jail_status", lambda backend="worker": weak)
    code, out, _ = cli("doctor")
    assert code == 1
    assert ("  seccomp            off  the libseccomp binding could not be loaded: x; without it an escaped "
            "snippet could open files, connect out and start processes") in out.splitlines()
    assert out.splitlines()[-1].startswith("verdict: weak; the worker backend refuses to run: "
                                           "the worker jail cannot be set up on this host")
    code, out, _ = cli("doctor", "--json")
    report = json.loads(out)
    assert code == 1 and report["verdict"] == "weak" and report["refusal"].startswith("the worker jail cannot")
    (seccomp,) = [layer for layer in report["layers"] if layer["layer"] == "seccomp"]
    assert seccomp == {"layer": "seccomp", "on": False, "why_off": "the libseccomp binding could not be loaded: x",
                       "stops": LAYER_STOPS, "without_it": "an escaped snippet could open files, connect out and start processes"}


def test_a_host_without_the_filter_refuses_with_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    def without_filter(args):
        return sandbox.WorkerRuntime(pool_size=0, _disabled_layers=frozenset({"seccomp"}),
                                     allow_weak_jail=args.allow_weak_jail)

    monkeypatch.setattr(cli_module, "backend_from_args", without_filter)
    code, out, err = cli("run", "-", stdin="print('ran')\nreturn 1")
    assert code == 2 and out == "" and "ran" not in err
    assert err.count("\n") == 1 and err.startswith("codemode: error: the worker jail cannot be set up")
    assert "--allow-weak-jail" in err
    # Accepting weaker confinement runs it, and the result says so.
    code, out, err = cli("run", "-", "--allow-weak-jail", "--json", stdin="print('ran')\nreturn 1")
    assert (code, err) == (0, "")
    payload = json.loads(out)
    assert payload["jail"] == "weak" and payload["logs"] == ["ran"] and payload["result"] == 1


def test_worker_runs_record_a_full_jail() -> None:
    code, out, _ = cli("run", "-", "--json", stdin="return 1")
    assert code == 0 and json.loads(out)["jail"] == "full"
    code, out, _ = cli("run", "-", "--json", "--allow-weak-jail", stdin="return 1")
    assert code == 0 and json.loads(out)["jail"] == "full"  # weak is allowed, not forced


def test_mcp_serve_refuses_to_start_without_the_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_module, "backend_from_args", lambda args: sandbox.WorkerRuntime(
        pool_size=0, _disabled_layers=frozenset({"seccomp"})))
    code, out, err = cli("mcp", "serve")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("codemode: error: the worker jail cannot be set up")
