"""Classes the snippet builds at run time: three-argument `type()`, data-model methods assigned
after the class exists, names a class body's namespace starts with, attribute writes CPython
refuses itself, and `from __future__` statements at the top of a program."""

from __future__ import annotations

import pytest
from sandbox_helpers import run

CASES = {
    "type-three-args": (
        "def init(self, v):\n    self.v = v\n"
        "M = type('M', (), {'__init__': init, 'double': lambda self: self.v * 2, 'k': 1})\n"
        "m = M(21)\nM.extra = 5\nsetattr(M, 'w', 6)\n"
        "return [M.__name__, M.__qualname__, M.__module__, m.double(), M.k, M.extra, M.w, type(m) is M]",
        ["M", "M", "__snippet__", 42, 1, 5, 6, True],
    ),
    "type-namespace-is-copied": (
        "d = {'x': 1}\nB = type('B', (), d)\nd['y'] = 2\ntry:\n    B.y\nexcept AttributeError as e:\n"
        "    return [B.x, str(e)]",
        [1, "type object 'B' has no attribute 'y'"],
    ),
    "type-with-bases-and-kwargs": (
        "class Base:\n    def __init_subclass__(cls, tag=None):\n        cls.tag = tag\n"
        "S = type('S', (Base,), {}, tag='t')\nreturn [S.tag, issubclass(S, Base), type(type) is type, "
        "type(int) is type]",
        ["t", True, True, True],
    ),
    "type-argument-errors": (
        "out = []\nfor args, kw in [((), {}), (('A', ()), {}), ((1,), {'x': 1}), ((1, (), {}), {}),"
        " ((None, (), {}), {}), (('A', [], {}), {}), (('A', (), []), {}), (('A', (), {}), {'x': 1})]:\n"
        "    try:\n        type(*args, **kw)\n    except TypeError as e:\n        out.append(str(e))\nreturn out",
        ["type() takes 1 or 3 arguments", "type() takes 1 or 3 arguments",
         "type() takes no keyword arguments", "type.__new__() argument 1 must be str, not int",
         "type.__new__() argument 1 must be str, not None",
         "type.__new__() argument 2 must be tuple, not list",
         "type.__new__() argument 3 must be dict, not list",
         "A.__init_subclass__() takes no keyword arguments"],
    ),
    "dunder-written-on-own-class": (
        "class P:\n    pass\np = P()\nP.__call__ = lambda self: 'called'\nP.__getitem__ = lambda self, k: k * 2\n"
        "P.__neg__ = lambda self: -1\nreturn [p(), p[3], -p]",
        ["called", 6, -1],
    ),
    "dunder-written-on-own-instance-is-inert": (
        "class C:\n    def __getitem__(self, k):\n        return 'class'\nc = C()\nc.__getitem__ = None\n"
        "c.__call__ = lambda: 1\ntry:\n    c()\nexcept TypeError as e:\n    return [c['k'], str(e)]",
        ["class", "'C' object is not callable"],
    ),
    "deepcopy-hook-written-on-own-class": (
        "import copy\nclass C:\n    pass\nC.__deepcopy__ = lambda self, memo: 'deep'\nC.__copy__ = lambda self: 'shallow'\n"
        "r = [copy.deepcopy(C()), copy.copy(C())]\ndel C.__deepcopy__\nreturn r + [type(copy.deepcopy(C())).__name__]",
        ["deep", "shallow", "C"],
    ),
    "copy-hooks-switched-off": (
        "import copy\nclass O:\n    __copy__ = None\n    __deepcopy__ = None\n    def __init__(self):\n"
        "        self.items = [1]\no = O()\nd = copy.deepcopy(o)\ns = copy.copy(o)\n"
        "return [d.items is not o.items, s.items is o.items, type(d).__name__]",
        [True, True, "O"],
    ),
    "class-body-names": (
        "class D:\n    'the docs'\n    y = __doc__\n    m = __module__\n    q = __qualname__\n"
        "class U:\n    pass\nreturn [D.y, D.m, D.q.endswith('D'), D.__doc__, U.__doc__]",
        ["the docs", "__snippet__", True, "the docs", None],
    ),
    "class-body-names-elsewhere-undefined": (
        "try:\n    __doc__\nexcept NameError as e:\n    return str(e)",
        "name '__doc__' is not defined",
    ),
    "immutable-attribute-writes": (
        "out = []\nx = 5\nfor f in [lambda: setattr(x, 'foo', 1), lambda: delattr('s', 'foo')]:\n"
        "    try:\n        f()\n    except AttributeError as e:\n        out.append(str(e))\n"
        "try:\n    x.real = 2\nexcept AttributeError as e:\n    out.append(str(e))\nreturn out",
        ["'int' object has no attribute 'foo'", "'str' object has no attribute 'foo'",
         "attribute 'real' of 'int' objects is not writable"],
    ),
    "future-annotations": (
        "'''A program.'''\nfrom __future__ import annotations\nfrom __future__ import generator_stop\n"
        "def f(a: Undefined) -> int:\n    return a\nreturn f.__annotations__",
        {"a": "Undefined", "return": "int"},
    ),
    "id-reused-after-lifetime": (
        "a = []\nreturn [id([]) == id([]), id(a) == id(a), id(a) != id([])]",
        [True, True, True],
    ),
    "run-builtins-look-like-builtins": (
        "out = [repr(print), repr(id), repr(getattr), print.__name__]\nfor f in [lambda: print(**1), lambda: id(*1),"
        " lambda: type(**1), lambda: print('x', foo=1)]:\n    try:\n        f()\n    except TypeError as e:\n"
        "        out.append(str(e))\nreturn out",
        ["<built-in function print>", "<built-in function id>", "<built-in function getattr>", "print",
         "print() argument after ** must be a mapping, not int",
         "id() argument after * must be an iterable, not int",
         "type() argument after ** must be a mapping, not int",
         "'foo' is an invalid keyword argument for print()"],
    ),
    # Three things that failed before where CPython works (a review's honest snippets).
    "dataclass-with-string-annotations": (
        "from dataclasses import dataclass, field\n@dataclass\nclass Node:\n    value: int\n"
        "    children: 'list[Node]' = field(default_factory=list)\nreturn repr(Node(1, [Node(2)]))",
        "Node(value=1, children=[Node(value=2, children=[])])",
    ),
    # `@dataclass` reads `'ClassVar[...]'` and `'InitVar[...]'` strings as CPython does.
    "dataclass-with-string-classvar-and-initvar": (
        "import dataclasses\nfrom typing import ClassVar\nfrom dataclasses import InitVar\n"
        "@dataclasses.dataclass\nclass P:\n    kind: 'ClassVar[str]' = 'p'\n    scale: 'InitVar[int]' = 2\n"
        "    x: 'int' = 1\n    def __post_init__(self, scale):\n        self.x *= scale\n"
        "return [[f.name for f in dataclasses.fields(P)], repr(P(scale=5)), P.kind]",
        [["x"], "P(x=5)", "p"],
    ),
    "class-keywords-named-like-the-factorys-parameters": (
        "class Plugin:\n    def __init_subclass__(cls, name='', namespace='', bases=(), **kw):\n"
        "        super().__init_subclass__(**kw)\n        cls.label = [name, namespace, list(bases)]\n"
        "class A(Plugin, name='alpha', namespace='api', bases=(1,)):\n    pass\n"
        "B = type('B', (Plugin,), {}, name='beta')\nreturn [A.label, B.label]",
        [["alpha", "api", [1]], ["beta", "", []]],
    ),
    "async-comprehension": (
        "async def agen():\n    for i in range(3):\n        yield i\n"
        "return [[x async for x in agen()], {x async for x in agen()} == {0, 1, 2}]",
        [[0, 1, 2], True],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_classes(name: str, backend: str) -> None:
    code, expected = CASES[name]
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == expected


SYNTAX = {
    "future-unknown": ("from __future__ import teleportation\nreturn 1",
                       "line 1: invalid syntax: future feature teleportation is not defined\n"
                       "    from __future__ import teleportation\n                           ^"),
    "future-braces": ("from __future__ import braces", "line 1: invalid syntax: not a chance"),
    "future-not-first": ("x = 1\nfrom __future__ import annotations",
                         "line 2: invalid syntax: from __future__ imports must occur at the beginning of the file"),
    "future-in-def": ("def f():\n    from __future__ import annotations\nreturn 1",
                      "line 2: invalid syntax: from __future__ imports must occur at the beginning of the file"),
}


@pytest.mark.parametrize("name", sorted(SYNTAX))
def test_future_statements_are_judged_as_at_the_top_of_a_file(name: str) -> None:
    code, message = SYNTAX[name]
    result = run(code)
    assert result.error is not None and result.error.kind == "syntax"
    assert result.error.message.startswith(message), result.error.message
