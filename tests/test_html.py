"""The standalone HTML report, opened in a real headless Chromium with the network off."""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from browser import browser_fixture
from sample_report import sample_report

from repobrief.i18n import catalog
from repobrief.render import charts
from repobrief.render.html import render_page

browser = browser_fixture()

CHART_IDS = ["chart-modules", "chart-themes", "chart-trend", "chart-importance"]


@pytest.fixture(scope="module", params=["matplotlib", "svg"])
def opened(request, browser, tmp_path_factory):
    """The hostile sample report, rendered with each chart backend and opened in the browser."""
    if request.param == "matplotlib" and not charts.matplotlib_available():
        pytest.skip("matplotlib (the charts extra) is not installed")
    report = sample_report("zh" if request.param == "matplotlib" else "en", hostile=True)
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_page(report, backend=request.param), encoding="utf-8")
    page = browser.open(path)
    yield report, page
    page.close()


def test_page_loads_offline_without_errors_or_outside_requests(opened):
    _, page = opened
    got = page.collect()
    assert got.errors == []
    assert got.requests == [got.url], "the page must not fetch anything (fonts, scripts, images)"


def test_all_six_sections_in_order(opened):
    report, page = opened
    headings = page.evaluate("[...document.querySelectorAll('main section h2')].map(h => h.textContent)")
    expected = [f"{i}. {h}" for i, h in enumerate(catalog(report.lang).headings().values(), 1)]
    assert headings == expected
    assert page.evaluate("document.querySelector('h1').textContent") == catalog(report.lang).title(report)


def test_pr_table_links_each_pr_and_drops_unsafe_links(opened):
    report, page = opened
    rows = page.evaluate(
        "[...document.querySelectorAll('#pr-table tbody tr')].map(r => [r.cells[0].textContent.trim(),"
        " r.cells[0].querySelector('a') ? r.cells[0].querySelector('a').href : null, r.cells[2].textContent])"
    )
    assert [r[0] for r in rows] == [f"#{row.number}" for row in report.sections.table]
    assert [r[2] for r in rows] == [f"{row.importance:.1f}" for row in report.sections.table]
    by_number = dict((r[0], r[1]) for r in rows)
    assert by_number["#6700"] is None  # its URL was javascript:
    assert by_number["#6701"] == "https://github.com/verl-project/verl/pull/6701"


def test_a_pr_number_and_its_score_stay_on_one_line(opened):
    """Beside long titles the PR column wrapped inside its number ("#472" over "0")."""
    _, page = opened
    lines = page.evaluate(
        "[...document.querySelectorAll('#pr-table tbody td.num, #all-pr-table tbody td.num')].map(td => {"
        " const r = document.createRange(); r.selectNodeContents(td);"
        " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; })")
    assert lines and set(lines) == {1}, lines


def test_charts_are_drawn(opened):
    _, page = opened
    drawn = page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('svg.chart')].map(s => {"
        " const r = s.getBoundingClientRect();"
        " return [s.dataset.chart, {w: r.width, h: r.height,"
        "  marks: s.querySelectorAll('path, rect, polyline, circle, line').length,"
        "  text: s.querySelectorAll('text').length}]; }))"
    )
    assert sorted(drawn) == sorted(CHART_IDS)
    # markers and clip paths refer to ids inside their own chart, and those ids exist
    refs = page.evaluate(
        "[...document.querySelectorAll('svg *')].flatMap(e => [e.getAttribute('href'),"
        " e.getAttributeNS('http://www.w3.org/1999/xlink', 'href'),"
        " (e.getAttribute('clip-path') || '').slice(4, -1)]).filter(r => r && r.startsWith('#')).map(r => r.slice(1))"
    )
    ids = set(page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)"))
    assert [r for r in refs if r not in ids] == []
    assert all(r.startswith("chart-") for r in refs)
    for chart, box in drawn.items():
        assert box["w"] > 200 and box["h"] > 80, chart
        assert box["marks"] >= 4 and box["text"] >= 3, chart


def _column(page, table, col):
    return page.evaluate(f"[...document.querySelectorAll('#{table} tbody tr')].map(r => r.cells[{col}].dataset.sort || r.cells[{col}].textContent)")


def test_table_sorts_in_the_page(opened):
    _, page = opened
    # Importance starts sorted descending; a click sorts ascending, another descending again.
    page.evaluate("document.querySelector('#pr-table th:nth-child(3) button').click()")
    values = [float(v) for v in _column(page, "pr-table", 2)]
    assert values == sorted(values)
    assert page.evaluate("document.querySelector('#pr-table th:nth-child(3)').getAttribute('aria-sort')") == "ascending"
    page.evaluate("document.querySelector('#pr-table th:nth-child(1) button').click()")
    numbers = [int(v) for v in _column(page, "pr-table", 0)]
    assert numbers == sorted(numbers, reverse=True)
    page.evaluate("document.querySelector('#all-pr-table th:nth-child(2) button').click()")
    descending = page.evaluate(
        "(() => { const t = [...document.querySelectorAll('#all-pr-table tbody tr')].map(r => r.cells[1].textContent.trim());"
        " return t.length === 12 && t.every((x, i) => i === 0 || t[i - 1].localeCompare(x) >= 0); })()"
    )
    assert descending
    assert page.collect().errors == []


def test_hostile_pr_text_is_inert(opened):
    report, page = opened
    assert page.evaluate("document.scripts.length") == 1  # only ours
    assert page.evaluate("document.images.length") == 0
    assert page.evaluate("document.querySelectorAll('[onerror], [onclick], [onload]').length") == 0
    hrefs = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.protocol)")
    assert hrefs and set(hrefs) == {"https:"}
    text = page.evaluate("document.body.innerText")
    assert "<script>alert('xss')</script>" in text  # shown as text
    assert '<img src=x onerror="alert(1)">' in text
    assert not [e for e in page.browser._events if e.get("method") == "Page.javascriptDialogOpening"]


