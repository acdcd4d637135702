"""The report as a JSON-ready dict (the source of every other format) and back.

The keys are a contract other tools read (see README, "JSON output"): add
freely, never rename. `report_from_dict` lets `publish` and `site` work from a
saved REPORT.json without re-running the analysis.
"""

from __future__ import annotations

import json
from datetime import datetime

from .models import (
    SCHEMA_VERSION,
    Card,
    Comment,
    Commit,
    FileChange,
    Item,
    PRAnalysis,
    PullRequest,
    Reason,
    Report,
    ReviewThread,
    Risk,
    Sections,
    TableRow,
    Theme,
)

SECTION_KEYS = ("summary", "key_changes", "trends", "risks", "table", "recommendations")


def _iso(d: datetime | None) -> str | None:
    return d.isoformat() if d else None


def pr_to_dict(pr: PullRequest, a: PRAnalysis | None, tz) -> dict:
    d = {
        "number": pr.number,
        "title": pr.title,
        "url": pr.url,
        "author": pr.author,
        "merged_at": pr.merged_at.astimezone(tz).isoformat(),
        "sha": pr.sha,
        "via": pr.via,
        "base_branch": pr.base_branch,
        "labels": list(pr.labels),
        "lines_added": pr.lines_added,
        "lines_deleted": pr.lines_deleted,
        "files_changed": len(pr.files),
        "files": [{"path": f.path, "added": f.added, "deleted": f.deleted, "status": f.status,
                   **({"previous": f.previous} if f.previous else {})} for f in pr.files[:200]],
        "files_truncated": max(0, len(pr.files) - 200),
        "linked_issues": list(pr.linked_issues),
        "reverts": pr.reverts,
        "reviews": [_comment(c) for c in pr.reviews],
        "review_threads": len(pr.threads),
        "unresolved_threads": sum(1 for t in pr.threads if t.resolved is False),
        "comments": len(pr.comments),
        "discussion_known": pr.discussion_known,
    }
    if a is not None:
        d.update(
            {
                "modules": a.modules,
                "type": a.type,
                "themes": a.themes,
                "breaking": a.breaking,
                "importance": a.importance,
                "importance_reasons": [str(r) for r in a.importance_reasons],
                "importance_terms": [{"code": r.code, "points": r.points, "text": r.text} for r in a.importance_reasons],
                "gist": a.gist,
                "key_contribution": a.key_contribution,
                "risks": [r.to_dict() for r in a.risks],
                "discussion_summary": a.discussion_summary,
                "analysis_engine": a.engine,
                "fallback_reason": a.fallback_reason,
            }
        )
    return d


def _comment(c: Comment) -> dict:
    return {"author": c.author, "state": c.state, "kind": c.kind, "created_at": _iso(c.created_at)}


def _items(items: list[Item]) -> list[dict]:
    # Written out rather than `asdict`, which deep-copies every value (a backfill renders thousands).
    return [{"name": i.name, "text": i.text, "prs": list(i.prs)} for i in items]


def _row(r: TableRow) -> dict:
    return {"number": r.number, "gist": r.gist, "importance": r.importance, "key_contribution": r.key_contribution,
            "url": r.url}


def _card(c: Card) -> dict:
    return {"title": c.title, "highlights": list(c.highlights), "risks": list(c.risks), "button": c.button,
            "link": c.link}


def sections_to_dict(s: Sections, headings: dict[str, str]) -> dict:
    return {
        "summary": {"heading": headings["summary"], "text": s.summary},
        "key_changes": {"heading": headings["key_changes"], "items": _items(s.key_changes)},
        "trends": {"heading": headings["trends"], "items": _items(s.trends)},
        "risks": {"heading": headings["risks"], "items": _items(s.risks)},
        "table": {"heading": headings["table"], "rows": [_row(r) for r in s.table]},
        "recommendations": {"heading": headings["recommendations"], "items": _items(s.recommendations)},
        "closing": s.closing,
        "written_by": dict(s.sources),
    }


