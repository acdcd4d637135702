"""The JSON report: the source of every other format (see README, "JSON output")."""

from __future__ import annotations

import json

from ..models import Report
from ..serialize import report_to_dict


def render(report: Report) -> str:
    return json.dumps(report_to_dict(report), ensure_ascii=False, indent=2) + "\n"
