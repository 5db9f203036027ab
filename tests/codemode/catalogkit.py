"""Large tool sets for the discovery tests (imported as ``from catalogkit import ...``).

``five_servers()`` is shaped like the five MCP servers the issue was tried with (filesystem,
memory, everything, time, git: 55 tools, ``<server>__<tool>`` names, real-looking schemas);
``many_tools(150)`` is a plain catalogue of distinct tools.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codemode import CodeMode, Registry, define_tool

_S = {"type": "string"}
_I = {"type": "integer"}
_B = {"type": "boolean"}


def _obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


SERVERS: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "filesystem": [
        ("read_text_file", "Read the complete contents of a file from the file system as text.", _obj(["path"], path=_S, head=_I, tail=_I)),
        ("read_media_file", "Read an image or audio file and return its base64 data and MIME type.", _obj(["path"], path=_S)),
        ("read_multiple_files", "Read the contents of several files at once.", _obj(["paths"], paths={"type": "array", "items": _S})),
        ("write_file", "Create a new file or completely overwrite an existing file with new content.", _obj(["path", "content"], path=_S, content=_S)),
        ("edit_file", "Make line-based edits to a text file and return a git-style diff.", _obj(["path", "edits"], path=_S, edits={"type": "array", "items": _obj(["oldText", "newText"], oldText=_S, newText=_S)}, dryRun=_B)),
        ("create_directory", "Create a new directory or ensure a directory exists.", _obj(["path"], path=_S)),
        ("list_directory", "Get a detailed listing of all files and directories in a path.", _obj(["path"], path=_S)),
        ("list_directory_with_sizes", "List files and directories in a path with their sizes.", _obj(["path"], path=_S, sortBy={"enum": ["name", "size"]})),
        ("directory_tree", "Get a recursive tree view of files and directories as JSON.", _obj(["path"], path=_S)),
        ("move_file", "Move or rename files and directories.", _obj(["source", "destination"], source=_S, destination=_S)),
        ("search_files", "Recursively search for files and directories matching a pattern.", _obj(["path", "pattern"], path=_S, pattern=_S, excludePatterns={"type": "array", "items": _S})),
        ("get_file_info", "Retrieve metadata about a file or directory: size, times, permissions.", _obj(["path"], path=_S)),
        ("list_allowed_directories", "Returns the list of directories this server is allowed to access.", _obj([])),
        ("read_file", "Read the complete contents of a file (deprecated: use read_text_file).", _obj(["path"], path=_S)),
    ],
    "memory": [
        ("create_entities", "Create multiple new entities in the knowledge graph.", _obj(["entities"], entities={"type": "array", "items": _obj(["name", "entityType", "observations"], name=_S, entityType=_S, observations={"type": "array", "items": _S})})),
        ("create_relations", "Create multiple new relations between entities in the knowledge graph.", _obj(["relations"], relations={"type": "array", "items": _obj(["from", "to", "relationType"], **{"from": _S, "to": _S, "relationType": _S})})),
        ("add_observations", "Add new observations to existing entities in the knowledge graph.", _obj(["observations"], observations={"type": "array", "items": _obj(["entityName", "contents"], entityName=_S, contents={"type": "array", "items": _S})})),
        ("delete_entities", "Delete multiple entities and their relations from the knowledge graph.", _obj(["entityNames"], entityNames={"type": "array", "items": _S})),
        ("delete_observations", "Delete specific observations from entities in the knowledge graph.", _obj(["deletions"], deletions={"type": "array", "items": _obj(["entityName", "observations"], entityName=_S, observations={"type": "array", "items": _S})})),
        ("delete_relations", "Delete multiple relations from the knowledge graph.", _obj(["relations"], relations={"type": "array", "items": _obj(["from", "to", "relationType"], **{"from": _S, "to": _S, "relationType": _S})})),
        ("read_graph", "Read the entire knowledge graph.", _obj([])),
        ("search_nodes", "Search for nodes in the knowledge graph based on a query.", _obj(["query"], query=_S)),
        ("open_nodes", "Open specific nodes in the knowledge graph by their names.", _obj(["names"], names={"type": "array", "items": _S})),
    ],
    "everything": [
        ("echo", "Echoes back the input message.", _obj(["message"], message=_S)),
        ("add", "Adds two numbers.", _obj(["a", "b"], a={"type": "number"}, b={"type": "number"})),
        ("longRunningOperation", "Demonstrates a long running operation with progress updates.", _obj([], duration={"type": "number"}, steps=_I)),
        ("printEnv", "Prints all environment variables, helpful for debugging server configuration.", _obj([])),
        ("sampleLLM", "Samples from an LLM using the sampling feature of MCP.", _obj(["prompt"], prompt=_S, maxTokens=_I)),
        ("getTinyImage", "Returns the MCP tiny image.", _obj([])),
        ("annotatedMessage", "Demonstrates how annotations can be used to provide metadata about content.", _obj(["messageType"], messageType={"enum": ["error", "success", "debug"]}, includeImage=_B)),
        ("getResourceReference", "Returns a resource reference that can be used by MCP clients.", _obj(["resourceId"], resourceId=_I)),
        ("getResourceLinks", "Returns multiple resource links that reference different types of resources.", _obj([], count=_I)),
        ("structuredContent", "Returns structured content along with an output schema for client data validation.", _obj(["location"], location=_S)),
        ("zip", "Compresses the provided resource files (mapping of name to URL) into a zip file.", _obj(["files"], files={"type": "object", "additionalProperties": _S})),
    ],
    "time": [
        ("get_current_time", "Get the current time in a specific timezone.", _obj(["timezone"], timezone=_S)),
        ("convert_time", "Convert time between timezones.", _obj(["source_timezone", "time", "target_timezone"], source_timezone=_S, time=_S, target_timezone=_S)),
    ],
    "git": [
        ("git_status", "Shows the working tree status.", _obj(["repo_path"], repo_path=_S)),
        ("git_diff_unstaged", "Shows changes in the working directory that are not yet staged.", _obj(["repo_path"], repo_path=_S, context_lines=_I)),
        ("git_diff_staged", "Shows changes that are staged for commit.", _obj(["repo_path"], repo_path=_S, context_lines=_I)),
        ("git_diff", "Shows differences between branches or commits.", _obj(["repo_path", "target"], repo_path=_S, target=_S, context_lines=_I)),
        ("git_commit", "Records changes to the repository.", _obj(["repo_path", "message"], repo_path=_S, message=_S)),
        ("git_add", "Adds file contents to the staging area.", _obj(["repo_path", "files"], repo_path=_S, files={"type": "array", "items": _S})),
        ("git_reset", "Unstages all staged changes.", _obj(["repo_path"], repo_path=_S)),
        ("git_log", "Shows the commit logs.", _obj(["repo_path"], repo_path=_S, max_count=_I, start_timestamp=_S, end_timestamp=_S)),
        ("git_create_branch", "Creates a new branch from an optional base branch.", _obj(["repo_path", "branch_name"], repo_path=_S, branch_name=_S, base_branch=_S)),
        ("git_checkout", "Switches branches.", _obj(["repo_path", "branch_name"], repo_path=_S, branch_name=_S)),
        ("git_show", "Shows the contents of a commit.", _obj(["repo_path", "revision"], repo_path=_S, revision=_S)),
        ("git_init", "Initialize a new Git repository.", _obj(["repo_path"], repo_path=_S)),
        ("git_branch", "List Git branches.", _obj(["repo_path", "branch_type"], repo_path=_S, branch_type={"enum": ["local", "remote", "all"]}, contains=_S)),
        ("git_tag", "List, create or delete tags.", _obj(["repo_path"], repo_path=_S, name=_S)),
        ("git_remote", "List the remotes of a repository with their URLs.", _obj(["repo_path"], repo_path=_S)),
        ("git_blame", "Show which revision and author last modified each line of a file.", _obj(["repo_path", "path"], repo_path=_S, path=_S)),
        ("git_stash", "Stash the changes in a dirty working directory away.", _obj(["repo_path"], repo_path=_S, message=_S)),
        ("git_grep", "Print lines of tracked files matching a pattern.", _obj(["repo_path", "pattern"], repo_path=_S, pattern=_S)),
        ("git_fetch", "Download objects and refs from another repository.", _obj(["repo_path"], repo_path=_S, remote=_S)),
    ],
}


async def _answer(args: Any, ctx: Any) -> Any:
    return {"tool": ctx.name, "arguments": dict(args)}


def _tool(name: str, description: str, schema: dict[str, Any]) -> Any:
    return define_tool(
        name=name,
        description=description,
        parameters_schema=schema,
        output={"schema": {"type": "object"}},
        execute=_answer,
        is_concurrency_safe=True,
    )


def five_servers() -> list[Any]:
    return [_tool(f"{server}__{name}", text, schema) for server, tools in SERVERS.items() for name, text, schema in tools]


_VERBS = ["list", "get", "create", "update", "delete", "search", "export", "import", "archive", "restore"]
_NOUNS = [
    "invoice", "customer", "order", "shipment", "ticket", "project", "sprint", "document",
    "calendar_event", "contact", "payment", "refund", "webhook", "dashboard", "report",
]


_AREAS = ["", "billing", "support", "sales", "warehouse", "payroll", "legal"]


def many_tools(count: int = 150) -> list[Any]:
    """``count`` distinct back-office tools (up to 1,050): verb x noun, then again per area."""
    out = []
    for i in range(count):
        verb, noun = _VERBS[i % len(_VERBS)], _NOUNS[i // len(_VERBS) % len(_NOUNS)]
        area = _AREAS[i // (len(_VERBS) * len(_NOUNS))]
        thing = f"{area}_{noun}" if area else noun
        schema = _obj([f"{noun}_id"], **{f"{noun}_id": _S, "page_size": _I})
        where = f"the {area} office" if area else "the back office"
        out.append(_tool(f"{verb}_{thing}", f"{verb.capitalize()} a {noun.replace('_', ' ')} in {where}.", schema))
    return out


def mode_with(definitions: list[Any], **options: Any) -> CodeMode:
    registry = Registry(mode="code")
    for definition in definitions:
        registry.register(definition)
    return CodeMode(registry, backend="inprocess", **options)


# --- the reference servers' real tool lists ------------------------------------------------------

REFERENCE_FIXTURE = Path(__file__).parent / "fixtures" / "reference_servers.json"


class _ListedServer:
    """Stands in for an ``UpstreamServer`` whose tools are only listed, never called."""

    def __init__(self, name: str) -> None:
        from codemode.mcp.config import ServerConfig

        self.name = name
        self.config = ServerConfig(name=name, command="true")


def reference_servers(*, workspace: bool = True) -> list[Any]:
    """The definitions ``codemode`` builds from the five reference MCP servers' real
    ``tools/list`` answers (``fixtures/reference_servers.json``), named as the provider names
    them, plus the workspace tools and the two resource tools (56 tools in all)."""
    import mcp_types as types

    from codemode.mcp.resources import ResourceIndex, resource_tools
    from codemode.mcp.tools import namespace_names, tool_definition
    from codemode.workspace import workspace_tools

    data = json.loads(REFERENCE_FIXTURE.read_text(encoding="utf-8"))
    listed = {s: [types.Tool.model_validate(t) for t in ts] for s, ts in data["servers"].items()}
    names = namespace_names([(s, t.name) for s, ts in listed.items() for t in ts])
    out = [tool_definition(_ListedServer(s), t, names[(s, t.name)]) for s, ts in listed.items() for t in ts]  # type: ignore[arg-type]
    out.extend(resource_tools(ResourceIndex({})))
    if workspace:
        out.extend(workspace_tools(Path(__file__).parent))
    return sorted(out, key=lambda d: d.name)
