"""Wire names to method names: valid, injective, order-free."""

from __future__ import annotations

import keyword

import pytest

from sdk_gen import map_names, sanitize_name


@pytest.mark.parametrize(
    ("wire", "method"),
    [
        ("grep", "grep"),
        ("fs.read-file", "fs_read_file"),
        ("2fa", "tool_2fa"),
        ("class", "class_"),
        ("describe", "describe_"),
        ("list", "list_"),
        ("search", "search_"),
        ("__init__", "tool__init__"),
        ("", "tool"),
        ("ﬁle", "file"),
        ("café-ü", "cafe_u"),
        ("搜索", "tool_"),
        ("None", "None_"),
    ],
)
def test_sanitize_name(wire, method):
    assert sanitize_name(wire) == method
    assert method.isidentifier() and not keyword.iskeyword(method)


def test_clashes_get_suffixes_and_valid_names_keep_themselves():
    mapping = map_names(["a-b", "a.b", "a_b", "a_b_2"])
    assert mapping == {"a-b": "a_b_3", "a.b": "a_b_4", "a_b": "a_b", "a_b_2": "a_b_2"}


def test_map_is_order_free():
    names = ["x-y", "x.y", "x_y", "2fa", "tool_2fa"]
    assert map_names(names) == map_names(reversed(names))
