"""codemode.code_mode.discovery: the search scorer, ``tools.search`` in a program, and texts within budget."""

from __future__ import annotations

import json

import pytest
from bridgekit import grep_tool
from catalogkit import SERVERS, five_servers, many_tools, mode_with

from codemode.code_mode import messages as cm
from codemode.code_mode.discovery import (
    DESCRIPTION_BUDGET,
    ToolIndex,
    budgeted_text,
    search_hits,
    terms,
)
from codemode.mcp import messages as mm

pytestmark = pytest.mark.anyio


def test_terms_split_case_and_separators_and_stem() -> None:
    assert terms("readFile") == terms("read_file") == terms("read files") == ["read", "file"]
    assert terms("git__create_branch") == ["git", "create", "branch"]
    assert terms("HTTPServer entries") == ["http", "server", "entry"]
    assert terms("  --  ") == []


def test_ranking_prefers_names_then_parameters_then_descriptions() -> None:
    sdk = mode_with(five_servers()).sdk()
    index = ToolIndex(sdk)
    assert index.search("convert time zone", limit=1) == ["time__convert_time"]
    assert index.search("git_log")[0] == "git__git_log"  # the exact name beats every partial
    # "timezone" is only a parameter of the two time tools.
    assert index.search("timezone", limit=2) == ["time__convert_time", "time__get_current_time"]
    # "knowledge graph" is only in the memory server's descriptions.
    hits = index.search("knowledge graph", limit=10)
    assert hits and all(h.startswith("memory__") for h in hits)
    # a prefix finds longer words ("branc" -> branch, branches) at lower weight.
    assert index.search("branc", limit=3)[0].startswith("git__")


def test_ranking_is_deterministic_and_limited() -> None:
    sdk = mode_with(many_tools(150)).sdk()
    index = ToolIndex(sdk)
    first = index.search("invoice", limit=10)
    assert first == index.search("invoice", limit=10)
    assert len(first) == 10 and all("invoice" in name for name in first)
    assert first == sorted(first)  # equal scores: names in order
    assert index.search("nothing like this", limit=5) == []


@pytest.mark.parametrize(
    ("query", "limit", "message"),
    [
        ("", 5, cm.SEARCH_NO_QUERY),
        ("?!", 5, cm.SEARCH_NO_QUERY),
        (3, 5, cm.SEARCH_NO_QUERY),
        ("file", 0, "search() takes limit=1 to 50, got 0"),
        ("file", 51, "search() takes limit=1 to 50, got 51"),
        ("file", True, "search() takes limit=1 to 50, got True"),
    ],
)
def test_bad_queries_and_limits_are_refused(query, limit, message) -> None:
    sdk = mode_with(five_servers()).sdk()
    with pytest.raises(ValueError) as caught:
        ToolIndex(sdk).search(query, limit)
    assert str(caught.value) == message


def test_hits_carry_name_summary_and_sdk_text() -> None:
    sdk = mode_with(five_servers()).sdk()
    hit = search_hits(sdk, "convert time zone", 1)[0]
    assert hit["name"] == "time__convert_time"
    assert hit["summary"] == "Convert time between timezones."
    assert hit["sdk"] == sdk.describe("time__convert_time")
    assert "async def time__convert_time(*, source_timezone: str, time: str, target_timezone: str)" in hit["sdk"]


# --- inside a program -----------------------------------------------------------------------------


async def test_a_program_finds_a_tool_it_was_not_told_about() -> None:
    mode = mode_with(many_tools(149) + [_hidden_gem()])
    prompt = mode.system_prompt(budget=DESCRIPTION_BUDGET)
    assert "refund_airline_miles" not in prompt  # the index was cut before it
    code = (
        "hits = await tools.search('refund airline miles', limit=3)\n"
        "best = hits[0]['name']\n"
        "r = await tools[best](booking='AB12', miles=900)\n"
        "return [best, r['tool'], r['arguments']]"
    )
    run = await mode.run(code)
    assert run.ok, run.text
    assert json.loads(run.text) == ["refund_airline_miles", "refund_airline_miles", {"booking": "AB12", "miles": 900}]
    assert [c.name for c in run.calls] == ["refund_airline_miles"]  # search itself is no tool call


def _hidden_gem():
    from catalogkit import _tool

    schema = {"type": "object", "properties": {"booking": {"type": "string"}, "miles": {"type": "integer"}},
              "required": ["booking", "miles"]}
    return _tool("refund_airline_miles", "Give frequent-flyer miles back for a cancelled booking.", schema)


