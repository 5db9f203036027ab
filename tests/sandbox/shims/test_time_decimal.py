"""`time.strptime` and `decimal`'s signals, as CPython has them."""

from __future__ import annotations

from sandbox_helpers import run


def test_time_strptime_signature_errors_are_cpythons() -> None:
    code = (
        "import time\nout = []\nfor f in [lambda: time.strptime('a', 'b', 'c'), lambda: time.strptime(),"
        " lambda: time.strptime(string='x')]:\n    try:\n        f()\n    except TypeError as e:\n"
        "        out.append(str(e))\nreturn out + [time.strptime('2024-06-15', '%Y-%m-%d').tm_mday]"
    )
    assert run(code).value == [
        "_strptime_time() takes from 1 to 2 positional arguments but 3 were given",
        "_strptime_time() missing 1 required positional argument: 'data_string'",
        "strptime() takes no keyword arguments",
        15,
    ]


def test_decimal_has_every_signal() -> None:
    code = (
        "from decimal import ConversionSyntax, Decimal, DivisionImpossible, DivisionUndefined, "
        "InvalidContext, InvalidOperation\n"
        "try:\n    Decimal('1E+30') // Decimal('0.001')\nexcept InvalidOperation as e:\n    caught = str(e)\n"
        "return [caught, issubclass(DivisionImpossible, InvalidOperation), issubclass(DivisionUndefined, InvalidOperation),"
        " issubclass(ConversionSyntax, InvalidOperation), issubclass(InvalidContext, InvalidOperation)]"
    )
    result = run(code)
    assert result.error is None, result.error
    assert result.value == ["[<class 'decimal.DivisionImpossible'>]", True, True, True, True]
