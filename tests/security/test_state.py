"""Mutating shim modules, host classes and host objects, and state leaking from one run to the next.

Worker runs are checked in this process (the worker is the boundary). In-process runs that
could corrupt the host are run in a throw-away Python process (`isolated`), which reports the
host state before and after the snippet and the result of an innocent next run.
"""

from __future__ import annotations

import collections
import dataclasses
import fractions
import functools
import json
import random
import re

import pytest

pytestmark = pytest.mark.anyio


MUTATIONS = [
    pytest.param("import json\njson.dumps = lambda *a, **k: 'PWNED'\nreturn json.dumps(1)",
                 ["TypeError", "cannot modify <module 'json' (sandbox)>"], id="assign-json-dumps"),
    pytest.param("import json\nsetattr(json, 'dumps', print)\nreturn 1",
                 ["TypeError", "cannot modify <module 'json' (sandbox)>"], id="setattr-json-dumps"),
    pytest.param("import json\ndel json.loads\nreturn 1",
                 ["TypeError", "cannot modify <module 'json' (sandbox)>"], id="del-json-loads"),
    pytest.param("import math\nmath.pi = 3\nreturn math.pi",
                 ["TypeError", "cannot modify <module 'math' (sandbox)>"], id="assign-math-pi"),
    pytest.param("from collections import Counter\nCounter.most_common = lambda self, n=None: 'PWNED'\nreturn 1",
                 ["TypeError", "cannot modify class 'Counter'"], id="assign-Counter-method"),
    pytest.param("import collections\nsetattr(collections.Counter, 'most_common', print)\nreturn 1",
                 ["TypeError", "cannot modify class 'Counter'"], id="setattr-Counter-method"),
    pytest.param("import collections\ndelattr(collections.OrderedDict, 'move_to_end')\nreturn 1",
                 ["TypeError", "cannot modify class 'OrderedDict'"], id="delattr-OrderedDict"),
    pytest.param("str.upper = str.lower\nreturn 'a'.upper()",
                 ["TypeError", "cannot modify class 'str'"], id="assign-str-method"),
    pytest.param("import dataclasses, collections\ndataclasses.dataclass(collections.Counter)\nreturn 1",
                 ["TypeError", "@dataclass only applies to classes defined in the snippet"], id="dataclass-on-host-class"),
    pytest.param("import dataclasses, fractions\ndataclasses.dataclass(frozen=True)(fractions.Fraction)\nreturn 1",
                 ["TypeError", "@dataclass only applies"], id="dataclass-factory-on-host-class"),
    pytest.param("import functools, fractions\nfunctools.total_ordering(fractions.Fraction)\nreturn 1",
                 ["TypeError", "total_ordering only applies"], id="total_ordering-on-host-class"),
    pytest.param("import re\np = re.compile('a')\np.flags = 0\nreturn 1",
                 ["TypeError", "cannot modify attributes of a 'Pattern'"], id="assign-pattern-attr"),
    pytest.param("import random\nrandom.random = lambda: 4\nreturn 1",
                 ["TypeError", "cannot modify <module 'random' (sandbox)>"], id="assign-random"),
    pytest.param("import enum\nenum.Enum.extra = 1\nreturn 1",
                 ["TypeError", "cannot modify class"], id="assign-enum-class"),
    pytest.param("import copy, json\nj = copy.copy(json)\nreturn 1",
                 ["TypeError", "cannot pickle 'module' object"], id="copy-shim"),
    pytest.param("import copy, re\nj = copy.deepcopy(re)\nreturn 1",
                 ["TypeError", "cannot pickle 'module' object"], id="deepcopy-shim"),
    pytest.param("import json\njson.dumps.x = 1\nreturn 1",
                 ["TypeError", "cannot modify attributes of a 'function' object"], id="assign-on-host-function"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "fragments"), MUTATIONS)
