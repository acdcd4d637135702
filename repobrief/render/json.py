"""The JSON report: the source of every other format (see README, "JSON output")."""

from __future__ import annotations

import json

from ..models import Report
from ..serialize import report_to_dict


def render(report: Report) -> str:
    # One line per top-level key keeps diffs readable while the bulk is encoded by
    # json's C encoder (an `indent` forces the pure-Python one, ~10x slower).
    d = report_to_dict(report)
    lines = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in d.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"
