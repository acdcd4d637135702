"""`repobrief backfill`: many weeks from one read, the same reports as one at a time."""

from __future__ import annotations

import json
import os
import re
import signal
from datetime import UTC, datetime, timedelta

from clirun import live_processes, run_cli, start_cli, wait_until

VERL = ["--name", "verl-project/verl", "--tz", "Asia/Shanghai", "--lang", "en"]
VOLATILE = ("generated_at",)


def _stable(d: dict) -> dict:
    d = {k: v for k, v in d.items() if k not in VOLATILE}
    d["engine"] = {k: v for k, v in d["engine"].items() if k not in ("timings_ms", "source_stats")}
    return d


def test_backfill_writes_every_week_equal_to_single_reports(verl_repo, tmp_path):
    out = tmp_path / "out"
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, "--from", "2026-W22", "--to", "2026-W26",
                       "--format", "json,md", "--out", str(out))
    assert code == 0, err
    assert "5 weeks (2026-W22 to 2026-W26)" in err
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f"verl-project__verl-2026-W{w}.en.{ext}" for w in range(22, 27) for ext in ("json", "md"))
    backfilled = json.loads((out / "verl-project__verl-2026-W26.en.json").read_text(encoding="utf-8"))
    code, single, _ = run_cli("report", str(verl_repo), *VERL, "--week", "2026-W26", "--format", "json", "-q")
    assert code == 0
    assert _stable(backfilled) == _stable(json.loads(single))
    md = (out / "verl-project__verl-2026-W26.en.md").read_text(encoding="utf-8")
    code, single_md, _ = run_cli("report", str(verl_repo), *VERL, "--week", "2026-W26", "-q")
    assert md == single_md
    # Trends in later weeks see the earlier weeks of the same pass.
    w23 = json.loads((out / "verl-project__verl-2026-W23.en.json").read_text(encoding="utf-8"))
    w22 = json.loads((out / "verl-project__verl-2026-W22.en.json").read_text(encoding="utf-8"))
    assert w23["stats"]["week_over_week"]["merged_prs"]["previous"] == w22["stats"]["merged_prs"]


def test_backfill_bad_range_and_empty_weeks(verl_repo, tmp_path):
    code, _, err = run_cli("backfill", str(verl_repo), "--from", "2026-W26", "--to", "2026-W20", "--out", str(tmp_path))
    assert code == 2 and "before --from" in err
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, "--from", "2024-W01", "--to", "2024-W03",
                       "--out", str(tmp_path / "e"), "--skip-empty")
    assert code == 0 and "0 weeks written" in err and not (tmp_path / "e").exists()
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, "--from", "2026-W26", "--to", "2026-W26", "--out", str(tmp_path / "one"))
    assert code == 0 and "1 week (2026-W26 to 2026-W26), 22 PRs, 1 week written" in err, err


def test_a_db_a_backfill_does_not_use_is_said_not_dropped(verl_repo, tmp_path):
    """`--db` with a clone and the offline engine was accepted and silently unused (no
    file, no reports kept), though its help called it the store."""
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, "--from", "2026-W25", "--to", "2026-W26",
                           "--out", str(tmp_path / "o"), "--db", str(tmp_path / "team.db"), "-q")
    assert code == 0, err
    assert "note: --db is not used: the git source read with the offline engine needs no store" in err
    assert not (tmp_path / "team.db").exists() and len(list((tmp_path / "o").glob("*.json"))) == 2
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, "--from", "2026-W26", "--to", "2026-W26",
                           "--out", str(tmp_path / "o"), "-q")
    assert code == 0 and "--db" not in err


def _week_files(folder) -> dict[str, dict]:
    return {p.name: _stable(json.loads(p.read_text(encoding="utf-8"))) for p in folder.glob("*.json")}


def test_history_read_in_parts_and_workers_gives_the_single_reports(verl_repo, tmp_path, monkeypatch):
    """A long backfill reads the history a few weeks at a time (bounded memory) and
    splits the weeks over processes; neither may change a single number."""
    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.window import parse_timezone, week_range

    monkeypatch.setattr(pipeline, "PART_WEEKS", 3)  # 9 weeks: three parts, each with its own baseline read
    span = ("--from", "2026-W18", "--to", "2026-W26", "--format", "json")
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, *span, "--out", str(tmp_path / "one"), "--workers", "1")
    assert code == 0, err
    assert "(1 worker)" in err
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, *span, "--out", str(tmp_path / "two"), "--workers", "2")
    assert code == 0, err
    assert "9 weeks written" in err and "(2 workers)" in err
    one, two = _week_files(tmp_path / "one"), _week_files(tmp_path / "two")
    assert len(one) == 9 and one == two

    settings = load_settings(verl_repo, env={}, overrides={"name": "verl-project/verl", "timezone": "Asia/Shanghai",
                                                           "language": "en"})
    for w in week_range("2026-W18", "2026-W26", parse_timezone("Asia/Shanghai")):
        single = _stable(json.loads(render(pipeline.generate_report(str(verl_repo), settings, w))))
        assert one[f"verl-project__verl-{w.label}.en.json"] == single, w.label