async def test_search_in_a_program_checks_its_arguments() -> None:
    mode = mode_with([grep_tool()])
    run = await mode.run("return await tools.search()")
    assert run.text.startswith("Error: code run failed (exception): ToolCallError: search: " + cm.SEARCH_NO_QUERY)
    run = await mode.run("return await tools.search('grep', limit=99)")
    assert "search() takes limit=1 to 50, got 99" in run.text
    run = await mode.run("return await tools.search('grep', 2, 3)")
    assert cm.SEARCH_ARGS in run.text
    run = await mode.run("return tools.describe('search')")
    assert run.text == cm.SEARCH_DOC
    run = await mode.run("r = await tools.search(query='search files')\nreturn [h['name'] for h in r]")
    assert json.loads(run.text) == ["grep"]


async def test_preflight_accepts_search_and_wants_it_awaited() -> None:
    mode = mode_with([grep_tool()])
    run = await mode.run("tools.search('grep')")
    assert run.text == (
        "Error: code run failed (preflight): nothing ran; fix these and run again:\n"
        "line 1, col 1: tools.search() is never awaited; write `await tools.search(...)`"
    )


# --- texts within a budget ------------------------------------------------------------------------


@pytest.mark.parametrize("catalogue", [five_servers, lambda: many_tools(150)], ids=["five-servers", "150-tools"])
def test_descriptions_fit_the_budget_with_discovery_first(catalogue) -> None:
    mode = mode_with(catalogue())
    sdk = mode.sdk()
    assert len(sdk.text) > 4 * DESCRIPTION_BUDGET  # the whole SDK could never fit
    for mode_name in ("auto", "compact"):
        text = budgeted_text(sdk, lead=mm.RUN_CODE_MCP_LEAD, mode=mode_name)  # type: ignore[arg-type]
        assert len(text) <= DESCRIPTION_BUDGET
        assert text.startswith(mm.RUN_CODE_MCP_LEAD + "\n\nWrite Python 3.11: the body of an async function")
        order = [text.index(s) for s in ("Allowed imports:", "tools.search(", "tools.describe(", "tools.list()")]
        assert order == sorted(order)
    prompt = mode.system_prompt(budget=DESCRIPTION_BUDGET)
    assert len(prompt) <= DESCRIPTION_BUDGET and prompt.startswith("## Code Mode\n")
    assert len(mode.system_prompt()) == len(cm.SYSTEM_PROMPT.format(sdk=sdk.text))  # no budget: all of it


def test_five_servers_index_names_every_tool_by_server() -> None:
    text = budgeted_text(mode_with(five_servers()).sdk(), lead=mm.RUN_CODE_MCP_LEAD)
    assert "Tool names:" in text
    assert "- time__: convert_time, get_current_time" in text
    for server, tools in SERVERS.items():
        assert f"- {server}__: " in text
        assert all(name in text for name, _, _ in tools)


def test_index_degrades_to_prefix_counts_then_a_cut() -> None:
    sdk = mode_with(five_servers()).sdk()
    tight = budgeted_text(sdk, lead="Run code.", budget=1200)
    assert len(tight) <= 1200
    assert "Tool groups (name prefix and count): everything__ (11), filesystem__ (14), git__ (19), memory__ (9), time__ (2)." in tight
    # A budget just short of that form cuts it at a whole entry, with the marker.
    short = tight.index(", time__ (2)") + len(cm.INDEX_CUT) + 2  # the blank line before the index
    cut = budgeted_text(sdk, lead="Run code.", budget=short)
    assert len(cut) <= short and cut.endswith("memory__ (9)" + cm.INDEX_CUT)
    flat = budgeted_text(mode_with(many_tools(150)).sdk(), lead="Run code.")
    assert len(flat) <= DESCRIPTION_BUDGET and flat.endswith(cm.INDEX_CUT)
    with pytest.raises(ValueError, match="cannot hold the discovery text"):
        budgeted_text(sdk, lead="Run code.", budget=200)
    with pytest.raises(ValueError, match="sdk mode must be one of full, compact, auto"):
        budgeted_text(sdk, lead="x", mode="huge")  # type: ignore[arg-type]


def test_small_tool_sets_keep_the_whole_sdk_in_auto_mode() -> None:
    sdk = mode_with([grep_tool()]).sdk()
    text = budgeted_text(sdk, lead=mm.RUN_CODE_MCP_LEAD)
    assert text == f"{mm.RUN_CODE_MCP_LEAD}\n\n{sdk.text}" and len(text) <= DESCRIPTION_BUDGET
    compact = budgeted_text(sdk, lead=mm.RUN_CODE_MCP_LEAD, mode="compact")
    assert "- grep: Search files." in compact and "async def grep" not in compact
    big = mode_with(five_servers()).sdk()
    assert budgeted_text(big, lead="L", mode="full") == f"L\n\n{big.text}"
