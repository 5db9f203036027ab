"""export_models: a pydantic module from datamodel-code-generator, stable, with fallbacks."""

from __future__ import annotations

from sdkgen_helpers import load_corpus, load_module

from sdk_gen import ToolSpec, export_models


def test_corpus_models_compile_and_validate():
    corpus = load_corpus()[:6]
    source = export_models(corpus)
    assert source == export_models(list(reversed(corpus)))
    module = load_module(source)
    assert module.BrowserTypeInput(ref="e1", text="hi").text == "hi"


def test_hostile_schemas_fall_back_to_open_objects():
    tools = [
        ToolSpec("ok", "", {"type": "object", "properties": {"q": {"type": "string"}}}),
        ToolSpec("bad", "", {"type": "object", "properties": {"x": False, "y": {"type": "wat"}}}),
        ToolSpec("worse", "", 42),
    ]
    module = load_module(export_models(tools))
    assert module.OkInput(q="x").q == "x"
    assert hasattr(module, "WorseInput")


# --- no schema shapes the generated code ---------------------------------------------------------

import ast  # noqa: E402
import enum  # noqa: E402
import sys  # noqa: E402

import pydantic  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: Every module the generated code may import: the generator's own, and the standard-library
#: types of the formats kept.
ALLOWED_IMPORTS = {"__future__", "typing", "enum", "pydantic", "datetime", "uuid", "ipaddress", "decimal"}
#: Module-level names a generated class may derive from.
ALLOWED_BASES = {"BaseModel", "RootModel", "Enum", "IntEnum", "StrEnum"}
PLANTED = "codemode_planted_module"
SHAPING = {
    "customTypePath": f"{PLANTED}.Evil",
    "customBasePath": f"{PLANTED}.Evil",
    "x-python-type": f"{PLANTED}.Evil",
    "x-python-import": {"module": PLANTED, "name": "Evil"},
    "x-python-base-class": f"{PLANTED}.Evil",
    "customTypeName": "Evil",
    "x-enum-varnames": ["os"],
    "format": "email",
    "title": "BaseModel",
}


def _imports_and_bases(source: str) -> tuple[set[str], set[str]]:
    tree = ast.parse(source)
    modules: set[str] = set()
    bases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add((node.module or "").split(".")[0])
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                target = base.value if isinstance(base, ast.Subscript) else base
                bases.add(ast.unparse(target))
    return modules, bases


def _assert_plain(source: str) -> None:
    modules, bases = _imports_and_bases(source)
    assert modules <= ALLOWED_IMPORTS, modules
    generated = {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)}
    assert bases <= ALLOWED_BASES | generated, bases
    before = set(sys.modules)
    module = load_module(source)
    assert PLANTED not in sys.modules and not {m for m in set(sys.modules) - before if not m.startswith("_sdk")}
    for value in vars(module).values():
        if isinstance(value, type) and value.__module__ == module.__name__:
            assert issubclass(value, (pydantic.BaseModel, enum.Enum)), value


def test_code_shaping_extensions_add_no_import_or_base_class():
    property_ = {"type": "string", **SHAPING}
    tools = [
        ToolSpec("typed", "", {"type": "object", "properties": {"x": property_}}),
        ToolSpec("based", "", {"type": "object", **SHAPING, "properties": {"x": {"type": "string"}}}),
        ToolSpec("nested", 'doc """\nimport os\n"""', {"type": "object", "properties": {"o": {
            "type": "object", **SHAPING, "properties": {"y": {"type": "integer", "enum": [1, 2], **SHAPING}},
        }}}),
    ]
    source = export_models(tools)
    assert PLANTED not in source
    _assert_plain(source)
    module = load_module(source)
    assert module.TypedInput(x="a").x == "a"  # the property survives, as a plain string


def test_validation_and_documentation_keywords_are_kept():
    schema = {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 9, "description": "How many."},
        "when": {"type": "string", "format": "date"},
    }, "required": ["n"]}
    module = load_module(export_models([ToolSpec("kept", "", schema)]))
    assert module.KeptInput(n=3, when="2026-01-02").when.year == 2026
    try:
        module.KeptInput(n=10)
    except pydantic.ValidationError:
        pass
    else:
        raise AssertionError("maximum was dropped")


_KEYS = st.sampled_from([*SHAPING, "type", "properties", "items", "enum", "default", "description",
                         "$ref", "allOf", "additionalProperties", "x-anything", "$id", "$schema"])
_SCALARS = st.one_of(st.sampled_from([f"{PLANTED}.Evil", "os.system", "object", "string", "email"]),
                     st.integers(), st.booleans(), st.none())
_SCHEMAS = st.recursive(
    st.dictionaries(_KEYS, _SCALARS, max_size=4),
    lambda inner: st.dictionaries(_KEYS, st.one_of(_SCALARS, inner, st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
                                                   st.lists(inner, max_size=2)), max_size=4),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SCHEMAS)
def test_no_schema_adds_an_import_or_a_base_class(schema):
    source = export_models([ToolSpec("t", "", {"type": "object", "properties": {"x": schema}, **schema})])
    _assert_plain(source)  # the planted name may appear as text (a title, a default), never as code