async def test_shim_and_class_mutation_refused(sb, backend, code, fragments):
    # The first in-process run of a process freezes the shared classes, which gives a class
    # without annotations a read-only empty `__annotations__` (crossing.make_immutable): the
    # sandbox's own change, made before any snippet runs, so the snapshot is taken after it.
    assert (await sb.run("return 0", backend=backend)).ok
    snapshot = (json.dumps, collections.Counter.most_common, random.random, re.compile,
                dict(vars(collections.Counter)), dict(vars(fractions.Fraction)))
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", *fragments)
    assert snapshot == (json.dumps, collections.Counter.most_common, random.random, re.compile,
                        dict(vars(collections.Counter)), dict(vars(fractions.Fraction)))
    assert not dataclasses.is_dataclass(collections.Counter)
    following = await sb.run(
        "import json, math, collections, random\n"
        "return [json.dumps([1]), math.pi > 3.14, collections.Counter('aab').most_common(1), 'a'.upper()]",
        backend=backend,
    )
    assert following.ok, following
    assert following.value == ["[1]", True, [["a", 2]], "A"]


# `__init__` is readable, so a snippet can re-run a host object's constructor on it (or on any
# other object, since Python functions do not check `self`). In a worker this only dirties a
# single-use process; in-process it changes shared state.
INIT_REINIT = [
    pytest.param(
        "import json\njson.__init__('json', {'dumps': lambda *a, **k: 'PWNED'})\nreturn 1",
        # Builds the shared json shim before the run, so a poisoned one would show after it.
        "import sandbox.shims as s\nfrom sandbox.guards import RunGuards\n"
        "state = s.ShimSet(RunGuards(), {}).get('json').dumps([1])",
        id="reinit-shared-json-shim",
    ),
    pytest.param(
        "import uuid\nuuid.NAMESPACE_DNS.__init__('12345678123456781234567812345678')\nreturn 1",
        "import uuid\nstate = str(uuid.NAMESPACE_DNS)",
        id="reinit-host-uuid-constant",
    ),
    pytest.param(
        "import difflib, collections\ndifflib.SequenceMatcher.__init__(collections.Counter)\nreturn 1",
        "import collections\nstate = sorted(k for k in vars(collections.Counter) if not k.startswith('_'))",
        id="init-as-setattr-gadget-on-host-class",
    ),
    pytest.param(
        "import typing\ntyping.List.__init__(dict, (), name='List')\nreturn 1",
        "import typing\nstate = repr(typing.List.__origin__)",
        id="reinit-host-typing-alias",
    ),
    pytest.param(
        "import textwrap\ntextwrap.TextWrapper.__init__(textwrap.TextWrapper, width=3)\nreturn 1",
        "import textwrap\nstate = getattr(textwrap.TextWrapper, 'width', None)",
        id="init-sets-host-class-attributes",
    ),
]


@pytest.mark.parametrize(("code", "check"), INIT_REINIT)
def test_inprocess_host_state_untouched(isolated, code, check):
    report = isolated(code, check)
    assert not report["hung"]
    # The read is refused at run time: `__init__` outside `super()` only where the snippet's own
    # class defines it ...
    assert report["result"]["error"] is not None, report["result"]
    assert report["result"]["error"]["kind"] == "exception"
    assert 'AttributeError: attribute "__init__" is not accessible' in report["result"]["error"]["message"]
    # ... and in any case the host and the next run must be untouched.
    assert report["after"] == report["before"]
    assert report["next"]["value"] == "[1]"


def test_the_put_back_covers_what_the_imported_module_reaches(isolated):
    # What the crawl of a whole stdlib module records went only to the first group that reached
    # the module: a review wrote onto `typing._GenericAlias.copy_with` (recorded under
    # `tomllib`) in a run that imported `typing` alone, and the write outlived the run.
    code = "import typing\nf = type(typing.List[int]).copy_with\nreturn type(list[int])(lambda: f, (int,))() is f"
    check = "import typing\nstate = sorted(typing._GenericAlias.copy_with.__dict__)"
    report = isolated(code, check)
    assert not report["hung"]
    assert report["result"]["value"] is True, report["result"]
    assert report["before"] == report["after"] == []
    assert report["next"]["value"] == "[1]"


