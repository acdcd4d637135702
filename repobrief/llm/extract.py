"""Tolerant extraction of a JSON object from a model's answer.

Models wrap JSON in code fences, put prose before or after it, or answer with
nothing at all (DeepSeek does, now and then). This finds the object, or says
precisely what was wrong so the retry prompt can tell the model.
"""

from __future__ import annotations

import json
import re
from itertools import islice
from typing import Any

from ..models import inert_text


class ExtractionError(ValueError):
    """The answer holds no JSON object; the message is fed back to the model."""


_TRIES = 64
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)


def extract_json(text: str | None) -> dict:
    """The first JSON object in `text`, its strings without bidirectional controls."""
    return _inert(_extract(text))


def _inert(value: Any) -> Any:
    if isinstance(value, str):
        return inert_text(value)
    if isinstance(value, dict):
        return {_inert(k): _inert(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_inert(v) for v in value]
    return value


def _extract(text: str | None) -> dict:
    if text is None or not text.strip():
        raise ExtractionError("the answer was blank; answer with one JSON object")
    s = text.strip().lstrip("\ufeff")
    try:
        value = json.loads(s)
        if isinstance(value, dict):
            return value
    except json.JSONDecodeError:
        pass
    for block in _FENCE.findall(s):
        try:
            value = json.loads(block.strip())
            if isinstance(value, dict):
                return value
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    last_error = None
    # The first `_TRIES` braces: a model stuck repeating "{{{{…" (it happens to small
    # models) made each of thousands of tries count the lines before it for its error,
    # quadratic; an answer's object is not preceded by dozens of braces of prose.
    for m in islice(re.finditer(r"\{", s), _TRIES):
        try:
            value, _ = decoder.raw_decode(s, m.start())
        except json.JSONDecodeError as e:
            last_error = last_error or e
            continue
        if isinstance(value, dict):
            return value
    if last_error is not None:
        raise ExtractionError(f"the answer is not valid JSON ({last_error.msg} at line {last_error.lineno} column {last_error.colno})")
    raise ExtractionError("the answer contains no JSON object")