def test_print_layout(opened):
    _, page = opened
    page.browser.send("Emulation.setEmulatedMedia", {"media": "print"}, session=page.session)
    try:
        arrows = page.evaluate("getComputedStyle(document.querySelector('th button'), '::after').display")
        assert arrows == "none"
        pdf = page.browser.send("Page.printToPDF", {}, session=page.session)["data"]
        assert base64.b64decode(pdf)[:5] == b"%PDF-"
        # printing opened the collapsed appendix of all PRs
        assert page.evaluate("document.querySelector('#all-prs details').open") is True
    finally:
        page.browser.send("Emulation.setEmulatedMedia", {"media": ""}, session=page.session)


def test_standalone_file_and_content_security_policy():
    html = render_page(sample_report("en", hostile=True), backend="svg")
    assert not re.search(r"<(link|iframe|object|embed|img)\b", html)
    assert not re.search(r"""<[a-zA-Z][^>]*\ssrc\s*=|@import|url\((?!#)""", html)
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in html
    assert "default-src 'none'" in html
    assert "javascript:" not in html.replace("javascript:alert", "")  # only as escaped text
    assert 'href="javascript' not in html


def test_key_changes_name_their_prs_as_the_markdown_does():
    """The HTML headings once left out the "(#6701)" the Markdown has after each name."""
    for lang, opening in (("en", " ("), ("zh", "（")):
        report = sample_report(lang)
        html = render_page(report, backend="svg")
        heads = re.findall(r'<div class="item"><h3>(.*?)</h3>', html)  # key changes come first
        item = report.sections.key_changes[1]
        url = f"https://github.com/verl-project/verl/pull/{item.prs[0]}"
        assert f'{item.name}{opening}<a href="{url}">#{item.prs[0]}</a>' in heads[1], heads[:2]


def test_empty_week_renders_without_charts_of_missing_data():
    report = sample_report("en", n_prs=0)
    report.stats = {"trend": {"weeks": [], "merged_prs": [], "themes": {}}}
    report.sections.table = []
    html = render_page(report, backend="svg")
    assert "chart-importance" not in html and "chart-modules" not in html
    assert catalog("en").t("table.empty", threshold="5") in html


@pytest.mark.parametrize("backend", ["matplotlib", "svg"])
def test_chart_labels_are_literal_text(backend):
    if backend == "matplotlib" and not charts.matplotlib_available():
        pytest.skip("matplotlib (the charts extra) is not installed")
    name = "$x^2$ <b>bold</b> & co"
    svg = charts.bar_chart([(name, 3), ("训练", 2)], "PRs by module", "c1", backend=backend)
    assert "$x^2$ &lt;b&gt;bold&lt;/b&gt; &amp; co" in svg  # not TeX, not markup
    assert "训练" in svg and "<b>" not in svg


