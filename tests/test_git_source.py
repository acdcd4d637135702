"""The git source on small synthetic repositories shaped like real projects."""

from __future__ import annotations

import subprocess
from datetime import timedelta

import pytest
from clirun import run_cli
from gitrepo import GitRepoBuilder, git

from repobrief.errors import SourceError
from repobrief.sources.git import GitSource, parse_remote
from repobrief.window import parse_timezone, parse_week

UTC = parse_timezone("UTC")
W10 = parse_week("2026-W10", UTC)  # 2026-03-02 .. 2026-03-09


def _numbers(source, window=W10):
    return [p.number for p in source.iter_pull_requests(window)]


@pytest.fixture
def flask_like(tmp_path):
    """main with squash and merge-commit PRs, a `stable` branch whose PRs reach main
    through `Merge branch 'stable'`, a revert, and a direct commit."""
    b = GitRepoBuilder(tmp_path / "flask_like")
    b.commit("initial", "2026-02-01T10:00:00+00:00", {"src/app.py": b.lines(20), "README.md": "hello\n"})
    b.checkout("stable", create_from="main")
    # A PR merged into stable in an earlier week ...
    b.checkout("fix-session", create_from="stable")
    b.commit("fix session cookie", "2026-02-20T10:00:00+00:00", {"src/sessions.py": b.lines(7)}, author="carol")
    b.checkout("stable")
    b.merge("fix-session", "Merge pull request #501 from carol/fix-session\n\nfix session cookie domain", "2026-02-21T10:00:00+00:00")
    # ... and a squash PR on stable.
    b.commit("update docs for 3.1 (#502)", "2026-03-03T09:00:00+00:00", {"docs/changes.rst": b.lines(4)}, author="dave")
    b.checkout("main")
    b.commit("add async views (#510)", "2026-03-02T12:00:00+00:00", {"src/views.py": b.lines(30), "tests/test_views.py": b.lines(10)}, author="alice")
    b.checkout("feature", create_from="main")
    b.commit("wip", "2026-03-03T08:00:00+00:00", {"src/json.py": b.lines(12)}, author="bob")
    b.checkout("main")
    b.merge("feature", "Merge pull request #511 from bob/feature\n\nadd JSON provider hooks\n\nLonger description.", "2026-03-04T12:00:00+00:00")
    b.commit("fix typo in readme", "2026-03-04T13:00:00+00:00", {"README.md": "hello world\n"}, author="erin")
    b.merge("stable", "Merge branch 'stable'", "2026-03-05T12:00:00+00:00")
    b.commit('Revert "add async views (#510)"\n\nThis reverts commit deadbeef.', "2026-03-06T12:00:00+00:00", {"src/views.py": None}, author="alice")
    b.commit('Revert "add JSON provider hooks" (#512)', "2026-03-06T13:00:00+00:00", {"src/json.py": None}, author="bob")
    b.commit("next week (#520)", "2026-03-10T12:00:00+00:00", {"src/next.py": b.lines(3)})
    return b.path


def test_squash_merge_and_stable_branch_prs_are_found(flask_like):
    src = GitSource(str(flask_like))
    prs = {p.number: p for p in src.iter_pull_requests(W10)}
    # #501 was merged into stable in February but reached main this week.
    assert sorted(prs) == [501, 502, 510, 511, 512]
    assert prs[511].title == "add JSON provider hooks"
    assert prs[511].body == "Longer description."
    assert prs[511].via == "merge"
    assert prs[511].author == "bob"
    assert prs[501].via == "branch:stable" and prs[502].via == "branch:stable"
    assert prs[501].merged_at.date().isoformat() == "2026-03-05"  # when it reached main
    assert {f.path for f in prs[511].files} == {"src/json.py"}
    assert prs[511].lines_added == 12 and prs[510].lines_added == 40
    assert 520 not in prs  # next week


