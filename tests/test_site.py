"""`repobrief site`: one archive site for many repositories, in one language."""

from __future__ import annotations

import json

from clirun import run_cli
from gitrepo import GitRepoBuilder


def _repo(path):
    b = GitRepoBuilder(path)
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/app.py": b.lines(30)})
    b.commit(f"feat: work in {path.name} (#3)", "2026-06-23T10:00:00+00:00", {"src/x.py": b.lines(20)}, author="ann")
    return b.path


def _site(repo, name, out, lang="en"):
    return run_cli("site", str(repo), "--name", name, "--lang", lang, "--until-week", "2026-W26", "--weeks", "1",
                   "--out", str(out), "-q")


def test_repositories_whose_names_make_the_same_folder_keep_their_own_pages(tmp_path):
    out = tmp_path / "site"
    for name, folder in (("acme/a b", "one"), ("acme/a-b", "two")):
        code, _, err = _site(_repo(tmp_path / folder), name, out)
        assert code == 0, err
    repos = json.loads((out / "site.json").read_text(encoding="utf-8"))["repositories"]
    assert {n: e["path"] for n, e in repos.items()} == {"acme/a b": "acme/a-b", "acme/a-b": "acme/a-b-2"}
    assert "work in one" in (out / "acme/a-b/2026-W26.html").read_text(encoding="utf-8")
    assert "work in two" in (out / "acme/a-b-2/2026-W26.html").read_text(encoding="utf-8")
    # A later run of the first one goes back to its own folder.
    code, _, err = _site(tmp_path / "one", "acme/a b", out)
    assert code == 0, err
    assert "work in one" in (out / "acme/a-b/2026-W26.html").read_text(encoding="utf-8")


def test_a_site_stays_in_one_language(tmp_path):
    out = tmp_path / "site"
    code, _, err = _site(_repo(tmp_path / "one"), "acme/one", out)
    assert code == 0, err
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, _, err = _site(_repo(tmp_path / "two"), "acme/two", out, lang="zh")
    assert code == 2
    assert "is in 'en'" in err and "--lang en" in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    # a run that asks for no language (the docs' weekly cron line) takes the site's, as it takes its time zone
    code, _, err = run_cli("site", str(tmp_path / "two"), "--name", "acme/two", "--until-week", "2026-W26", "--weeks", "1",
                           "--out", str(out), "-q")
    assert code == 0, err
    assert json.loads((out / "acme/two/2026-W26.json").read_text(encoding="utf-8"))["language"] == "en"


def test_a_failed_write_leaves_the_site_as_it_was_and_running_again_works(tmp_path):
    out = tmp_path / "site"
    code, _, err = _site(_repo(tmp_path / "one"), "acme/one", out)
    assert code == 0, err
    # The write fails at the site's index (as a full disk would, part-way through).
    (out / "index.html").unlink()
    (out / "index.html").mkdir()
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, _, err = _site(_repo(tmp_path / "two"), "acme/two", out)
    assert code == 1
    assert err.startswith("error: cannot write") and "index.html" in err and "hint:" in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not (out / "acme/two").exists()
    (out / "index.html").rmdir()
    code, _, err = _site(tmp_path / "two", "acme/two", out)
    assert code == 0, err
    assert set(json.loads((out / "site.json").read_text(encoding="utf-8"))["repositories"]) == {"acme/one", "acme/two"}
    assert "work in two" in (out / "acme/two/2026-W26.html").read_text(encoding="utf-8")


