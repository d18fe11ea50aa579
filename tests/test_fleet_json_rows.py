"""Large Prometheus answers are decoded in slices of rows (gpudash.fleet.json_rows) with the same result as
json.loads for every input, and no single hold of the interpreter as long as json.loads's of the whole answer."""

from __future__ import annotations

import json
import threading
import time

import pytest

from gpudash.fleet import json_rows
from gpudash.fleet.json_rows import LARGE_BYTES, decode

pytestmark = pytest.mark.light


def answer(rows: int, *, extra: str = "", comma: str = ",") -> bytes:
    row = (
        '{"metric":{"__name__":"gpudash_precision_verified","UUID":"GPU-%d","hostname":"sim-%d","precision":"bf16",'
        '"label":"with }] and },{\\"metric\\": and \\\\ inside"},"value":[1795851471.466,"1"]}'
    )
    result = comma.join(row % (i, i // 8) for i in range(rows))
    return ('{"status":"success","data":{"resultType":"vector","result":[' + result + "]}" + extra + "}").encode()


@pytest.mark.parametrize("comma", [",", ", "])  # Prometheus's compact JSON, and spaced JSON (decoded whole)
def test_a_large_answer_decodes_exactly_as_json_loads_does(comma):
    body = answer(40_000, extra=',"warnings":["a warning that says \\"result\\":[{\\"metric\\": too"]', comma=comma)
    assert len(body) > LARGE_BYTES
    assert decode(body) == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"status":"success","data":{"resultType":"vector","result":[]}}',
        b'{"status":"error","errorType":"bad_data","error":"parse error"}',
        b'{"data":{"result":[1,2,3]},"status":"success"}',
        b'{"odd":"\\"result\\":[","data":{"result":[{"a":1}]}}',
        b"[1, 2, 3]",
        b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"}]"},"value":[1,"2"]}]}}',
        b'{"status":"success","data":{"result":[{"metric":{"x":[{"y":1}]},"value":[1,"2"]},{"metric":{}}]}}',
    ],
)
def test_other_shapes_give_what_json_loads_gives(monkeypatch, body):
    monkeypatch.setattr(json_rows, "LARGE_BYTES", 0)  # every answer takes the row-by-row path
    assert decode(body) == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"data":{"result":[{"a":1},,]}}',
        b'{"data":{"result":[{"a":1}]',
        b"\xff\xfe",
        b'{"data":{"result":[{"a":1} {"b":2}]}}',
    ],
)
def test_broken_answers_raise_as_json_loads_does(monkeypatch, body):
    monkeypatch.setattr(json_rows, "LARGE_BYTES", 0)
    with pytest.raises(ValueError):
        json.loads(body)
    with pytest.raises(ValueError):
        decode(body)


def test_another_thread_runs_while_a_large_answer_is_decoded():
    body = answer(150_000)
    started = time.perf_counter()
    json.loads(body)
    whole = time.perf_counter() - started  # one hold of the interpreter, this long

    gaps: list[float] = []
    done = threading.Event()

    def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    try:
        decode(body)
    finally:
        done.set()
        thread.join()
    # The ticker's longest wait is the scheduler's, not the whole decode's (a loaded machine adds to both).
    assert max(gaps) < whole / 2, (max(gaps), whole)