def test_parts_before_the_first_commit_are_empty_weeks(verl_repo, tmp_path, monkeypatch):
    """Parts that end before the history begins have nothing to read; the weeks
    after them still equal their single reports."""
    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.window import parse_timezone, week_range

    monkeypatch.setattr(pipeline, "PART_WEEKS", 3)
    settings = load_settings(verl_repo, env={}, overrides={"name": "verl-project/verl", "timezone": "Asia/Shanghai",
                                                           "language": "en"})
    weeks = week_range("2024-W36", "2024-W47", parse_timezone("Asia/Shanghai"))
    backfilled = {r.week: r for r in pipeline.generate_reports(str(verl_repo), settings, weeks)}
    assert list(backfilled) == [w.label for w in weeks]
    assert not backfilled["2024-W36"].pull_requests and backfilled["2024-W47"].pull_requests
    for w in weeks:
        single = pipeline.generate_report(str(verl_repo), settings, w)
        assert _stable(json.loads(render(backfilled[w.label]))) == _stable(json.loads(render(single))), w.label


def test_backfill_worker_error_is_reported_once_with_its_exit_code(tmp_path):
    code, _, err = run_cli("backfill", str(tmp_path / "missing"), "--from", "2026-W01", "--to", "2026-W20",
                           "--out", str(tmp_path / "o"), "--workers", "2")
    assert code == 4 and "does not exist" in err
    assert not (tmp_path / "o").exists()


def test_merge_history_read_in_parts_gives_the_single_reports(flask_repo, tmp_path, monkeypatch):
    """flask merges its PRs with merge commits: a backfill there reads the side lines
    too (the one-pass read of line counts follows the first parent only), and every
    week still equals its single report, PR authors and line counts included."""
    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.window import parse_timezone, week_range

    monkeypatch.setattr(pipeline, "PART_WEEKS", 3)
    settings = load_settings(flask_repo, env={}, overrides={"name": "pallets/flask", "language": "en"})
    weeks = week_range("2023-W14", "2023-W22", parse_timezone("UTC"))
    backfilled = {r.week: r for r in pipeline.generate_reports(str(flask_repo), settings, weeks)}
    merged = [p for r in backfilled.values() for p in r.pull_requests]
    assert len(merged) >= 15 and any(p.via == "merge" for p in merged)
    assert all(p.lines_known for p in merged) and sum(p.lines for p in merged) > 0
    for w in weeks:
        single = pipeline.generate_report(str(flask_repo), settings, w)
        assert _stable(json.loads(render(backfilled[w.label]))) == _stable(json.loads(render(single))), w.label
        # What the JSON leaves out too: the e-mail read from the PR's own commits on the side line.
        assert [_identity(p) for p in backfilled[w.label].pull_requests] == [_identity(p) for p in single.pull_requests]


def _identity(pr) -> tuple:
    return pr.number, pr.author, pr.author_email, pr.lines_added, pr.lines_deleted, pr.via, pr.sha


def test_weeks_are_split_into_runs_of_equal_work():
    """Workers get contiguous runs of weeks with about equal commits, so a history busy in
    its last year does not leave one worker with all of it; no run is ever empty."""
    from repobrief.backfill import WEEK_COST, _split
    from repobrief.window import parse_timezone, week_range

    weeks = week_range("2025-W01", "2025-W20", parse_timezone("UTC"))
    runs = _split(weeks, 2)
    assert [len(r) for r in runs] == [10, 10] and [w for r in runs for w in r] == weeks
    busy_end = [0] * 15 + [100] * 5  # quiet, then five busy weeks
    runs = _split(weeks, 2, busy_end)
    assert [w for r in runs for w in r] == weeks
    work = [sum(WEEK_COST + c for c in busy_end[weeks.index(r[0]):weeks.index(r[-1]) + 1]) for r in runs]
    assert len(runs[0]) > 15 and max(work) < 0.6 * sum(work)
    assert [len(r) for r in _split(weeks[:3], 3, [500, 0, 0])] == [1, 1, 1]
    assert all(_split(weeks[:4], 3, [0, 0, 0, 900]))


def test_idle_cores_take_over_weeks_and_every_week_is_written_once(verl_repo, tmp_path, monkeypatch):
    """With cores to spare, workers hand the second half of what is left to helper
    processes (later parts they read themselves, the rest of a part from the history
    already read); the weeks written are still exactly the single reports."""
    from repobrief import backfill, pipeline

    monkeypatch.setattr(pipeline, "PART_WEEKS", 3)
    monkeypatch.setattr(backfill, "MIN_WEEKS_TO_HAND_OVER", 1)
    monkeypatch.setattr(backfill.os, "cpu_count", lambda: 6)  # four idle cores beside the two workers
    handed = tmp_path / "handed-over"
    for kind in ("give_parts", "give_weeks"):  # note, from whichever process, what was handed over
        real = getattr(backfill._IdleCores, kind)

        def spy(self, *args, _real=real, _kind=kind):
            n = _real(self, *args)
            if n:
                with open(handed, "a") as f:
                    f.write(f"{_kind}\n")
            return n

        monkeypatch.setattr(backfill._IdleCores, kind, spy)
    span = ("--from", "2026-W07", "--to", "2026-W26", "--format", "json")
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, *span, "--out", str(tmp_path / "two"), "--workers", "2")
    assert code == 0, err
    assert "20 weeks written" in err and "(2 workers + " in err and " helper" in err
    assert set(handed.read_text().split()) == {"give_parts", "give_weeks"}  # both ways were taken
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, *span, "--out", str(tmp_path / "one"), "--workers", "1")
    assert code == 0, err
    two, one = _week_files(tmp_path / "two"), _week_files(tmp_path / "one")
    assert len(two) == 20 and two == one


