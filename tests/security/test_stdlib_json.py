"""json: hooks, `cls=` and `default=` are plain calls that see plain data, dict subclasses only
shape the output, and a deeply nested document is a RecursionError, not a crash.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


JSON_CLOSED = [
    pytest.param("import json\nreturn json.loads('[' * 200000 + ']' * 200000)", "exception",
                 ["RecursionError"], id="json-deep-recursion"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), JSON_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_json_closed_paths(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


JSON_CALLBACKS = [
    (
        "json.loads hooks",
        "import json\nseen = []\ndef hook(*a):\n    seen.append([type(x).__name__ for x in a])\n    return a[0]\n"
        "json.loads('{\"a\": [1.5, 2, NaN]}', object_hook=hook, parse_float=hook, parse_int=hook, parse_constant=hook)\n"
        "json.loads('{\"a\": 1}', object_pairs_hook=hook)\nreturn seen",
        [["str"], ["str"], ["str"], ["dict"], ["list"]],
    ),
    (
        "json cls=",
        "import json\nseen = []\nclass D:\n    def __init__(self, **kw):\n        seen.append(sorted(kw))\n"
        "    def decode(self, s):\n        return 'decoded'\nreturn [json.loads('1', cls=D, x=1), seen]",
        ["decoded", [["x"]]],
    ),
    (
        "json default=",
        "import json\nseen = []\ndef default(o):\n    seen.append(type(o).__name__)\n    return 'x'\n"
        "return [json.dumps({'a': {1}, 'b': object()}, default=default, sort_keys=True), seen]",
        ['{"a": "x", "b": "x"}', ["set", "object"]],
    ),
]


@pytest.mark.parametrize("case", JSON_CALLBACKS, ids=[c[0] for c in JSON_CALLBACKS])
async def test_json_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


async def test_json_dict_subclass_items_only_shapes_output(sb):
    code = """
import json
class D(dict):
    def items(self):
        return [("a", 1)]
return [json.dumps(D(z=2)), json.dumps(D(z=2), indent=1, sort_keys=True)]
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == ['{"a": 1}', '{\n "a": 1\n}']


JSON_HARMLESS = [
        (
            "json_loads_cls_is_a_plain_call",
            "import json\nseen = []\ndef cls(**kw):\n    seen.append(sorted(kw))\n    class D:\n"
            "        def decode(self, s):\n            return s\n    return D()\n"
            "return [json.loads('[1]', cls=cls, parse_int=str), seen]",
            ["[1]", [["parse_int"]]],
        ),
        (
            "json_dumps_cls_and_default",
            "import json\nclass O:\n    pass\nreturn json.dumps({'a': O()}, default=lambda o: type(o).__name__)",
            '{"a": "O"}',
        ),
        (
            "json_hooks_get_plain_data",
            "import json\nseen = []\ndef hook(pairs):\n    seen.append(pairs)\n    return 1\n"
            "json.loads('{\"a\": {\"b\": 2}}', object_pairs_hook=hook)\nreturn seen",
            [[["b", 2]], [["a", 1]]],
        ),
]


@pytest.mark.parametrize("name, code, expected", JSON_HARMLESS, ids=[c[0] for c in JSON_HARMLESS])
async def test_json_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)
