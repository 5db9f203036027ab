"""textwrap: TextWrapper instances and the class cannot be modified by a snippet, and its shared
translation table must not stay changed for the host (in-process, it is put back after the run;
in a worker the change dies with the single-use process).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


TEXTWRAP_CLOSED = [
    ("TextWrapper instance write", "import textwrap\ntw = textwrap.TextWrapper()\ntw.width = 3\nreturn 1",
     "exception", ["cannot modify"]),
    ("host class write", "import textwrap\ntextwrap.TextWrapper.width = 1\nreturn 1", "exception",
     ["only classes defined in the snippet"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", TEXTWRAP_CLOSED, ids=[c[0] for c in TEXTWRAP_CLOSED])
async def test_textwrap_writes_refused(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


# == closed: TextWrapper.unicode_whitespace_trans is a shared host dict, put back after a run ==
#
# Readable as a public class attribute (and also handed to a str subclass's `translate` by
# `_munge_whitespace`); mutating it changes `textwrap.wrap/fill` for the whole host process.
TEXTWRAP_POISON = """
import textwrap
got = []
class S(str):
    def expandtabs(self, n):
        return self
    def translate(self, table):
        got.append(table)
        return str(self)
textwrap.TextWrapper(width=10).wrap(S("a b"))
if got:
    got[0][ord("q")] = "Z"
else:
    textwrap.TextWrapper.unicode_whitespace_trans[ord("q")] = "Z"
return textwrap.fill("qqq")
"""


def test_textwrap_translate_table_not_shared(isolated):
    # The table is recorded when the shared state is frozen and put back after the run
    # (`sandbox.crossing`); during the run, the change is the run's own.
    check = "import textwrap\nstate = textwrap.fill('qqq')"
    report = isolated(TEXTWRAP_POISON, check)
    assert report["before"] == "qqq"
    assert report["after"] == report["before"], "the snippet changed textwrap for the host"


async def test_textwrap_poisoning_confined_to_worker(sb):
    nxt = await sb.assert_confined_to_worker(TEXTWRAP_POISON, "import textwrap\nreturn textwrap.fill('qqq')")
    assert nxt.value == "qqq"


TEXTWRAP_HARMLESS = [
        (
            "textwrap_subclass_public_overrides",
            "import textwrap\nclass W(textwrap.TextWrapper):\n    def wrap(self, text):\n        return ['w']\n"
            "return [W(width=5).fill('aaa bbb ccc'), textwrap.shorten('a b c d e f', 5)]",
            ["w", "[...]"],
        ),
]


@pytest.mark.parametrize("name, code, expected", TEXTWRAP_HARMLESS, ids=[c[0] for c in TEXTWRAP_HARMLESS])
async def test_textwrap_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)