def test_an_out_folder_that_cannot_be_made_is_a_clean_error(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    code, _, err = _site(_repo(tmp_path / "one"), "acme/one", tmp_path / "file" / "site")
    assert code == 2  # a bad flag, said before any work
    assert err.startswith(f"error: --out '{tmp_path / 'file' / 'site'}' cannot be made: '{tmp_path / 'file'}' is a file")


def test_a_shallow_clone_is_warned_about_once_not_once_per_week(tmp_path):
    import subprocess

    repo = _repo(tmp_path / "one")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    code, _, err = run_cli("site", str(shallow), "--name", "acme/one", "--until-week", "2026-W26", "--weeks", "3",
                           "--out", str(tmp_path / "site"), "-q")
    assert code == 0, err
    assert err.count("warning: 这是一个浅克隆") == 1 and "git fetch --unshallow" in err  # in the report's language (zh)


def test_the_weeks_after_the_clones_newest_commit_are_warned_about_once(tmp_path):
    """The clone's newest commit is from 2026-06-23: a site up to 2026-W30 said so once per week."""
    code, _, err = run_cli("site", str(_repo(tmp_path / "one")), "--name", "acme/one", "--lang", "en",
                           "--until-week", "2026-W30", "--weeks", "6", "--out", str(tmp_path / "site"), "-q")
    assert code == 0, err
    assert err.count("warning:") == 1, err
    assert ("warning: the clone's newest commit is from 2026-06-23, before the 3 weeks from 2026-W28 to 2026-W30: "
            "if the clone is not up to date, run `git pull` in it first") in err


def test_a_site_run_stopped_while_it_writes_leaves_a_folder_the_next_run_accepts(tmp_path, monkeypatch):
    import repobrief.site as site

    out, repo = tmp_path / "site", _repo(tmp_path / "one")
    real = site.write_atomically

    def stopped(files):
        for path in files:  # the folders are made, then Ctrl-C or SIGTERM comes
            path.parent.mkdir(parents=True, exist_ok=True)
        raise KeyboardInterrupt

    monkeypatch.setattr(site, "write_atomically", stopped)
    code, _, _ = _site(repo, "acme/one", out)
    assert code == 130 and [p for p in out.rglob("*")] == []
    monkeypatch.setattr(site, "write_atomically", real)
    code, _, err = _site(repo, "acme/one", out)
    assert code == 0, err
    assert (out / "acme/one/2026-W26.html").is_file()


# --------------------------------------------------------------------------- stopped, flags, trends, time zone


def _weeks_repo(path):
    """Three weeks, 2026-W24 to W26: 6, 4 and 6 bug fixes (4 are too few for a "Bug fixes"
    theme in W25), and in W25 a feature."""
    b = GitRepoBuilder(path)
    b.commit("initial", "2026-05-04T10:00:00+00:00", {"src/app.py": b.lines(30)})
    words = iter("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split())
    n = 10
    for monday, fixes in (("2026-06-08", 6), ("2026-06-15", 4), ("2026-06-22", 6)):
        for i in range(fixes):
            b.commit(f"fix: {next(words)} (#{n})", f"{monday[:-2]}{int(monday[-2:]) + i % 5:02d}T10:00:00+00:00",
                     {"src/app.py": b.lines(5)}, author=f"dev{i}")
            n += 1
    b.commit(f"feat: new reader (#{n})", "2026-06-17T12:00:00+00:00", {"src/reader.py": b.lines(40)}, author="ann")
    return b.path


def _files(out):
    return {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} if out.exists() else {}


def _three_weeks(repo, out, *extra):
    return run_cli("site", str(repo), "--name", "acme/one", "--lang", "en", "--until-week", "2026-W26", "--weeks", "3",
                   "--out", str(out), *extra)


def test_a_site_stopped_while_it_builds_says_how_far_it_got_and_that_nothing_was_written(tmp_path, monkeypatch):
    import os
    import signal

    import repobrief.pipeline as pipeline

    repo, out = _weeks_repo(tmp_path / "one"), tmp_path / "site"
    real = pipeline.generate_reports

    def stopped_after_one_week(*args, **kwargs):
        for report in real(*args, **kwargs):
            yield report
            os.kill(os.getpid(), signal.SIGTERM)  # as `timeout` or CI would, while the next week is built

    monkeypatch.setattr(pipeline, "generate_reports", stopped_after_one_week)
    code, _, err = _three_weeks(repo, out)
    assert code == 130
    # The week line says what is done (built, in memory), not "done"; the last line what was written.
    assert "2026-W24 built" in err and " done" not in err
    assert err.strip().splitlines()[-1] == f"interrupted after 1 of 3 weeks were built; nothing was written to {out}"
    assert not out.exists()

    # Extending a site: the site as it was, and said so.
    monkeypatch.setattr(pipeline, "generate_reports", real)
    code, _, err = run_cli("site", str(repo), "--name", "acme/one", "--lang", "en", "--until-week", "2026-W24",
                           "--weeks", "1", "--out", str(out), "-q")
    assert code == 0, err
    before = _files(out)
    monkeypatch.setattr(pipeline, "generate_reports", stopped_after_one_week)
    code, _, err = _three_weeks(repo, out, "-q")
    assert code == 130
    assert err.strip() == f"interrupted after 1 of 3 weeks were built; the site in {out} was not changed"
    assert _files(out) == before


def _without_footer(files: dict) -> dict:
    import re

    return {p: re.sub(rb"<footer>.*?</footer>", b"", data) for p, data in files.items()}


def _site_process(prelude: str, *argv: str) -> tuple[int, str]:
    """(exit code, stderr) of `repobrief site ARGV…` in a process of its own, after
    `prelude` (Python) has run in it: the test process has threads of other tests'
    servers alive, and `site` draws in one process then (a fork would copy their locks)."""
    import subprocess
    import sys

    program = f"{prelude}\nfrom repobrief.cli import main\nmain({['site', *argv]!r})"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    return done.returncode, done.stderr


def test_a_sites_pages_are_drawn_on_several_cores_and_read_the_same(tmp_path):
    """matplotlib draws a week's charts in ≈ 0.7 s, most of a site's time: the pages are
    drawn by forked workers, each said on stderr as it is done."""
    sizes = tmp_path / "pools"
    recorded = (  # each pool's size, appended to a file by the process that starts the pool
        "import repobrief.forkpool as f\nrun = f.ForkPool.run\n"
        f"def recorded(self, size):\n    open({str(sizes)!r}, 'a').write(f'{{size}}\\n')\n    return run(self, size)\n"
        "f.ForkPool.run = recorded")
    repo = _weeks_repo(tmp_path / "one")
    weeks = ["2026-W23", "2026-W24", "2026-W25", "2026-W26"]
    sites = {}
    for workers in ("1", "2"):
        out = tmp_path / f"site{workers}"
        code, err = _site_process(recorded, str(repo), "--name", "acme/one", "--lang", "en", "--until-week", "2026-W26",
                                  "--weeks", "4", "--out", str(out), "--workers", workers)
        assert code == 0, err
        assert sorted(line for line in err.splitlines() if line.endswith(" page drawn")) == [f"{w} page drawn" for w in weeks]
        sites[workers] = {p.relative_to(out): data for p, data in _files(out).items()}
    assert sizes.read_text().split() == ["2"]  # one pool, of two workers, for the second run only
    pages = {workers: _without_footer({p: d for p, d in files.items() if p.suffix == ".html"})
             for workers, files in sites.items()}
    assert pages["1"] == pages["2"] and len(pages["2"]) == 4 + 3  # the weeks, the repository's index and trends, the site's index


def test_a_page_that_cannot_be_drawn_is_named_and_nothing_is_written(tmp_path):
    broken = ("import repobrief.site as site\nreal = site.render_page\n"
              "def broken(report, **kwargs):\n"
              "    if report.week == '2026-W25':\n        raise ValueError('no room for the chart')\n"
              "    return real(report, **kwargs)\n"
              "site.render_page = broken")
    out = tmp_path / "site"
    code, err = _site_process(broken, str(_weeks_repo(tmp_path / "one")), "--name", "acme/one", "--lang", "en",
                              "--until-week", "2026-W26", "--weeks", "4", "--out", str(out), "--workers", "2", "-q")
    assert code == 1, err
    assert "error: the page of 2026-W25 could not be rendered (ValueError: no room for the chart); nothing was written" in err
    assert "hint: run again with --workers 1 to see the error" in err
    assert not out.exists()


def test_a_site_stopped_while_it_draws_its_pages_says_how_many_were_drawn(tmp_path, monkeypatch):
    import os
    import signal

    import repobrief.site as site

    real = site.render_page

    calls = []

    def stopped_while_the_second_page_is_drawn(report, **kwargs):
        calls.append(report.week)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(report, **kwargs)

    monkeypatch.setattr(site, "render_page", stopped_while_the_second_page_is_drawn)
    out = tmp_path / "site"
    code, _, err = _three_weeks(_weeks_repo(tmp_path / "one"), out, "--workers", "1", "-q")
    assert code == 130
    assert err.strip() == f"interrupted after 3 of 3 weeks were built and 1 of their pages drawn; nothing was written to {out}"
    assert not out.exists()


def test_a_site_stopped_while_it_writes_is_written_whole_and_says_so(tmp_path, monkeypatch):
    import os
    import signal

    import repobrief.output as output

    repo, out = _weeks_repo(tmp_path / "one"), tmp_path / "site"
    real = output._commit

    def stopped_during_the_write(staged):
        os.kill(os.getpid(), signal.SIGTERM)  # waits for the write to end
        real(staged)

    monkeypatch.setattr(output, "_commit", stopped_during_the_write)
    code, _, err = _three_weeks(repo, out, "-q")
    assert code == 130
    assert err.strip().startswith("interrupted; the site was written first (")
    assert "acme/one, 2026-W24 … 2026-W26" in err
    assert sorted(json.loads((out / "site.json").read_text(encoding="utf-8"))["repositories"]["acme/one"]["weeks"]) == [
        "2026-W24", "2026-W25", "2026-W26"]
    assert (out / "acme/one/2026-W26.html").is_file() and (out / "acme/one/trends.html").is_file()


def test_a_bad_or_empty_until_week_is_refused_by_its_name(tmp_path):
    repo, out = _repo(tmp_path / "one"), tmp_path / "site"
    for value, said in (("garbage", "invalid --until-week 'garbage'"), ("", "--until-week is empty"),
                        ("  ", "--until-week is empty"), ("9998-W01", "--until-week 9998-W01 has not started yet")):
        code, _, err = run_cli("site", str(repo), "--weeks", "2", "--until-week", value, "--out", str(out))
        assert code == 2, (value, err)
        assert err.startswith(f"error: {said}") and "--week " not in err
    assert not out.exists()


def _theme_lines(monkeypatch):
    """The lines of the trends page's themes chart, as drawn: {name: PRs per week}."""
    import repobrief.site as site

    drawn: dict[str, list] = {}
    real = site.charts.line_chart

    def spy(weeks, series, title, chart_id, **kwargs):
        if chart_id == "chart-site-themes":
            drawn.clear()
            drawn.update({name: list(values) for name, values in series})
        return real(weeks, series, title, chart_id, **kwargs)

    monkeypatch.setattr(site.charts, "line_chart", spy)
    return drawn


def test_the_trends_chart_draws_a_week_where_a_type_was_no_theme_with_its_count_not_0(tmp_path, monkeypatch):
    repo, out = _weeks_repo(tmp_path / "one"), tmp_path / "site"
    drawn = _theme_lines(monkeypatch)
    code, _, err = _three_weeks(repo, out, "-q")
    assert code == 0, err
    weeks = json.loads((out / "site.json").read_text(encoding="utf-8"))["repositories"]["acme/one"]["weeks"]
    assert "Bug fixes" in weeks["2026-W24"]["by_theme"] and "Bug fixes" not in weeks["2026-W25"]["by_theme"]
    assert drawn["Bug fixes"] == [6, 4, 6]  # W25's 4 fixes, which was 0
    trends = (out / "acme/one/trends.html").read_text(encoding="utf-8")
    assert "<figcaption>A gap in a theme&#39;s line: a week in which that topic was not counted" in trends

    # A site written before the weeks kept their counts per type: they come from the weeks' JSON.
    manifest = json.loads((out / "site.json").read_text(encoding="utf-8"))
    for summary in manifest["repositories"]["acme/one"]["weeks"].values():
        for key in ("by_type", "by_module", "theme_keys"):
            del summary[key]
    (out / "site.json").write_text(json.dumps(manifest), encoding="utf-8")
    drawn.clear()
    code, _, err = run_cli("site", str(repo), "--name", "acme/one", "--lang", "en", "--until-week", "2026-W26",
                           "--weeks", "1", "--out", str(out), "-q")
    assert code == 0, err
    assert drawn["Bug fixes"] == [6, 4, 6]


def test_a_theme_whose_count_a_week_does_not_have_is_a_gap_in_the_trends_chart(tmp_path, monkeypatch):
    from repobrief.site import _trend_charts

    drawn = _theme_lines(monkeypatch)
    # A discovered topic is counted only in the weeks it was a theme.
    entry = {"weeks": {
        "2026-W24": {"merged_prs": 9, "by_theme": {"NPU": 5}, "theme_keys": {"NPU": "term:npu"}, "by_type": {}, "by_module": {}},
        "2026-W25": {"merged_prs": 4, "by_theme": {}, "theme_keys": {}, "by_type": {}, "by_module": {}},
        "2026-W26": {"merged_prs": 8, "by_theme": {"NPU": 4}, "theme_keys": {"NPU": "term:npu"}, "by_type": {}, "by_module": {}},
    }}
    charts = _trend_charts(entry, {"chart_prs": "PRs", "chart_themes": "Themes", "merged_prs": "Merged"}, "svg")
    assert drawn == {"NPU": [5, None, 4]}
    svg = str(charts["themes"])
    # Two points and no line through the week without a count (the pure-SVG drawer).
    assert svg.count("<circle") == 2 and "<polyline" not in svg


def test_a_gap_in_a_line_chart_is_drawn_as_a_gap_by_both_drawers():
    import re

    import pytest

    from repobrief.render import charts

    svg = charts.line_chart(["W1", "W2", "W3", "W4"], [("a", [1, 2, None, 3])], "t", "c", backend="svg")
    lines = re.findall(r'<polyline points="([^"]+)"', svg)
    assert [len(points.split()) for points in lines] == [2] and svg.count("<circle") == 3  # weeks 1-2, then a point
    if not charts.matplotlib_available():
        pytest.skip("matplotlib is not installed")
    drawn = charts.line_chart(["W1", "W2", "W3", "W4"], [("a", [1, 2, None, 3])], "t", "c", backend="matplotlib")
    line = re.findall(r'<path d="([^"]+)"[^>]*stroke: #0072b2', drawn)[0].split()  # the first: the line, then its legend
    assert [c for c in line if c.isalpha()] == ["M", "L", "M"]  # week 2 to week 4 is not joined


def _tz_repo(path):
    b = GitRepoBuilder(path)
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/app.py": b.lines(30)})
    b.commit("feat: early in week 26 (#3)", "2026-06-23T10:00:00+00:00", {"src/x.py": b.lines(20)}, author="ann")
    # Monday 2026-06-29 04:00 in Shanghai (week 27 there), Sunday evening in UTC (week 26).
    b.commit("feat: shanghai monday morning (#4)", "2026-06-28T20:00:00+00:00", {"src/y.py": b.lines(20)}, author="bob")
    return b.path


def _acme_site(repo, out, week, *extra, weeks: str = "1"):
    """`repobrief site` of acme/one in English, `weeks` weeks up to `week`."""
    return run_cli("site", str(repo), "--name", "acme/one", "--lang", "en", "--until-week", week, "--weeks", weeks,
                   "--out", str(out), "-q", *extra)


def test_a_site_is_extended_in_its_own_time_zone_and_another_is_refused(tmp_path):
    repo, out = _tz_repo(tmp_path / "one"), tmp_path / "site"
    code, _, err = _acme_site(repo, out, "2026-W26", "--tz", "Asia/Shanghai")
    assert code == 0, err
    code, _, err = _acme_site(repo, out, "2026-W27")  # no --tz: the site's
    assert code == 0, err
    w26, w27 = (json.loads((out / f"acme/one/2026-W2{n}.json").read_text(encoding="utf-8")) for n in (6, 7))
    assert w27["timezone"] == "Asia/Shanghai" and w27["range"]["start"] == w26["range"]["end"]
    assert "shanghai monday morning" in (out / "acme/one/2026-W27.html").read_text(encoding="utf-8")
    assert json.loads((out / "site.json").read_text(encoding="utf-8"))["timezone"] == "Asia/Shanghai"

    # the same zone written otherwise, or another name of it, lines up: the site keeps its own name
    for n, tz in ((8, "asia/shanghai"), (9, "PRC")):
        code, _, err = _acme_site(repo, out, f"2026-W2{n}", "--tz", tz)
        assert code == 0, err
        week = json.loads((out / f"acme/one/2026-W2{n}.json").read_text(encoding="utf-8"))
        assert week["timezone"] == "Asia/Shanghai" and week["range"]["start"].endswith("+08:00")

    before = _files(out)
    code, _, err = _acme_site(repo, out, "2026-W30", "--tz", "UTC")
    assert code == 2
    assert "has its weeks in the time zone 'Asia/Shanghai'" in err and "--tz Asia/Shanghai" in err
    assert _files(out) == before


def test_a_site_written_before_its_time_zone_was_recorded_keeps_the_one_of_its_reports(tmp_path):
    repo, out = _tz_repo(tmp_path / "one"), tmp_path / "site"
    code, _, err = _acme_site(repo, out, "2026-W26", "--tz", "Asia/Shanghai")
    assert code == 0, err
    manifest = json.loads((out / "site.json").read_text(encoding="utf-8"))
    del manifest["timezone"], manifest["repositories"]["acme/one"]["timezone"]
    (out / "site.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, _, err = _acme_site(repo, out, "2026-W27")
    assert code == 0, err
    assert json.loads((out / "acme/one/2026-W27.json").read_text(encoding="utf-8"))["timezone"] == "Asia/Shanghai"
    assert "shanghai monday morning" in (out / "acme/one/2026-W27.html").read_text(encoding="utf-8")


def test_an_archived_week_that_cannot_be_read_back_is_named_and_nothing_is_written(tmp_path):
    """A new week re-renders the archived week before it (its "next" link) from its saved
    JSON: JSON that is broken, or of another major schema version, stops the run with the
    file's name, before anything is written."""
    repo, out = _weeks_repo(tmp_path / "repo"), tmp_path / "site"
    code, _, err = _acme_site(repo, out, "2026-W25")
    assert code == 0, err
    saved = out / "acme/one/2026-W25.json"
    good = json.loads(saved.read_text(encoding="utf-8"))
    for content, says in (("{broken", "is not valid JSON"),
                          (json.dumps({**good, "schema_version": "2.0"}), "has schema_version '2.0'; this repobrief reads 1.x")):
        saved.write_text(content, encoding="utf-8")
        before = _files(out)
        code, _, err = _acme_site(repo, out, "2026-W26")
        assert code == 2 and str(saved) in err and says in err and "hint:" in err, err
        assert _files(out) == before
    # A later minor version's extra keys are read past.
    good["pull_requests"][0]["files"][0]["renamed_from"] = "src/old.py"
    saved.write_text(json.dumps(good), encoding="utf-8")
    code, _, err = _acme_site(repo, out, "2026-W26")
    assert code == 0, err
    assert "2026-W26.html" in (out / "acme/one/2026-W25.html").read_text(encoding="utf-8")


def test_a_damaged_manifest_is_named_or_mended_and_a_deleted_one_rebuilt(tmp_path):
    """A hand-edited site.json once ended in tracebacks (a week's counts set to null, the
    weeks a list), a repository's folder of `../..` made the run write outside the
    site, and the hint for a broken one ("delete it and run again") was then refused as
    "not a repobrief site". A broken week summary is written again from the week's JSON;
    a broken entry stops the run with what is wrong, before anything is written; a
    deleted site.json is rebuilt from the weeks' JSON files."""
    repo, out = _weeks_repo(tmp_path / "repo"), tmp_path / "site"
    code, _, err = _acme_site(repo, out, "2026-W25", weeks="2")
    assert code == 0, err
    manifest = out / "site.json"
    good = json.loads(manifest.read_text(encoding="utf-8"))

    def run():
        return _acme_site(repo, out, "2026-W26")

    mended = json.loads(json.dumps(good))
    mended["repositories"]["acme/one"]["weeks"]["2026-W24"]["by_module"] = None
    manifest.write_text(json.dumps(mended), encoding="utf-8")
    code, _, err = run()
    assert code == 0, err
    weeks = json.loads(manifest.read_text(encoding="utf-8"))["repositories"]["acme/one"]["weeks"]
    assert weeks["2026-W24"] == good["repositories"]["acme/one"]["weeks"]["2026-W24"] and "2026-W26" in weeks

    for field, value, says in (("weeks", [], "repositories['acme/one'].weeks is not a table of weeks"),
                               ("path", "../../escape", "repositories['acme/one'].path is '../../escape', not a folder")):
        broken = json.loads(json.dumps(good))
        broken["repositories"]["acme/one"][field] = value
        manifest.write_text(json.dumps(broken), encoding="utf-8")
        before = _files(tmp_path)
        code, _, err = run()
        assert code == 2 and f"{str(manifest)!r} is damaged: {says}" in err and "Traceback" not in err, err
        assert "hint: delete it and run `repobrief site` again: it is rebuilt" in err
        assert _files(tmp_path) == before  # nothing written, inside the site or beside it

    manifest.unlink()
    code, _, err = run()
    assert code == 0, err
    rebuilt = json.loads(manifest.read_text(encoding="utf-8"))
    assert rebuilt["repositories"]["acme/one"]["path"] == "acme/one" and rebuilt["lang"] == "en"
    assert sorted(rebuilt["repositories"]["acme/one"]["weeks"]) == ["2026-W24", "2026-W25", "2026-W26"]
    assert rebuilt["repositories"]["acme/one"]["weeks"]["2026-W24"] == weeks["2026-W24"]
    assert "2026-W24.html" in (out / "acme/one/index.html").read_text(encoding="utf-8")


def test_an_out_folder_that_cannot_be_written_is_said_before_any_week_is_built(tmp_path):
    """A read-only --out printed "2026-W25 built" for every week and only then "cannot
    write": all the work was lost. (/proc takes no new files, whoever runs the test.)"""
    code, _, err = run_cli("site", str(_repo(tmp_path / "one")), "--name", "acme/one", "--until-week", "2026-W26",
                           "--weeks", "2", "--out", "/proc/repobrief-site")
    assert code == 1 and "error: cannot write into --out '/proc/repobrief-site'" in err, err
    assert "built" not in err and "hint: check that --out is a writable folder" in err