def test_a_failing_helper_fails_the_backfill_with_its_error(verl_repo, tmp_path, monkeypatch):
    from repobrief import backfill, pipeline
    from repobrief.errors import SourceError

    monkeypatch.setattr(pipeline, "PART_WEEKS", 3)
    monkeypatch.setattr(backfill, "MIN_WEEKS_TO_HAND_OVER", 1)
    monkeypatch.setattr(backfill.os, "cpu_count", lambda: 6)
    real = backfill._write_report

    def fail_last_week(job, rep):
        if rep.week == "2026-W26":  # the last week: a helper's, as helpers take the tail
            raise SourceError("disk full while writing 2026-W26", "free some space")
        return real(job, rep)

    monkeypatch.setattr(backfill, "_write_report", fail_last_week)
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, "--from", "2026-W07", "--to", "2026-W26",
                           "--out", str(tmp_path / "o"), "--workers", "2")
    assert code == 4 and err.count("disk full while writing 2026-W26") == 1 and "free some space" in err


def test_a_commit_dated_out_of_order_is_not_lost_by_the_backfill_read(tmp_path):
    """A backfill reads line counts with a first-parent walk from the calibration weeks
    on and the baseline before them up to that date. A commit dated in the future of
    its neighbours, deep in the baseline, is in neither walk; the read notices the gap
    in the line and reads the structure in full, as a single report does."""
    from gitrepo import GitRepoBuilder

    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.window import parse_timezone, week_range

    b = GitRepoBuilder(tmp_path / "r")
    day = 0
    for n in range(1, 18):  # a PR every week from 2025-12-01 on; #5 (early January) is dated 2026-03-18
        when = "2026-03-18T10:00:00+00:00" if n == 5 else f"2025-12-{1 + day:02d}T10:00:00+00:00" if day < 31 else \
            f"2026-{1 + (day - 31) // 31:02d}-{1 + (day - 31) % 31:02d}T10:00:00+00:00"
        b.commit(f"feat: change {n} (#{n})", when, {f"m{n}.py": "x\n" * n})
        day += 7
    settings = load_settings(b.path, env={}, overrides={"name": "o/r", "language": "en"})
    weeks = week_range("2026-W12", "2026-W14", parse_timezone("UTC"))
    backfilled = {r.week: r for r in pipeline.generate_reports(str(b.path), settings, weeks)}
    assert 5 in [p.number for p in backfilled["2026-W12"].pull_requests]
    for w in weeks:
        single = pipeline.generate_report(str(b.path), settings, w)
        assert _stable(json.loads(render(backfilled[w.label]))) == _stable(json.loads(render(single))), w.label


def test_each_part_takes_its_baseline_from_the_part_before_and_reads_the_same(tmp_path, monkeypatch):
    """Parts read one after another take their baseline weeks from the part before
    instead of reading them again. Commits dated out of order (one in the future of its
    neighbours, one in their past) make git's walk stop or skip where the dates say; the
    carried history must hold exactly what reading each part afresh holds, so every
    week's report is the same either way (and the same as a single report: see the
    tests above on real histories)."""
    from gitrepo import GitRepoBuilder

    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.sources.git import GitSource
    from repobrief.window import parse_timezone, week_range

    b = GitRepoBuilder(tmp_path / "r")
    start = datetime(2025, 9, 1, 10, tzinfo=UTC)
    odd = {9: start + timedelta(weeks=16), 23: start + timedelta(weeks=2)}  # #9 in the future, #23 in the past
    for n in range(1, 40):  # two commits a week from 2025-09-01; every fifth is a direct commit
        when = odd.get(n, start + timedelta(days=3.5 * n))
        b.commit(f"feat: change {n} (#{n})" if n % 5 else f"chore: tidy {n}", when.isoformat(),
                 {f"m{n % 7}.py": "x\n" * n, "conf.yaml": f"key_{n}: 1\n"})
    monkeypatch.setattr(pipeline, "PART_WEEKS", 3)
    settings = load_settings(b.path, env={}, overrides={"name": "o/r", "language": "en"})
    weeks = week_range("2025-W38", "2025-W52", parse_timezone("UTC"))
    real, carried = GitSource._carried, []

    def backfill(carry: bool) -> dict:
        def spy(self, *args):
            got = real(self, *args) if carry else None
            carried.append(got is not None)
            return got

        monkeypatch.setattr(GitSource, "_carried", spy)
        return {r.week: _stable(json.loads(render(r))) for r in pipeline.generate_reports(str(b.path), settings, weeks)}

    with_carry = backfill(True)
    assert len(carried) == 4 and carried.count(True) >= 2  # five parts: four read after another
    afresh = backfill(False)
    assert len(with_carry) == 15 and with_carry == afresh
    assert any(9 in [p["number"] for p in r["pull_requests"]] for r in with_carry.values())


