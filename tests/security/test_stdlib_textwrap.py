"""textwrap: TextWrapper instances and the class cannot be modified by a snippet, and its
translation table cannot be changed for the host: the sandbox's TextWrapper munges an exact
`str` copy (a subclass's `translate` never sees the table) and holds the table read-only; and
whatever shared state a run changes is put back after it in-process.
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


# == closed: TextWrapper.unicode_whitespace_trans was a shared host dict ==
#
# Readable as a public class attribute (and also handed to a str subclass's `translate` by
# `_munge_whitespace`); mutating it changed `textwrap.wrap/fill` for the whole host process.
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


async def test_textwrap_poisoning_is_refused_in_the_worker(sb):
    result = await sb.run(TEXTWRAP_POISON)
    sb.assert_error(result, "exception", "TypeError", "'mappingproxy' object does not support item assignment")
    nxt = await sb.run("import textwrap\nreturn textwrap.fill('qqq')")
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


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_no_route_reaches_a_writable_textwrap_table(sb, backend):
    code = (
        "import textwrap\nout = []\n"
        "class S(str):\n    def translate(self, table):\n        out.append('translate')\n        return str(self)\n"
        "out.append(textwrap.fill(S('a\\tb c'), 3))\n"
        "out.append([c.__name__ for c in textwrap.TextWrapper.__mro__])\n"
        "for c in textwrap.TextWrapper.mro():\n"
        "    table = getattr(c, 'unicode_whitespace_trans', None)\n"
        "    if table is not None:\n"
        "        try:\n            table[113] = 'Z'\n        except TypeError as e:\n            out.append(str(e))\n"
        "out.append(textwrap.fill('qqq'))\nreturn out"
    )
    result = await sb.run(code, backend=backend)
    assert result.error is None, result.error
    assert result.value == ["a\nb c", ["TextWrapper", "object"],
                            "'mappingproxy' object does not support item assignment", "qqq"]
