"""`io` and `csv`: in-memory streams only; no file, descriptor or buffer view comes out, and
nothing is written on the host."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

REFUSED = [
    pytest.param("import io\nreturn io.open(SECRET_PATH).read()", ["has no attribute 'open'"], id="io-open"),
    pytest.param("import io\nreturn io.FileIO(SECRET_PATH).read()", ["has no attribute 'FileIO'"], id="io-fileio"),
    pytest.param("import io\nreturn str(io.BytesIO(b'x').getbuffer())", ["getbuffer() is not available"], id="getbuffer"),
    pytest.param("import io\nreturn io.StringIO().fileno()", ["fileno"], id="stringio-fileno"),
    pytest.param("import csv\ncsv.field_size_limit(1)\nreturn 1", ["has no attribute 'field_size_limit'"],
                 id="csv-global-limit"),
    pytest.param("import csv\ncsv.register_dialect('x', delimiter=';')\nreturn 1", ["has no attribute 'register_dialect'"],
                 id="csv-global-dialects"),
    pytest.param("import io\nf = io.StringIO()\nf.name = OUT_PATH\nreturn 1", ["cannot modify"], id="stringio-attr-write"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "fragments"), REFUSED)
async def test_files_stay_out_of_reach(sb, backend, code, fragments):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", *fragments)
    await sb.assert_next_run_ok(backend)


async def test_a_csv_bomb_hits_the_memory_limit_not_the_host(sb):
    code = "import csv, io\nbuf = io.StringIO()\nw = csv.writer(buf)\nwhile True:\n    w.writerow(['x' * 100000] * 10)"
    # The memory limit must end it, on a busy machine too: the time limits are far away.
    result = await sb.run_heavy(code, memory=64 * 1024 * 1024)
    sb.assert_error(result, "memory")
    await sb.assert_next_run_ok()