def test_a_carried_part_holds_what_a_fresh_read_of_it_holds(tmp_path):
    """The source's own view of a part read with the part before (`preload(previous=)`)
    equals a fresh read of it: the same commits, the same ones with line counts, the
    same files and counts (baseline commits without them) — for parts of 1 to 4 weeks
    over a history with commits dated out of order."""
    from gitrepo import GitRepoBuilder

    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.sources.git import GitSource
    from repobrief.window import parse_timezone, week_range

    b = GitRepoBuilder(tmp_path / "r")
    start = datetime(2025, 9, 1, 10, tzinfo=UTC)
    odd = {9: start + timedelta(weeks=16), 23: start + timedelta(weeks=2), 30: start + timedelta(weeks=9, hours=1)}
    for n in range(1, 48):
        when = odd.get(n, start + timedelta(days=3.5 * n))
        b.commit(f"feat: change {n} (#{n})" if n % 5 else f"chore: tidy {n}", when.isoformat(),
                 {f"m{n % 7}.py": "x\n" * n, "conf.yaml": f"key_{n}: 1\n"})
    settings = load_settings(b.path, env={}, overrides={"name": "o/r", "language": "en", "baseline_weeks": 8})
    weeks = week_range("2025-W38", "2026-W05", parse_timezone("UTC"))
    source = GitSource(str(b.path), settings)
    source.index()

    def state(view) -> dict:
        return {sha: (sha in view._numstat_done, [(f.path, f.added, f.deleted, f.status) for f in c.files])
                for sha, c in view._commits.items()}

    carried = 0
    for size in (1, 2, 3, 4):
        parts = [weeks[i:i + size] for i in range(0, len(weeks), size)]
        tips = source.mainline_tips([p[-1].end for p in parts])
        previous = None
        for part, tip in zip(parts, tips, strict=True):
            since = pipeline.span_start(part[0], settings)
            lines_from = pipeline._calibration_start(pipeline._periods(part[0], settings.baseline_weeks), part[0])
            fresh, view = source.view(tip), source.view(tip)
            fresh.preload(since, lines_from)
            if previous is not None:
                carried += view._carried(previous, since, max(lines_from, since)) is not None
                view = source.view(tip)
            view.preload(since, lines_from, previous)
            assert state(view) == state(fresh), (size, part[0].label)
            assert [p.number for p in view._prs] == [p.number for p in fresh._prs]
            previous = view
    assert carried >= 20  # of 37: a gap in the line (the commits dated out of order) makes a part read afresh


def test_no_work_is_handed_over_while_another_thread_runs(verl_repo, tmp_path, monkeypatch):
    """A fork copies the locks other threads hold (an engine's HTTP client, say), so a
    worker with a second thread alive keeps all its weeks."""
    import threading

    from repobrief import backfill, pipeline

    monkeypatch.setattr(pipeline, "PART_WEEKS", 3)
    monkeypatch.setattr(backfill, "MIN_WEEKS_TO_HAND_OVER", 1)
    monkeypatch.setattr(backfill.os, "cpu_count", lambda: 6)
    busy = threading.Thread(target=lambda: None, name="an-engine-client")
    monkeypatch.setattr(backfill.threading, "enumerate", lambda: [threading.main_thread(), busy])
    code, _, err = run_cli("backfill", str(verl_repo), *VERL, "--from", "2026-W07", "--to", "2026-W26",
                           "--format", "json", "--out", str(tmp_path / "o"), "--workers", "2")
    assert code == 0, err
    assert "20 weeks written" in err and "(2 workers)" in err  # no helper


def test_a_past_week_is_read_up_to_its_end_whatever_was_merged_since(tmp_path):
    """A report of a week long past reads that week and its baseline, not every commit
    merged since (git's log is read from the tip down): later PRs, a later revert of one
    of the week's PRs and a branch merged later change nothing in it, and the commits
    it reads are the same before and after they land."""
    from gitrepo import GitRepoBuilder

    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.window import parse_timezone, resolve_window

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(30)})
    for n in range(1, 15):  # a PR every three days, 2026-01-06 … 2026-02-14
        b.commit(f"feat: change {n} (#{n})", f"2026-{1 + (3 * n + 5) // 31:02d}-{1 + (3 * n + 5) % 31:02d}T09:00:00+00:00",
                 {f"src/m{n}.py": b.lines(5 * n), "src/app.py": b.lines(30 + n)}, author=f"dev{n % 4}")
    settings = load_settings(b.path, env={}, overrides={"name": "o/r", "language": "en"})
    week = resolve_window("2026-W05", None, None, parse_timezone("UTC"))  # 2026-01-26 … 2026-02-01

    def report() -> tuple[dict, dict]:
        d = json.loads(render(pipeline.generate_report(str(b.path), settings, week)))
        return _stable(d), d["engine"]["source_stats"]

    before, read_before = report()
    assert [p["number"] for p in before["pull_requests"]] == [7, 8], "the fixture's week holds #7 and #8"

    b.commit('Revert "feat: change 7 (#7)" (#20)', "2026-03-02T09:00:00+00:00", {"src/m7.py": None})
    b.checkout("topic", create_from="HEAD~3")
    b.commit("fix: topic work", "2026-01-27T09:00:00+00:00", {"src/topic.py": b.lines(4)}, author="newcomer")
    b.checkout("main")
    b.merge("topic", "Merge pull request #21 from newcomer/topic", "2026-03-03T09:00:00+00:00")
    for n in range(22, 40):
        b.commit(f"feat: later {n} (#{n})", f"2026-03-{n - 18:02d}T09:00:00+00:00", {f"src/l{n}.py": b.lines(n)})

    after, read_after = report()
    assert after == before
    assert read_after["commits_read"] == read_before["commits_read"] == 9  # the first commit … #8


