# ruff: noqa: F704, F821
"""Where the bytes are: stat every source file in parallel, report the largest and totals by type.

Run: codemode run examples/largest_files.py
Natively this is one stat result per file in the model's context; here it is ten lines.
"""
import asyncio
from collections import defaultdict

files = (await tools.glob(pattern="**/*", limit=5000))["matches"]
stats = await asyncio.gather(*(tools.stat(path=f) for f in files))

by_ext = defaultdict(lambda: [0, 0])
for s in stats:
    name = s["path"].rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1] if "." in name else "(none)"
    by_ext[ext][0] += 1
    by_ext[ext][1] += s["size"]

largest = sorted(stats, key=lambda s: s["size"], reverse=True)[:5]
print(f"{len(stats)} files, {sum(s['size'] for s in stats) / 1024:.0f} KiB")
print("largest: " + ", ".join(f"{s['path']} ({s['size'] // 1024} KiB)" for s in largest))
top = sorted(by_ext.items(), key=lambda kv: kv[1][1], reverse=True)[:5]
print("by type: " + ", ".join(f".{ext} {n} files {size // 1024} KiB" for ext, (n, size) in top))