def test_direct_commits_and_reverts(flask_like):
    src = GitSource(str(flask_like))
    prs = {p.number: p for p in src.iter_pull_requests(W10)}
    direct = src.direct_commits(W10)
    subjects = [c.subject for c in direct]
    assert "fix typo in readme" in subjects
    assert "Merge branch 'stable'" not in subjects  # a branch merge is not a direct commit
    revert = next(c for c in direct if c.subject.startswith("Revert"))
    assert revert.reverts == 510
    assert prs[512].reverts == 511  # no number, no sha: the PR of the title it quotes
    assert direct[0].files[0].deleted is not None


def test_reverts_found_by_github_s_revert_body_and_by_the_quoted_title(tmp_path):
    """GitHub's Revert button writes `Revert "<title>" (#M)` with "Reverts owner/repo#N" in
    the body; a title may end with an issue's "(#K)" of its own, which is not the PR."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-02-01T10:00:00+00:00", {"src/app.py": b.lines(20)})
    b.commit("[vllm] feat: remove workers (#30)", "2026-03-02T10:00:00+00:00", {"src/w.py": b.lines(5)})
    b.commit('Revert "[vllm] feat: remove workers" (#31)\n\nReverts acme/app#30\n\nit breaks CI',
             "2026-03-02T12:00:00+00:00", {"src/w.py": None})
    b.commit("fix: honor the path (#17) (#40)", "2026-03-03T10:00:00+00:00", {"src/p.py": b.lines(5)})
    b.commit('Revert "fix: honor the path (#17)" (#41)', "2026-03-04T10:00:00+00:00", {"src/p.py": None})
    b.commit('Revert "an old change (#12)" (#42)', "2026-03-05T10:00:00+00:00", {"src/app.py": b.lines(3)})
    reverts = {p.number: p.reverts for p in GitSource(str(b.path)).iter_pull_requests(W10)}
    assert reverts == {30: None, 31: 30, 40: None, 41: 40, 42: 12}


def test_a_revert_body_naming_another_repository_is_not_taken_for_ours(tmp_path):
    """"Reverts owner/repo#N" counts when it names this repository, whatever its owner is
    called now (verl's reverts name `volcengine/verl` and `verl-project/verl`); a PR of
    another repository is not this one's #N: the quoted title says which PR it was."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-02-01T10:00:00+00:00", {"src/app.py": b.lines(20)})
    b.commit("feat: remove workers (#30)", "2026-03-02T10:00:00+00:00", {"src/w.py": b.lines(5)})
    b.commit('Revert "feat: remove workers" (#31)\n\nReverts old-org/App#30', "2026-03-02T12:00:00+00:00",
             {"src/w.py": None})
    b.commit("feat: cache with lib (#43)", "2026-03-03T10:00:00+00:00", {"src/c.py": b.lines(5)})
    b.commit('Revert "feat: cache with lib (#43)" (#44)\n\nas upstream did:\nReverts lib-org/lib#7',
             "2026-03-04T10:00:00+00:00", {"src/c.py": None})
    subprocess.run(["git", "-C", str(b.path), "remote", "add", "origin", "https://github.com/new-org/app.git"], check=True)
    reverts = {p.number: p.reverts for p in GitSource(str(b.path)).iter_pull_requests(W10)}
    assert reverts == {30: None, 31: 30, 43: None, 44: 43}
    # Without a remote or a configured name, the repository is unknown: any body counts.
    subprocess.run(["git", "-C", str(b.path), "remote", "remove", "origin"], check=True)
    assert {p.number: p.reverts for p in GitSource(str(b.path)).iter_pull_requests(W10)}[44] == 7


def test_a_one_parent_commit_called_a_branch_merge_is_a_direct_commit(tmp_path):
    """A "Merge branch …" commit with one parent (squashed or rebased) brings no side
    commits: it is its own change, counted as a direct commit, its lines with it."""
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-02-01T10:00:00+00:00", {"src/app.py": b.lines(20)})
    b.commit("Merge branch 'stable'", "2026-03-03T10:00:00+00:00", {"src/sessions.py": b.lines(7)})
    src = GitSource(str(b.path))
    (merged,) = src.direct_commits(W10)
    assert merged.subject == "Merge branch 'stable'" and merged.files[0].added == 7


def test_window_boundaries_use_the_time_zone(tmp_path):
    b = GitRepoBuilder(tmp_path / "tz")
    # Sunday 23:30 in Shanghai is still Sunday there, but Sunday 15:30 UTC.
    b.commit("a (#1)", "2026-03-08T23:30:00+08:00", {"a.py": "a\n"})
    b.commit("b (#2)", "2026-03-09T00:30:00+08:00", {"b.py": "b\n"})
    sh = parse_timezone("Asia/Shanghai")
    src = GitSource(str(b.path))
    assert _numbers(src, parse_week("2026-W10", sh)) == [1]
    assert _numbers(src, parse_week("2026-W11", sh)) == [2]
    assert _numbers(GitSource(str(b.path)), W10) == [1, 2]  # both on Sunday/Monday-1h in UTC


def test_remote_names():
    assert parse_remote("https://github.com/verl-project/verl.git") == ("github.com", "verl-project/verl")
    assert parse_remote("git@github.com:pallets/flask.git") == ("github.com", "pallets/flask")
    # GitLab's subgroups are part of the project's path (and of its merge requests' links).
    assert parse_remote("ssh://git@gitlab.example.com:2222/group/sub/proj.git") == ("gitlab.example.com", "group/sub/proj")
    assert parse_remote("https://gitee.com/mindspore/mindspore") == ("gitee.com", "mindspore/mindspore")
    # A remote on this machine names no hosted repository (the folder's name is used).
    for local in ("file:///srv/mirrors/acme/proj.git", "/srv/mirrors/acme/proj.git", "../acme/proj"):
        assert parse_remote(local) is None


def test_origin_remote_names_the_repository_and_pr_urls(tmp_path):
    b = GitRepoBuilder(tmp_path / "r")
    b.commit("x (#7)", "2026-03-03T10:00:00+00:00", {"x.py": "x\n"})
    git(b.path, "remote", "add", "origin", "git@gitlab.com:team/proj.git")
    src = GitSource(str(b.path))
    assert src.repository_name() == "team/proj"
    assert next(src.iter_pull_requests(W10)).url == "https://gitlab.com/team/proj/-/merge_requests/7"


_PLAIN = '[remote "origin"]\n\turl = https://github.com/plain/repo.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'


@pytest.mark.parametrize("tail, env, from_file", [
    (_PLAIN, {}, "https://github.com/plain/repo.git"),
    (_PLAIN + '[remote "origin"]\n  url = git@github.com:second/repo.git\n', {}, "git@github.com:second/repo.git"),
    ("[REMOTE.Origin]\n  URL=https://gitlab.com/old/style\n", {}, "https://gitlab.com/old/style"),
    ('[remote "Origin"]\n\turl = https://github.com/not/origin\n', {}, None),  # subsections are case-sensitive
    ('[remote "origin"]\n\turl = "https://github.com/quoted/repo"\n', {}, None),
    ('[remote "origin"]\n\turl = https://github.com/with/comment.git ; a mirror\n', {}, None),
    (_PLAIN + "[include]\n\tpath = extra.cfg\n", {}, None),
    (_PLAIN, {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "remote.origin.url",
              "GIT_CONFIG_VALUE_0": "https://github.com/from/env"}, None),
    ("", {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "remote.origin.url",
          "GIT_CONFIG_VALUE_0": "https://github.com/only/env"}, None),
])
def test_the_origin_read_from_the_clone_s_config_file_is_what_git_config_gives(tmp_path, monkeypatch, tail, env, from_file):
    """The origin remote is read from the clone's own config file without a git process when
    that file says it plainly, and from `git config` otherwise: the answer is git's either way."""
    from repobrief.sources.git import _origin_url_in_file, origin_remote

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("x (#7)", "2026-03-03T10:00:00+00:00", {"x.py": "x\n"})
    (b.path / ".git" / "extra.cfg").write_text('[remote "origin"]\n\turl = https://github.com/from/include\n')
    with open(b.path / ".git" / "config", "a", encoding="utf-8") as f:
        f.write(tail)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    said = subprocess.run(["git", "-C", str(b.path), "config", "--get", "remote.origin.url"], capture_output=True, text=True)
    expected = parse_remote(said.stdout) if said.returncode == 0 else None

    assert _origin_url_in_file(b.path / ".git") == from_file
    assert origin_remote(b.path, str(b.path / ".git")) == expected
    src = GitSource(str(b.path))
    assert src.repository_name() == (expected[1] if expected else "r")
    assert src.stats["git_calls"] == (1 if from_file else 2)  # no `git config` when the file said it


def test_a_linked_worktree_s_origin_comes_from_git(tmp_path):
    """A linked worktree's git folder holds no config of the clone's own: git is asked."""
    b = GitRepoBuilder(tmp_path / "r")
    b.commit("x (#7)", "2026-03-03T10:00:00+00:00", {"x.py": "x\n"})
    git(b.path, "remote", "add", "origin", "https://github.com/main/clone.git")
    git(b.path, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
    src = GitSource(str(tmp_path / "wt"))
    assert src.repository_name() == "main/clone"
    assert src.stats["git_calls"] == 2


def test_bad_paths_give_clear_errors(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        GitSource(str(tmp_path / "missing"))
    (tmp_path / "plain").mkdir()
    with pytest.raises(SourceError, match="not a git repository"):
        GitSource(str(tmp_path / "plain"))
    git(tmp_path, "init", "-q", "empty")
    with pytest.raises(SourceError, match="empty"):
        GitSource(str(tmp_path / "empty"))


def test_head_on_a_branch_with_no_commits_names_it_and_the_default_branch(tmp_path):
    b = GitRepoBuilder(tmp_path / "repo")
    b.commit("initial", "2026-06-01T10:00:00+00:00", {"src/app.py": b.lines(30)})
    b.commit("feat: streaming (#3)", "2026-06-23T10:00:00+00:00", {"src/x.py": b.lines(20)})
    git(b.path, "checkout", "-q", "--orphan", "gh-pages")  # as when starting a GitHub Pages branch
    code, _, err = run_cli("report", str(b.path), "--week", "2026-W26", "--format", "json")
    assert code == 4
    assert "is on branch 'gh-pages', which has no commits yet" in err and "empty" not in err
    assert "checkout main" in err and 'branch = "main"' in err
    # the option the hint names reads the default branch whatever is checked out
    cfg = tmp_path / "repobrief.toml"
    cfg.write_text('branch = "main"\n', encoding="utf-8")
    code, out, err = run_cli("report", str(b.path), "--week", "2026-W26", "--format", "json", "--config", str(cfg))
    assert code == 0, err
    assert "streaming" in out


def test_bare_and_shallow_clones(flask_like, tmp_path):
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(flask_like), str(bare)], check=True)
    assert _numbers(GitSource(str(bare))) == _numbers(GitSource(str(flask_like)))
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "3", f"file://{flask_like}", str(shallow)], check=True)
    src = GitSource(str(shallow))
    assert any("shallow" in w and "--unshallow" in w for w in src.warnings)
    list(src.iter_pull_requests(W10))  # reads what is there without failing
    # The reader is told in the report's language.
    for lang, notice in (("zh", "> ⚠ 这是一个浅克隆：截断点之前的提交缺失"), ("en", "> ⚠ this clone is shallow: commits before")):
        code, out, _ = run_cli("report", str(shallow), "--week", "2026-W10", "--lang", lang)
        assert code == 0 and notice in out
    # A week before its cut-off is not "nothing merged": git has nothing of it to read.
    cut = subprocess.run(["git", "-C", str(shallow), "log", "--no-walk", "--format=%cs",
                          *(shallow / ".git" / "shallow").read_text().split()], capture_output=True, text=True).stdout.split()
    code, out, err = run_cli("report", str(shallow), "--week", "2026-W06")
    assert code == 4 and out == ""
    assert f"is a shallow clone with no commit before 2026-02-09 (its oldest commit is from {min(cut)}): " in err
    assert "fetch --unshallow" in err