def test_a_newcomer_merged_at_the_first_second_of_the_week_is_new_in_report_and_backfill(tmp_path):
    """Monday 00:00:00 belongs to the week: a contributor whose first PR lands at that
    second is a first-time contributor, in a single report as in a backfill."""
    from gitrepo import GitRepoBuilder

    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.window import parse_timezone, week_range

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("initial", "2026-05-04T10:00:00+00:00", {"src/app.py": b.lines(30)}, author="founder")
    b.commit("feat: one (#10)", "2026-05-12T10:00:00+00:00", {"src/a.py": b.lines(8)}, author="dev0")
    b.commit("feat: at the week's first second (#11)", "2026-06-22T00:00:00+00:00", {"src/b.py": b.lines(5)},
             author="newcomer")
    b.commit("fix: later that week (#12)", "2026-06-24T10:00:00+00:00", {"src/a.py": b.lines(6)}, author="dev0")
    settings = load_settings(b.path, env={}, overrides={"name": "o/r", "language": "en"})
    weeks = week_range("2026-W26", "2026-W26", parse_timezone("UTC"))
    single = json.loads(render(pipeline.generate_report(str(b.path), settings, weeks[0])))
    backfilled = json.loads(render(next(iter(pipeline.generate_reports(str(b.path), settings, weeks)))))
    assert single["stats"]["first_time_contributor_names"] == ["newcomer"]
    assert _stable(single) == _stable(backfilled)


def test_a_merged_pr_is_its_branch_authors_however_far_back_the_history_is_read(tmp_path):
    """A PR merged with a merge commit belongs to its branch head's author, even when that
    commit is older than anything the report reads; a single report and a longer backfill
    agree on the author and on who is new."""
    from datetime import date, timedelta

    from gitrepo import GitRepoBuilder

    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.window import parse_timezone, week_range

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("initial", "2026-01-05T10:00:00+00:00", {"src/app.py": b.lines(30)}, author="founder")
    b.checkout("feat-old", create_from="HEAD")
    b.commit("implement old feature", "2026-01-07T10:00:00+00:00", {"src/old.py": b.lines(30)}, author="Real Author")
    b.checkout("main")
    for i in range(20):
        b.commit(f"fix: weekly fix {i} (#{10 + i})", f"{date(2026, 1, 8) + timedelta(days=7 * i)}T10:00:00+00:00",
                 {"src/app.py": b.lines(2 + i)}, author="dev0")
    b.merge("feat-old", "Merge pull request #99 from forkuser/feat-old\n\nAdd the old feature", "2026-06-23T10:00:00+00:00")
    settings = load_settings(b.path, env={}, overrides={"name": "o/r", "language": "en"})
    tz = parse_timezone("UTC")
    week = week_range("2026-W26", "2026-W26", tz)[0]
    single = json.loads(render(pipeline.generate_report(str(b.path), settings, week)))
    assert [(p["number"], p["author"]) for p in single["pull_requests"]] == [(99, "Real Author")]
    assert single["stats"]["first_time_contributor_names"] == []
    ranged = {r.week: r for r in pipeline.generate_reports(str(b.path), settings, week_range("2026-W10", "2026-W26", tz))}
    assert _stable(json.loads(render(ranged["2026-W26"]))) == _stable(single)


def test_direct_committers_are_contributors_and_first_time_ones_alike_in_report_and_backfill(tmp_path):
    """A newcomer whose only commit landed without a PR counts among the contributors
    and among the first-time ones, in a single report as in a backfill; a week of one
    new direct committer reads "1 contributor, including 1 first-time contributor"."""
    from gitrepo import GitRepoBuilder

    from repobrief import pipeline
    from repobrief.config import load_settings
    from repobrief.render.json import render
    from repobrief.window import parse_timezone, week_range

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/a.py": b.lines(40)}, author="founder")
    b.commit("feat: x (#20)", "2026-06-22T10:00:00+00:00", {"src/c.py": b.lines(50)}, author="bob")
    b.commit("fix: y (#21)", "2026-06-23T10:00:00+00:00", {"src/d.py": b.lines(5)}, author="founder")
    b.commit("direct fix typo", "2026-06-25T10:00:00+00:00", {"src/a.py": b.lines(41)}, author="dave")
    b.commit("feat: z (#22)", "2026-06-30T10:00:00+00:00", {"src/e.py": b.lines(5)}, author="erin")
    settings = load_settings(b.path, env={}, overrides={"name": "o/r", "language": "en"})
    weeks = week_range("2026-W26", "2026-W27", parse_timezone("UTC"))
    singles = [json.loads(render(pipeline.generate_report(str(b.path), settings, w))) for w in weeks]
    backfilled = [json.loads(render(r)) for r in pipeline.generate_reports(str(b.path), settings, weeks)]
    stats = singles[0]["stats"]
    assert (stats["contributors"], stats["first_time_contributor_names"]) == (3, ["bob", "dave"])
    assert "from 3 contributors, including 2 first-time contributors" in singles[0]["sections"]["summary"]["text"]
    assert "from 1 contributor, including 1 first-time contributor," in singles[1]["sections"]["summary"]["text"]
    assert [_stable(s) for s in singles] == [_stable(r) for r in backfilled]


