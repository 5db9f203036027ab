# ruff: noqa: F704, F821
"""Which modules does this code base lean on? grep every import line, aggregate per package.

Run: codemode run examples/import_graph.py
A native agent would read hundreds of import lines; the program returns a ranked table.
"""
import asyncio
import re
from collections import Counter

packages = [e["name"] for e in (await tools.list_dir(path="."))["entries"]
            if e["type"] == "dir" and not e["name"].startswith(".")]
results = await asyncio.gather(
    *(tools.grep(pattern=r"^\s*(from|import)\s+[\w.]+", path=p, glob="*.py", limit=5000) for p in packages)
)
imported = Counter()
importers = {}
for package, result in zip(packages, results, strict=True):
    for match in result["matches"]:
        found = re.match(r"\s*(?:from|import)\s+([\w.]+)", match["text"])
        if found is None or found.group(1).startswith("."):
            continue
        top = found.group(1).split(".")[0]
        imported[top] += 1
        importers.setdefault(top, set()).add(package)

print(f"{sum(imported.values())} imports of {len(imported)} top-level modules")
for module, n in imported.most_common(8):
    print(f"  {module:<16} {n:4d}  from {', '.join(sorted(importers[module]))}")
