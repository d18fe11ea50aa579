"""A Prometheus API answer decoded in slices of rows when it is large, so the dashboard's keys are never held up.

`json.loads` is one call into C that holds the GIL from start to end: 470 ms for the 24 MiB answer of
gpudash_precision_verified at 1,024 hosts x 8 GPUs and 15-55 ms for each 2.5 MiB answer of a live reading, while
the Fleet tab's UI thread, which needs the GIL dozens of times to take one key, waited for each
(docs/performance.md, "Fleet at 1,024 hosts through Prometheus"). Above LARGE_BYTES the answer's `result` array
is cut into slices of about SLICE_BYTES at row boundaries and each slice decoded on its own: the interpreter
may switch threads between two slices, and the decoding itself stays json.loads's.

A row boundary is `},{"metric":` in the compact JSON Prometheus writes. It cannot occur inside a string: a quote
there is always escaped (`\\"`), so `{"` never appears in one. The envelope around the rows is decoded and
checked on its own; an answer that does not fit this shape (whitespace between rows, another layout) is
decoded whole by json.loads, so the result is json.loads's for every input.
"""

from __future__ import annotations

import json
from typing import Any

LARGE_BYTES = 512 * 2**10  # json.loads of 512 KiB: about 3 ms on the 2-core test VM
SLICE_BYTES = 256 * 2**10
_RESULT = '"result":['
_FIRST = '{"metric":'
_BOUNDARY = '},{"metric":'


def decode(body: bytes) -> Any:
    """The answer as json.loads would give it (ValueError where it would raise)."""
    if len(body) < LARGE_BYTES:
        return json.loads(body)
    text = body.decode("utf-8")  # UnicodeDecodeError, a ValueError, as json.loads's for bytes that are not
    try:
        return _by_slices(text)
    except ValueError:
        return json.loads(text)  # not the shape looked for: decoded whole, or its own error


def _by_slices(text: str) -> Any:
    start = text.find(_RESULT)
    if start < 0 or not text.startswith(_FIRST, start + len(_RESULT)):
        raise ValueError("no result array of rows")
    begin = start + len(_RESULT)  # the first row's "{"
    rows: list[Any] = []
    while True:
        cut = text.find(_BOUNDARY, begin + SLICE_BYTES)
        if cut < 0:
            break
        rows += json.loads("[" + text[begin : cut + 1] + "]")  # up to and with the row's closing "}"
        begin = cut + 2  # the next row's "{"
    end = text.rfind("}]")  # the last row's end and the array's; one try, else json.loads decodes it whole
    if end < begin:
        raise ValueError("no end of the result array")
    rows += json.loads("[" + text[begin : end + 1] + "]")
    envelope = json.loads(text[: start + len(_RESULT)] + text[end + 1 :])  # the same document, no rows
    data = envelope.get("data") if isinstance(envelope, dict) else None
    if not isinstance(data, dict) or data.get("result") != []:
        raise ValueError("the array was not data.result")
    data["result"] = rows
    return envelope