def test_a_prelude_init_is_no_setattr_gadget_on_a_host_class(isolated):
    # `string.Template` is the run's own prelude class, so its `__init__` is readable as a
    # snippet class's is; it writes with the snippet's rights, which refuse a host class.
    report = isolated(
        "import string, collections\nstring.Template.__init__(collections.Counter, 'x')\nreturn 1",
        "import collections\nstate = sorted(k for k in vars(collections.Counter) if not k.startswith('_'))",
    )
    assert not report["hung"]
    assert report["result"]["error"] is not None, report["result"]
    assert "TypeError: cannot modify class 'Counter'" in report["result"]["error"]["message"]
    assert report["after"] == report["before"]
    assert report["next"]["value"] == "[1]"


def test_inprocess_decimal_context_untouched(isolated):
    report = isolated(
        "import decimal\nx = decimal.Decimal(1) / decimal.Decimal(3)\nreturn str(x)[:4]",
        "import decimal\nstate = sorted(k.__name__ for k, v in decimal.getcontext().flags.items() if v)",
    )
    assert report["result"]["value"] == "0.33"
    assert report["after"] == report["before"] == []


def test_inprocess_decimal_context_writes_stay_in_the_run(isolated):
    # `getcontext()` is the run's own context and a new `Context()` the snippet's own object
    # (both writable since issue 12); the host thread's context, `DefaultContext` and the
    # stdlib's `BasicContext`/`ExtendedContext` (the shim hands out copies) stay as they were.
    report = isolated(
        "import decimal\ndecimal.getcontext().prec = 3\nc = decimal.Context()\nc.prec = 2\n"
        "decimal.BasicContext.prec = 1\ndecimal.ExtendedContext.prec = 1\n"
        "decimal.setcontext(c)\nreturn [str(decimal.Decimal(1) / decimal.Decimal(3)), decimal.getcontext().prec]",
        "import decimal\nstate = [decimal.getcontext().prec, decimal.DefaultContext.prec, "
        "decimal.BasicContext.prec, decimal.ExtendedContext.prec]",
    )
    assert report["result"]["value"] == ["0.33", 2]
    assert report["after"] == report["before"] == [28, 28, 9, 9]
    assert report["next"]["value"] == "[1]"


async def test_worker_reinit_of_shim_does_not_outlive_the_run(sb):
    poisoned = await sb.run("import json\njson.__init__('json', {'dumps': lambda *a, **k: 'PWNED'})\nreturn json.dumps(1)")
    following = await sb.run("import json\nreturn json.dumps([1])")
    assert following.ok and following.value == "[1]"
    assert poisoned.error is not None and poisoned.error.kind == "exception"
    assert 'attribute "__init__" is not accessible' in poisoned.error.message


