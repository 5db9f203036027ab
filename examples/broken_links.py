# ruff: noqa: F704, F821
"""Find Markdown links to local files that do not exist, checking every target in parallel.

Run: codemode run examples/broken_links.py
Shows error handling: a failed stat raises ToolCallError, which the program catches and counts.
"""
import asyncio
import re

links = (await tools.grep(pattern=r"\]\((?!https?:|#|mailto:)[^)\s]+\)", glob="*.md", limit=2000))["matches"]
targets = []
for match in links:
    folder = match["path"].rsplit("/", 1)[0] if "/" in match["path"] else "."
    prose = re.sub(r"`[^`]*`", "", match["text"])  # code spans are not links: tools["x"](...)
    for target in re.findall(r"\]\((?!https?:|#|mailto:)([^)\s#]+)", prose):
        targets.append((match["path"], match["line"], target if folder == "." else f"{folder}/{target}"))


async def exists(path):
    try:
        await tools.stat(path=path)
        return True
    except ToolCallError:
        return False

found = await asyncio.gather(*(exists(t) for _, _, t in targets))
broken = [(src, line, t) for (src, line, t), ok in zip(targets, found, strict=True) if not ok]
print(f"{len(targets)} local links in {len({s for s, _, _ in targets})} files, {len(broken)} broken")
for src, line, target in broken[:10]:
    print(f"  {src}:{line} -> {target}")
