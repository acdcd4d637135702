"""The ecosystem digest: one report across the repositories of a `repobrief run`.

Built from the repositories' report JSON (`report_to_dict`) of one language, so
every number it states was computed by a repository's own report:

- an overview table (PRs, contributors, lines, breaking changes, risks, change
  against the previous week),
- per-repository highlights (the top PRs by importance, with their key contribution),
- cross-repository themes (theme keys such as `term:ci` or `type:fix` that
  several repositories share this week),
- shared risks: risk kinds found in several repositories, and dependencies that
  several repositories changed this week (package names read from the titles of
  PRs flagged as dependency changes; a package that is itself one of the run's
  repositories is marked as such — an upstream moving under its users).

`build_digest(reports, lang, …)` returns the JSON document; `render_digest_md`
turns it into Markdown. Both are pure. Each repository's entry keeps what the
cross-repository sections were built from (`details`), so that a later run of
some of the repositories (`run --only NAME --digest`) can merge its reports with
the others' entries from the earlier digest of the week (`earlier=`).
"""

from __future__ import annotations

import re
from collections import defaultdict

from .i18n import catalog
from .models import inert_text
from .render.links import safe_link

SCHEMA_VERSION = 1

# "Bump torch from 2.5 to 2.6", "upgrade vllm to 0.9.1", "pin transformers==4.52", "fix Megatron-Bridge version"
# A name starts where a word does: searched from every letter of a long word, the
# pattern was quadratic in a title (2.4 s for 8,000 characters).
_PKG = r"`?(?<![A-Za-z0-9_.\-])([A-Za-z][A-Za-z0-9_.\-]*[A-Za-z0-9])`?"
_DEP_PATTERNS = [
    re.compile(r"\bbump(?:s|ed)?\s+(?:the\s+)?" + _PKG + r"(?:\s+from\s+\S+)?\s+to\b", re.I),
    re.compile(r"\b(?:upgrade|update|bump|pin|unpin|downgrade|require)s?\s+(?:to\s+)?" + _PKG + r"\s*(?:to|>=|==|~=|<=|<|>|@)?\s*v?\d+(?:\.\d+)+", re.I),
    re.compile(_PKG + r"\s*(?:>=|==|~=|<=)\s*v?\d+(?:\.\d+)*"),
    re.compile(_PKG + r"\s+(?:version|to\s+v?\d+(?:\.\d+)+)\b", re.I),
]
_NOT_PACKAGES = {"the", "a", "an", "to", "version", "versions", "deps", "dependencies", "dependency", "requirements",
                 "docker", "image", "images", "ci", "all", "and", "fix", "update", "upgrade", "bump", "pin", "python"}


def dependency_names(title: str) -> list[str]:
    """Package names a dependency PR's title names (lower case, in order, no repeats)."""
    title = re.sub(r"^(?:\[[^\]]*\]\s*)+", "", title)  # [module] tags
    title = re.sub(r"^\w+(?:\([^)]*\))?!?:\s*", "", title)  # conventional-commit type
    title = re.sub(r"\s*\(#\d+\)\s*$", "", title)
    names: list[str] = []
    for pattern in _DEP_PATTERNS:
        for m in pattern.finditer(title):
            name = m.group(1).lower().rstrip(".-")
            if name not in _NOT_PACKAGES and not name[0].isdigit() and name not in names:
                names.append(name)
    return names


def _is_dependency_pr(pr: dict) -> bool:
    return pr.get("type") == "deps" or any(r.get("kind") == "dependency_change" for r in pr.get("risks", []))


