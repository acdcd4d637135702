"""The JSON report: the source of every other format (see README, "JSON output")."""

from __future__ import annotations

import re

import orjson

from ..models import Report
from ..serialize import report_to_dict

# Bidirectional controls (U+202A-U+202E, U+2066-U+2069) and C1 controls (U+0080-U+009F):
# a PR's text or a folder's name can hold them, and written as they are they reorder or
# rewrite what a terminal or an editor shows of the file. As \u escapes they stay in the
# data and show as escapes (JSON encoders escape the C0 controls themselves).
_UNSAFE = re.compile("[\u0080-\u009f\u202a-\u202e\u2066-\u2069]")


def _may_hold_unsafe(data: bytes) -> bool:
    """Whether UTF-8 `data` may hold a character `_UNSAFE` names: a C1 control's lead byte
    (shared with Latin-1 letters, rare in reports) or a bidirectional control. Byte
    searches: the regex over a week's text cost 1 % of a backfill."""
    if b"\xc2" in data:
        return True
    for lead, low, high in ((b"\xe2\x80", 0xAA, 0xAE), (b"\xe2\x81", 0xA6, 0xA9)):
        at = data.find(lead)
        while 0 <= at < len(data) - 2:
            if low <= data[at + 2] <= high:
                return True
            at = data.find(lead, at + 3)
    return False


def inert_json(text: str) -> str:
    """JSON text with the characters `_UNSAFE` names written as \\u escapes (the same data)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render(report: Report) -> str:
    # One line per top-level key keeps diffs between weeks readable. orjson encodes in a
    # tenth of the standard library's time, which a backfill of hundreds of weeks notices;
    # its output is UTF-8 as is (no \u escapes) and compact within a line.
    lines = [b"  " + orjson.dumps(k) + b": " + orjson.dumps(v, option=orjson.OPT_NON_STR_KEYS)
             for k, v in report_to_dict(report).items()]
    out = b"{\n" + b",\n".join(lines) + b"\n}\n"
    if _may_hold_unsafe(out):
        return inert_json(out.decode("utf-8"))
    return out.decode("utf-8")