def report_to_dict(report: Report) -> dict:
    from .i18n import catalog, report_days

    cat = catalog(report.lang)
    tz = report.start.tzinfo
    return {
        "schema_version": SCHEMA_VERSION,
        "repository": report.repository,
        "week": report.week,
        "timezone": report.timezone,
        "language": report.lang,
        "title": cat.title(report),
        "range": {
            "start": report.start.isoformat(),
            "end": report.end.isoformat(),
            "first_day": report.start.date().isoformat(),
            "last_day": _last_day(report).isoformat(),
        },
        "threshold": report.threshold,
        "stats": report.stats,
        "pull_requests": [pr_to_dict(pr, report.analyses.get(pr.number), tz) for pr in report.pull_requests],
        "direct_commits": [
            {"sha": c.sha, "subject": c.subject, "author": c.author, "committed_at": c.committed_at.astimezone(tz).isoformat()}
            for c in report.direct_commits
        ],
        "themes": [t.to_dict() for t in report.themes],
        "risks": [r.to_dict() for r in report.risks],
        "sections": sections_to_dict(report.sections, cat.headings(report_days(report))),
        "card": _card(report.card),
        "engine": report.engine,
        "warnings": list(report.warnings),
        "generated_at": _iso(report.generated_at),
    }


def _last_day(report: Report):
    from datetime import timedelta

    return (report.end - timedelta(microseconds=1)).astimezone(report.start.tzinfo).date()


def report_from_dict(d: dict, *, where: str = "the report") -> Report:
    """Rebuild a `Report` from `report_to_dict` output (for publish/site from JSON). A dict
    that is no report, is of another major schema version (another shape) or lacks what a
    report holds is a `UsageError` naming `where` (e.g. the file it was read from); keys
    a later minor version added are ignored."""
    from .errors import UsageError

    if not isinstance(d, dict) or "schema_version" not in d or "card" not in d:
        raise UsageError(f"{where} is not a repobrief report (no schema_version or card)",
                         "give the .json file written by `repobrief report --format json`")
    version = d["schema_version"]
    if str(version).partition(".")[0] != SCHEMA_VERSION.partition(".")[0]:
        raise UsageError(f"{where} has schema_version {version!r}; this repobrief reads {SCHEMA_VERSION.partition('.')[0]}.x",
                         "read it with the repobrief that wrote it, or regenerate it with this one")
    from zoneinfo import ZoneInfoNotFoundError

    problem = _shape_problem(d)
    try:
        if problem is None:
            return _report_from_dict(d)
    except (ZoneInfoNotFoundError, IsADirectoryError):  # a KeyError too: said before it; "Asia" is a folder of zones
        problem = f"`timezone` is {json.dumps(d['timezone'])}, not a time zone"
    except KeyError as e:
        problem = f"a field {e.args[0]!r} is missing"
    except (TypeError, ValueError, AttributeError):
        problem = "a field holds a value of another kind than a report's (a number for a text, a text for a date, …)"
    raise UsageError(f"{where} is an incomplete repobrief report: {problem}",
                     "regenerate it with `repobrief report --format json` (a hand edit may have broken it)")


# What a report must hold, by JSON type, checked before it is read back, so that a damaged
# file is named by its field ("`card` is null"), not by what Python made of it.
_Kind = tuple[type | tuple[type, ...], str]
_OBJECT: _Kind = (dict, "an object")
_ARRAY: _Kind = (list, "a list")
_TEXT: _Kind = (str, "a string")
_NUMBER: _Kind = ((int, float), "a number")
_SHAPE: dict[str, _Kind] = {"repository": _TEXT, "week": _TEXT, "timezone": _TEXT, "range": _OBJECT, "stats": _OBJECT,
          "pull_requests": _ARRAY, "sections": _OBJECT, "card": _OBJECT}
_PARTS: dict[str, dict[str, _Kind]] = {"range": {"start": _TEXT, "end": _TEXT},
          "card": {"title": _TEXT, "highlights": _ARRAY, "risks": _ARRAY, "button": _TEXT},
          "sections": {name: _OBJECT for name in ("summary", "key_changes", "trends", "risks", "table", "recommendations")}}
_PR_SHAPE: dict[str, _Kind] = {"number": _NUMBER, "title": _TEXT, "merged_at": _TEXT}


