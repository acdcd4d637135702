"""Report windows: an ISO week (`2026-W26`, `last`) or a date range, in a time zone."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from .errors import UsageError

WEEK_FORMS = "YYYY-Www (e.g. 2026-W26), 'last' or 'this'"
_WEEK_RE = re.compile(r"^(\d{4})-?W(\d{1,2})$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Window:
    """A half-open interval [start, end) of merge times, with the zone it is read in."""

    start: datetime
    end: datetime
    tz: tzinfo
    label: str  # "2026-W26" for ISO weeks, "2026-06-01..2026-06-10" otherwise

    @property
    def is_week(self) -> bool:
        return _WEEK_RE.match(self.label) is not None

    @property
    def range_days(self) -> int | None:
        """A date range's length in days; None for an ISO week (reports word the two apart)."""
        return None if self.is_week else (self.last_day - self.first_day).days + 1

    @property
    def tz_name(self) -> str:
        return getattr(self.tz, "key", str(self.tz))

    @property
    def last_day(self) -> date:
        """The last calendar day inside the window (its end is exclusive)."""
        return (self.end - timedelta(microseconds=1)).astimezone(self.tz).date()

    @property
    def first_day(self) -> date:
        return self.start.astimezone(self.tz).date()

    def contains(self, when: datetime) -> bool:
        return self.start <= when < self.end

    def shifted(self, weeks: int) -> Window:
        """The same-shaped window `weeks` weeks later (negative: earlier)."""
        return iso_week_window(self.first_day + timedelta(weeks=weeks), self.tz)


def parse_timezone(name: str | None) -> ZoneInfo:
    name = name or "UTC"
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: "Asia" (a folder of zones), a name too long
        import difflib

        zones = sorted(available_timezones())
        same = [z for z in zones if z.lower() == name.strip().lower()]
        if same:  # `utc`, `asia/shanghai`: the zone meant, however it is cased
            return ZoneInfo(same[0])
        abbreviation = name.strip().upper()
        if meant := _ABBREVIATIONS.get(abbreviation):
            hint: str | None = f"{abbreviation} is an abbreviation, not a zone: give {meant}"
        else:
            near = difflib.get_close_matches(name, zones, n=1)
            hint = f"did you mean {near[0]!r}?" if near else None
        raise UsageError(
            f"unknown time zone {name!r}; use an IANA name such as Asia/Shanghai, Europe/Berlin or UTC", hint,
        ) from None


# Abbreviations people type for a zone (they name no zone: CST is China's and the US's),
# with the IANA names they usually mean; the zones tzdata itself calls EST, CET, … load as they are.
_ABBREVIATIONS = {
    "CST": "Asia/Shanghai (China) or America/Chicago (US Central)", "CDT": "America/Chicago",
    "PST": "America/Los_Angeles", "PDT": "America/Los_Angeles", "EDT": "America/New_York",
    "MDT": "America/Denver", "IST": "Asia/Kolkata (India) or Europe/Dublin (Ireland)",
    "JST": "Asia/Tokyo", "KST": "Asia/Seoul", "HKT": "Asia/Hong_Kong", "SGT": "Asia/Singapore",
    "BST": "Europe/London", "CEST": "Europe/Berlin", "AEST": "Australia/Sydney", "AEDT": "Australia/Sydney",
}


# Years a report can cover: its baseline reaches months back and its end a week on,
# which the calendar's ends (years 1 and 9999) cannot hold; git has no earlier dates.
YEARS = (1970, 9998)


def _in_years(year: int, what: str) -> None:
    if not YEARS[0] <= year <= YEARS[1]:
        raise UsageError(f"{what} is outside the years repobrief reports on ({YEARS[0]}–{YEARS[1]})")


@lru_cache(maxsize=1 << 12)  # a backfill asks for each week again as the baseline of the 12 after it
def iso_week_window(day: date, tz: tzinfo) -> Window:
    """The ISO week (Monday 00:00 to next Monday 00:00 in `tz`) containing `day`."""
    monday = day - timedelta(days=day.isoweekday() - 1)
    start = datetime.combine(monday, time(0), tz)
    end = datetime.combine(monday + timedelta(days=7), time(0), tz)
    y, w, _ = monday.isocalendar()
    return Window(start, end, tz, f"{y}-W{w:02d}")


