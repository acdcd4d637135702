"""Message catalogs for the report's languages (zh, en).

The catalogs are package data (`repobrief/locales/{lang}.toml`): section
headings, sentence templates, names of change types, themes and risks. A
message that speaks of the week may have a `_range` wording for a custom date
range (`{days}` its length) and a `_day` wording for a single day. Numbers
are written with thousands separators and dates as ISO dates in both languages,
which is what engineering reports use; Babel was left out because its import
and locale data cost more than the whole offline report's budget for no visible
gain here.
"""

from __future__ import annotations

import re
import tomllib
from datetime import date, timedelta
from functools import cache
from importlib import resources
from string import Formatter
from typing import Any

from .config import LANGUAGES
from .errors import UsageError

# English templates say "{count} PRs"; a count of one takes the singular. Only the
# template's own words change: the values put in (PR titles among them) stay as written.
_PLURAL_AFTER_FIELD = re.compile(r"^ (?:((?:more |direct |configuration |first-time )?(?:PR|contributor|line|file|week|day|period|commit|change|fix|module))(?:e?s)|(repositor)ies)\b")


@cache
def _pieces(template: str, singular: bool) -> tuple[tuple[str, str | None, str | None], ...]:
    """`template` as (literal, field, the literal's start after a field equal to "1")."""
    out: list[tuple[str, str | None, str | None]] = []
    prev_field = None
    for literal, field, spec, conv in Formatter().parse(template):
        if spec or conv:
            raise ValueError(f"message templates take plain fields, not {{{field}:{spec}}}")
        plural: re.Match[str] | None = _PLURAL_AFTER_FIELD.match(literal) if singular and prev_field else None
        one: str | None = None if plural is None else f" {plural[1] or plural[2] + 'y'}" + literal[plural.end():]
        out.append((literal, field, one))
        prev_field = field
    return tuple(out)


SECTION_ORDER = ("summary", "key_changes", "trends", "risks", "table", "recommendations")