def test_odd_messages_huge_bodies_and_many_files(tmp_path):
    b = GitRepoBuilder(tmp_path / "odd")
    b.commit(b"caf\xe9 latin-1 title (#31)\n\nbody \xff\xfe", "2026-03-03T10:00:00+00:00", {"a.py": "a\n"})
    big_body = "x" * 1_000_000
    b.commit(f"huge body (#32)\n\n{big_body}", "2026-03-03T11:00:00+00:00", {"b.py": "b\n"})
    b.commit("ten thousand files (#33)", "2026-03-03T12:00:00+00:00", {f"gen/f{i}.txt": f"{i}\n" for i in range(10_000)})
    b.commit("[x] <script>alert(1)</script> | pipes **bold** (#34)", "2026-03-03T13:00:00+00:00", {"c.py": "c\n"})
    prs = {p.number: p for p in GitSource(str(b.path)).iter_pull_requests(W10)}
    # Git re-encodes the legacy bytes; whatever arrives is valid text.
    assert prs[31].title.startswith("caf") and prs[31].title.endswith("latin-1 title (#31)")
    prs[31].body.encode("utf-8")
    assert len(prs[32].body) == 1_000_000
    assert len(prs[33].files) == 10_000 and prs[33].lines_added == 10_000
    assert "<script>" in prs[34].title  # kept verbatim; renderers escape it


