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
    assert code == 1
    assert err.startswith("error: cannot write") and "hint: check that --out is a writable folder" in err


def test_a_shallow_clone_is_warned_about_once_not_once_per_week(tmp_path):
    import subprocess

    repo = _repo(tmp_path / "one")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True)
    code, _, err = run_cli("site", str(shallow), "--name", "acme/one", "--until-week", "2026-W26", "--weeks", "3",
                           "--out", str(tmp_path / "site"), "-q")
    assert code == 0, err
    assert err.count("warning: this clone is shallow") == 1 and "git fetch --unshallow" in err


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