def test_a_home_matplotlib_cannot_write_to_gets_no_warning_and_a_kept_font_cache(tmp_path):
    """A service account's home may be missing or read-only: matplotlib then warned on
    stderr on every run ("Matplotlib created a temporary cache directory …") and built its
    font cache again. A folder of the user's own takes it, and is reused; a MPLCONFIGDIR
    the user set is kept."""
    import os
    import subprocess
    import sys

    if not charts.matplotlib_available():
        pytest.skip("matplotlib (the charts extra) is not installed")
    draw = "from repobrief.render import charts; print(len(charts.bar_chart([('a', 1)], 't', 'c', backend='matplotlib')))"
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    env.update(HOME="/proc/no-such-home", TMPDIR=str(tmp_path))
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", draw], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and int(r.stdout) > 100, r.stderr
        assert "Matplotlib" not in r.stderr and "MPLCONFIGDIR" not in r.stderr, r.stderr
    (kept,) = tmp_path.glob("repobrief-*-matplotlib")
    assert list(kept.glob("fontlist-*.json")) and [p.name for p in tmp_path.iterdir()] == [kept.name]
    mine = tmp_path / "mine"
    r = subprocess.run([sys.executable, "-c", draw], env={**env, "MPLCONFIGDIR": str(mine)}, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and list(mine.glob("fontlist-*.json")), r.stderr


def test_without_matplotlib_the_builtin_drawer_is_used(monkeypatch):
    monkeypatch.setattr(charts, "matplotlib_available", lambda: False)
    html = render_page(sample_report("en"))
    assert html.count('class="chart"') == 4
    assert "figure_1" not in html  # matplotlib's element ids


def test_templates_can_be_overridden(tmp_path, monkeypatch):
    from repobrief.render import _environment

    (tmp_path / "page.css").write_text("body { background: #abcdef; }")
    monkeypatch.setenv("REPOBRIEF_TEMPLATES", str(tmp_path))
    _environment.cache_clear()
    try:
        html = render_page(sample_report("en"), backend="svg")
    finally:
        _environment.cache_clear()
    assert "body { background: #abcdef; }" in html
    assert "<h1" in html  # the package's report.html.j2 still fills the page


def test_trend_series_of_the_wrong_length_are_left_out():
    report = sample_report("en")
    trend = report.stats["trend"]
    trend["themes"]["rollout"] = trend["themes"]["rollout"][:-3]
    trend["merged_prs"] = trend["merged_prs"][:5]
    html = render_page(report)  # the default backend: matplotlib would raise on mismatched lengths
    chart = re.search(r'<svg[^>]*data-chart="chart-trend".*?</svg>', html, re.S).group(0)
    assert "trainer" in chart and "rollout" not in chart


def test_warnings_are_shown_and_long_words_wrap(browser, tmp_path):
    """What the Markdown says above the summary (an LLM unit fell back, a shallow clone)
    the page says too; a long path in a title wraps instead of widening the page."""
    report = sample_report("en")
    report.warnings = ["llm: sections fell back to the offline composer: summary"]
    long = "verl/workers/" + "sharding_manager_" * 40 + "fsdp_vllm.py"
    report.pull_requests[0].title = f"fix: crash in {long}"
    report.sections.summary = f"{report.sections.summary} See {long}."
    path = tmp_path / "report.html"
    path.write_text(render_page(report, backend="svg"), encoding="utf-8")
    page = browser.open(path)
    try:
        assert page.evaluate("document.querySelector('#warnings').textContent.trim()") == \
            "⚠ llm: sections fell back to the offline composer: summary"
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        page.close()


def test_code_spans_in_pr_text_read_as_code_and_stay_inert():
    """A title's `verl/trainer/ppo/v1` showed its backticks in the HTML (the Markdown
    report renders them as code). Inside a code span PR text stays escaped."""
    from dataclasses import replace

    report = sample_report("en")
    first = report.sections.key_changes[0]
    report.sections.key_changes[0] = replace(first, name="Use `verl/trainer/ppo/v1` by default",
                                             text="It sets `trainer.use_v1=True` and `<script>alert(1)</script>`.")
    report.sections.table[0] = replace(report.sections.table[0], gist="Deprecate `FLASK_ENV` and `app.env`")
    html = render_page(report, backend="svg")
    assert "<h3>Use <code>verl/trainer/ppo/v1</code> by default" in html
    assert "It sets <code>trainer.use_v1=True</code> and <code>&lt;script&gt;alert(1)&lt;/script&gt;</code>." in html
    assert "<td>Deprecate <code>FLASK_ENV</code> and <code>app.env</code></td>" in html
    assert "<script>alert(1)" not in html and "`" not in re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)