class Catalog:
    def __init__(self, lang: str, messages: dict) -> None:
        self.lang = lang
        self.m = messages  # read-only once loaded: `t` keeps what each key names
        self._nodes: dict[str, Any] = {}
        self._one_day: dict[str, str] = {}  # `_range` templates reworded for one day (see `_worded`)

    def t(self, key: str, /, **kw) -> str:
        """The message `key` (dotted path) formatted with `kw` (positional-only: a
        template may itself have a `{key}` field, as `detail.removed_key` does)."""
        node: Any = self._nodes.get(key)
        if node is None:  # a report asks for the same few hundred keys thousands of times
            node = self.m
            for part in key.split("."):
                node = node[part]
            self._nodes[key] = node
        return self.fill(node, kw) if kw else node

    def fill(self, template: str, kw: dict[str, Any]) -> str:
        """`template` with its fields from `kw` (English: a count of 1 takes the singular)."""
        out = []
        value = None
        for literal, field, after_one in _pieces(template, self.lang == "en"):
            out.append(after_one if after_one is not None and value == "1" else literal)
            if field is not None:
                value = str(kw[field])
                out.append(value)
        return "".join(out)

    def get(self, section: str, key: str, default: str | None = None) -> str | None:
        return self.m.get(section, {}).get(key, default)

    def period_key(self, key: str, days: int | None) -> str:
        """`key` for an ISO week (`days` None); for a custom date range of `days` days, its
        `_day` wording (one day) or its `_range` wording, when the catalog has one. A
        message without either does not speak of the week and serves every period."""
        if days is None:
            return key
        section, _, name = key.rpartition(".")
        table = self.m.get(section, {}) if section else self.m
        for suffix in ("_day", "_range") if days == 1 else ("_range",):
            if name + suffix in table:
                return key + suffix
        return key

    def period(self, key: str, days: int | None, /, **kw) -> str:
        """The message `key` worded for the report's period (see `period_key`); a `{days}`
        field is the range's length."""
        worded = self.period_key(key, days)
        if worded == key:
            return self.t(key, **kw)
        return self.fill(self._worded(worded, days), {"days": days, **kw})

    def period_template(self, key: str, days: int | None) -> str | None:
        """The raw template `key` worded for the period (None if absent), its `{days}` filled
        in and its other fields left for the caller."""
        worded = self.period_key(key, days)
        if worded != key:  # a wording the catalog has
            return self._worded(worded, days).replace("{days}", str(days))
        section, _, name = key.rpartition(".")
        return (self.m.get(section, {}) if section else self.m).get(name)

    def _worded(self, worded: str, days: int | None) -> str:
        """The template of `worded` (a `period_key`); a one-day range's `_range` template
        (no `_day` wording of its own) rewritten by the catalog's `one_day.rewrites`, so
        that it reads "this day" / "当天", never "this 1-day period" / "这1天"."""
        if days != 1 or not worded.endswith("_range"):
            return self.t(worded)
        out = self._one_day.get(worded)
        if out is None:
            out = self.t(worded)
            for old, new in self.m["one_day"]["rewrites"]:
                out = out.replace(old, new)
            self._one_day[worded] = out
        return out

    def empty_sections(self, days: int | None, merged: bool) -> dict[str, str]:
        """What the key changes, trends and risks sections say when they hold no item: that
        no PR was merged, or, in a period that merged some, that none stands out there."""
        none = "card.no_changes"
        return {"key_changes": self.period("key_change.none" if merged else none, days),
                "trends": self.period("trends.none" if merged else none, days),
                "risks": self.period("card.no_risks", days)}

    def headings(self, days: int | None = None) -> dict[str, str]:
        """The section headings, for a report of `days` days (None: an ISO week)."""
        return {k: self.period(f"headings.{k}", days) for k in SECTION_ORDER}

    def numbered_heading(self, key: str, days: int | None = None) -> str:
        return f"{SECTION_ORDER.index(key) + 1}. {self.period(f'headings.{key}', days)}"

    def title(self, report) -> str:
        y, w = _year_week(report)
        if w is None:
            return self.period("title", report_days(report), repository=report.repository,
                               start=report.start.date().isoformat(), end=_last_day(report).isoformat())
        return self.t("title", repository=report.repository, year=y, week=w)

    def card_title(self, repository: str, week: str, start: date, last_day: date) -> str:
        """The card header: `{repo} {year} 第{week}周周报 (MM-DD 至 MM-DD)` / `… week N, YYYY (…)`."""
        a, b = start.strftime("%m-%d"), last_day.strftime("%m-%d")
        if "-W" not in week:
            return self.period("card.title", (last_day - start).days + 1, repository=repository, start=a, end=b)
        y, w = week.split("-W")
        return self.t("card.title", repository=repository, year=int(y), week=int(w), start=a, end=b)

    def date_range(self, start, end_inclusive) -> str:
        """`start` to `end_inclusive`, or the one day when they are the same."""
        if start == end_inclusive:
            return self.t("date_range_day", day=start.isoformat())
        return self.t("date_range", start=start.isoformat(), end=end_inclusive.isoformat())

    def type_name(self, ty: str) -> str:
        return self.m["types"].get(ty, ty)

    def term(self, term: str) -> str:
        """A display name for a module or discovered term (identifiers stay as they are)."""
        return self.m["terms"].get(term, term)

    def join(self, items: list[str]) -> str:
        items = [i for i in items if i]
        if not items:
            return ""
        if len(items) == 1:
            return items[0]
        return self.m["list"]["sep"].join(items[:-1]) + self.m["list"]["last"] + items[-1]

    def num(self, n: int | float) -> str:
        return f"{n:,}" if isinstance(n, int) else f"{n:,.1f}"

    def prs(self, numbers: list[int]) -> str:
        return self.m["list"]["pr_sep"].join(f"#{n}" for n in numbers)

    def cited(self, numbers: list[int]) -> str:
        """The PRs an item cites, in parentheses after its name (`' (#1, #2)'`); '' for none."""
        if not numbers:
            return ""
        opening, closing = ("（", "）") if self.lang == "zh" else (" (", ")")
        return opening + self.prs(numbers) + closing


def _year_week(report) -> tuple[int, int | None]:
    label = report.week
    if "-W" in label:
        y, w = label.split("-W")
        return int(y), int(w)
    return report.start.year, None


def report_days(report) -> int | None:
    """How many days a custom date range's report covers; None for an ISO week's report,
    which the catalog's plain messages word as "this week" (`Catalog.period_key`)."""
    if "-W" in report.week:
        return None
    return (_last_day(report) - report.start.date()).days + 1


def _last_day(report):
    return (report.end - timedelta(microseconds=1)).astimezone(report.start.tzinfo).date()


@cache
def catalog(lang: str) -> Catalog:
    if lang not in LANGUAGES:
        raise UsageError(f"unknown language {lang!r}; valid: {', '.join(LANGUAGES)}")
    text = resources.files("repobrief").joinpath("locales", f"{lang}.toml").read_text(encoding="utf-8")
    return Catalog(lang, tomllib.loads(text))
