# ruff: noqa: F704, F821
"""TODO/FIXME report for a repository: glob once, then grep every top-level area in parallel.

Run: codemode run examples/todo_report.py   (add --root DIR to scan another repository)
The match lists stay inside the run; only the summary printed at the end reaches the model.
"""
import asyncio
from collections import Counter

files = (await tools.glob(pattern="**/*", limit=100000))["matches"]
tops = sorted({f.split("/")[0] for f in files})  # top-level directories and files
found = await asyncio.gather(*(tools.grep(pattern=r"\b(TODO|FIXME)\b", path=p, limit=5000) for p in tops))
hits = [m for r in found for m in r["matches"]]
tags = Counter("FIXME" if "FIXME" in m["text"] else "TODO" for m in hits)
per_file = Counter(m["path"] for m in hits)
print(f"{len(hits)} markers ({', '.join(f'{t} {n}' for t, n in tags.items())}) in {len(per_file)} of {len(files)} files")
for path, n in per_file.most_common(3):
    print(n, path)
