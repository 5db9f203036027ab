# ruff: noqa: F704, F821
"""TODO/FIXME report for a repository: one glob, then grep in parallel per top-level area.

Run: codemode run examples/todo_report.py   (add --root DIR to scan another repository)
Only the summary printed at the end reaches the model; the match lists stay in the run.
"""
import asyncio
from collections import Counter

TAGS = r"\b(TODO|FIXME|XXX|HACK)\b"
TEXT_TYPES = {"py", "md", "txt", "toml", "cfg", "ini", "yml", "yaml", "json", "js", "ts", "rs", "go", "c", "h", "sh"}

files = (await tools.glob(pattern="**/*", limit=100000))["matches"]
files = [f for f in files if f.rsplit(".", 1)[-1] in TEXT_TYPES]
areas = sorted({f.split("/", 1)[0] if "/" in f else "." for f in files})

# One grep per area, all in flight together; root-level files are searched one by one.
searches = []
for area in areas:
    if area == ".":
        searches += [tools.grep(pattern=TAGS, path=f, limit=10000) for f in files if "/" not in f]
    else:
        searches.append(tools.grep(pattern=TAGS, path=area, limit=10000))
results = await asyncio.gather(*searches)

by_tag, by_area, by_file = Counter(), Counter(), Counter()
for result in results:
    for match in result["matches"]:
        if not any(match["path"].endswith("." + ext) for ext in TEXT_TYPES):
            continue
        tag = next(t for t in ("TODO", "FIXME", "XXX", "HACK") if t in match["text"])
        by_tag[tag] += 1
        by_file[match["path"]] += 1
        by_area[match["path"].split("/", 1)[0] if "/" in match["path"] else "."] += 1

total = sum(by_tag.values())
print(f"{total} markers in {len(by_file)} of {len(files)} text files ({len(searches)} searches)")
if total:
    print("by tag:  " + ", ".join(f"{t} {n}" for t, n in by_tag.most_common()))
    print("by area: " + ", ".join(f"{a} {n}" for a, n in by_area.most_common(5)))
    print("top files:")
    for path, n in by_file.most_common(5):
        print(f"  {n:4d}  {path}")
