"""examples/agents/: each framework example runs offline with its scripted model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("example", "needs", "last_line"),
    [
        ("pydantic_ai_agent.py", "pydantic_ai", "The workspace has 2 Python files; first: a.py"),
        ("openai_agents_agent.py", "agents", "The workspace has 2 Python files; first: a.py"),
        ("langchain_agent.py", "langchain_core", "run_code -> 2 Python files; first: a.py"),
    ],
)
def test_example_runs_offline(tmp_path: Path, example: str, needs: str, last_line: str) -> None:
    pytest.importorskip(needs)
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("y = 2\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not python\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "agents" / example), str(tmp_path)],
        capture_output=True, text=True, timeout=90, cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == last_line


def test_the_langchain_example_binds_the_tool_as_the_readme_says() -> None:
    import ast

    source = (REPO / "examples" / "agents" / "langchain_agent.py").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "model = chat_model.bind_tools([code_mode_tool(mode)])" in readme
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "bind_tools"]
    assert [ast.unparse(c) for c in calls] == ["chat_model.bind_tools([tool])"]
    assert "tool = code_mode_tool(mode)" in source