def parse_week(text: str, tz: tzinfo, now: datetime | None = None, option: str = "--week") -> Window:
    """`2026-W26` / `2026W26` / `last` (the last complete week) / `this` (`option`: the flag it came from)."""
    now = (now or datetime.now(tz)).astimezone(tz)
    t = text.strip()
    if t.lower() == "last":
        return iso_week_window(now.date() - timedelta(days=7), tz)
    if t.lower() == "this":
        return iso_week_window(now.date(), tz)
    m = _WEEK_RE.match(t)
    if not m:
        raise UsageError(f"invalid {option} {text!r}; valid forms: {WEEK_FORMS}")
    year, week = int(m.group(1)), int(m.group(2))
    try:
        monday = date.fromisocalendar(year, week, 1)
    except ValueError:
        raise UsageError(f"invalid {option} {text!r}: {year} has no ISO week {week}; valid forms: {WEEK_FORMS}") from None
    _in_years(year, f"{option} {text!r}")  # the ISO year: 1970-W01 starts on 1969-12-29
    return iso_week_window(monday, tz)


def parse_date(text: str, option: str) -> date:
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"invalid {option} {text!r}; use a date such as 2026-06-22 (YYYY-MM-DD)") from None
    _in_years(day.year, f"{option} {text!r}")
    return day


def date_range_window(since: str, until: str, tz: tzinfo) -> Window:
    """From `since` 00:00 to the end of `until` (inclusive), in `tz`."""
    s, u = parse_date(since, "--since"), parse_date(until, "--until")
    if u < s:
        raise UsageError(f"--until {until} is before --since {since}; give an end date on or after the start")
    start = datetime.combine(s, time(0), tz)
    end = datetime.combine(u + timedelta(days=1), time(0), tz)
    if (s.isoweekday(), (u - s).days) == (1, 6):
        y, w, _ = s.isocalendar()
        return Window(start, end, tz, f"{y}-W{w:02d}")
    return Window(start, end, tz, f"{s.isoformat()}..{u.isoformat()}")


def resolve_window(
    week: str | None, since: str | None, until: str | None, tz: tzinfo, now: datetime | None = None
) -> Window:
    """The CLI's rules: `--week`, or `--since`/`--until`, default the last complete week;
    a period that has not started is refused (it would read as one with nothing merged)."""
    for option, value in (("--week", week), ("--since", since), ("--until", until)):
        refuse_empty(option, value, WEEK_FORMS if option == "--week" else "YYYY-MM-DD")
    if week and (since or until):
        raise UsageError("give either --week or --since/--until, not both")
    now = (now or datetime.now(tz)).astimezone(tz)
    if since or until:
        if not since:
            raise UsageError("--until needs --since (YYYY-MM-DD)")
        if parse_date(since, "--since") > now.date():
            raise UsageError(f"--since {since} is in the future (today is {now.date().isoformat()})",
                             "give a start date up to today")
        return date_range_window(since, until or now.date().isoformat(), tz)
    return week_or_last(week, tz, now, "--week")


def refuse_empty(option: str, value: str | None, forms: str | None = None, *, required: bool = False) -> None:
    """A flag given an empty value (an unset shell variable, say) is an error, not its default."""
    if value is not None and not value.strip():
        raise UsageError(f"{option} is empty", f"give {option} a value{f' ({forms})' if forms else ''}"
                         + ("" if required else ", or leave the flag out for its default"))


def week_or_last(text: str | None, tz: tzinfo, now: datetime, option: str) -> Window:
    """The week `option` names, by default the last complete one; one that has not started is refused."""
    window = parse_week(text or "last", tz, now, option)
    refuse_unstarted(window, now, option, text or "last")
    return window


def refuse_unstarted(window: Window, now: datetime, option: str, text: str) -> None:
    """A usage error naming `option` when the week `window` (given as `text`) starts after
    `now`: a week that has not started would be reported as one with nothing merged."""
    this = iso_week_window(now.astimezone(window.tz).date(), window.tz)
    if window.start > this.start:
        raise UsageError(f"{option} {text} has not started yet (this week is {this.label})",
                         "give 'this' for the week in progress or 'last' for the last complete week")


def week_range(first: str, last: str, tz: tzinfo, now: datetime | None = None) -> list[Window]:
    """Every ISO week from `first` to `last` inclusive (`2024-W44`, `last`, …), up to the
    week in progress: a week that has not started would be reported as one with nothing
    merged."""
    refuse_empty("--from", first, WEEK_FORMS, required=True)
    refuse_empty("--to", last, WEEK_FORMS, required=True)
    now = (now or datetime.now(tz)).astimezone(tz)
    a, b = parse_week(first, tz, now, "--from"), parse_week(last, tz, now, "--to")
    if b.start < a.start:
        raise UsageError(f"--to {last} is before --from {first}; give the earlier week first",
                         "--to is the last complete week unless given: add --to this for the week in progress"
                         if last.strip().lower() == "last" else None)
    refuse_unstarted(a, now, "--from", first)
    refuse_unstarted(b, now, "--to", last)
    weeks = [a]
    while weeks[-1].start < b.start:
        weeks.append(weeks[-1].shifted(1))
    return weeks