def _files_whole(out) -> list[str]:
    """Names of stray files (temporary, moved aside) or reports that do not parse in `out`."""
    bad = [p.name for p in out.iterdir() if p.name.startswith(".")]
    for p in out.glob("*.json"):
        try:
            json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            bad.append(p.name)
    return bad


def test_sigterm_stops_a_parallel_backfill_with_its_workers_and_leaves_whole_files(verl_repo, tmp_path):
    """timeout, systemd and CI stop a command with SIGTERM, sent to the parent alone: its
    workers (and their helpers) stop with it instead of writing on as orphans."""
    out = tmp_path / "out"
    proc = start_cli("backfill", str(verl_repo), *VERL, "--from", "2024-W40", "--to", "2026-W34",
                     "--format", "json,md,html", "--workers", "2", "--out", str(out), cwd=tmp_path)
    try:
        assert wait_until(lambda: out.exists() and any(out.glob("*.json")) or proc.poll() is not None)
        assert proc.poll() is None, "the backfill ended before it could be stopped"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert wait_until(lambda: not live_processes(proc.pid)), "processes of the backfill outlived it"
    finally:
        for pid in live_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert re.search(r"interrupted after \d+ of 99 weeks; the reports written are in ", err), err
    assert _files_whole(out) == []
    assert len(list(out.glob("*.json"))) < 100  # it stopped: not every week was written


def test_a_shallow_clone_is_warned_about_once(verl_repo, tmp_path):
    import subprocess

    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "50", f"file://{verl_repo}", str(shallow)], check=True)
    for workers in ("1", "2"):
        code, _, err = run_cli("backfill", str(shallow), *VERL, "--from", "2026-W07", "--to", "2026-W26",
                               "--out", str(tmp_path / workers), "--workers", workers, "-q")
        assert code == 0, err
        assert err.count("warning: this clone is shallow") == 1, (workers, err)
        assert "git fetch --unshallow" in err


def test_the_weeks_after_the_clones_newest_commit_are_warned_about_once(verl_repo, tmp_path):
    """A backfill past the clone's newest commit (2026-08-22) printed one warning per week
    ("… 9 days before this period", "… 16 days …", …); each report keeps its own."""
    said = {"en": "warning: the clone's newest commit is from 2026-08-22, before the 5 weeks from 2026-W36 to 2026-W40: "
                  "if the clone is not up to date, run `git pull` in it first",
            "zh": "warning: 该克隆最新的提交是2026-08-22的，早于2026-W36至2026-W40这5周"}
    for workers, lang in (("1", "en"), ("2", "en"), ("2", "zh")):
        out = tmp_path / f"{workers}{lang}"
        code, _, err = run_cli("backfill", str(verl_repo), *VERL, "--lang", lang, "--from", "2026-W33", "--to", "2026-W40",
                               "--out", str(out), "--workers", workers, "-q")
        assert code == 0, err
        assert err.count("warning:") == 1 and said[lang] in err, (workers, lang, err)
        if lang == "en":
            week = json.loads((out / "verl-project__verl-2026-W38.en.json").read_text(encoding="utf-8"))
            assert week["warnings"] == ["the clone's newest commit is from 2026-08-22, 22 days before this period: "
                                        "if the clone is not up to date, run `git pull` in it first"]


def test_weeks_that_have_not_started_are_refused(verl_repo, tmp_path):
    """A week still to come would be written as a report of a week with nothing merged;
    the week in progress is fine."""
    from datetime import UTC, date, datetime, timedelta

    import pytest

    from repobrief.errors import UsageError
    from repobrief.window import week_range

    now = datetime(2026, 12, 2, 12, tzinfo=UTC)  # a Wednesday of 2026-W49
    assert [w.label for w in week_range("2026-W48", "this", UTC, now)] == ["2026-W48", "2026-W49"]
    for first, last, blamed in (("2026-W50", "2027-W02", "--from 2026-W50"), ("2026-W40", "2026-W50", "--to 2026-W50"),
                                ("1970-W01", "9998-W52", "--to 9998-W52")):
        with pytest.raises(UsageError, match=f"^{blamed} has not started yet \\(this week is 2026-W49\\)"):
            week_range(first, last, UTC, now)
    year, week, _ = (date.today() + timedelta(days=14)).isocalendar()
    out = tmp_path / "fut"
    code, _, err = run_cli("backfill", str(verl_repo), "--from", "2026-W20", "--to", f"{year}-W{week:02d}",
                           "--out", str(out))
    assert code == 2 and "has not started yet" in err and "'this' for the week in progress" in err
    assert not out.exists()