def test_pr_numbers_from_squash_subjects_that_look_like_merges_or_overflow(tmp_path):
    """A squash merge's `(#N)` names its PR even when the PR's title reads like a merge
    commit; a digit run no PR could have is no reference (it once crashed the JSON
    report and the store, which hold 64-bit integers)."""
    b = GitRepoBuilder(tmp_path / "n")
    b.commit("init", "2026-02-01T10:00:00+00:00", {"a.py": "a\n"})
    b.commit("Merge pull request #12 from upstream/main (#456)\n\nSync with upstream.", "2026-03-02T10:00:00+00:00",
             {"a.py": "b\n"})
    b.commit("feat: huge (#99999999999999999999)", "2026-03-03T10:00:00+00:00", {"a.py": "c\n"})
    src = GitSource(str(b.path))
    prs = list(src.iter_pull_requests(W10))
    assert [(p.number, p.title) for p in prs] == [(456, "Merge pull request #12 from upstream/main (#456)")]
    assert [c.subject for c in src.direct_commits(W10)] == ["feat: huge (#99999999999999999999)"]


def test_separator_bytes_in_names_messages_and_files(tmp_path):
    """repobrief cuts git's output at \\x1e and \\x1f: an author name with \\x1f once
    crashed every report, a message with \\x1e lost its PR's files (in the body) or the
    PR itself (in the title), and a config file holding \\x1e would cut its diff."""
    b = GitRepoBuilder(tmp_path / "sep")
    b.commit("init", "2026-03-01T10:00:00+00:00", {"a.py": "a\n", "conf/c.yaml": "k: 1\n"})
    b.commit("feat: one (#1)", "2026-03-02T10:00:00+00:00", {"a.py": "b\n"}, author="Eve\x1fMallory", email="eve@example.com")
    b.commit("feat: two (#2)\n\npasted \x1e output", "2026-03-02T11:00:00+00:00", {"b.py": "b\n"})
    b.commit("feat: three \x1e (#3)", "2026-03-02T12:00:00+00:00", {"c.py": "c\n"})
    b.commit("config (#4)", "2026-03-02T13:00:00+00:00", {"conf/c.yaml": "k: 2\x1e\nj: 3\n"})
    src = GitSource(str(b.path))
    prs = {p.number: p for p in src.iter_pull_requests(W10)}
    assert sorted(prs) == [1, 2, 3, 4] and src.direct_commits(W10) == []
    # The name loses its control character (as all PR text does) and is still read whole.
    assert prs[1].author == "EveMallory" and prs[1].author_email == "eve@example.com"
    assert [f.path for f in prs[2].files] == ["b.py"] and prs[2].lines_added == 1 and "\x1e" in prs[2].body
    assert [f.path for f in prs[3].files] == ["c.py"]
    assert "evemallory" in src.earlier_authors(parse_week("2026-W11", UTC).start)
    assert "evemallory" in src.author_first_seen() and "eve@example.com" in src.author_first_seen()
    diff = src.read_diffs(list(prs.values()), {4: ["conf/c.yaml"]}, 10_000)[4]
    assert "+k: 2\x1e" in diff and "+j: 3" in diff