def _repository_entry(r: dict, highlights: int) -> dict:
    """One report's row of the digest, with the details its shared sections are built from."""
    s = r["stats"]
    prs = sorted(r["pull_requests"], key=lambda p: (-p["importance"], p["number"]))
    wow = s.get("week_over_week", {}).get("merged_prs") or {}
    deps: dict[str, list[int]] = {}
    for p in r["pull_requests"]:
        if _is_dependency_pr(p):
            for name in dependency_names(p["title"]):
                deps.setdefault(name, []).append(p["number"])
    return {
        "repository": r["repository"],
        "week": r["week"],
        "timezone": r.get("timezone"),
        "range": r.get("range"),
        "merged_prs": s["merged_prs"],
        "previous_merged_prs": wow.get("previous"),
        "contributors": s["contributors"],
        "first_time_contributors": s.get("first_time_contributors"),
        "lines_added": s["lines_added"],
        "lines_deleted": s["lines_deleted"],
        "direct_commits": s.get("direct_commits", 0),
        "breaking_prs": list(s.get("breaking_prs", [])),
        "risks": [rk["kind"] for rk in r.get("risks", [])],
        # the week still in progress, a clone nobody pulled: said of its numbers here too
        "warnings": list(r.get("warnings", [])),
        "highlights": [
            {
                "number": p["number"],
                "title": p.get("gist") or p["title"],
                "url": p.get("url"),
                "importance": p["importance"],
                "type": p["type"],
                "breaking": p["breaking"],
                "key_contribution": p.get("key_contribution", ""),
            }
            for p in prs[:highlights]
        ],
        "details": {
            "themes": [{"key": t["key"], "name": t["name"], "count": t["count"], "prs": list(t["prs"])}
                       for t in r.get("themes", [])],
            "risks": [{"kind": rk["kind"], "title": rk.get("title") or rk["kind"], "severity": rk["severity"],
                       "prs": list(rk["prs"])} for rk in r.get("risks", [])],
            "dependencies": deps,
        },
    }


