"""codemode.code_mode.discovery: the search scorer, ``tools.search`` in a program, and texts within budget."""

from __future__ import annotations

import json
import re

import pytest
from bridgekit import grep_tool
from catalogkit import SERVERS, five_servers, many_tools, mode_with, reference_servers

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
    assert "restore_frequent_flyer_miles" not in prompt and "+" in prompt  # the index has no room for it
    code = (
        "hits = await tools.search('refund airline miles', limit=3)\n"
        "best = hits[0]['name']\n"
        "r = await tools[best](booking='AB12', miles=900)\n"
        "return [best, r['tool'], r['arguments']]"
    )
    run = await mode.run(code)
    assert run.ok, run.text
    assert json.loads(run.text) == ["restore_frequent_flyer_miles", "restore_frequent_flyer_miles", {"booking": "AB12", "miles": 900}]
    assert [c.name for c in run.calls] == ["restore_frequent_flyer_miles"]  # search itself is no tool call


def _hidden_gem():
    from catalogkit import _tool

    schema = {"type": "object", "properties": {"booking": {"type": "string"}, "miles": {"type": "integer"}},
              "required": ["booking", "miles"]}
    return _tool("restore_frequent_flyer_miles", "Refund the airline miles of a cancelled booking.", schema)


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


def _named(text: str) -> dict[str, tuple[list[str], int]]:
    """The names index of a discovery text: prefix -> (names shown, "+N more" count)."""
    index = text[text.index("\n\nNames by prefix" if "Names by prefix" in text else "\n\nTool names:"):]
    out = {}
    for line in index.strip().splitlines()[1:]:
        prefix, _, names = line[2:].rpartition(": ") if ": " in line else ("", "", line[2:])
        counted = re.fullmatch(r"(\d+) tools", names)
        if counted:
            out[prefix] = ([], int(counted.group(1)))
            continue
        more = re.search(r"\+(\d+) more$", names)
        shown = [n for n in names.split(", ") if n and not n.startswith("+")]
        out[prefix] = (shown, int(more.group(1)) if more else 0)
    return out


def test_the_reference_servers_tools_are_all_named_within_2048_characters() -> None:
    definitions = reference_servers()
    text = budgeted_text(mode_with(definitions).sdk(), lead=mm.RUN_CODE_MCP_LEAD)
    assert len(definitions) == 57 and len(text) <= DESCRIPTION_BUDGET
    assert "Names by prefix (`fs__: edit_file` is `tools.fs__edit_file`):" in text
    assert "- time__: convert_time, get_current_time" in text
    assert "- git__git_: add, branch, checkout, commit," in text  # the shared `git_` said once
    assert "more" not in text.split("Names by prefix")[1]
    named = _named(text)
    shown = {p + n for p, (names, _) in named.items() for n in names}
    assert shown == {d.name for d in definitions}


def test_five_servers_index_names_every_tool_by_server() -> None:
    text = budgeted_text(mode_with(five_servers()).sdk(), lead=mm.RUN_CODE_MCP_LEAD)
    assert len(text) <= DESCRIPTION_BUDGET
    named = _named(text)
    for server, tools in SERVERS.items():
        prefix = next(p for p in named if p.startswith(f"{server}__"))
        names, more = named[prefix]
        assert len(names) + more == len(tools) and len(names) >= len(tools) // 2


@pytest.mark.parametrize("budget", [2048, 1900, 1700, 1500, 1400, 1300])
def test_a_tighter_budget_drops_the_least_useful_names_per_group(budget) -> None:
    definitions = reference_servers()
    sdk = mode_with(definitions).sdk()
    text = budgeted_text(sdk, lead=mm.RUN_CODE_MCP_LEAD, budget=budget)
    assert len(text) <= budget
    named = _named(text)
    groups: dict[str, int] = {}
    for d in definitions:
        head, sep, _ = d.name.partition("__")
        groups[head + sep if sep else ""] = groups.get(head + sep if sep else "", 0) + 1
    # Every group keeps its line, shown names plus "+N more" add up to the group, and each
    # shown name is a real tool.
    assert {p.removesuffix("git_") for p in named} == set(groups)
    for prefix, (names, more) in named.items():
        assert len(names) + more == groups[prefix.removesuffix("git_")]
        assert all(prefix + n in sdk.method_names for n in names)
    total = sum(len(names) for names, _ in named.values())
    assert total > 0 or budget < 1400  # names while any fit; at least the groups and counts
    if budget < 2048:
        looser = _named(budgeted_text(sdk, lead=mm.RUN_CODE_MCP_LEAD, budget=budget + 150))
        assert total <= sum(len(names) for names, _ in looser.values())


def test_the_most_useful_names_go_first_when_a_group_is_cut() -> None:
    sdk = mode_with(reference_servers()).sdk()
    text = budgeted_text(sdk, lead=mm.RUN_CODE_MCP_LEAD, budget=1500)
    fs, more = _named(text)["fs__"]
    assert more and "read_text_file" in fs and "search_files" in fs and "list_directory" in fs
    assert "read_file" not in fs  # the deprecated alias goes first
    assert fs == sorted(fs)


@pytest.mark.parametrize("count", [150, 1000])
def test_large_flat_catalogues_name_a_spread_of_tools_and_count_the_rest(count) -> None:
    text = budgeted_text(mode_with(many_tools(count)).sdk(), lead=mm.RUN_CODE_MCP_LEAD)
    assert len(text) <= DESCRIPTION_BUDGET
    (names, more), = _named(text).values()
    assert len(names) + more == count and len(names) > 40
    assert {n.split("_")[0] for n in names} >= {"create", "get", "list", "search", "update", "delete"}


def test_many_groups_cut_at_a_line_when_even_counts_do_not_fit() -> None:
    sdk = mode_with(five_servers()).sdk()
    with pytest.raises(ValueError, match="cannot hold the discovery text"):
        budgeted_text(sdk, lead="Run code.", budget=200)
    head = budgeted_text(sdk, lead="Run code.", budget=None, mode="compact").split("\n\nTools:")[0]
    tight = budgeted_text(sdk, lead="Run code.", budget=len(head) + 150)
    assert len(tight) <= len(head) + 150 and tight.endswith(cm.INDEX_CUT)
    assert "- everything__: 11 tools\n- filesystem__: 14 tools" in tight
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


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("add a person to the knowledge graph", "memory__create_entities"),
        ("find text in files", "grep"),
        ("shipment status", "get_shipment"),
        ("save my changes", "git__git_commit"),
        ("forget a person", "memory__delete_entities"),
    ],
)
def test_search_answers_requests_as_people_write_them(query, wanted) -> None:
    index = ToolIndex(mode_with(reference_servers() + many_tools(150)).sdk())
    assert wanted in index.search(query, 3)


def test_search_ignores_filler_and_prefers_tools_matching_more_of_the_request() -> None:
    index = ToolIndex(mode_with(reference_servers() + many_tools(150)).sdk())
    assert index.search("the a of", 3)  # only filler: the words still count
    assert index.search("find an invoice", 1) == ["search_invoice"]
    assert index.search("an invoice", 5) == index.search("invoice", 5)