def test_read_diffs_returns_bounded_config_hunks(tmp_path):
    b = GitRepoBuilder(tmp_path / "d")
    b.commit("init", "2026-03-01T10:00:00+00:00", {"conf/trainer.yaml": "sched: cosine\nlr: 1\n", "x.py": "x\n"})
    b.commit("rename sched (#40)", "2026-03-03T10:00:00+00:00", {"conf/trainer.yaml": "scheduler: cosine\nlr: 1\n", "x.py": "y\n"})
    src = GitSource(str(b.path))
    prs = list(src.iter_pull_requests(W10))
    diffs = src.read_diffs(prs, {40: ["conf/trainer.yaml"]}, 10_000)
    assert "-sched: cosine" in diffs[40] and "+scheduler: cosine" in diffs[40]
    assert "x.py" not in diffs[40]
    assert len(src.read_diffs(prs, {40: ["conf/trainer.yaml"]}, 20)[40]) == 20
    assert src.read_diffs(prs, {}, 100) == {}
    only = src.read_diffs(prs, {40: ["conf/trainer.yaml", "x.py"]}, 10_000, lines=r"[^\n]*:")
    assert "+scheduler: cosine" in only[40] and "+y" not in only[40] and "diff --git a/x.py" in only[40]


@pytest.mark.parametrize("path", ["conf/é.yaml", 'conf/we"ird\\back\tslash.yaml', "conf/x b/train.yaml"])
def test_diff_headers_name_the_file_whatever_its_path_or_the_users_prefixes(tmp_path, path):
    """Git quotes unusual paths in diff headers and a user's `diff.noprefix` drops the
    a/ b/ prefixes; the detectors still see the key removed, in the right file."""
    from repobrief.analysis.files import diff_header_path

    b = GitRepoBuilder(tmp_path / "q")
    b.commit("init", "2026-03-01T10:00:00+00:00", {path: "sched: cos\nlr: 1\n"})
    b.commit("drop lr (#1)", "2026-03-03T10:00:00+00:00", {path: "sched: cos\n"})
    git(b.path, "config", "diff.noprefix", "true")
    src = GitSource(str(b.path))
    diff = src.read_diffs(list(src.iter_pull_requests(W10)), {1: [path]}, 10_000)[1]
    header = diff.splitlines()[0]
    assert diff_header_path(header) == path and "-lr: 1" in diff
    from repobrief.analysis.risks import _config_changes

    pr = next(src.iter_pull_requests(W10))
    assert _config_changes(pr, diff) == [f"config key removed: lr ({path})"]


