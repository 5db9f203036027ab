"""Benchmark what a model learns about large tool sets: the run_code description (length and how
many tool names it carries) and how well ``tools.search`` answers plain-language requests.

Run from the repository root: ``python benchmarks/bench_discovery.py [--write]``. ``--write``
rewrites benchmarks/RESULTS_discovery.md. Nothing here is timed: every number is deterministic.

Tool sets: the five reference MCP servers' real ``tools/list`` answers (filesystem, memory,
everything, time, git; ``tests/codemode/fixtures/reference_servers.json``) with the workspace and
resource tools (57), the first 5 of them, and generated back-office catalogues (150, 1,000).
Search runs over the 57 plus 150 generated tools (207): each query is how a person would ask,
with the tools that answer it. "before" is the scorer of ``git show main~:...`` kept in
``benchmarks/search_baseline.py`` (the ranking before this change), "after" the current one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "codemode"), str(ROOT / "benchmarks")]

from catalogkit import many_tools, mode_with, reference_servers  # noqa: E402
from results_block import write_block  # noqa: E402

from codemode.code_mode.discovery import DESCRIPTION_BUDGET, ToolIndex, budgeted_text  # noqa: E402
from codemode.mcp import messages as mm  # noqa: E402

RESULTS = ROOT / "benchmarks" / "RESULTS_discovery.md"

#: (query, the tools that answer it). Written as people ask, not as the tools are named.
QUERIES: list[tuple[str, set[str]]] = [
    ("add a person to the knowledge graph", {"memory__create_entities"}),
    ("find text in files", {"grep"}),
    ("read a file", {"read_file", "fs__read_text_file"}),
    ("what time is it in Tokyo", {"time__get_current_time"}),
    ("convert 3pm London time to New York time", {"time__convert_time"}),
    ("save my changes to the repository", {"git__git_commit"}),
    ("show uncommitted changes", {"git__git_diff_unstaged", "git__git_status"}),
    ("list files in a folder", {"list_dir", "fs__list_directory"}),
    ("make a new folder", {"fs__create_directory"}),
    ("rename a file", {"fs__move_file"}),
    ("remember a fact about someone", {"memory__add_observations"}),
    ("connect two people in the knowledge graph", {"memory__create_relations"}),
    ("look up a person by name", {"memory__search_nodes", "memory__open_nodes"}),
    ("file size and modification time", {"stat", "fs__get_file_info"}),
    ("find files whose name matches a pattern", {"glob", "fs__search_files"}),
    ("switch to another branch", {"git__git_checkout"}),
    ("history of commits", {"git__git_log"}),
    ("stage files for the next commit", {"git__git_add"}),
    ("write text to a file", {"fs__write_file"}),
    ("replace a line in a file", {"fs__edit_file"}),
    ("add two numbers", {"everything__get_sum"}),
    ("get a picture", {"everything__get_tiny_image"}),
    ("read a resource by its URI", {"read_resource"}),
    ("forget a person", {"memory__delete_entities"}),
    ("unstage everything", {"git__git_reset"}),
    ("shipment status", {"get_shipment", "search_shipment", "list_shipment"}),
    ("find an invoice", {"search_invoice"}),
    ("new customer", {"create_customer"}),
    ("remove a webhook", {"delete_webhook"}),
    ("change a ticket", {"update_ticket"}),
    ("all orders", {"list_order"}),
    ("bring back an archived project", {"restore_project"}),
    ("look up a contact", {"search_contact", "get_contact"}),
    ("download a report", {"export_report"}),
]


def _description_rows() -> list[str]:
    rows = ["| tools | description (characters) | tool names in it | form |", "|---:|---:|---:|---|"]
    sets = [("5 (reference servers, first 5)", reference_servers()[:5]), ("57 (reference servers)", reference_servers()),
            ("150 (generated)", many_tools(150)), ("1,000 (generated)", many_tools(1000))]
    for label, definitions in sets:
        sdk = mode_with(definitions).sdk()
        text = budgeted_text(sdk, lead=mm.RUN_CODE_MCP_LEAD, budget=DESCRIPTION_BUDGET)
        named = [n for n in sdk.names() if _named(text, n)]
        form = "whole SDK" if "class Tools(Protocol)" in text else (
            "summaries" if "\nTools:\n" in text else "names" + (" + N more" if " more" in text.split("\n\n")[-1] else ""))
        rows.append(f"| {label} | {len(text):,} | {len(named):,} of {len(sdk.names()):,} | {form} |")
    return rows


def _named(text: str, name: str) -> bool:
    """Whether the description names ``name`` (whole, or as a group prefix and the rest)."""
    import re

    if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text):
        return True
    for line in text.splitlines():
        if line.startswith("- ") and ": " in line:
            prefix, _, names = line[2:].partition(": ")
            if name.startswith(prefix) and name[len(prefix):] in names.split(", "):
                return True
    return False


def _search_rows(index_types: dict[str, type]) -> tuple[list[str], dict[str, tuple[int, int]]]:
    definitions = reference_servers() + many_tools(150)
    sdk = mode_with(definitions).sdk()
    indexes = {label: kind(sdk) for label, kind in index_types.items()}
    labels = list(indexes)
    rows = ["| query | expected | " + " | ".join(f"{label}: top 3" for label in labels) + " |",
            "|---|---|" + "---|" * len(labels)]
    totals = {label: [0, 0] for label in labels}
    for query, wanted in QUERIES:
        cells = []
        for label, index in indexes.items():
            hits = index.search(query, 3)
            top1, top3 = bool(hits[:1] and hits[0] in wanted), bool(set(hits) & wanted)
            totals[label][0] += top1
            totals[label][1] += top3
            mark = "1" if top1 else "3" if top3 else "-"
            cells.append(f"{mark} `{', '.join(hits)}`")
        rows.append(f"| {query} | {', '.join(sorted(wanted))} | " + " | ".join(cells) + " |")
    return rows, {k: (v[0], v[1]) for k, v in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite benchmarks/RESULTS_discovery.md")
    args = parser.parse_args()
    from search_baseline import BaselineIndex

    description = _description_rows()
    search, totals = _search_rows({"before": BaselineIndex, "after": ToolIndex})
    n = len(QUERIES)
    summary = ["| scorer | top-1 | top-3 |", "|---|---:|---:|"] + [
        f"| {label} | {t1}/{n} | {t3}/{n} |" for label, (t1, t3) in totals.items()]
    text = "\n".join([
        "## run_code description (MCP lead, 2,048-character budget)", "", *description, "",
        f"## tools.search over {57 + 150} tools ({n} plain-language queries)", "", *summary, "",
        "Per query (`1`: the first hit answers it, `3`: one of the first three does, `-`: none):", "", *search,
    ])
    print(text)
    if args.write:
        write_block(RESULTS, "discovery", text)


if __name__ == "__main__":
    main()
