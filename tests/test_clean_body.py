"""`clean_body` cuts a body into sections with regexes; these tests hold it to the
plain line-by-line reading it replaced (kept here as the reference), on real PR
bodies and on bodies built from the lines templates are made of."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from repobrief.conventions import (
    _HINT_WORDS,
    _HTML_COMMENT,
    _REF_BEFORE,
    _TEST_HEADING,
    DROP_HEADINGS,
    clean_body,
    heading,
    sort_sections,
)

_CHECK_ITEM = re.compile(r"^\s*[-*+]\s*\[(?P<mark>[ xX])\]\s*(?P<text>.*)$")
# A line that goes on with the checklist item above it: not blank, and no block of its own
# (list item, heading, fence, quote, table row).
_ITEM_GOES_ON = re.compile(r"[^\S\n]*(?![-*+][^\S\n]|\d+[.)][^\S\n]|#|```|>|\|)\S")
_PLACEHOLDER = re.compile(r"^(?:>.*|\.\.\.|n/?a|none|todo|tbd|-+|#\s*add code snippet.*"
                          r"|(?:co-authored|signed-off|reviewed|acked|tested|reported|suggested)-by:.*)$", re.I)


_HINT = re.compile(_HINT_WORDS)  # the hint words themselves are data, shared


def _unquoted(line: str) -> str:
    """An author's quoted line without its marker; a hint, an alert marker ("> [!NOTE]") or
    an empty quote line stays quoted (a placeholder, dropped next)."""
    rest = line.lstrip()[1:].lstrip() if line.lstrip().startswith(">") else None
    if rest and not _HINT.match(rest) and not rest.startswith("[!"):
        return re.sub(r"^[^\S\n]*>[^\S\n]?", "", line)
    return line


def _without_hints(lines: list[str]) -> list[str]:
    """A `>` line that tells the author what to write goes with the non-blank lines that
    continue its paragraph (Markdown's lazy continuation); a blank line, another `>`
    line, a fence, a heading or a list item ends the paragraph. Other quotes keep theirs."""
    out, hint = [], False
    for line in lines:
        s = line.lstrip()
        if s.startswith(">"):
            hint = bool(_HINT.match(s[1:].lstrip()))
            out.append(line)  # a placeholder line either way (dropped next)
            continue
        if not s.strip() or s.startswith("```") or re.match(r"#{1,6}(?:\s|$)|[-*+][^\S\n]|\d+[.)][^\S\n]", s):
            hint = False
        if not hint:
            out.append(line)
    return out


def _without_empty_fence_pairs(lines: list[str]) -> list[str]:
    """A fence line, only blank lines, then a closing fence: the pair goes (a template's
    snippet block once its placeholder is dropped); code fences with code stay."""
    out, i = [], 0
    while i < len(lines):
        s = lines[i].strip()
        if s.startswith("```") and "`" not in s[3:]:
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and lines[j].strip() == "```":
                i = j + 1
                continue
        out.append(lines[i])
        i += 1
    return out


def reference_refs(body: str) -> list[int]:
    """Issue numbers: `#N` after a linking word, and issue URLs, in one left-to-right scan."""
    refs = set()
    for m in re.finditer(r"#(\d+)|/issues/(\d+)", body):
        if m.group(2) or _REF_BEFORE.search(body, max(0, m.start() - 60), m.start()):
            refs.add(int(m.group(1) or m.group(2)))
    return sorted(refs)


def reference(body: str) -> tuple:
    """Every line looked at in turn: fences toggle code, headings open sections,
    checklist items are taken out with the lines they wrap onto, template hints with their lazy continuation lines dropped,
    an author's quote unquoted, placeholder lines and then empty fence pairs dropped, blank
    runs collapsed."""
    body = _HTML_COMMENT.sub("", body).replace("\r\n", "\n")
    sections: list[tuple[str, list[str]]] = [("", [])]
    levels = [0]
    checked, in_code, wrapped = [], False, False
    for line in body.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("```"):
            in_code = not in_code
        h = None if in_code or not stripped.startswith("#") else heading(line)
        if h:
            sections.append((h[1].strip("*_:?！？ ").lower(), []))
            levels.append(h[0])
            wrapped = False
            continue
        c = None if in_code or "[" not in line[:12] or _TEST_HEADING.search(sections[-1][0]) else _CHECK_ITEM.match(line)
        if c:
            if c.group("mark") in "xX":
                checked.append(c.group("text").strip())
            wrapped = True  # the lines it wraps onto go with it
            continue
        wrapped = wrapped and _ITEM_GOES_ON.match(line) is not None
        if wrapped:
            continue
        sections[-1][1].append(line)
    contents = []
    for name, lines in sections:
        if name in DROP_HEADINGS:
            contents.append((name, ""))  # dropped, but still a level that ends the sections before
            continue
        kept = [line for line in map(_unquoted, _without_hints(lines))
                if not (s := line.strip()) or not (_PLACEHOLDER.match(s) or s.startswith(("- If this PR", "- `{")))]
        out: list[str] = []
        for line in _without_empty_fence_pairs(kept):
            if not line.strip():
                if out and out[-1] != "":
                    out.append("")
            else:
                out.append(line.rstrip())
        content = "\n".join(out).strip()
        contents.append((name, "" if re.fullmatch(r"(```\w*\s*)*", content) else content))
    text, what, tests, headings = sort_sections(contents, levels)  # the shared last step: which section is which
    m = re.search(r"^BREAKING[ -]CHANGES?\s*:\s*(.+)$", body, re.M)
    return text, what, tests, m.group(1).strip() if m else None, checked, reference_refs(body), headings


def _fields(body: str) -> tuple:
    c = clean_body.__wrapped__(body)
    return c.text, c.what, c.tests, c.breaking_note, c.checked, c.issue_refs, c.headings


TEMPLATE_LINES = [
    "# Heading", "   ## Sub ##", "    # four spaces: text", "```", "```python", "  ```  ", "- [x] done", "- [ ] todo",
    "* [X] Done thing", "          - [x] too deep", "-[x]tight", "+ [ ]", "", "   ", "\t", "> quote", "...", "N/A",
    "none", "TODO", "---", "-", "- If this PR is", "- `{x}`", "text line", "  indented text  ", "#NoSpace", "#",
    "# add code snippet here", "### Test", "## Checklist", "## What does this PR do?", "## **Summary**",
    "BREAKING CHANGE: renamed x", "fixes #12", "Closes #9 see /issues/7", "a\r", "\x0bvt", "\u00a0nbsp", "#  ",
    "text ``` inline", "<!-- hidden -->", "<!-- open", "close -->", "see https://x/y/issues/31#issuecomment-1",
    "Fixes #7, related to org/repo#8", "#12 without a word", "/issues/#9", "Co-authored-by: A <a@x>",
    "  signed-off-by: b", "Co-authored-by:", "co-authored-by x",
    "> Add a hint that wraps", "onto a second line.", "> an author's quote", "> If unsure", "> [!NOTE]", ">", "> N/A", ">> nested", ">```", "1. item", "2) item", "-", "+ x", "#\tTab heading",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(TEMPLATE_LINES), st.text(max_size=30)), max_size=25),
       st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_clean_body_reads_template_lines_as_the_line_by_line_reference(lines, newline, trailing):
    body = newline.join(lines) + (newline if trailing else "")
    assert _fields(body) == reference(body)


def test_clean_body_reads_real_bodies_as_the_reference():
    from gitrepo import load_history

    bodies = [r.get("body") or "" for name in ("verl-project__verl", "pallets__flask") for r in load_history(name)]
    assert sum(1 for b in bodies if "- [x]" in b and "### " in b) > 500  # templates with checklists and headings
    mismatched = [b[:80] for b in bodies if _fields(b) != reference(b)]
    assert not mismatched
