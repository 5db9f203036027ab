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