def test_an_out_that_is_a_file_is_a_bad_flag(verl_repo, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("mine", encoding="utf-8")
    for argv in (("backfill", str(verl_repo), "--from", "2026-W10", "--to", "2026-W12"),
                 ("report", str(verl_repo), "--week", "2026-W10", "--format", "json")):
        code, _, err = run_cli(*argv, "--out", str(afile))
        assert code == 2 and f"--out '{afile}' is a file; give a folder" in err, err
        # a file in the way above it, and a link to a folder that is not there: bad flags too
        code, _, err = run_cli(*argv, "--out", str(afile / "sub"))
        assert code == 2 and f"cannot be made: '{afile}' is a file, not a folder" in err, err
        (tmp_path / "dangling").unlink(missing_ok=True)
        (tmp_path / "dangling").symlink_to(tmp_path / "gone")
        code, _, err = run_cli(*argv, "--out", str(tmp_path / "dangling"))
        assert code == 2 and f"is a symbolic link to '{tmp_path / 'gone'}', which does not exist" in err, err
    assert afile.read_text(encoding="utf-8") == "mine" and not (tmp_path / "gone").exists()


def test_the_progress_bar_is_drawn_on_stderr_never_on_stdout(verl_repo, tmp_path):
    """stderr a terminal, stdout redirected (`backfill … > log`): the bar goes to the
    terminal and stdout gets nothing."""
    import pty
    import subprocess
    import sys

    master, terminal = pty.openpty()
    try:
        got = subprocess.run([sys.executable, "-c", "from repobrief.cli import main; main()", "backfill",
                              str(verl_repo), *VERL, "--from", "2026-W20", "--to", "2026-W23", "--out",
                              str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=terminal, timeout=120)
        shown = os.read(master, 65536)
    finally:
        os.close(terminal)
        os.close(master)
    assert got.returncode == 0
    assert got.stdout == b""
    assert b"4 weeks (2026-W20 to 2026-W23)" in shown


def test_a_folder_that_is_no_clone_stops_a_parallel_backfill_before_any_week(tmp_path):
    """The parent opens and indexes the clone in a thread while it imports: an error
    there is the command's error (exit 4, what is wrong and what to do), nothing written."""
    (tmp_path / "plain").mkdir()
    out = tmp_path / "out"
    code, _, err = run_cli("backfill", str(tmp_path / "plain"), "--from", "2026-W01", "--to", "2026-W20",
                           "--out", str(out), "--workers", "2")
    assert code == 4, err
    assert "not a git repository" in err and "hint: point repobrief at a clone" in err
    assert not out.exists()


def test_quiet_weeks_ask_git_for_the_clones_newest_commit_once(flask_repo, tmp_path):
    """Each week with nothing merged checks whether the clone is stale (its newest commit
    against the week): flask's backfill ran one `git log -1` per quiet week, 408 of its
    467 git processes. Git is asked once now, and every part's view shares the answer;
    on several workers, the parent's index has read the head's time already: none."""
    for workers, asked in (("1", 1), ("2", 0)):
        out = tmp_path / workers
        code, _, err = run_cli("backfill", str(flask_repo), "--name", "pallets/flask", "--lang", "en", "--from",
                               "2025-W01", "--to", "2026-W12", "--out", str(out), "--workers", workers, "-q")
        assert code == 0, err
        weeks = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.glob("*.json"))]
        calls: dict[int, list[int]] = {}  # a part's (its commits read) git calls, as of each of its quiet weeks
        for w in weeks:
            if not (w["stats"]["merged_prs"] or w["stats"]["direct_commits"]):
                stats = w["engine"]["source_stats"]
                calls.setdefault(stats["commits_read"], []).append(stats["git_calls"])
        assert sum(len(c) for c in calls.values()) >= 20, [w["week"] for w in weeks]
        for part in calls.values():  # counted from the report after the first quiet week's on
            assert max(part) - min(part) <= asked, (workers, calls)