def build_digest(
    reports: list[dict],
    lang: str,
    *,
    highlights: int = 3,
    failed: list[dict] | None = None,
    not_published: list[dict] | None = None,
    earlier: dict | None = None,
) -> dict:
    """The digest of `reports` (report JSON dicts in `lang`, one per repository).

    `failed` lists the repositories that could not be reported and `not_published`
    those reported whose cards could not be posted (`repository`, `error`): a refused
    webhook does not take a repository's numbers out of the digest.
    With `earlier` (a digest of the same week and language), its repositories that
    are neither in `reports` nor in `failed` are kept (listed in `carried_over`),
    and so are its failures of repositories this run did not try again."""
    cat = catalog(lang)
    repos = [_repository_entry(r, highlights) for r in reports]
    failed = list(failed or [])
    not_published = list(not_published or [])
    carried: list[str] = []
    if earlier:
        tried = {r["repository"] for r in repos} | {f["repository"] for f in failed}
        for e in earlier.get("repositories", []):
            if e["repository"] not in tried:
                repos.append(e)
                carried.append(e["repository"])
        failed += [f for f in earlier.get("failed", []) if f["repository"] not in tried]
        not_published += [f for f in earlier.get("not_published", []) if f["repository"] not in tried]
    repos.sort(key=lambda e: e["repository"].lower())
    weeks = sorted({e["week"] for e in repos})
    week = weeks[0] if len(weeks) == 1 else " / ".join(weeks)
    project_names = {e["repository"].rsplit("/", 1)[-1].lower(): e["repository"] for e in repos}

    themes: dict[str, dict] = {}
    risks: dict[str, dict] = {}
    deps: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for e in repos:
        name, details = e["repository"], e.get("details") or {}
        for t in details.get("themes", []):
            # by the name a reader sees: one repository's "Documentation" is a folder's
            # (module:docs), another's a title word's (term:docs)
            entry = themes.setdefault(t["name"].casefold(), {"key": t["key"], "name": t["name"], "repositories": []})
            mine = next((x for x in entry["repositories"] if x["repository"] == name), None)
            if mine is None:
                entry["repositories"].append({"repository": name, "count": t["count"], "prs": list(t["prs"])})
            else:  # two of its own themes by that name: one entry, each PR once
                mine["prs"] = sorted(set(mine["prs"]) | set(t["prs"]))
                mine["count"] = len(mine["prs"])
        for rk in details.get("risks", []):
            entry = risks.setdefault(rk["kind"], {"kind": rk["kind"], "title": rk["title"], "repositories": []})
            entry["repositories"].append({"repository": name, "severity": rk["severity"], "prs": list(rk["prs"])})
        for package, numbers in details.get("dependencies", {}).items():
            deps[package][name] = list(numbers)

    shared_themes = sorted(
        (t for t in themes.values() if len(t["repositories"]) > 1),
        key=lambda t: (-len(t["repositories"]), -sum(x["count"] for x in t["repositories"]), t["key"]),
    )
    for t in shared_themes:
        t["count"] = sum(x["count"] for x in t["repositories"])
    severity = {"high": 0, "medium": 1, "low": 2}
    shared_risks = sorted(
        (rk for rk in risks.values() if len(rk["repositories"]) > 1),
        key=lambda rk: (min(severity.get(x["severity"], 3) for x in rk["repositories"]), -len(rk["repositories"]), rk["kind"]),
    )
    for rk in shared_risks:
        rk["severity"] = min((x["severity"] for x in rk["repositories"]), key=lambda v: severity.get(v, 3))
    shared_deps = []
    for name, where in sorted(deps.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        upstream = project_names.get(name)
        if len(where) > 1 or (upstream and any(repo != upstream for repo in where)):
            shared_deps.append({
                "package": name,
                "upstream_in_run": upstream,
                "repositories": [{"repository": repo, "prs": sorted(set(n))} for repo, n in sorted(where.items())],
            })
    totals = {
        "repositories": len(repos),
        "merged_prs": sum(x["merged_prs"] for x in repos),
        "contributors": sum(x["contributors"] for x in repos),
        "lines_added": sum(x["lines_added"] for x in repos),
        "lines_deleted": sum(x["lines_deleted"] for x in repos),
        "breaking_prs": sum(len(x["breaking_prs"]) for x in repos),
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "ecosystem_digest",
        "language": lang,
        "week": week,
        "title": cat.t("digest.title", week=week, count=len(repos)),
        "totals": totals,
        "repositories": repos,
        "themes": shared_themes,
        "shared_risks": shared_risks,
        "dependencies": shared_deps,
        "failed": failed,
        "not_published": not_published,
        "carried_over": sorted(carried, key=str.lower),
    }


def _num(n: int) -> str:
    return f"{n:,}"


def _pr_ref(repository: str, number: int) -> str:
    return f"{_md_escape(repository)}#{number}"


def _md_escape(text: str) -> str:
    """Text inert in Markdown on one line: without control characters (`inert_text`; a
    carriage return would end a line), its newlines made spaces, Markdown's marks escaped."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", inert_text(text).replace("\n", " "))


def _first_prs(numbers: list[int], sep: str, t, shown: int = 5) -> str:
    """`#1, #2, #3, #4, #5, 3 more`: a list cut at `shown` says how many it left out."""
    refs = [f"#{n}" for n in numbers[:shown]]
    if len(numbers) > shown:
        refs.append(t("more", count=len(numbers) - shown))
    return sep.join(refs)


def render_digest_md(d: dict) -> str:
    """The digest as Markdown."""
    cat = catalog(d["language"])
    t = lambda key, **kw: cat.t(f"digest.{key}", **kw)  # noqa: E731
    sep = cat.t("list.sep")
    tot = d["totals"]
    lines = [f"# {_md_escape(d['title'])}", ""]
    lines += [t("summary", repositories=tot["repositories"], prs=_num(tot["merged_prs"]), added=_num(tot["lines_added"]),
                deleted=_num(tot["lines_deleted"]), breaking=tot["breaking_prs"]), ""]

    lines += [f"## 1. {t('overview')}", "", "| " + " | ".join(t(f"col_{c}") for c in
              ("repository", "prs", "previous", "contributors", "lines", "breaking", "risks")) + " |",
              "|" + "---|" * 7]
    for r in d["repositories"]:
        prev = "—" if r["previous_merged_prs"] is None else _num(r["previous_merged_prs"])
        breaking = sep.join(f"#{n}" for n in r["breaking_prs"]) or "—"
        lines.append(f"| {_md_escape(r['repository'])} | {_num(r['merged_prs'])} | {prev} | {_num(r['contributors'])} | "
                     f"+{_num(r['lines_added'])} / -{_num(r['lines_deleted'])} | {breaking} | {len(r['risks'])} |")
    lines.append("")

    lines += [f"## 2. {t('highlights')}", ""]
    for r in d["repositories"]:
        lines += [f"### {_md_escape(r['repository'])}", ""]
        lines += [*(f"> ⚠ {_md_escape(w)}" for w in r.get("warnings", [])), *([""] if r.get("warnings") else [])]
        if not r["highlights"]:  # the lines in the table were someone's: commits made without a PR
            direct = r.get("direct_commits", 0)
            lines += [t("quiet_direct", count=_num(direct)) if direct else t("quiet"), ""]
            continue
        for h in r["highlights"]:
            url = safe_link(h.get("url"))  # as the repositories' own reports link: http(s) only, nothing that breaks out
            ref = f"[#{h['number']}]({url})" if url else f"#{h['number']}"
            flag = f" **{t('breaking')}**" if h["breaking"] else ""
            text = _md_escape(h["key_contribution"] or h["title"])
            lines.append(f"- {ref} {_md_escape(h['title'])} ({t('importance')} {h['importance']:g}){flag}: {text}")
        lines.append("")

    lines += [f"## 3. {t('themes')}", ""]
    if not d["themes"]:
        lines += [t("no_themes"), ""]
    for th in d["themes"]:
        where = sep.join(f"{_md_escape(x['repository'])} ({x['count']})" for x in th["repositories"])
        lines.append("- " + t("theme_line", name=_md_escape(th["name"]), count=th["count"], repositories=len(th["repositories"]),
                              where=where))
    if d["themes"]:
        lines.append("")

    lines += [f"## 4. {t('risks')}", ""]
    if not d["shared_risks"] and not d["dependencies"]:
        lines += [t("no_risks"), ""]
    for dep in d["dependencies"]:
        where = sep.join(sep.join(_pr_ref(x["repository"], n) for n in x["prs"]) for x in dep["repositories"])
        key = "dependency_upstream" if dep["upstream_in_run"] else "dependency"
        lines.append("- " + t(key, package=_md_escape(dep["package"]), repositories=len(dep["repositories"]), prs=where,
                              upstream=_md_escape(dep["upstream_in_run"] or "")))
    for rk in d["shared_risks"]:
        where = sep.join(f"{_md_escape(x['repository'])} ({_first_prs(x['prs'], sep, t)})" for x in rk["repositories"])
        lines.append("- " + t("risk_line", title=_md_escape(rk["title"]), severity=t(f"severity_{rk['severity']}"),
                              repositories=len(rk["repositories"]), where=where))
    if d["shared_risks"] or d["dependencies"]:
        lines.append("")

    for key in ("failed", "not_published"):
        if d.get(key):
            lines += [f"## {t(key)}", ""]
            lines += [f"- {_md_escape(f['repository'])}: {_md_escape(f['error'])}" for f in d[key]]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def digest_file_name(d: dict, ext: str) -> str:
    """`ecosystem-{week}.{lang}.{ext}`."""
    return f"ecosystem-{d['week'].replace(' / ', '_')}.{d['language']}.{ext}"


__all__ = ["build_digest", "dependency_names", "digest_file_name", "render_digest_md"]