def _shape_problem(d: dict) -> str | None:
    def wrong(where: str, value: object, kind: _Kind) -> str | None:
        if value is _MISSING:
            return f"`{where}` is missing"
        if not isinstance(value, kind[0]) or isinstance(value, bool):
            return f"`{where}` is {json.dumps(value)[:40]}, not {kind[1]}"
        return None

    for key, kind in _SHAPE.items():
        if problem := wrong(key, d.get(key, _MISSING), kind):
            return problem
    for key, fields in _PARTS.items():
        for name, kind in fields.items():
            if problem := wrong(f"{key}.{name}", d[key].get(name, _MISSING), kind):
                return problem
    for i, p in enumerate(d["pull_requests"]):
        if not isinstance(p, dict):
            return f"`pull_requests[{i}]` is not an object"
        for name, kind in _PR_SHAPE.items():
            if problem := wrong(f"pull_requests[{i}].{name}", p.get(name, _MISSING), kind):
                return problem
    return None


_MISSING = object()


_FILE_KEYS = ("path", "added", "deleted", "status", "previous")


def _report_from_dict(d: dict) -> Report:
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(d["timezone"])
    prs: list[PullRequest] = []
    analyses: dict[int, PRAnalysis] = {}
    for p in d["pull_requests"]:
        pr = PullRequest(
            number=p["number"],
            title=p["title"],
            body="",
            author=p.get("author") or "",
            merged_at=datetime.fromisoformat(p["merged_at"]),
            files=[FileChange(**{k: f[k] for k in _FILE_KEYS if k in f}) for f in p.get("files", [])],
            sha=p.get("sha"),
            url=p.get("url"),
            base_branch=p.get("base_branch"),
            via=p.get("via", "squash"),
            labels=list(p.get("labels", [])),
            reviews=[
                Comment(author=r["author"], body="", kind=r.get("kind", "review"), state=r.get("state"))
                for r in p.get("reviews", [])
            ],
            threads=[ReviewThread(path=None, resolved=False) for _ in range(p.get("unresolved_threads", 0))],
            linked_issues=list(p.get("linked_issues", [])),
            discussion_known=p.get("discussion_known", False),
            reverts=p.get("reverts"),
            additions_total=p.get("lines_added"),
            deletions_total=p.get("lines_deleted"),
        )
        prs.append(pr)
        if "importance" in p:
            analyses[pr.number] = PRAnalysis(
                number=pr.number,
                modules=p["modules"],
                type=p["type"],
                themes=p["themes"],
                breaking=p["breaking"],
                importance=p["importance"],
                importance_reasons=[Reason(**r) for r in p.get("importance_terms", [])],
                key_contribution=p["key_contribution"],
                risks=[Risk(**r) for r in p.get("risks", [])],
                discussion_summary=p.get("discussion_summary"),
                gist=p.get("gist", ""),
                engine=p.get("analysis_engine", "offline"),
                fallback_reason=p.get("fallback_reason"),
            )
    s = d["sections"]
    sections = Sections(
        summary=s["summary"]["text"],
        key_changes=[Item(**i) for i in s["key_changes"]["items"]],
        trends=[Item(**i) for i in s["trends"]["items"]],
        risks=[Item(**i) for i in s["risks"]["items"]],
        table=[TableRow(**r) for r in s["table"]["rows"]],
        recommendations=[Item(**i) for i in s["recommendations"]["items"]],
        closing=s.get("closing", ""),
        sources=dict(s.get("written_by", {})),
    )
    themes = []
    for t in d.get("themes", []):
        t = dict(t)
        t.pop("count", None)
        themes.append(Theme(**t))
    return Report(
        repository=d["repository"],
        week=d["week"],
        timezone=d["timezone"],
        start=datetime.fromisoformat(d["range"]["start"]).astimezone(tz),
        end=datetime.fromisoformat(d["range"]["end"]).astimezone(tz),
        lang=d.get("language", "en"),
        threshold=d.get("threshold", 5.0),
        stats=d["stats"],
        pull_requests=prs,
        analyses=analyses,
        themes=themes,
        risks=[Risk(**r) for r in d.get("risks", [])],
        sections=sections,
        card=Card(**d["card"]),
        engine=d.get("engine", {}),
        direct_commits=[
            Commit(sha=c["sha"], subject=c["subject"], author=c["author"], committed_at=datetime.fromisoformat(c["committed_at"]))
            for c in d.get("direct_commits", [])
        ],
        warnings=list(d.get("warnings", [])),
        generated_at=datetime.fromisoformat(d["generated_at"]) if d.get("generated_at") else None,
    )