def test_a_prs_diff_does_not_depend_on_the_prs_read_with_it(tmp_path):
    """PR 1 adds a config file (not read for it) that PR 2 edits (read for PR 2): read
    together, PR 1's diff still holds only its own files, as when read alone."""
    b = GitRepoBuilder(tmp_path / "t")
    b.commit("init", "2026-03-01T10:00:00+00:00", {"README.md": "hi\n"})
    b.commit("add config (#1)", "2026-03-03T10:00:00+00:00", {"conf/new.yaml": "torch: 2.6.0\n", "README.md": "pip install torch==2.5.0\n"})
    b.commit("edit config (#2)", "2026-03-04T10:00:00+00:00", {"conf/new.yaml": "torch: 2.7.0\n"})
    src = GitSource(str(b.path))
    prs = list(src.iter_pull_requests(W10))
    alone = src.read_diffs(prs[:1], {1: ["README.md"]}, 10_000)
    together = src.read_diffs(prs, {1: ["README.md"], 2: ["conf/new.yaml"]}, 10_000)
    assert together[1] == alone[1] and "conf/new.yaml" not in together[1]
    assert "+torch: 2.7.0" in together[2]


def test_a_long_diff_keeps_whole_files_when_lines_are_filtered(tmp_path):
    """Cut at `max_bytes` mid-file, a diff of changed values loses its added lines
    and reads as removed keys; filtered diffs keep whole files or leave them out."""
    b = GitRepoBuilder(tmp_path / "w")
    b.commit("init", "2026-03-01T10:00:00+00:00", {"conf/big.yaml": "".join(f"key_{i}: {i}\n" for i in range(3000)),
                                                 "conf/small.yaml": "a: 1\n"})
    b.commit("quote values (#1)", "2026-03-03T10:00:00+00:00", {"conf/big.yaml": "".join(f"key_{i}: '{i}'\n" for i in range(3000)),
                                                               "conf/small.yaml": "b: 1\n"})
    src = GitSource(str(b.path))
    prs = list(src.iter_pull_requests(W10))
    diff = src.read_diffs(prs, {1: ["conf/big.yaml", "conf/small.yaml"]}, 2_000, lines=r"[^\n]*:")[1]
    assert "big.yaml" not in diff and "-a: 1" in diff and "+b: 1" in diff and len(diff) <= 2_000
    from repobrief.analysis.risks import _config_changes

    assert _config_changes(prs[0], diff) == ["config key renamed a -> b in conf/small.yaml"]