def test_line_counts_and_diffs_read_from_the_patch_are_those_of_numstat_and_the_diff_pass(tmp_path):
    """A backfill's line-count pass reads the `-U0` patch and keeps the detectors' diffs
    from it (`preload(diff_files=, diff_lines=)`). Its files, line counts and diffs are
    those of `--numstat` and of the separate diff pass, for the files that read
    differently in a patch: binary, a type change, a mode change, empty files, no final
    newline, CRLF, lines that look like patch headers, quoted paths, a move, a merge, and
    a commit whose output spans many reads — with one git process fewer."""
    from gitrepo import GitRepoBuilder

    from repobrief.analysis.risks import DIFF_LINES, files_to_read, worth_reading
    from repobrief.config import load_settings
    from repobrief.sources.git import GitSource
    from repobrief.window import Window

    b = GitRepoBuilder(tmp_path / "r")
    big = "".join(f"row {i}: {'x' * 60}\n" for i in range(20_000))  # ≈ 1.4 MB: the record spans reads
    b.commit("chore: start", "2025-09-01T10:00:00+00:00", {
        "conf/train.yaml": "lr: 1e-6\nbatch: 8\nold_key: 1\n", "requirements.txt": "torch==2.3.0\nnumpy\n",
        "conf/a \"quoted\" é.yaml": "x: 1\n", "data.bin": b"\x00\x01bin", "tool.sh": "echo hi\n",
        "gone.txt": "", "crlf.ini": "a = 1\r\nb = 2\r\n", "conf/moved.yaml": "stay: 1\n", "big.txt": big,
        "link_me.txt": "one\ntwo\nthree\n"})
    b.commit("feat: tune training (#1)", "2025-09-02T10:00:00+00:00", {
        "conf/train.yaml": "lr: 5e-7\nbatch: 8\nnew_key: 1\n++ not: a header\n-- nor: this\n"
                           "diff --git a/x b/x\n@@ -1 +1 @@\n", "requirements.txt": "torch==2.4.0\nnumpy",
        "conf/a \"quoted\" é.yaml": "x: 2\n", "data.bin": b"\x00\x02bin2", "crlf.ini": "a = 1\r\nb = 3\r\n",
        "empty.txt": "", "big.txt": big.replace("row 1: ", "row one: ", 1) + "tail: 1\n"})
    os.chmod(b.path / "tool.sh", 0o755)
    (b.path / "link_me.txt").unlink()
    os.symlink("tool.sh", b.path / "link_me.txt")
    (b.path / "conf" / "moved.yaml").rename(b.path / "conf" / "here.yaml")
    b.commit("refactor: move and retype (#2)", "2025-09-03T10:00:00+00:00",
             {"conf/train.yaml": "lr: 5e-7\nbatch: 16\nnew_key: 1\n", "gone.txt": None})
    b.checkout("side", create_from="HEAD")
    b.commit("work", "2025-09-04T09:00:00+00:00", {"setup.cfg": "[metadata]\nversion = 1.0\n"})
    b.checkout("main")
    b.merge("side", "Merge pull request #3 from a/side", "2025-09-04T10:00:00+00:00")
    settings = load_settings(b.path, env={}, overrides={"name": "o/r", "language": "en"})
    since, end = datetime(2025, 8, 1, tzinfo=UTC), datetime(2025, 10, 1, tzinfo=UTC)

    def read(keep: bool) -> tuple[dict, dict, dict, int]:
        source = GitSource(str(b.path), settings)
        if keep:
            source.preload(since, since, diff_files=worth_reading, diff_lines=DIFF_LINES)
        else:
            source.preload(since, since)
        prs = list(source.history(Window(since, end, "UTC", "all")))
        paths = {pr.number: files for pr in prs if (files := files_to_read(pr))}
        files = {pr.number: [(f.path, f.added, f.deleted, f.status, f.previous) for f in pr.files] for pr in prs}
        calls = source.stats["git_calls"]
        diffs = source.read_diffs(prs, paths, 200_000, lines=DIFF_LINES)
        small = source.read_diffs(prs, paths, 120, lines=DIFF_LINES)  # whole files only, as many as fit
        return files, diffs, small, source.stats["git_calls"] - calls

    files, diffs, small, calls = read(True)
    assert (files, diffs, small) == read(False)[:3]
    assert calls == 0  # no second diff of the same blobs
    one = dict((path, (added, deleted)) for path, added, deleted, *_ in files[1])
    assert one["conf/train.yaml"] == (6, 2) and one["requirements.txt"] == (2, 2) and one["data.bin"] == (None, None)
    assert one["big.txt"] == (2, 1) and one["empty.txt"] == (0, 0)
    two = {path: (added, deleted, status, previous) for path, added, deleted, status, previous in files[2]}
    assert two["link_me.txt"][:2] == (1, 3) and two["tool.sh"][:2] == (0, 0) and two["gone.txt"] == (0, 0, "D", None)
    assert two["conf/here.yaml"] == (0, 0, "R", "conf/moved.yaml")
    assert files[3] == [("setup.cfg", 2, 0, "A", None)]
    assert "-old_key: 1" in diffs[1] and "+new_key: 1" in diffs[1] and "+++ not" not in diffs[1]
    assert '+x: 2' in diffs[1] and "+torch==2.4.0" in diffs[1] and "+batch: 16" in diffs[2]


def test_a_replay_with_code_length_lines_changes_their_length_not_their_counts(tmp_path):
    """`bench_backfill.py --line-width N` replays verl with lines as long as code's: every
    added line is N characters long, and each commit's files and line counts are the
    replay's own."""
    from gitrepo import git, replay_history

    short = replay_history("verl-project__verl", tmp_path / "short", limit=150)
    wide = replay_history("verl-project__verl", tmp_path / "wide", limit=150, line_width=48)

    def numstat(repo) -> str:
        return git(repo, "log", "--first-parent", "--numstat", "--format=%s")

    assert numstat(wide) == numstat(short) and numstat(short).count("\n") > 300
    added = [line[1:] for line in git(wide, "log", "-p", "-3", "--format=").splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert added and {len(line) for line in added} == {48}


def test_the_backfill_bench_will_not_build_into_a_folder_that_exists(tmp_path):
    """`bench_backfill.py --keep DIR` with DIR already there stops before any work, says to
    measure it again with `--repo DIR`, and leaves what DIR holds as it was."""
    import subprocess
    import sys
    from pathlib import Path

    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "mine.txt").write_text("keep me", encoding="utf-8")
    bench = Path(__file__).resolve().parents[1] / "bench" / "bench_backfill.py"
    proc = subprocess.run([sys.executable, str(bench), "--commits", "10", "--keep", str(kept)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"--keep {kept} exists" in proc.stderr and f"--repo {kept}" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert sorted(p.name for p in kept.iterdir()) == ["mine.txt"]
    assert (kept / "mine.txt").read_text(encoding="utf-8") == "keep me"