LEAKS = [
    pytest.param("leaked_global = 'x'\nreturn 1", "return leaked_global",
                 ["NameError", "'leaked_global' is not defined"], id="global"),
    pytest.param("def helper():\n    global counter\n    counter = 99\nhelper()\nreturn counter",
                 "return counter", ["NameError", "'counter' is not defined"], id="global-from-function"),
    pytest.param("len = None\nprint = None\nreturn 1", "print(len([1]))\nreturn undefined_name",
                 ["NameError", "'undefined_name' is not defined"], id="shadowed-builtins"),
    pytest.param("class Keep:\n    x = 1\nKeep.x = 2\nreturn Keep.x", "return Keep.x",
                 ["NameError", "'Keep' is not defined"], id="class-attributes"),
    pytest.param("import functools\n@functools.lru_cache\ndef f(x):\n    return x\nf(1)\nreturn 1",
                 "return f.cache_info().hits", ["NameError", "'f' is not defined"], id="lru-cache"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("first", "second", "fragments"), LEAKS)
async def test_no_state_between_runs(sb, backend, first, second, fragments):
    r1 = await sb.run(first, backend=backend)
    assert r1.ok, r1
    r2 = await sb.run(second, backend=backend)
    sb.assert_error(r2, "exception", *fragments)
    if "print(len" in second:
        assert r2.logs == ["1"]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_random_seed_does_not_leak(sb, backend):
    host_state = random.getstate()
    seeded = await sb.run("import random\nrandom.seed(1234)\nreturn [random.random() for _ in range(4)]", backend=backend)
    assert seeded.ok
    reference = random.Random(1234)
    assert seeded.value == [reference.random() for _ in range(4)]
    following = await sb.run("import random\nreturn [random.random() for _ in range(4)]", backend=backend)
    assert following.ok
    assert following.value != [reference.random() for _ in range(4)]
    assert random.getstate() == host_state
    # And two unseeded runs do not share a generator state either.
    again = await sb.run("import random\nreturn [random.random() for _ in range(4)]", backend=backend)
    assert again.value != following.value


async def test_functools_partial_is_harmless(sb):
    # partial.func is public: it only hands back what the snippet passed in.
    result = await sb.run("import functools, json\np = functools.partial(json.dumps, indent=1)\nreturn str(p.func) == str(json.dumps)")
    assert result.ok and result.value is True
    assert functools.partial is not None


HOST_OBJECT_WRITES = [
    # A new `decimal.Context()` is the snippet's own (writable, issue 12); the class is the host's.
    ("decimal Context write", "import decimal\ntype(decimal.getcontext()).prec = 3\nreturn 1", "exception",
     ["cannot modify class 'Context'"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", HOST_OBJECT_WRITES, ids=[c[0] for c in HOST_OBJECT_WRITES])
async def test_host_object_writes_refused(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


async def test_normaldist_samples_never_draw_from_the_hosts_generator(sb):
    """`statistics.NormalDist.samples` without a seed draws from `random`'s module-level
    generator, the host's: a review's run shifted the host's seeded sequence and saw its draws.
    The shim's `NormalDist`, and what its operators and `from_samples` make, draw from one of
    their own; a given seed still gives the stdlib's draws."""
    random.seed(5)
    expected = [random.random() for _ in range(3)]
    random.seed(5)
    code = ("import statistics\nd = statistics.NormalDist(0, 1)\ne = (d + 1) * 2 - 0.5\n"
            "f = statistics.NormalDist.from_samples([1.0, 2.0, 3.0])\n"
            "std = [c for c in type(d).__mro__ if c is not type(d) and c is not object]\n"
            "return [len(d.samples(50)), len(e.samples(5)), len((-f).samples(5)), type(e).__name__, e.mean,\n"
            "        d.samples(2, seed=1) == statistics.NormalDist(0, 1).samples(2, seed=1), std]")
    result = await sb.run(code, backend="inprocess")
    # The stdlib class is in no MRO the snippet sees (a later review drew from it through one).
    assert result.value == [50, 5, 5, "NormalDist", 1.5, True, []], result
    assert [random.random() for _ in range(3)] == expected


async def test_text_a_run_chose_is_not_kept_in_stdlib_caches(sb):
    """The stdlib's caches keyed on text (`fnmatch` 32,768 patterns, `re` 512, `urllib.parse`'s
    URLs and `safe` sets, `struct`'s formats) keep each entry as large as a run makes it: a
    review left a 20 MB URL in `urlsplit`'s cache after the run, and a later run's same call was
    a hit. After the run none of the run's text is there, and the host's next calls still work."""
    import fnmatch
    import struct
    import urllib.parse

    marker = "q7marker"
    code = (
        "import fnmatch, re, struct, urllib.parse\n"
        f"m = '{marker}' * 1000\n"
        "out = [fnmatch.fnmatch('a', m + '*'), bool(re.match(m, 'a')), re.sub('a', m, 'b'),\n"
        "       urllib.parse.urlsplit('http://h/' + m).netloc, urllib.parse.quote(b'a/', safe=m),\n"
        "       struct.calcsize('<' + 'i' * 200)]\n"
        "return [out[0], out[1], out[2], out[3], out[4], out[5]]"
    )
    result = await sb.run(code, backend="inprocess")
    assert result.error is None and result.value == [False, False, "b", "h", "a%2F", 800], result

    def held(keys) -> bool:
        return any(marker in repr(key) for key in keys)

    assert fnmatch._compile_pattern.cache_info().currsize == 0
    assert urllib.parse.urlsplit.cache_info().currsize == 0
    assert urllib.parse._byte_quoter_factory.cache_info().currsize == 0
    assert not held(re._cache) and re._compile_repl.cache_info().currsize == 0
    assert fnmatch.fnmatch("ab", "a*") and urllib.parse.urlsplit("http://x/").netloc == "x"
    assert struct.calcsize("<ii") == 8