def test_history_reads_paths_without_line_counts(flask_like):
    src = GitSource(str(flask_like))
    before = parse_week("2026-W10", UTC)
    wide = type(before)(before.start - timedelta(weeks=6), before.end, UTC, "x")
    hist = {p.number: p for p in src.history(wide)}
    assert not hist[511].lines_known and hist[511].files[0].path == "src/json.py"
    full = {p.number: p for p in src.iter_pull_requests(before)}
    assert full[511].lines_known and full[511].lines_added == 12


def test_mainline_tips_name_the_newest_commit_before_each_end(tmp_path):
    """Backfill parts end at these commits. A commit dated before its parent (a clock
    skew, a rebase) does not move the tip of a later end backwards."""
    from datetime import datetime

    b = GitRepoBuilder(tmp_path / "r")
    a = b.commit("a (#1)", "2026-03-02T10:00:00+00:00", {"a.py": "a\n"})
    c = b.commit("c (#2)", "2026-03-09T10:00:00+00:00", {"c.py": "c\n"})
    skew = b.commit("skewed (#3)", "2026-03-05T10:00:00+00:00", {"s.py": "s\n"})  # newer on the line, older date
    d = b.commit("d (#4)", "2026-03-16T10:00:00+00:00", {"d.py": "d\n"})
    src = GitSource(str(b.path))

    def at(day: str) -> datetime:
        return datetime.fromisoformat(f"{day}T00:00:00+00:00")

    ends = [at("2026-03-01"), at("2026-03-03"), at("2026-03-07"), at("2026-03-12"), at("2026-03-20"), at("2026-03-07")]
    assert src.mainline_tips(ends) == [None, a, skew, skew, d, skew]
    assert c not in src.mainline_tips(ends)  # the skewed commit after it is newer on the line
    # The same line counts the commits of each window (a backfill balances its workers by them).
    from repobrief.window import Window

    weeks = [Window(at(a), at(b), at(a).tzinfo, "w") for a, b in (("2026-03-02", "2026-03-09"), ("2026-03-09", "2026-03-16"),
                                                          ("2026-03-16", "2026-03-23"), ("2026-03-23", "2026-03-30"))]
    assert src.commits_per_window(weeks) == [2, 1, 1, 0]  # a and the skewed commit, c, d, nothing
