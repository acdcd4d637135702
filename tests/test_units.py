"""Title and body conventions, windows, config errors, detectors and escaping."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime

import pytest
from gitrepo import GitRepoBuilder
from hangguard import finishes
from hypothesis import given, settings
from hypothesis import strategies as st

from repobrief.config import load_settings
from repobrief.conventions import clean_body, first_sentence, parse_title, plain_markdown
from repobrief.errors import ConfigError, UsageError
from repobrief.render.markdown import md_cell, md_line, md_text
from repobrief.window import parse_timezone, parse_week, resolve_window, week_range


@pytest.mark.parametrize(
    "title, tags, type_, breaking, desc",
    [
        ("[BREAKING][trainer, cfg] chore: enable V1 trainer by default (#6823)", ["trainer", "cfg"], "chore", True,
         "enable V1 trainer by default"),
        ("[ckpt, fsdp]  feat: sharded delta weight sync (#7324)", ["ckpt", "fsdp"], "feat", False, "sharded delta weight sync"),
        ("feat(router)!: drop legacy routes", ["router"], "feat", True, "drop legacy routes"),
        ("fix(cli): handle empty groups", ["cli"], "fix", False, "handle empty groups"),
        ("[Bugfix][Kernel] Fix FP8 scale overflow", ["kernel"], "fix", False, "Fix FP8 scale overflow"),
        ("Fix typo in the quickstart", [], "fix", False, "Fix typo in the quickstart"),
        ("add SESSION_COOKIE_PARTITIONED config (#5499)", [], "feat", False, "add SESSION_COOKIE_PARTITIONED config"),
        ("update dev dependencies", [], None, False, "update dev dependencies"),
        # a type in the first tag is no module ("which matters to users of chore"); verl's `[misc]` is one
        ("[chore] Break the loop after obtaining the actor (#18)", [], "chore", False, "Break the loop after obtaining the actor"),
        ("[lint] Tidy imports", [], "style", False, "Tidy imports"),
        ("[misc] fix: retry the download", ["misc"], "fix", False, "retry the download"),
    ],
)
def test_parse_title(title, tags, type_, breaking, desc):
    p = parse_title(title)
    assert (list(p.tags), p.type, p.breaking, p.description) == (tags, type_, breaking, desc)


def test_clean_body_drops_template_and_finds_what_and_tests():
    body = """<!-- a hidden note -->
### What does this PR do?

This PR adds a streaming
checkpoint writer. Fixes #812.

### Checklist Before Starting

- [ ] Search for similar PRs.
- [x] Format the PR title.

### Test

> For changes that can not be tested by CI, validate by experiment(s).

Ran test_ckpt.py on 8 GPUs: 40% faster saves.

### API and Usage Example

```python
# Add code snippet or script demonstrating how to use this
```

BREAKING CHANGE: `ckpt.sched` is now `ckpt.scheduler`
"""
    c = clean_body(body)
    assert "hidden note" not in c.text and "Search for similar" not in c.text and "validate by experiment" not in c.text
    assert first_sentence(c.what) == "This PR adds a streaming checkpoint writer."
    assert c.has_test_evidence and "40% faster" in c.tests
    assert c.issue_refs == [812] and c.checked == ["Format the PR title."]
    assert c.breaking_note == "`ckpt.sched` is now `ckpt.scheduler`"
    assert "Add code snippet" not in c.text  # the template's placeholder snippet is gone


def test_test_evidence_under_headings_that_name_tests_results_or_validation():
    """verl #3506 reported its runs under "### Accuracy test" and was flagged "without
    tests"; headings naming tests, checks or results anywhere count, paths do not."""
    for heading in ("Accuracy test", "Unit tests (no GPU)", "Experimental validation", "GSM8K eval acc",
                    "Bench results", "How has this been tested?", "Test Plan"):
        c = clean_body(f"### What does this PR do?\n\nFixes the loader.\n\n### {heading}\n\n8B: 0.812 -> 0.815 on gsm8k\n")
        assert c.has_test_evidence and "0.815" in c.tests and "0.815" not in c.what, heading
    for heading in ("Design & Code Changes", "`verl/experimental/agent_loop/tool_parser.py`", "Fixes cpu_unit_tests"):
        c = clean_body(f"### {heading}\n\nThe loader now keeps the order of the shards.\n")
        assert not c.has_test_evidence, heading
    # a heading that names both is both: the description is not lost to the tests
    c = clean_body("### What this PR does and how it was tested\n\nIt fixes the loader; 12 tests pass on gsm8k.\n")
    assert c.what.startswith("It fixes the loader") and c.has_test_evidence


def test_the_hang_guard_stops_a_regex_that_never_lets_go():
    """A regex runs in C and lets no other thread run: a guard that joined a thread with a
    timeout waited for the regex to end, and the test passed. The guard's process is
    killed instead, and the test fails in time."""
    import re
    import time

    started = time.monotonic()
    with pytest.raises(AssertionError, match="did not return within 1 s"):
        finishes(lambda text: re.match(r"(a*)*b", text), "a" * 60, within=1)  # would take longer than a lifetime
    assert time.monotonic() - started < 30  # a guard against the guard hanging, not a timing


@pytest.mark.parametrize("pad", [" ", "\t"])
def test_a_heading_line_of_thousands_of_spaces_is_read_at_once(pad):
    """A body is anyone's text: a heading line padded with 20,000 spaces or tabs took the
    heading regex minutes (it backtracked over the padding for every split of it), and a
    backfill or a weekly run stood still on that one PR. Closing hashes still go."""
    body = f"## Summary {pad * 20_000} ##\n\nFixes the loader.\n\n# x{pad * 20_000}!\n\nMore.\n"
    c = finishes(clean_body.__wrapped__, body)
    assert c.what == "Fixes the loader." and c.headings[0] == "summary"
    assert c.headings[1].startswith("x") and c.headings[1].endswith("!") and "More." in c.text


@pytest.mark.parametrize("text", ["[" * 60_000, "x" + "[a](" * 15_000, "![" * 30_000 + "]"])
def test_unclosed_links_in_a_long_title_are_read_at_once(text):
    """A local clone's commit subject has no length limit: a run of `[` or of `[a](` without
    its `]` or `)` made the link pattern scan to the end from every `[` (seconds at 20,000
    characters, minutes at 65,536). The text stays as written."""
    assert finishes(plain_markdown, text).startswith(text[:50])


@pytest.mark.parametrize("title", ['Revert "a"' + " " * 65_536 + "x", "fix typo in " + " " * 65_536 + "x"])
def test_a_title_padded_with_spaces_is_read_at_once(title):
    """A local clone's commit subject has no length limit: the revert and typo-sweep
    patterns backtracked over a long run of spaces (a second at 8,000, minutes at 65,536)."""
    from repobrief.analysis.classify import classify
    from repobrief.config import Settings
    from repobrief.conventions import reverted_title
    from repobrief.models import PullRequest

    assert finishes(reverted_title, title) is None
    pr = PullRequest(7, title, "", "dev", datetime(2026, 6, 24, tzinfo=UTC))
    assert finishes(lambda p: classify(p, Settings()), pr).type == ("revert" if title.startswith("Revert") else "fix")


def test_a_checklist_items_wrapped_lines_go_with_it():
    """verl #499's description was a checklist whose items wrap: the report quoted
    "commit is pushed to the same branch." as what the PR does."""
    body = ("- [x] Add concurrency to workflows to cancel previous workflows when new\ncommit is pushed to the same branch.\n"
            "- [ ] Cancel all workflows from the same commit if any fails? (Not\nsure whether we really need it)\n\n"
            "Note: we leave out `secrets_scan.yml` to avoid any\npossible leakage.\n")
    c = clean_body(body)
    assert c.what.startswith("Note: we leave out") and "commit is pushed" not in c.text and "sure whether" not in c.text
    assert c.checked == ["Add concurrency to workflows to cancel previous workflows when new"]


def test_a_test_plan_written_as_a_checklist_is_test_evidence():
    """verl #5885 and #6489 listed what they verified as checked items under "## Test plan"."""
    body = ("## Summary\n\nSyncs the strategy.\n\n## Test plan\n\n- [x] Verified `engine_config.strategy == \"fsdp2\"`\n"
            "- [x] Trained Qwen3.5-0.8B with `strategy=fsdp2`: FSDP2 correctly applied, 3 training\nsteps pass\n")
    c = clean_body(body)
    assert c.has_test_evidence and "Trained Qwen3.5-0.8B" in c.tests and "3 training\nsteps pass" in c.tests
    assert c.what == "Syncs the strategy."


def test_results_in_the_subsections_of_a_test_heading_are_test_evidence():
    """verl #6897 gave its results under "### Test" in "#### sync" and "#### async"
    subsections, and was listed among the changes without tests."""
    body = ("### What does this PR do?\n\nAdapts the skip manager.\n\n### Test\n\n#### sync\n\n"
            "step 1-20 loss matches the baseline within 0.1%\n\n### Design\n\nA manager per trainer.\n")
    c = clean_body(body)
    assert c.has_test_evidence and "step 1-20 loss" in c.tests and "A manager per trainer" not in c.tests
    assert not clean_body(body.replace("### Test", "### Usage")).has_test_evidence


def test_a_bold_label_on_its_own_line_is_no_part_of_the_first_sentence():
    """verl #4320's key change read "Summary This PR enhances…": its "What does this PR
    do?" section opened with a bold "**Summary**" line. A bold sentence is still one."""
    assert first_sentence("**Summary**\nThis PR enhances the profiler.\nMore.") == "This PR enhances the profiler."
    assert first_sentence("__Key changes:__\n- adds a flag to the trainer") == "adds a flag to the trainer"
    assert first_sentence("**This PR removes the old loader.**\nIt was unused.") == "This PR removes the old loader."
    assert first_sentence("**Fix the deadlock in FSDP with many nodes**\n\n| a | b |") == \
        "Fix the deadlock in FSDP with many nodes"  # more than four words, no colon: a sentence
    long_zh = "**本PR修复了" + "多机训练时的梯度回归" * 8 + "**"  # no spaces, but no label either: too long
    assert first_sentence(long_zh).startswith("本PR修复了多机训练时")
    assert first_sentence("**Note**: the loader is gone.") == "Note: the loader is gone."


def test_code_in_a_body_is_no_sentence_to_quote():
    """Every code fence line used to be dropped as a template placeholder, so the code
    between read as prose: verl #4962's key change quoted a traceback, another a BibTeX
    entry. A template's empty snippet block is still dropped."""
    body = "```bibtex\n@article{li2025, title = {Trust Region Masking}}\n```\n\nAdd K3 KL estimators to the correction."
    assert first_sentence(clean_body(body).what) == "Add K3 KL estimators to the correction."
    template = "### API and Usage Example\n\n```python\n# Add code snippet or script demonstrating how to use this\n```\n"
    assert clean_body(template).text == ""


@pytest.mark.parametrize("body, title, first", [
    ("## Breaking / migration notes\n\n- The loader moved to `acme.io.load` (update `loader` strings).\n",
     "Breaking / migration notes", "The loader moved to `acme.io.load` (update `loader` strings)."),
    ("## Migration Guide\n\n### Example 1\n```python\ncfg.rollout_is = True\n```\n\n## References\n\nA paper.",
     "Migration Guide", ""),  # its text is its subsections' (code), not the next section's
    ("#### ⚠️ **Breaking**\nWe adopt a new format for position ids.", "⚠️ **Breaking**",
     "We adopt a new format for position ids."),
    ("### Upgrade notes\n\nSet `use_v1=False` to keep the old trainer.", "Upgrade notes",
     "Set `use_v1=False` to keep the old trainer."),
    ("## Migration\n\nNo longer supported: `acme.old`. Import `acme.new` instead.", "Migration",
     "No longer supported: `acme.old`."),  # "No" that says what changed
])
def test_a_section_that_tells_users_what_to_change_is_found(body, title, first):
    notes = clean_body("### What does this PR do?\n\nMoves the loader.\n\n" + body).migration
    assert notes is not None and notes[0] == title
    assert first_sentence(notes[1]) == first
    assert "A paper" not in notes[1]


@pytest.mark.parametrize("body", [
    "## Breaking changes\n\nNone",
    "## Breaking changes\n\nNo.",
    "## Breaking Changes\n\nNo breaking changes",
    "## Breaking changes\n\nThere are no breaking changes in this PR. It is still possible to call `x` as before "
    "(although if you want to pass in a custom fn you will need to use the new method).",  # verl #162
    "## BC-breaking\n\nThis PR does not break anything.",
    "### Upgrade notes\n\nN/A",
    "### Breaking\n\nFully backward compatible.",
    "## Breaking changes\n\nNo, this only adds an option.",
    "### Is this a breaking change?\n\nNo, the old key is still read.",
    "### Does this PR introduce a breaking change?\n\nYes",  # a bare answer says nothing to do
    "## Breaking changes\n\nNope.", "## Breaking changes\n\n_None_", "## Breaking changes\n\n__No__",
    "## Migration\n\nNone required.", "## Breaking changes\n\nNone (internal refactor only).",
    "## Breaking changes\n\nN/A - internal refactor only.", "## Breaking changes\n\nNot that I know of.",
    "## Migration\n\nNothing to migrate.", "## 不兼容变更\n\n无",
    # answered with a placeholder: the sections under it are not its text
    "## Breaking changes\n\nNone\n\n### Test\n\nRan the unit tests on 8 GPUs and they pass.",
    "# Breaking changes\n\n> None\n\n## Summary\n\nMoves the loader into its own module.",
    # a plan, a bump or a story, not notes
    "## Phase 2: migration\n\nWe move the workers to the new engine next quarter.",
    "## Upgrade dependencies\n\n- torch 2.5 -> 2.6", "## Upgrade vLLM to 0.9\n\nBumps it.",
    "## Migration of the CI to GitHub-hosted runners\n\nMoves jobs.", "## Non-breaking change\n\nAdds a flag.",
    "## Fix breaking test on main\n\nFixes it.",
])
def test_a_section_that_says_there_is_nothing_to_change_is_no_migration_notes(body):
    assert clean_body("### What does this PR do?\n\nMoves the loader.\n\n" + body).migration is None


@pytest.mark.parametrize("body, first", [
    ("## Breaking changes\n\nDoes not read `sched` any more: rename it to `scheduler` in your config.", "Does not read"),
    ("## Upgrade notes\n\nThis PR is not backward compatible: rename `sched` to `scheduler`.", "This PR is not"),
    ("## Breaking changes\n\nThere is no longer a `sched` key; use `scheduler`.", "There is no longer"),
    ("## Migration guide\n\nThere is no automatic conversion; run `scripts/convert.py` on old checkpoints.", "There is no"),
    ("## Breaking changes\n\nNo changes needed for YAML users; Python users must pass `cfg`.", "No changes needed"),
    ("## Breaking changes\n\nBackward compatible except that `foo()` now returns a tuple.", "Backward compatible except"),
    # "nothing changes" before the instructions: the instructions are the notes
    ("## Breaking changes\n\nNo API change. The `sched` key is renamed to `scheduler`.", "The `sched` key is renamed"),
    ("### Does this PR introduce a breaking change?\n\nYes, `sched` is renamed to `scheduler`.", "Yes, `sched`"),
    ("## 迁移指南\n\n将 `sched` 改名为 `scheduler`。", "将 `sched` 改名为"),
])
def test_instructions_after_a_no_are_still_migration_notes(body, first):
    notes = clean_body("### What does this PR do?\n\nMoves the loader.\n\n" + body).migration
    assert notes is not None and first_sentence(notes[1]).startswith(first)


@pytest.mark.parametrize("section, notes", [
    # verl #6129 and #3694: what breaks and what to do, under "Compatibility"
    ("### Compatibility\n\nBreaking change for frameworks that imported `AsyncLLMServerManager` from "
     "`verl.experimental.agent_loop`: import `LLMServerClient` from `verl.workers.rollout` instead.", True),
    ("### Backward compatibility\n\n- No backward compatibility with legacy TIS\n- Configs with "
     "`tis_imp_ratio_cap` will raise validation errors", True),
    # reassurance, verl #7221, #6308, #6246: nothing to do
    ("### Backward compatibility\n\nThe default remains `zigzag`, and `cp_size == 1` is unchanged, so existing "
     "models see no behavioural difference.", False),
    ("### Backward Compatibility\n\nThis PR does not introduce public API or config changes.", False),
    ("#### Compatibility / edge cases\n\n- No public config changes.\n- No breaking changes for single-job runs.", False),
    # compatibility of one part, in a list of design steps: no notice (verl #5599)
    ("### 4. MTP compatibility updates\n\nThe checks now read `mtp_num_hidden_layers` instead of only "
     "`num_nextn_predict_layers`.", False),
])
def test_a_compatibility_section_is_migration_notes_only_when_it_says_what_breaks(section, notes):
    found = clean_body("### What does this PR do?\n\nMoves the manager.\n\n" + section).migration
    assert (found is not None) == notes
    if notes:
        assert found[0].endswith("ompatibility") and found[1].startswith(section.split("\n\n", 1)[1][:20])


@pytest.mark.parametrize("body, label, first", [
    # verl #2237: labels in place of headings, each alone on its line
    ("Drops vLLM 0.5.4 support.\n\n**Breaking Changes:**\n- **vLLM Version Requirement**: Minimum supported version "
     "is now 0.7.0\n- `use_fire_sampling` is no longer available\n\n**Migration Guide:**\n```bash\npip install vllm\n```",
     "Breaking Changes", "- **vLLM Version Requirement**"),
    # a label before its text, on the same line
    ("Splits the weights.\n\n**Migration required**: all callers must unpack three values.\nSee the example below.",
     "Migration required", "all callers must unpack three values."),
    ("改了接口。\n\n**迁移指南：**\n将 `sched` 改名为 `scheduler`。", "迁移指南", "将 `sched` 改名为"),
])
def test_a_bold_label_heads_migration_notes_as_a_heading_would(body, label, first):
    """A description without headings labels its sections in bold: verl #2237's
    "**Breaking Changes:**" and "**Migration Guide:**" were not read as notes."""
    notes = clean_body(body).migration
    assert notes is not None and notes[0] == label and notes[1].startswith(first)


@pytest.mark.parametrize("body", [
    "Adds a CLI.\n\n**No breaking API changes.** The generator now has a CLI interface.",  # a sentence in bold
    "Adds a CLI.\n\n**No breaking changes:** the old entry point still works.",  # a label that denies
    "Adds a kwarg.\n\n**Backward compatibility:** 0.3.1 and 0.4.2 are still supported.",  # reassurance
    "Adds a flag.\n\n**Migration guide:**\nNone.",  # says nothing
    "Shows the output:\n\n```\n**Breaking Changes:**\nrename everything\n```",  # in a code block
])
def test_a_bold_label_that_tells_users_nothing_is_no_migration_notes(body):
    assert clean_body(body).migration is None


@pytest.mark.parametrize("body", ["x\n" + "**Migration guide:**\nNone.\n" * 9_000,
                                  "x\n" + "**Migration required**: nothing to do\n" * 5_000])
def test_a_description_full_of_labels_is_read_once(body):
    """Each label's text is read up to the next label: a description of thousands of
    labels that say nothing is not read again from each of them."""
    assert finishes(lambda b: clean_body.__wrapped__(b).migration, body) is None


def test_a_breaking_changes_section_declares_a_breaking_change():
    """verl #3496 said "⚠️ Breaking: we adopt a new format for Qwen2VL's position ids";
    the report never called it breaking, as a `BREAKING CHANGE:` footer would have."""
    body = "### What does this PR do?\n\nFixes the patches.\n\n#### ⚠️ Breaking\nWe adopt a new format for position ids."
    assert clean_body(body).declared_breaking == "We adopt a new format for position ids."
    assert clean_body(body.replace("Breaking", "Migration guide")).declared_breaking is None  # notes, not a declaration
    assert clean_body("Moves it.\n\n## Breaking changes\n\nNone").declared_breaking is None


def test_a_fix_titled_by_its_problem_gets_its_verb_back():
    """"fix: stuck issue with mixed text-image data" read "The most notable changes: Stuck
    issue with mixed text-image data (#3670)", as if the week had brought the problem."""
    from repobrief.engines.offline import gist_of

    assert gist_of("stuck issue with mixed text-image data", fix=True) == "Fix stuck issue with mixed text-image data"
    assert gist_of("Qwen2_vl position_ids shape mismatch", fix=True) == "Fix Qwen2_vl position_ids shape mismatch"
    assert gist_of("A major issue in random sampling", fix=True) == "Fix a major issue in random sampling"
    assert gist_of("Megatron MTP loss mismatch", fix=True) == "Fix Megatron MTP loss mismatch"  # a name keeps its case
    assert gist_of("Incorrect loss scaling", fix=True) == "Fix incorrect loss scaling"  # a plain word does not
    # a noun ("hang", "fail") or a clause after "when" is no verb of the description's head
    for phrase in ("Ray hang due to num_cpus", "FSDP actor/critic ci fail", "vllm executor issue when world_size is 1"):
        assert gist_of(phrase, fix=True) == "Fix " + phrase
    # a clause would not read after "Fix": left as written
    for clause in ("Megatron checkpoint conversion fails with TP>1", "missing keys are now handled"):
        assert gist_of(clause, fix=True) == gist_of(clause)
    # a description that starts with what the PR does, or says "fix" itself, or names no problem
    for d in ("add retry on errors", "preserve MTP drafter weights during hybrid sleep", "typo fix in the docs",
              "DAPO wandb link"):
        assert gist_of(d, fix=True) == gist_of(d) == d[:1].upper() + d[1:]
    assert gist_of("stuck issue with mixed data") == "Stuck issue with mixed data"  # not a fix: as written


def test_a_long_first_sentence_is_cut_between_words_not_inside_a_parenthesis():
    """verl #3653's key change ended "returns `(batch_size, 3, seq_length)` (…. It fixes a
    defect.": the sentence was cut inside the parenthesis it opened."""
    text = ("The loader expects `position_ids` of shape `(4, batch, seq)` but the agent loop returns `(batch, 3, seq)` "
            "(for the VL models, where the rope index adds a dimension that the text models do not have at all).")
    cut = first_sentence(text, 140)
    assert cut == "The loader expects `position_ids` of shape `(4, batch, seq)` but the agent loop returns `(batch, 3, seq)`…"
    assert first_sentence("One two three four five six seven eight nine ten.", 30) == "One two three four five six…"
    # Chinese has few spaces: cut where the limit is, not at the first space (it once kept "本 PR…")
    zh = "本 PR " + "在多机训练时重新计算梯度之外，" * 20 + "。"
    assert len(first_sentence(zh, 240)) == 240 and first_sentence(zh, 240).startswith("本 PR 在多机")
    # a long URL near the end: English is still cut at a space, not inside the URL
    url = ("It follows the config of Megatron core (https://github.com/NVIDIA/Megatron-LM/blob/main/megatron/core/"
           "transformer/transformer_config.py#L208-L230) and more words to go past the limit.")
    assert first_sentence(url, 120) == "It follows the config of Megatron core…"


def test_a_zone_abbreviation_is_answered_with_the_zones_it_means():
    """`--tz CST` was answered "did you mean 'UCT'?"."""
    with pytest.raises(UsageError) as e:
        parse_timezone("CST")
    assert e.value.hint == "CST is an abbreviation, not a zone: give Asia/Shanghai (China) or America/Chicago (US Central)"
    with pytest.raises(UsageError) as e:
        parse_timezone("Asia/Shangai")
    assert e.value.hint == "did you mean 'Asia/Shanghai'?"
    assert str(parse_timezone("EST")) == "EST"  # a zone tzdata has under that name loads as it is
    for bad in ("Asia", "x" * 300):  # a folder of zones, a name too long for the file system: no traceback
        with pytest.raises(UsageError, match="unknown time zone"):
            parse_timezone(bad)


def test_a_description_that_says_it_is_not_compatible_is_not_read_as_compatible():
    from repobrief.analysis.scoring import says_compatible

    for said in ("Fully backward compatible.", "No API changes.", "The old path remains compatible."):
        assert says_compatible(clean_body(said)), said
    for denied in ("This is not fully compatible with checkpoints saved by 0.4.", "It is no longer backward compatible.",
                   "This change isn't backward-compatible.", "It won't be backward compatible.",
                   "This breaks backward compatibility.", "There is no backward compatibility."):
        assert not says_compatible(clean_body(denied)), denied


def test_first_sentence_skips_bare_links():
    assert first_sentence("RFC https://x/issues/1\n\nThis adds X. More.") == "This adds X."


@pytest.mark.parametrize(
    "body, sentence",
    [
        ("vLLM counterpart to **[verl#6117](https://github.com/verl-project/verl/pull/6117)** (SGLang PD). More.",
         "vLLM counterpart to verl#6117 (SGLang PD)."),
        ("Adds a *streaming* writer, see ![chart](c.png) and <https://example.org/doc>.<br/>Then more.",
         "Adds a streaming writer, see chart and https://example.org/doc."),
        ("Keeps `**kwargs` and `a_b`, __init__.py, src/**/*.py and 2*3*4 as written, drops ~~old~~ <sub>tags</sub>.",
         "Keeps `**kwargs` and `a_b`, __init__.py, src/**/*.py and 2*3*4 as written, drops old tags."),
        ("Escaped \\*stars\\* and _under_ and **_both_** read plainly.", "Escaped *stars* and under and both read plainly."),
        # verl #6974: "Adds **`delta_sharded`** — …" read "Adds \\*\\*`delta_sharded`\\*\\*" in the report
        ("Adds **`delta_sharded`** and _`x`_, keeps a*`b`*c.", "Adds `delta_sharded` and `x`, keeps a*`b`*c."),
        # verl #4795: "the dedicated repo \\[`verl-recipe`\\](https://github.com/…)" in the report
        ("Moves them to [`verl-recipe`](https://github.com/v/verl-recipe) and [the `vla` dir](verl/vla).",
         "Moves them to `verl-recipe` and the `vla` dir."),
    ],
)
def test_first_sentence_of_a_body_is_plain_text_not_markdown(body, sentence):
    """A sentence quoted from a body is escaped for output later, so Markdown left in it
    would show to readers as raw syntax (`**[verl#6117](https://…)**`)."""
    assert first_sentence(body) == sentence


def test_weeks_and_ranges():
    sh = parse_timezone("Asia/Shanghai")
    w = parse_week("2026-W26", sh)
    assert (w.start.isoformat(), w.end.isoformat()) == ("2026-06-22T00:00:00+08:00", "2026-06-29T00:00:00+08:00")
    assert parse_week("last", sh, now=datetime(2026, 7, 1, tzinfo=sh)).label == "2026-W26"
    assert parse_week("2026w9", sh).label == "2026-W09"
    assert resolve_window(None, "2026-06-22", "2026-06-28", sh).label == "2026-W26"
    for bad in ("2026-26", "W26", "2026-W54", "next"):
        with pytest.raises(UsageError, match="valid forms"):
            parse_week(bad, sh)
    with pytest.raises(UsageError, match="YYYY-MM-DD"):
        resolve_window(None, "22/06/2026", None, sh)
    with pytest.raises(UsageError, match="before"):
        resolve_window(None, "2026-06-28", "2026-06-22", sh)
    with pytest.raises(UsageError, match="either --week or --since"):
        resolve_window("last", "2026-06-01", None, sh)
    # The calendar's ends: a usage error, not an overflow deep in the baseline's dates.
    for week, since, until in (("9999-W52", None, None), ("0001-W01", None, None), (None, "1800-01-01", "2026-12-31"),
                               (None, "9999-12-31", "9999-12-31")):
        with pytest.raises(UsageError, match="outside the years repobrief reports on"):
            resolve_window(week, since, until, sh)
    with pytest.raises(UsageError, match="--to '9999-W52' is outside"):
        week_range("2026-W01", "9999-W52", sh)
    assert parse_week("1970-W01", sh).start.date().isoformat() == "1969-12-29"  # in 1970's ISO weeks


def test_a_notice_keeps_its_wording_key_through_pickling():
    import pickle

    from repobrief.models import Notice

    n = pickle.loads(pickle.dumps(Notice("llm: sections fell back", "llm_sections", sections="summary")))
    assert (str(n), n.key, n.params) == ("llm: sections fell back", "llm_sections", {"sections": "summary"})


def test_time_zones_are_found_however_they_are_cased():
    assert parse_timezone("utc").key == "UTC" and parse_timezone("asia/shanghai").key == "Asia/Shanghai"
    with pytest.raises(UsageError, match="did you mean 'Asia/Shanghai'"):
        parse_timezone("Asia/Shangai")


def test_a_period_that_has_not_started_or_an_empty_flag_is_refused():
    """Both used to give a report of nothing merged (an unset shell variable meant last week)."""
    sh = parse_timezone("Asia/Shanghai")
    now = datetime(2026, 12, 2, 12, tzinfo=sh)  # Wednesday of 2026-W49
    assert resolve_window("this", None, None, sh, now).label == "2026-W49"
    assert resolve_window(None, "2026-11-30", None, sh, now).label == "2026-11-30..2026-12-02"
    for week, since, until, message in (
        ("2026-W50", None, None, r"--week 2026-W50 has not started yet \(this week is 2026-W49\)"),
        (None, "2026-12-03", None, r"--since 2026-12-03 is in the future \(today is 2026-12-02\)"),
        (None, "2027-01-01", "2027-01-05", "--since 2027-01-01 is in the future"),
        ("", None, None, "--week is empty"),
        (None, " ", None, "--since is empty"),
        (None, "2026-11-01", "", "--until is empty"),
    ):
        with pytest.raises(UsageError, match=message):
            resolve_window(week, since, until, sh, now)
    with pytest.raises(UsageError) as e:
        week_range("this", "last", sh, now)
    assert e.value.hint == "--to is the last complete week unless given: add --to this for the week in progress"
    for first, last, message in (("", "last", "--from is empty"), ("2026-W01", " ", "--to is empty")):
        with pytest.raises(UsageError, match=message):
            week_range(first, last, sh, now)


def test_config_file_env_and_flags(tmp_path):
    (tmp_path / "repobrief.toml").write_text(
        'name = "verl-project/verl"\ntimezone = "Asia/Shanghai"\nlanguage = "en"\nthreshold = 6\n'
        '[[modules]]\nname = "npu"\npaths = ["verl/utils/npu/**"]\n[importance]\nbreaking = 3.0\n',
        encoding="utf-8",
    )
    sub = tmp_path / "repo" / "deep"
    sub.mkdir(parents=True)
    s = load_settings(sub, env={"REPOBRIEF_THRESHOLD": "7.5", "OPENAI_API_KEY": "sk-x"}, overrides={"language": "zh"})
    assert (s.name, s.timezone, s.language, s.threshold) == ("verl-project/verl", "Asia/Shanghai", "zh", 7.5)
    assert s.modules[0].paths == ["verl/utils/npu/**"] and s.importance.breaking == 3.0 and s.llm.api_key == "sk-x"


@pytest.mark.parametrize(
    "text, message",
    [
        ('langauge = "en"', "(?s)unknown option 'langauge'.*did you mean 'language'"),
        ('language = "fr"', "option 'language' is 'fr'; expected one of zh, en"),
        ("threshold = 12", "option 'threshold'.*0.0 to 10.0"),
        ('threshold = "high"', "option 'threshold' must be a number"),
        ("[importance]\nfeat = nan", "option 'importance.feat' must be a number, got nan"),
        ("[importance]\nbreakin = 2", "(?s)unknown option 'importance.breakin'.*importance.breaking"),
        ('[[modules]]\npaths = ["x/**"]', r"option 'modules\[0\]' needs name \(in .*repobrief.toml\)"),
        ('timezone = "Mars/Base"', "option 'timezone'"),
        ('engine = "ofline"', "(?s)option 'engine' is 'ofline'; expected one of llm, offline.*did you mean 'offline'"),
        ('formats = ["md", "jsno"]', "(?s)option 'formats\\[1\\]' is 'jsno'.*did you mean 'json'"),
        ("name = [", "not valid TOML"),
        ('[[publish]]\ntarget = "feishuu"\nwebhook = "https://open.feishu.cn/x"',
         r"(?s)option 'publish\[0\].target' is 'feishuu'.*\(in .*repobrief.toml\).*did you mean 'feishu'"),
    ],
)
def test_config_errors_name_the_option(tmp_path, text, message):
    (tmp_path / "repobrief.toml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_settings(tmp_path, env={})


def test_a_bad_value_says_where_it_came_from(tmp_path):
    """A value from the environment or from a file found by walking up is not on the
    command line: the error names the variable or the file."""
    with pytest.raises(ConfigError, match=r"option 'threshold' must be a number, got 'abc' \(set by REPOBRIEF_THRESHOLD\)"):
        load_settings(tmp_path, env={"REPOBRIEF_THRESHOLD": "abc"})
    with pytest.raises(ConfigError, match=r"option 'llm.timeout' is -1.0; .* \(set by REPOBRIEF_LLM_TIMEOUT\)"):
        load_settings(tmp_path, env={"REPOBRIEF_LLM_TIMEOUT": "-1"})
    (tmp_path / "repobrief.toml").write_text('language = "fr"\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    with pytest.raises(ConfigError) as e:
        load_settings(tmp_path / "sub", env={})
    assert str(e.value).startswith(f"option 'language' is 'fr'; expected one of zh, en (in {tmp_path / 'repobrief.toml'})")


def test_a_bad_value_in_the_file_is_an_error_even_when_the_environment_replaces_it(tmp_path):
    """`api_key = 12345` in the file was accepted while OPENAI_API_KEY was set, and failed
    only in the first run without it. The file's value is still checked, and a secret's
    value is not shown; a good one is replaced as before."""
    (tmp_path / "repobrief.toml").write_text('[llm]\napi_key = 8472910365519284\n', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_settings(tmp_path, env={"REPOBRIEF_LLM_API_KEY": "sk-env"})
    assert str(e.value).startswith(f"option 'llm.api_key' must be a string, got an integer (value not shown: this option "
                                   f"holds a secret) (in {tmp_path / 'repobrief.toml'})")
    assert "8472910365519284" not in str(e.value) + (e.value.hint or "")
    (tmp_path / "repobrief.toml").write_text('threshold = "high"\n[llm]\napi_key = "sk-file"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"option 'threshold' must be a number, got 'high' \(in "):
        load_settings(tmp_path, env={}, overrides={"threshold": 7.0})
    (tmp_path / "repobrief.toml").write_text('threshold = 6\n[llm]\napi_key = "sk-file"\n', encoding="utf-8")
    s = load_settings(tmp_path, env={"REPOBRIEF_LLM_API_KEY": "sk-env"}, overrides={"threshold": 7.0})
    assert s.llm.api_key == "sk-env" and s.threshold == 7.0


def test_a_team_config_given_as_a_repository_config_says_so(tmp_path):
    cfg = tmp_path / "team.toml"
    cfg.write_text('out = "reports"\n[[repositories]]\nsource = "."\n', encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_settings(None, config_file=cfg, env={})
    assert e.value.hint == f"{cfg} looks like a team config: run it with `repobrief run --config {cfg}`"
    with pytest.raises(ConfigError, match="is a folder"):
        load_settings(None, config_file=tmp_path, env={})


def test_pyproject_section_is_found(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname="x"\n[tool.repobrief]\nlanguage = "en"\n', encoding="utf-8")
    assert load_settings(tmp_path, env={}).language == "en"
    with pytest.raises(ConfigError, match="REPOBRIEF_LANGUAGE"):
        load_settings(tmp_path, env={"REPOBRIEF_LANGAUGE": "en"})


def test_a_mistyped_section_variable_is_named_with_its_nearest_variable(tmp_path):
    with pytest.raises(ConfigError, match="unknown environment variable REPOBRIEF_LLM_PRICE_PROMPT") as e:
        load_settings(tmp_path, env={"REPOBRIEF_LLM_PRICE_PROMPT": "0.15"})
    assert e.value.hint == "did you mean REPOBRIEF_LLM_PRICE_PROMPT_PER_MTOK?"
    assert load_settings(tmp_path, env={"REPOBRIEF_LLM_PRICE_PROMPT_PER_MTOK": "0.15"}).llm.price_prompt_per_mtok == 0.15


def test_a_pyproject_whose_tool_entry_is_not_a_table(tmp_path):
    """A project's own pyproject may say anything under `tool`: one without a
    [tool.repobrief] table is not a repobrief config; a `tool.repobrief` that is not
    a table is an error that says so (it once crashed settings loading)."""
    py = tmp_path / "pyproject.toml"
    py.write_text('tool = "repobrief"\n', encoding="utf-8")
    assert load_settings(tmp_path, env={}).source_file == ""
    py.write_text("[tool]\nrepobrief = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"tool.repobrief must be a table \(\[tool.repobrief\]\), not int"):
        load_settings(tmp_path, env={})


def test_markdown_escaping_is_inert():
    assert md_text("a | b\nc") == "a \\| b c"
    assert md_text("[click](javascript:alert(1))") == "\\[click\\](javascript:alert(1))"
    assert md_text("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)>"
    assert md_text("Update werkzeug to >=2.3.3") == "Update werkzeug to >=2.3.3"  # no &gt; in the text a reader sees
    assert md_text("use_remove_padding=False") == "use_remove_padding=False"  # identifiers stay readable
    assert md_text("*bold* _em_") == "\\*bold\\* \\_em\\_"
    assert md_text("odd ` tick") == "odd \\` tick" and md_text("`code`") == "`code`"
    assert md_line("# not a heading") == "\\# not a heading" and md_line("> not a quote") == "\\> not a quote"


def test_markdown_code_spans_and_entities_show_as_written():
    """Code spans are inert, so their text is left as written (CommonMark would show escapes
    in them literally); an entity written in a title is shown, not decoded."""
    from markdown_it import MarkdownIt

    def shown(md: str) -> str:
        return MarkdownIt("commonmark").enable("table").render(md)

    title = "support `cfg[0]|x`, `List<int>` and `_private` in a*b"
    assert shown(md_text(title)) == "<p>support <code>cfg[0]|x</code>, <code>List&lt;int&gt;</code> and " \
                                    "<code>_private</code> in a*b</p>\n"
    table = f"| a | b |\n|---|---|\n| {md_cell(title)} | 2 |\n"
    assert "<td>support <code>cfg[0]|x</code>, <code>List&lt;int&gt;</code> and <code>_private</code> in a*b</td>" \
        "\n<td>2</td>" in shown(table)
    assert shown(md_text("Escape &lt;br&gt; &#60;b&#62; and &nbsp; (A & B)")) == \
        "<p>Escape &amp;lt;br&amp;gt; &amp;#60;b&amp;#62; and &amp;nbsp; (A &amp; B)</p>\n"
    assert shown(md_text("`<img src=x onerror=alert(1)>` then <b>x</b>")) == \
        "<p><code>&lt;img src=x onerror=alert(1)&gt;</code> then &lt;b&gt;x&lt;/b&gt;</p>\n"


def test_a_bare_url_in_pr_text_shows_whole_and_links_nowhere():
    """GitHub links a bare `https://…` or `www.…` by itself: a PR body's link to another
    repository's PR, or a page of its author's, became a live link in the report, in the
    DingTalk and WeCom cards too. In a code span it shows as written and links nowhere;
    the sentence's own punctuation stays outside, and a table cell's pipe is escaped."""
    from markdown_it import MarkdownIt

    text = "See https://github.com/volcengine/verl/pull/4280. Also WWW.evil.example/a_b*c, (http://x.example/p)!"
    assert md_text(text) == ("See `https://github.com/volcengine/verl/pull/4280`. Also `WWW.evil.example/a_b*c`, "
                             "(`http://x.example/p`)!")
    html = MarkdownIt("commonmark").render(md_text(text))
    assert "<a " not in html and "<code>https://github.com/volcengine/verl/pull/4280</code>" in html
    assert md_cell("at https://x.example/a|b today") == "at `https://x.example/a\\|b` today"
    assert md_text("`https://already.example` and plain http words") == "`https://already.example` and plain http words"


def _week_report(tmp_path, commits, init=None, name: str = "o/r", lang: str = "en"):
    """The 2026-W10 report of a repository made of `init` (files by path, given the
    builder) and `commits` (message, date, files by path given the builder)."""
    from repobrief.pipeline import generate_report

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("init", "2026-01-05T10:00:00+00:00",
             (init or (lambda b: {"pkg/core/a.py": b.lines(50), "conf/train.yaml": "sched: cos\nlr: 1\n"}))(b))
    for msg, when, files in commits:
        b.commit(msg, when, files(b))
    settings = load_settings(None, env={}, overrides={"name": name, "language": lang})
    return generate_report(str(b.path), settings, parse_week("2026-W10", parse_timezone("UTC")))


def test_detectors_config_rename_missing_tests_ci_churn(tmp_path):
    commits = [
        ("rename sched key (#1)", "2026-03-02T10:00:00+00:00", lambda b: {"conf/train.yaml": "scheduler: cos\nlr: 1\n"}),
        ("feat: add planner (#2)", "2026-03-03T10:00:00+00:00", lambda b: {"pkg/core/planner.py": b.lines(80)}),
        ("[ci] fix: flaky job (#3)", "2026-03-03T11:00:00+00:00", lambda b: {".github/workflows/ci.yml": b.lines(3)}),
        ("[ci] fix: cache key (#4)", "2026-03-03T12:00:00+00:00", lambda b: {".github/workflows/ci.yml": b.lines(2)}),
        ("[ci] chore: bump runner (#5)", "2026-03-04T12:00:00+00:00", lambda b: {".github/workflows/ci.yml": b.lines(1)}),
        ("fix typo in docs (#6)", "2026-03-04T13:00:00+00:00", lambda b: {"docs/index.md": "typo fixed\n"}),
    ]
    rep = _week_report(tmp_path, commits)
    kinds = {r.kind: r for r in rep.risks}
    assert kinds["config_change"].prs == [1]
    assert any("sched" in e and "scheduler" in e for e in kinds["config_change"].evidence)
    assert kinds["missing_tests"].prs == [2]
    assert sorted(kinds["ci_churn"].prs) == [3, 4, 5]
    imp = {n: a.importance for n, a in rep.analyses.items()}
    assert imp[2] > imp[6] and imp[6] <= 2.0
    reasons = {r.code for r in rep.analyses[2].importance_reasons}
    assert "type:feat" in reasons and "core_path" in reasons


def test_a_setting_removed_by_its_dotted_name_in_the_title_is_a_config_risk(tmp_path):
    """verl #6198 "remove actor.dump_memory_snapshot" took a setting away that the code
    read (no config file changed): the report did not name it anywhere."""
    rep = _week_report(tmp_path, [
        ("[trainer] fix: Remove actor.dump_memory_snapshot (#1)", "2026-03-02T10:00:00+00:00",
         lambda b: {"pkg/trainer.py": b.lines(32)}),
        ("[algo] fix: remove torch.quantile-based metrics (#2)", "2026-03-03T10:00:00+00:00", lambda b: {"pkg/algo.py": b.lines(30)}),
        ("[perf] fix: drop torch.cuda.empty_cache calls (#3)", "2026-03-03T11:00:00+00:00", lambda b: {"pkg/algo.py": b.lines(28)}),
        ("[misc] chore: remove pkg.utils.memory_utils (#4)", "2026-03-03T12:00:00+00:00", lambda b: {"pkg/algo.py": b.lines(27)}),
        ("refactor: remove DataProto.non_tensor_batch (#5)", "2026-03-03T13:00:00+00:00", lambda b: {"pkg/algo.py": b.lines(26)}),
    ], init=lambda b: {"pkg/trainer.py": b.lines(40), "pkg/algo.py": b.lines(40)}, name="o/pkg")
    risk = next(r for r in rep.risks if r.kind == "config_change")
    # only what the title says: medium, not the high of a removal the diff shows
    assert risk.prs == [1] and risk.severity == "medium" and "actor.dump_memory_snapshot removed" in risk.text


@pytest.mark.parametrize("lang, shown", [
    ("en", "(#1: conf/a.yaml deleted, conf/b.yaml deleted and 3 more; #2: lr removed from conf/train.yaml)"),
    ("zh", "（#1：删除了conf/a.yaml、删除了conf/b.yaml等5处改动；#2：conf/train.yaml中移除了lr）")])
def test_config_changes_of_several_prs_are_told_per_pr_with_how_many_more(tmp_path, lang, shown):
    """verl 2026-W18 listed four deleted files of #6162 under "#6200, #6162, #6126" and
    nothing of the other two: the first four items of all the PRs' evidence, no count."""
    rep = _week_report(tmp_path, [
        ("[cfg] chore: drop the old configs (#1)", "2026-03-02T10:00:00+00:00", lambda b: {f"conf/{c}.yaml": None for c in "abcde"}),
        ("[cfg] chore: drop lr (#2)", "2026-03-03T10:00:00+00:00", lambda b: {"conf/train.yaml": "sched: cos\n"}),
    ], init=lambda b: {"conf/train.yaml": "sched: cos\nlr: 1\n", **{f"conf/{c}.yaml": "x: 1\n" for c in "abcde"}}, lang=lang)
    risk = next(r for r in rep.risks if r.kind == "config_change")
    assert sorted(risk.prs) == [1, 2] and shown in risk.text, risk.text


@pytest.mark.parametrize("lang, shown", [("en", "lr removed from conf/train.yaml"), ("zh", "conf/train.yaml中移除了lr")])
def test_removed_config_key_is_named_in_the_report(tmp_path, lang, shown):
    """A key removed without a replacement (no rename) is a risk the report names.
    (The message template has a `{key}` field of its own, which once collided with
    the catalog's argument and crashed every week that removed a key.)"""
    from repobrief.pipeline import generate_report, render_report

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("init", "2026-01-05T10:00:00+00:00", {"conf/train.yaml": "sched: cos\nlr: 1\n"})
    b.commit("drop lr (#1)", "2026-03-02T10:00:00+00:00", {"conf/train.yaml": "sched: cos\n"})
    settings = load_settings(None, env={}, overrides={"name": "o/r", "language": lang})
    rep = generate_report(str(b.path), settings, parse_week("2026-W10", parse_timezone("UTC")))
    risk = next(r for r in rep.risks if r.kind == "config_change")
    assert risk.prs == [1] and risk.severity == "high"
    assert shown in risk.text and shown in render_report(rep, "md")


def test_keys_removed_from_toml_json_and_ini_configs_are_risks(tmp_path):
    """Configuration is not only YAML: a key renamed in a TOML file, one dropped from
    a JSON file and one from an INI file (either of its forms) are named as such;
    values that change, keys quoted in TOML and data files outside config folders are not."""
    from repobrief.pipeline import generate_report

    b = GitRepoBuilder(tmp_path / "r")
    b.commit("init", "2026-01-05T10:00:00+00:00", {
        "configs/train.toml": '[optim]\nlr = 0.1\n"warm.up" = 10\nepochs = 3\n',
        "conf/model.json": '{\n  "hidden": 12,\n  "layers": 4\n}\n',
        "conf/app.ini": "[net]\nretries: 3\ntimeout = 4\n",
        "data/points.json": '{\n  "x": 1\n}\n',
    })
    b.commit("refactor: tidy settings (#1)", "2026-03-02T10:00:00+00:00", {
        "configs/train.toml": "[optim]\nlearning_rate = 0.1\nepochs = 4\n",
        "conf/model.json": '{\n  "hidden": 16\n}\n',
        "conf/app.ini": "[net]\n",
        "data/points.json": '{\n  "y": 1\n}\n',
    })
    settings = load_settings(None, env={}, overrides={"name": "o/r", "language": "en"})
    rep = generate_report(str(b.path), settings, parse_week("2026-W10", parse_timezone("UTC")))
    risk = next(r for r in rep.risks if r.kind == "config_change")
    assert risk.prs == [1] and risk.severity == "high"
    assert sorted(risk.evidence) == sorted([
        "config key renamed lr -> learning_rate in configs/train.toml",
        "config key removed: warm.up (configs/train.toml)",
        "config key removed: layers (conf/model.json)",
        "config key removed: retries (conf/app.ini)",
        "config key removed: timeout (conf/app.ini)",
    ])
    # The values that change are defaults users get without changing a setting.
    (default,) = [r for r in rep.risks if r.kind == "default_change"]
    assert default.prs == [1] and sorted(default.evidence) == [
        "config default changed: epochs in configs/train.toml: 3 -> 4",
        "config default changed: hidden in conf/model.json: 12 -> 16",
    ]


@pytest.mark.parametrize("lines, changed", [
    (["-  lr: 0.1", "+  lr: 0.2"], ["lr: 0.1 -> 0.2"]),
    (["-  lr: 0.1  # rate", "+  lr: 0.1 # the rate"], []),  # a comment
    (["-  name: 'a'", '+  name: "a"'], []),  # quotes
    (['-  "n": 1,', '+  "n": 1'], []),  # a trailing comma
    (['-  tag: "a #1"', '+  tag: "a #2"  # note'], ["tag: a #1 -> a #2"]),  # `#` inside quotes
    (["-  actor:", "+  actor:"], []),  # a block's key
    (["-  lr: 0.1", "+    lr: 0.2"], []),  # another indent: another key
    (["-  lr: 0.1", "-  lr: 0.3", "+  lr: 0.2"], []),  # which one changed is not known
    (["+  lr: 0.2", "-  lr: 0.1"], []),  # added, then removed: two changes, neither in place
    (["-    batch: int = 256", "+    batch: int = 128"], ["batch: 256 -> 128"]),  # a dataclass field
    (["-  mode: " + "x" * 60, "+  mode: y"], ["mode: " + "x" * 39 + "… -> y"]),
    (["-a:", "-  lr: 0.1", "+b:", "+  lr: 0.2"], []),  # a setting moved to another block: no default changed
    (["-a:", "-  lr: 0.1", "+a:  # the actor", "+  lr: 0.2"], ["lr: 0.1 -> 0.2"]),  # the same block
    (["-a:", "-  x:", "-    lr: 0.1", "-  y: 1", "+a:", "+  x:", "+    lr: 0.2", "+  y: 2"],
     ["lr: 0.1 -> 0.2", "y: 1 -> 2"]),  # a sibling after a nested block is under the outer one
    (["-  lr: 0.1", "+b:", "+  lr: 0.2"], []),  # from the block the hunk starts in to a new one
])
def test_a_default_changed_is_a_key_given_another_value_in_place(lines, changed):
    """`changed_defaults` reads a key whose value a config file changes where it stands;
    what git shows as removed and added for other reasons is no new default."""
    from repobrief.analysis.risks import changed_defaults

    path = "pkg/config/x.py" if "int" in lines[0] else "pkg/config/x.json" if '"' in lines[0][:5] else "pkg/config/x.yaml"
    diff = "\n".join([f"diff --git a/{path} b/{path}", *lines])
    prefix = "config default changed: "
    assert [e.removeprefix(prefix).replace(f" in {path}:", ":") for e in changed_defaults(diff)] == changed
    # Examples and recipes hold values no user inherits; a manifest holds no settings.
    assert changed_defaults(diff.replace(path, "examples/" + path)) == []
    assert changed_defaults(diff.replace(path, "environment.yml")) == []


def test_a_hostile_config_line_is_read_at_once():
    """A diff's line is anyone's text: a value of 200,000 characters made of ` #` after
    an open quote (each one a comment's possible start) is read in one pass."""
    from repobrief.analysis.risks import changed_defaults

    value = 'mode: "' + " #" * 100_000
    diff = f"diff --git a/conf/a.yaml b/conf/a.yaml\n-{value}x\n+{value}y\n-lr: 1\n+lr: 2"
    assert finishes(changed_defaults, diff, within=5) == ["config default changed: lr in conf/a.yaml: 1 -> 2"]


def test_version_strings_that_disagree(tmp_path):
    from repobrief.pipeline import generate_report

    b = GitRepoBuilder(tmp_path / "v")
    b.commit("release 0.8.0", "2026-02-01T10:00:00+00:00", {"README.md": "myproj\n", "requirements.txt": "torch==2.5.0\n"})
    from gitrepo import git

    git(b.path, "tag", "v0.8.0")
    b.commit("docs: install guide (#1)", "2026-03-02T10:00:00+00:00",
             {"docs/install.md": "pip install myproj==0.7.0\nneeds torch==2.5.0\n"})
    b.commit("bump torch (#2)", "2026-03-03T10:00:00+00:00", {"requirements.txt": "torch==2.6.0\n"})
    b.commit("docs: quick start (#3)", "2026-03-04T10:00:00+00:00", {"docs/quick.md": "pip install myproj==0.8.0\n"})
    settings = load_settings(None, env={}, overrides={"name": "o/myproj", "language": "en"})
    week = parse_week("2026-W10", parse_timezone("UTC"))
    rep = generate_report(str(b.path), settings, week)
    risk = next(r for r in rep.risks if r.kind == "version_mismatch")
    assert set(risk.prs) == {1, 2}
    text = " ".join(risk.evidence)
    assert "torch 2.5.0" in text and "torch 2.6.0" in text and "myproj 0.7.0" in text and "v0.8.0" in text
    # A release tagged after the week does not make the week's up-to-date docs stale.
    b.commit("release 0.9.0 (#9)", "2026-04-01T10:00:00+00:00", {"README.md": "myproj 0.9\n"})
    git(b.path, "tag", "v0.9.0")
    later = generate_report(str(b.path), settings, week)
    assert [(r.prs, r.evidence) for r in later.risks] == [(r.prs, r.evidence) for r in rep.risks]


def test_core_path_globs_in_detector_and_text(tmp_path):
    from repobrief.pipeline import generate_report

    b = GitRepoBuilder(tmp_path / "g")
    b.commit("init", "2026-01-05T10:00:00+00:00", {"pkg/core/a.py": b.lines(20), "pkg/io/b.py": b.lines(5)})
    b.commit("small (#1)", "2026-03-02T10:00:00+00:00", {"pkg/io/b.py": b.lines(3)})
    b.commit("refactor: rework the core (#2)", "2026-03-03T10:00:00+00:00", {"pkg/core/a.py": b.lines(300)})
    settings = load_settings(None, env={}, overrides={"name": "o/r", "language": "en", "core_paths": ["pkg/core/**"]})
    rep = generate_report(str(b.path), settings, parse_week("2026-W10", parse_timezone("UTC")))
    risk = next(r for r in rep.risks if r.kind == "core_path")
    assert risk.prs == [2]
    assert "#2: 320 lines in pkg/core/**" in risk.text  # 300 added, the 20 old lines replaced


def test_a_renderer_from_another_package_is_found_by_its_entry_point(tmp_path, monkeypatch):
    """Built-in names resolve without scanning the installed packages (start-up time);
    a name that is not built in is looked up in the `repobrief.renderers` entry points."""
    from repobrief.cli.report import parse_formats
    from repobrief.registry import RENDERERS, Registry

    (tmp_path / "shout_renderer.py").write_text("def render(report):\n    return report.week.upper()\n")
    dist = tmp_path / "shout_renderer-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-renderer\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[repobrief.renderers]\nshout = shout_renderer:render\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    fresh = Registry("renderer", {"md": "repobrief.render.markdown:render"})
    monkeypatch.setattr(RENDERERS, "_paths", dict(RENDERERS._paths))
    monkeypatch.setattr(RENDERERS, "_loaded", dict(RENDERERS._loaded))
    monkeypatch.setattr(RENDERERS, "_entry_points_read", False)

    assert "md" in fresh and not fresh._entry_points_read
    assert parse_formats("md,json") == ["md", "json"] and not RENDERERS._entry_points_read
    assert parse_formats("md,shout") == ["md", "shout"]
    assert RENDERERS.get("shout")(type("R", (), {"week": "2026-w26"})()) == "2026-W26"
    assert "shout" in fresh and "shout" in fresh.names()
    with pytest.raises(UsageError, match="unknown format 'shuot'.*shout") as e:
        parse_formats("shuot")
    assert e.value.hint == "did you mean 'shout'?"


def _glob_reference(path: str, globs: list[str]) -> bool:
    from fnmatch import fnmatch

    for g in globs:
        if any(ch in g for ch in "*?["):
            if fnmatch(path, g) or (g.endswith("/**") and path.startswith(g[:-3] + "/")):
                return True
        elif path == g or path.startswith(g.rstrip("/") + "/"):
            return True
    return False


_PATH_PARTS = ["verl", "trainer", "config", "x.py", "a.yaml", "docs", "*", "**", "?", "[ab]", "", "/"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PATH_PARTS), min_size=1, max_size=4).map("/".join), max_size=4),
       st.lists(st.sampled_from(_PATH_PARTS), min_size=1, max_size=5).map("/".join))
def test_core_path_globs_match_as_fnmatch_and_directory_prefixes(globs, path):
    """Globs are compiled once per list; a path matches exactly when a glob matches it
    as `fnmatch` does, or it lies under a plain path or a `dir/**`."""
    from repobrief.analysis.files import path_matches

    assert path_matches(path, globs) == _glob_reference(path, globs)


def test_a_run_over_clones_warms_up_without_scanning_installed_packages(tmp_path, monkeypatch):
    """The run's parent loads what its jobs need before forking; a clone's path is no
    backend name, so nothing sends it to the (slow) entry-point scan."""
    from repobrief.config import Settings
    from repobrief.executors import _warm_imports
    from repobrief.registry import ENGINES, RENDERERS, SOURCES
    from repobrief.team import RepoJob

    for reg in (SOURCES, ENGINES, RENDERERS):
        monkeypatch.setattr(reg, "_entry_points_read", False)
    window = resolve_window("2026-W04", None, None, parse_timezone("UTC"))
    jobs = [RepoJob(i, f"r{i}", str(tmp_path / f"clone{i}"), Settings(), window, ["en"], ["md", "json"], str(tmp_path))
            for i in range(2)]
    _warm_imports(jobs)
    assert not (SOURCES._entry_points_read or ENGINES._entry_points_read or RENDERERS._entry_points_read)


_WRITE_UNTIL_FULL = """
import resource, signal, sys
from pathlib import Path
from repobrief.errors import RepobriefError
from repobrief.output import write_atomically

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # a disk that fills up half way
out = Path(sys.argv[1])
try:
    write_atomically({out / "a.md": "small", out / "b.json": "x" * 100_000})
except RepobriefError as e:
    print(e)
"""


def test_a_folder_removed_between_writes_is_made_again(tmp_path):
    """A process lists each folder once; when the folder is removed after that (a user
    cleaning up during a long run), the next write makes it again instead of failing."""
    import shutil

    from repobrief.output import write_atomically

    out = tmp_path / "reports" / "weekly"
    write_atomically({out / "a.md": "first"})
    shutil.rmtree(tmp_path / "reports")
    write_atomically({out / "a.md": "second", out / "b.json": "{}"})
    assert (out / "a.md").read_text() == "second" and (out / "b.json").read_text() == "{}"
    assert sorted(p.name for p in out.iterdir()) == ["a.md", "b.json"]


def test_a_named_file_that_is_a_link_or_a_fifo_is_written_as_a_redirect_would(tmp_path):
    """`batch export -o FILE` replaced a link with a plain file (its target never written)
    and a FIFO with a file (its reader got nothing); `-o /dev/full` turned the device into
    a file. The one file a user names is now written through a link and into a FIFO, also
    through a link to one, as /dev/stdout is. (A device is the FIFO's case: not tested on
    one, which a regression would replace.)"""
    import threading

    from repobrief.output import write_file

    served = tmp_path / "served"
    served.mkdir()
    (served / "a.jsonl").write_text("last week's")
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.jsonl").symlink_to(served / "a.jsonl")
    (out / "b.jsonl").symlink_to(served / "b.jsonl")  # dangling: the file it names is made
    write_file(out / "a.jsonl", "this week's", "hint")
    write_file(out / "b.jsonl", "new", "hint")
    assert (out / "a.jsonl").is_symlink() and (out / "b.jsonl").is_symlink()
    assert (served / "a.jsonl").read_text() == "this week's" and (served / "b.jsonl").read_text() == "new"
    assert sorted(p.name for p in served.iterdir()) == ["a.jsonl", "b.jsonl"]  # no temporary file left
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (out / "stdout").symlink_to(fifo)
    for target in (fifo, out / "stdout"):
        got: list[str] = []
        reader = threading.Thread(target=lambda into=got: into.append(fifo.read_text()), daemon=True)
        reader.start()
        write_file(target, '{"a":1}\n', "hint")
        reader.join(10)
        assert got == ['{"a":1}\n'] and stat.S_ISFIFO(os.stat(fifo).st_mode) and (out / "stdout").is_symlink()


def test_a_link_in_a_folder_repobrief_writes_is_replaced_not_followed(tmp_path):
    """A link planted in a site's folder (a gh-pages checkout) pointing outside it: the
    page replaces the link, and the file it pointed to is left alone."""
    from repobrief.output import write_atomically

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").symlink_to(victim)
    write_atomically({site / "index.html": "<html>"})
    assert victim.read_text() == "keep me"
    assert not (site / "index.html").is_symlink() and (site / "index.html").read_text() == "<html>"


def test_a_write_that_fails_half_way_leaves_no_file_behind(tmp_path):
    """A full disk while writing the second report: the first is not placed, the old
    files stay, and no temporary file is left in the folder."""
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    (out / "a.md").write_text("last week's", encoding="utf-8")
    got = subprocess.run([sys.executable, "-c", _WRITE_UNTIL_FULL, str(out)], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert f"cannot write {out / 'b.json'}: File too large" in got.stdout  # the report, not its temporary file
    assert sorted(p.name for p in out.iterdir()) == ["a.md"]
    assert (out / "a.md").read_text(encoding="utf-8") == "last week's"


def test_english_counts_of_one_are_singular_but_titles_stay_as_written(tmp_path):
    """"1 PR", "1 line": the templates' own words take the singular; a PR title that
    says "1 files" is quoted as its author wrote it."""
    rep = _week_report(tmp_path, [("fix: keep 1 files per 1 commits (#1)", "2026-03-02T10:00:00+00:00",
                                   lambda b: {"pkg/core/b.py": "one line\n"})])
    assert "Keep 1 files per 1 commits" in rep.analyses[1].key_contribution
    summary = rep.sections.summary
    assert "merged 1 PR " in summary and "adding 1 line " in summary
    assert "1 PRs" not in summary and "1 lines" not in summary
    from repobrief.i18n import catalog

    assert catalog("en").t("summary.focus_area", name="ci", count="1") == "ci (1 PR)"


def test_one_pr_or_a_pin_and_its_revert_is_no_concentration(tmp_path):
    """A quiet week "concentrated on CI (1 PR)", and verl 2026-W08 "on docker (2 PRs)": a
    torch-npu pin and its revert, which changed nothing by the week's end."""
    rep = _week_report(tmp_path, [
        ("[docker] chore: pin torch-npu (#5)", "2026-03-02T10:00:00+00:00", lambda b: {"docker/Dockerfile": "a\n"}),
        ('Revert "[docker] chore: pin torch-npu (#5)" (#6)', "2026-03-03T10:00:00+00:00", lambda b: {"docker/Dockerfile": "b\n"}),
        ("[trainer] fix: a (#7)", "2026-03-04T10:00:00+00:00", lambda b: {"pkg/core/t.py": "x\n"}),
    ])
    assert "concentrated on" not in rep.sections.summary


def test_one_direct_commit_is_singular_too(tmp_path):
    rep = _week_report(tmp_path, [("feat: a (#1)", "2026-03-02T10:00:00+00:00", lambda b: {"pkg/core/b.py": "x\n"}),
                                  ("tweak directly", "2026-03-03T10:00:00+00:00", lambda b: {"pkg/core/c.py": "y\n"})])
    assert " in all, with 1 more commit that landed directly without a PR" in rep.sections.summary
    from repobrief.i18n import catalog

    only = catalog("en").t("summary.only_direct", repository="r", range="x", count="1")
    assert only == "No pull requests were merged into r from x, but 1 commit landed directly on the default branch, without a PR and so without a review record."
    assert "but 2 commits landed" in catalog("en").t("summary.only_direct", repository="r", range="x", count="2")
    assert catalog("en").t("rec.direct", count="1").startswith("1 commit landed on the default branch")


def test_both_catalogs_have_the_same_messages_with_plain_fields():
    """A message missing in one language fails here rather than in the report of the
    one week that needs it. (Fields may differ: "and 3 more" / "等5个" take different
    numbers, and callers pass both.)"""
    from repobrief.i18n import _pieces, catalog

    def leaves(node, path=()):
        if isinstance(node, dict):
            for k, v in node.items():
                yield from leaves(v, (*path, k))
        else:
            yield ".".join(path), node

    en, zh = dict(leaves(catalog("en").m)), dict(leaves(catalog("zh").m))
    assert en.keys() == zh.keys()
    for key, text in en.items():
        if isinstance(text, str):
            _pieces(text, True), _pieces(zh[key], False)  # raises on `{field:spec}`, which t() does not fill


def test_a_threshold_of_minus_zero_is_zero():
    """`--threshold -0` once printed "importance ≥ -0" in the report's table note."""
    assert str(load_settings(None, env={"REPOBRIEF_THRESHOLD": "-0"}).threshold) == "0.0"


def test_a_pr_that_only_changes_requirements_or_constraints_is_a_dependency_change(tmp_path):
    """requirements*.txt and constraints*.txt are manifests: a PR touching only them is typed deps,
    not docs (and is not halved as 'docs/tests/CI/examples only')."""
    commits = [
        ("Bump torch from 2.5 to 2.6 (#1)", "2026-03-02T10:00:00+00:00", lambda b: {"requirements.txt": "torch==2.6\n"}),
        ("pin numpy below 2 (#2)", "2026-03-03T10:00:00+00:00", lambda b: {"docs/constraints-gpu.txt": "numpy<2\n"}),
        ("update the release notes (#3)", "2026-03-04T10:00:00+00:00", lambda b: {"docs/notes.txt": "typo fixed\n"}),
        ("Bump the python-requirements group in /requirements (#4)", "2026-03-05T10:00:00+00:00",
         lambda b: {"requirements/docs.txt": "sphinx==8.0\n", "requirements/tests.in": "pytest\n"}),
    ]
    rep = _week_report(tmp_path, commits)
    types = {n: a.type for n, a in rep.analyses.items()}
    assert types == {1: "deps", 2: "deps", 3: "docs", 4: "deps"}
    assert not any(r.code == "minor_only" for r in rep.analyses[1].importance_reasons)
    assert any(r.kind == "dependency_change" and 1 in r.prs for r in rep.risks)


def test_a_week_whose_diffs_and_titles_are_padded_with_spaces_is_reported_at_once(tmp_path):
    """Diffs and commit subjects are anyone's text: a pyproject line `+version = 1`
    padded with spaces before text it does not expect took the own-version check 18 s
    at 32,000 spaces, a `+torch` line the version-pin pattern seconds, and a title
    "bump from from from …" with no "to" the routine-bump check seconds more (the three:
    17 s at 40,000). The week's report still reads them."""
    pad = " " * 60_000
    commits = [
        ("chore: set the version (#1)", "2026-03-02T10:00:00+00:00",
         lambda b: {"pyproject.toml": f'[project]\nversion = "1.2"{pad},{pad}#\n'}),
        ("deps: pin torch (#2)", "2026-03-03T10:00:00+00:00",
         lambda b: {"requirements.txt": f"torch{pad}x 2.6\ntorch==2.5\n"}),
        ("bump " + "from " * 8_000 + "the runner (#3)", "2026-03-04T10:00:00+00:00",
         lambda b: {".github/workflows/ci.yml": b.lines(2)}),
    ]
    rep = finishes(lambda c: _week_report(tmp_path, c), commits, within=15)  # seconds before; now a second
    assert sorted(rep.analyses) == [1, 2, 3]
    assert any(r.kind == "dependency_change" and 2 in r.prs for r in rep.risks)


_SIGTERM_BETWEEN_RENAMES = """
import os, signal, sys
from pathlib import Path
from repobrief.output import write_atomically

replace = os.replace
def replace_then_sigterm(src, dst):  # the signal comes after the first file was moved aside
    replace(src, dst)
    os.replace = replace
    os.kill(os.getpid(), signal.SIGTERM)
os.replace = replace_then_sigterm
out = Path(sys.argv[1])
write_atomically({out / "a.md": "new a", out / "b.json": "new b"})
print("SIGTERM was lost")
"""


def test_sigterm_between_the_renames_waits_for_the_last_one(tmp_path):
    """SIGTERM (timeout, CI) in the middle of replacing a week's files: the process
    still stops, but after every file is the new one, with nothing left aside."""
    import signal
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    (out / "a.md").write_text("old a", encoding="utf-8")
    (out / "b.json").write_text("old b", encoding="utf-8")
    got = subprocess.run([sys.executable, "-c", _SIGTERM_BETWEEN_RENAMES, str(out)], capture_output=True, text=True)
    assert got.returncode == -signal.SIGTERM, got.stdout + got.stderr
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == {"a.md": "new a", "b.json": "new b"}


def test_a_write_killed_half_way_is_repaired_by_the_next_one(tmp_path):
    """SIGKILL or a power loss between the renames left a report moved aside and
    temporary files: the next write of the same files puts the old report back
    while it writes, and leaves no stray file; other files in the folder stay."""
    from repobrief.output import write_atomically

    out = tmp_path / "out"
    out.mkdir()
    (out / ".a.md.old").write_text("old a", encoding="utf-8")  # a.md itself is missing
    (out / ".a.md.k2j4x9.tmp").write_text("new a, not renamed", encoding="utf-8")
    (out / "b.json").write_text("old b", encoding="utf-8")
    (out / ".b.json.old").write_text("older b", encoding="utf-8")
    (out / ".other.md.old").write_text("not ours", encoding="utf-8")
    write_atomically({out / "a.md": "new a", out / "b.json": "new b"})
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == {
        "a.md": "new a", "b.json": "new b", ".other.md.old": "not ours"}


def test_first_sentence_skips_a_paragraph_that_is_only_an_image_and_reads_long_marker_runs():
    body = '<img src="https://x/y.png" width="600">\n\nThis PR adds a faster rollout path for long prompts. More.'
    assert first_sentence(body) == "This PR adds a faster rollout path for long prompts."
    # 60,000 characters of unclosed emphasis once took the Markdown patterns 100 s.
    hostile = first_sentence("Intro text here without a stop" + " *a" * 20000)
    assert hostile.startswith("Intro text here without a stop *a *a") and 200 <= len(hostile) <= 220


def test_references_outside_the_week_are_plain_and_a_revert_of_a_revert_names_its_title(tmp_path):
    from repobrief.render.markdown import render

    rep = _week_report(tmp_path, [
        ('Revert "feat: old thing (#5)" (#6)', "2026-02-02T10:00:00+00:00", lambda b: {"pkg/core/b.py": "x\n"}),
        ("feat: follow-up (#1)\n\nFollow-up to PR #3 and issue #4, like verl#9 was.", "2026-03-02T10:00:00+00:00",
         lambda b: {"pkg/core/c.py": b.lines(30)}),
        ('Revert "Revert "feat: old thing (#5)" (#6)" (#7)', "2026-03-03T10:00:00+00:00",
         lambda b: {"pkg/core/b.py": "y\n"}),
    ])
    md = render(rep)
    # the kind an author named stays; a bare number says it may be either
    assert "Follow-up to PR 3 and issue 4, like verl issue/PR 9 was." in md
    assert "PR issue/PR" not in md and "issue issue/PR" not in md
    # after CJK text too, which a regex's \b takes for letters (flask's "Issue #3226: …" in zh)
    from types import SimpleNamespace

    from repobrief.compose import plain_foreign_refs
    from repobrief.i18n import catalog

    zh = SimpleNamespace(prs=[SimpleNamespace(number=3233)], catalog=catalog("zh"))
    assert plain_foreign_refs(zh, "例如Move（#3237）和Issue #3226: Remove（#3233）") == "例如Move（issue/PR 3237）和Issue 3226: Remove（#3233）"
    assert 'It reverts an earlier PR, “Revert "feat: old thing (issue/PR 5)"”.' in md


_SIGTERM_WHILE_STAGING = """
import os, signal, sys, tempfile
from pathlib import Path
from repobrief import output

if sys.argv[2] == "run-worker":  # a `run` worker: SIGTERM's default action
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
else:  # a backfill worker: SIGTERM ends it at once
    signal.signal(signal.SIGTERM, lambda s, f: os._exit(128 + s))
mkstemp = tempfile.mkstemp
def mkstemp_then_sigterm(*a, **k):  # the parent's stop lands while the second file is staged
    made = mkstemp(*a, **k)
    if len(list(Path(sys.argv[1]).glob(".*.tmp"))) == 2:
        os.kill(os.getpid(), signal.SIGTERM)
    return made
output.tempfile.mkstemp = mkstemp_then_sigterm
out = Path(sys.argv[1])
output.write_atomically({out / "a.md": "new a", out / "b.json": "new b"})
print("SIGTERM was lost")
"""


@pytest.mark.parametrize("worker", ["run-worker", "backfill-worker"])
def test_a_worker_stopped_while_it_stages_its_files_leaves_no_temporary_file(tmp_path, worker):
    import signal
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    (out / "a.md").write_text("old a", encoding="utf-8")
    got = subprocess.run([sys.executable, "-c", _SIGTERM_WHILE_STAGING, str(out), worker], capture_output=True, text=True)
    assert got.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM) and "lost" not in got.stdout, got.stderr
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == {"a.md": "new a", "b.json": "new b"}


def test_a_tie_ranks_just_below_the_weeks_it_ties():
    from repobrief.analysis.themes import rank_in

    assert [rank_in(6, [5, 6, 3]), rank_in(7, [5, 6, 3]), rank_in(5, [5] * 12), rank_in(2, [5, 6, 3]), rank_in(1, [])] == \
        [2, 1, 2, 4, None]


def test_a_direct_committer_known_by_e_mail_is_not_new(tmp_path):
    """The same person under a new display name: known by e-mail as a PR author, and so
    as a direct committer too."""
    b = GitRepoBuilder(tmp_path / "r")
    b.commit("Initial work (#1)", "2026-02-02T10:00:00+00:00", {"f.py": "a\n"}, author="Bob Smith", email="bob@x.org")
    b.commit("Tweak the thing directly", "2026-03-03T10:00:00+00:00", {"f.py": "b\n"}, author="bsmith", email="bob@x.org")
    settings = load_settings(None, env={}, overrides={"name": "o/r", "language": "en"})
    from repobrief.pipeline import generate_report

    rep = generate_report(str(b.path), settings, parse_week("2026-W10", parse_timezone("UTC")))
    assert (rep.stats["contributors"], rep.stats["first_time_contributors"]) == (1, 0)


def test_a_chain_of_reverts_within_the_week_leaves_the_change_undone_when_it_is_odd(tmp_path):
    """#1 lands, #2 reverts it, #3 re-lands it (reverts #2), #4 reverts #3: at the week's end
    #1 is undone, as is #3; #2 and #4 are in effect and say what they revert."""
    title = "feat: add feature X (#1)"
    commits = [(title, "2026-03-02T10:00:00+00:00", lambda b: {"pkg/core/x.py": b.lines(40)})]
    for n in (2, 3, 4):
        title = f'Revert "{title}" (#{n})'
        commits.append((title, f"2026-03-0{n + 1}T10:00:00+00:00", lambda b, n=n: {"pkg/core/x.py": b.lines(40 + n)}))
    rep = _week_report(tmp_path, commits)
    assert sorted(n for item in rep.sections.key_changes for n in item.prs) == [2, 4]
    texts = " ".join(item.text for item in rep.sections.key_changes)
    assert "merged earlier this week" in texts and "an earlier PR" not in texts


def test_a_one_day_range_reads_as_that_day_in_every_message():
    """A one-day range's messages read "this day" / "当天", never "this 1-day period" /
    "这1天": the `_range` ones without a `_day` wording are rewritten by the catalog."""
    from repobrief.i18n import catalog

    en, zh = catalog("en"), catalog("zh")
    assert en.period("summary.focus", 1, areas="trainer (3 PRs)") == "This day concentrated on trainer (3 PRs)."
    assert en.period("summary.focus", 14, areas="trainer") == "This 14-day period concentrated on trainer."
    assert en.period("summary.delta_down", 1, diff="5", previous="10") == "5 fewer than the 10 of the day before"
    assert zh.period("trends.compare", 1, previous="2", weeks="12", mean="1.5") == "前一天2个，此前12天平均每天1.5个"
    assert en.period_template("html.all_prs", 1) == "All PRs of this day"

    def messages(d: dict, pre: str = ""):
        for k, v in d.items():
            yield from messages(v, f"{pre}{k}.") if isinstance(v, dict) else [(pre + k, v)]

    for cat in (en, zh):
        keys = dict(messages(cat.m))
        ranged = [k.removesuffix("_range") for k in keys if k.endswith("_range") and k[:-6] + "_day" not in keys]
        assert len(ranged) > 30
        for key in ranged:
            template = cat.period_template(key, 1)
            assert template is not None and "{days}" not in template and "1-day" not in template, (cat.lang, key)
            assert "这1天" not in template and "1天" not in template, (cat.lang, key)


_REF_PARTS = ["#", "#3", "#12", "&", "PR ", "pr", "Pull Request ", "issue", "ISSUE\t", " ", "x", "1", "é", "_", "(", ")",
              "&#", "##", "verl"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_REF_PARTS), max_size=12).map("".join))
def test_foreign_refs_are_found_as_a_scan_of_the_whole_text_finds_them(text):
    """`plain_foreign_refs` starts its regex only near each `#`: the same references
    are rewritten as a substitution over the whole text rewrites."""
    from types import SimpleNamespace

    from repobrief.compose import _HASH_REF, plain_foreign_refs, plain_ref
    from repobrief.i18n import catalog

    facts = SimpleNamespace(prs=[SimpleNamespace(number=3)], catalog=catalog("en"))

    def plain(m):
        return m[0] if int(m["number"]) == 3 else plain_ref(facts.catalog, m)

    assert plain_foreign_refs(facts, text) == _HASH_REF.sub(plain, text)


# Shortcuts of the per-PR analysis, held to the plain computation they stand for.
_PROSE_TOKENS = ["http://x.y/z", "https://", "issue", "Fixes", "RFC", "related", "#12", "12", " ", "  ", "\t", "\n", ":",
                 "word", "abcdefgh", "x", "é", "日本語", "<b>", "[t](u)", "*", "_", "`", "\\", ".", "ſ", "ı", "İ"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PROSE_TOKENS), max_size=40).map("".join))
def test_too_short_counting_a_head_agrees_with_counting_the_whole(text):
    import re

    from repobrief.conventions import _LINKISH, _too_short

    assert _too_short(text) == (len(re.sub(r"\W+", "", _LINKISH.sub("", text))) < 12)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([" ", "\n", "\t", "\u3000", "a", "bc", "word "]), max_size=120).map("".join))
def test_has_test_evidence_reading_a_head_agrees_with_reading_the_whole(tests):
    import re

    from repobrief.conventions import CleanBody

    assert CleanBody("", "", tests).has_test_evidence == (len(re.sub(r"\s+", " ", tests).strip()) >= 15)


@pytest.mark.parametrize(
    "title, number, desc",
    [
        ("a (#12) and b (#34)", 34, "a (#12) and b"),
        ("see (#12) later", None, "see (#12) later"),
        ("too long (#1234567890)", None, "too long (#1234567890)"),
        ("spaced  (#7)  ", 7, "spaced"),
        ("(#5)", 5, "(#5)"),
    ],
)
def test_parse_title_reads_only_a_final_pr_number(title, number, desc):
    p = parse_title(title)
    assert (p.pr_number, p.description) == (number, desc)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["default", "DeFault", "defaults", " ", "\n", "opt-in", "opt-ın", "OPT-İN", "İ", "ſ",
                                 "not enabled by ", "disabled by ", "off by ", "is now enabled by ", "now ", "make ",
                                 "the ", "x" * 30, "changes ", "becomes ", "= false", ": off", "a"]), max_size=25).map("".join))
def test_default_patterns_searched_near_their_anchor_agree_with_a_full_search(text):
    from repobrief.analysis.scoring import _DEFAULT_IN_BODY, OPT_IN, _search_near

    low = text.lower()
    assert _search_near(OPT_IN, text, low, ("default", "opt-"), 15) == bool(OPT_IN.search(text))
    assert _search_near(_DEFAULT_IN_BODY, text, low, ("default",), 50) == bool(_DEFAULT_IN_BODY.search(text))


def test_what_kind_of_file_a_path_is():
    """One cached decision per path answers every predicate; the kinds exclude each
    other where a reader would expect (a requirements file is a manifest, not prose;
    a config under tests/ or docs/ is a test or a doc, not configuration)."""
    from repobrief.analysis import files as fk

    expected = {
        "requirements/docs.txt": {"dependency"},
        "docs/conf.py": {"doc", "minor"},
        "tests/conf.yaml": {"test", "minor"},
        ".github/workflows/ci.yml": {"ci", "minor"},
        "verl/trainer/config/ppo.yaml": {"config"},
        "verl/utils/config.py": {"config", "source"},
        "pkg/api.py": {"source", "api"},
        "api.py": {"source"},
        "examples/run.sh": {"source", "example", "minor"},
        "verl/experimental/async/shell/run_8gpu.sh": {"source", "example", "minor"},
        "setup.py": {"dependency", "source"},
        "Dockerfile.cuda": {"dependency"},
        "README.md": {"doc", "minor"},
        "verl/trainer/main.py": {"source"},
    }
    names = ("test", "ci", "doc", "dependency", "config", "source", "api", "example", "minor")
    for path, kinds in expected.items():
        assert {n for n in names if getattr(fk, f"is_{n}")(path)} == kinds, path


def test_a_breaking_label_marks_a_pr_breaking_as_its_title_would():
    """A GitHub `breaking` label once changed nothing: a PR whose title had lost its
    [BREAKING] tag was reported as an ordinary change."""
    from repobrief.analysis.classify import classify
    from repobrief.config import LabelRule, Settings
    from repobrief.models import PullRequest

    def pr(labels: list[str]) -> PullRequest:
        return PullRequest(6823, "Enable V1 trainer by default", "", "dev", datetime(2026, 6, 24, tzinfo=UTC), labels=labels)

    plain = Settings()
    for labels in (["breaking"], ["trainer", "Breaking Change"], ["kind/breaking"], ["type: breaking-change"], ["semver-major"]):
        assert classify(pr(labels), plain).breaking, labels
    for labels in ([], ["trainer", "cfg"], ["non-breaking"], ["breaking-news"]):
        assert not classify(pr(labels), plain).breaking, labels
    ruled = Settings(labels=[LabelRule(label="api/changed", breaking=True)])
    assert classify(pr(["API/changed"]), ruled).breaking and not classify(pr(["api/changed"]), plain).breaking


def test_a_platform_named_within_a_folder_name_is_work_on_that_platform():
    """verl 2025-W38: the PRs under `examples/ascend_tutorial/` were a theme of their own
    beside "Ascend NPU", which counted only PRs whose title or folder said so exactly."""
    from repobrief.analysis.classify import classify
    from repobrief.config import Settings
    from repobrief.models import FileChange, PullRequest

    def terms(path: str) -> set[str]:
        pr = PullRequest(3514, "Update the quick start", "", "dev", datetime(2026, 6, 24, tzinfo=UTC),
                         files=[FileChange(path, 3, 1)])
        return classify(pr, Settings(), "verl").terms

    assert "npu" in terms("docs/ascend_tutorial/quick_start.rst") and "npu" in terms("verl/workers/fsdp-ascend/x.py")
    assert "rocm" in terms("examples/amd_tutorial/run.sh") and "multimodal" in terms("verl/models/qwen2_vl/m.py")
    assert "npu" not in terms("docs/quick_start/ascending.rst")  # a word of the name, not a part of a word


def test_retry_after_is_read_alike_for_every_client():
    """GitHub, the LLM endpoint and webhooks share one reading of `Retry-After`."""
    from repobrief.retry_after import retry_after_seconds

    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC).timestamp()
    assert retry_after_seconds("120", now) == 120.0 and retry_after_seconds("0.5", now) == 0.5
    assert retry_after_seconds("Tue, 01 Dec 2026 12:01:40 GMT", now) == 100.0
    assert retry_after_seconds("Tue, 01 Dec 2026 12:01:40 -0000", now) == 100.0  # a date without a zone is UTC
    assert retry_after_seconds("Tue, 01 Dec 2026 11:00:00 GMT", now) == 0.0  # in the past: no wait
    for junk in (None, "", "soon", "inf", "nan"):
        assert retry_after_seconds(junk, now) is None, junk


def test_runs_of_brackets_and_backticks_are_left_as_written():
    """No link is made of "`](x) [`[`[`…" (a comment or a heading can hold such text). The
    link-with-code pattern was cubic on it (4,000 characters took 38 s); its speed is the
    suite's to notice, as tests here assert no times."""
    text = "`](x) " + "[`" * 3000
    assert plain_markdown(text) == text.strip()


def test_a_link_whose_url_holds_parentheses_reads_as_its_text():
    """A URL may hold balanced parentheses (CommonMark): "[the guide](https://en.wikipedia.org/wiki/Foo_(bar))"
    read as "the guide)", with the URL's last parenthesis left over in a report's sentence."""
    assert plain_markdown("See [the guide](https://en.wikipedia.org/wiki/Foo_(bar)) for details.") == (
        "See the guide for details.")
    assert plain_markdown('Use ![a plot](p_(1).png "t") and [b](c) (d).') == "Use a plot and b (d)."
    assert plain_markdown("[a](b(c) stays") == "[a](b(c) stays"  # a parenthesis it does not close: no link


@pytest.mark.parametrize("pad", [" ", "\t"])
def test_a_title_padded_with_spaces_is_escaped_at_once(pad):
    """The Markdown escape joined lines with a pattern that retried every start in a long
    run of spaces without a newline: 20,000 took 0.6 s, 131,072 took 24 s, for each cell
    a title fills. (A guard of 10 s, not a timing: it takes milliseconds now.)"""
    cell = finishes(md_cell, "a" + pad * 131_072 + "b |c\n\n  d", within=10)
    assert cell == "a" + pad * 131_072 + "b \\|c d"


def test_a_title_of_backticks_is_read_at_once():
    """A run of backticks was tried as a code span's opener of every length down to the
    one that closed: 240,000 took 4.5 s (a commit subject has no length limit)."""
    text = "`" * 1_000_000 + "x"
    assert finishes(plain_markdown, text, within=20).endswith("x")
    assert plain_markdown("use `a_b` and ``x` y`` now") == "use `a_b` and ``x` y`` now"


@pytest.mark.parametrize("unit", ["**upgrade (", "(***a (", "(~~a ", "(*a "])
def test_emphasis_that_never_closes_is_read_at_once(unit):
    """Each opener of "**upgrade (**upgrade (…" scanned to the end of the text for its
    closer: a 44,000-character title took 3.6 s, and a title is read several times."""
    text = unit * 24_000
    assert finishes(plain_markdown, text).startswith(unit.strip()[:2])
    assert plain_markdown("a **bold** and *it* and ~~gone~~ and ***both***") == "a bold and it and gone and both"


def test_a_link_whose_text_holds_brackets_reads_as_its_text():
    """An issue's title in a link's text ("[[Bug] the loader hangs](…)") left the whole
    link as written, brackets and URL, in a report's sentence."""
    assert plain_markdown("Fixes [[Bug] the loader hangs](https://github.com/o/r/issues/3).") == (
        "Fixes [Bug] the loader hangs.")
    for text in ("[" + "[a]" * 20_000, "[" + "x[a]" * 20_000, "[[a]x" * 20_000):  # read in one pass
        assert finishes(plain_markdown, text).startswith("[")  # the bracket that is never closed stays


def test_a_default_the_pr_says_it_does_not_change_is_no_default_change():
    """verl #4389 said it "does not change the default behavior" and got a default-change risk."""
    from repobrief.analysis.scoring import is_default_change
    from repobrief.models import PullRequest

    def pr(body: str) -> PullRequest:
        return PullRequest(number=1, title="feat: add a knob", author="a", merged_at=datetime(2026, 1, 1, tzinfo=UTC), body=body)

    assert not is_default_change(pr("Adds a knob. This does not change the default behavior."), clean_body(
        "Adds a knob. This does not change the default behavior."))
    said = "Adds a knob. This changes the default behavior of the loader."
    assert is_default_change(pr(said), clean_body(said))


@pytest.mark.parametrize("title, changed", [
    ("[misc] fix: set default value of ETP to 1 (#3371)", True),
    ("[rollout,vllm] feat: revert default value of max_num_seqs (#5139)", True),
    ("[megatron, ckpt] fix: set dist_ckpt_optim_fully_reshardable default to False (#5705)", True),
    ("Set TEMPLATE_AUTO_RELOAD default value to None", True),
    ("reset default tp size (#1047)", True),
    ("feat: add a fast loader (disabled by default)", False),
    ("feat: add option foo, default to False", False),
    ("fix: handle the default case", False),
])
def test_a_title_that_sets_or_reverts_a_default_changes_one(title, changed):
    """Seven verl PRs and two flask ones set, reset or reverted a default in their titles
    and got no default-change term; "set X default to False" read as an opt-in feature."""
    from repobrief.analysis.scoring import is_default_change, is_opt_in
    from repobrief.models import PullRequest

    pr = PullRequest(number=1, title=title, author="a", merged_at=datetime(2026, 1, 1, tzinfo=UTC), body="")
    assert is_default_change(pr, clean_body("")) == changed
    if changed:
        assert not is_opt_in(pr, clean_body(""))


def test_risks_users_act_on_come_before_review_risks_of_the_same_severity():
    """A week's sixth risk was a renamed key that the first recommendation cited, pushed
    out by a more important PR's missing tests."""
    from repobrief.analysis.risks import merge_risks
    from repobrief.models import Risk

    merged = merge_risks([Risk("missing_tests", "medium", [1], []), Risk("core_path", "medium", [1], []),
                          Risk("default_change", "medium", [2], []), Risk("config_change", "medium", [3], []),
                          Risk("breaking_change", "high", [4], [])], [], {1: 9.0, 2: 5.0, 3: 4.0, 4: 1.0})
    assert [r.kind for r in merged] == ["breaking_change", "default_change", "config_change", "core_path", "missing_tests"]


def test_a_quoted_sentence_ends_once():
    """A clipped quote ended "in…." and a list item quoted alone "`verl-recipe`,." (verl #4795)."""
    from repobrief.compose import _end
    from repobrief.i18n import catalog

    en, zh = catalog("en"), catalog("zh")
    assert _end(en, "training in…") == "training in…"
    assert _end(en, "to the dedicated repo `verl-recipe`,") == "to the dedicated repo `verl-recipe`."
    assert _end(zh, "迁移到新仓库，") == "迁移到新仓库。"
    assert _end(en, "It works") == "It works." and _end(en, "Done!") == "Done!"


# Each case-blind regex gated on its words (`may_match`), with texts that hold each of
# its alternatives in another case, glued to other words, or spelt with "ſ"/"K" (the
# Kelvin sign), which `re.I` reads as "s"/"k" and `lower()` leaves as they are.
def _gated_regexes():
    from repobrief.analysis import risks
    from repobrief.compose import _ADVISORY
    from repobrief.conventions import _LINKISH, _LINKISH_WORDS
    from repobrief.engines import offline

    return [
        (risks._NO_TEST_NEEDED, risks._NO_TEST_WORDS, ["Fix TYPOS", "misspellings", "Lint fixes", "run PRE-COMMIT",
                                                       "formatting", "Spelling", "fix typo", "ſpelling"]),
        (offline._NAMES_PROBLEM, offline._PROBLEM_WORDS, ["Issues with X", "a BUG", "Errors", "shape mismatches",
                                                          "CRASHES", "failure", "fails", "failed", "failing", "problems",
                                                          "typos", "leaks", "hangs", "deadlocks", "missing", "broken",
                                                          "incorrect", "wrong", "invalid", "can't", "cant", "cannot",
                                                          "doesn't", "does not", "unable", "regressions", "Ta\u212a"]),
        (_LINKISH, _LINKISH_WORDS, ["see https://x.y/z", "HTTP://X", "RFC: #12", "Issue #3", "fixes #1", "Closes #2",
                                    "resolves: 4", "Related #5"]),
        (_ADVISORY, ("ghsa", "cve-"), ["GHSA-abcd-1234-wxyz", "cve-2024-12345", "fixes Cve-2021-44228"]),
        (risks._CONFIG_WORDS, risks._CONFIG_VERBS, ["Rename the lr option", "DEPRECATE flags", "removes keys",
                                                    "Dropped the params", "renaming settings to fields"]),
    ]


def test_a_word_gate_never_hides_a_match_of_its_regex():
    from repobrief.conventions import may_match

    for rx, words, texts in _gated_regexes():
        for text in texts:
            for t in (text, text.upper(), text.lower(), f"x {text}, y"):
                if rx.search(t):
                    assert may_match(t, words), (rx.pattern[:40], t)
        assert not may_match("Add a new sampler for the rollout", words)  # the gate rules plain text out


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_word_gate_never_hides_a_match_in_any_text(data):
    from repobrief.conventions import may_match

    for rx, words, texts in _gated_regexes():
        pieces = st.sampled_from([*texts, *words, " ", "-", ":", "#1", "ſ", "\u212a", "İ", "a", "Z", "é", "\n"])
        text = "".join(data.draw(st.lists(pieces, max_size=8)))
        if rx.search(text):
            assert may_match(text, words), (rx.pattern[:40], text)


def test_paths_are_told_apart_at_the_top_of_the_tree_as_below_it():
    from repobrief.analysis import files as fk

    assert fk.is_test("tests/test_a.py") and fk.is_test("pkg/tests/a.py") and fk.is_test("test_a.py")
    assert fk.is_test("a/b_test.go") and fk.is_test("conftest.py") and not fk.is_test("contest.py")
    assert not fk.is_test("attests/a.py") and not fk.is_test("src/latest/a.py")
    assert fk.is_ci(".github/workflows/ci.yml") and fk.is_ci("ci/run.sh") and fk.is_ci("a/.ci/x")
    assert not fk.is_ci("src/circle.py") and not fk.is_ci("docs/ci.md")
    assert fk.is_doc("docs/index.md") and fk.is_doc("Docs/x.py") and fk.is_doc("README") and fk.is_doc("pkg/readme.rst")
    assert fk.is_ledger("CHANGELOG.md") and fk.is_ledger("a/contributing.rst") and not fk.is_ledger("src/renews.py")
    assert fk.is_config("configs/a.yaml") and fk.is_config("pkg/my_Config.py") and fk.is_config("Settings.JSON")
    assert not fk.is_config("src/configure.sh")
    assert fk.is_example("examples/a.py") and fk.is_example("x/recipe/b.py") and not fk.is_example("src/sample.py")
    assert fk.is_minor("benchmarks/a.py") and not fk.is_minor("verl/trainer/a.py")


def test_the_digest_and_the_json_keep_no_control_that_moves_or_reorders_text():
    """The digest's Markdown took a repository's or a theme's name on one line by its
    newlines alone: a carriage return still ended the line there. The JSON of the site and
    the digest wrote bidirectional and C1 controls as they are; as escapes the data is the same."""
    import json

    from repobrief.digest import _md_escape
    from repobrief.render.json import inert_json

    assert _md_escape("pkg\r# PWNED\n- item \u202eevil") == "pkg\\# PWNED - item evil"
    text = json.dumps({"path": "a\u202eb\u2066c\x85d — “e”"}, ensure_ascii=False)
    assert inert_json(text) == '{"path": "a\\u202eb\\u2066c\\u0085d — “e”"}'
    assert json.loads(inert_json(text)) == json.loads(text)
    # a report's JSON is searched by bytes first: each of them is found, typographic quotes are not
    from repobrief.render.json import _may_hold_unsafe

    assert all(_may_hold_unsafe(f"x{chr(c)}y".encode()) for c in (0x85, 0x202A, 0x202E, 0x2066, 0x2069))
    assert not _may_hold_unsafe("“q” — … ‘a’ ⁄".encode())


def test_the_digest_joins_themes_by_name_says_its_notes_and_counts_what_it_leaves_out():
    """Documentation was verl's title-word theme (term:docs) and flask's folder theme
    (module:docs): the digest found no shared theme, or listed "Documentation" twice. A
    week still in progress read as final, and a shared risk's PRs were cut at five
    without a word."""
    from repobrief.digest import build_digest, render_digest_md

    def report(name, themes, risk_prs, warnings=()):
        return {"repository": name, "week": "2026-W04", "stats": {"merged_prs": 9, "contributors": 3, "lines_added": 1,
                                                                  "lines_deleted": 1},
                "pull_requests": [], "warnings": list(warnings),
                "themes": [{"key": k, "name": "Documentation", "count": len(p), "prs": p} for k, p in themes],
                "risks": [{"kind": "missing_tests", "title": "Changes without tests", "severity": "medium", "prs": risk_prs}]}

    d = build_digest([report("acme/a", [("term:docs", [1, 2]), ("module:docs", [2, 3])], [1, 2, 3, 4, 5, 6, 7, 8],
                             ["This week is still in progress."]),
                      report("acme/b", [("module:docs", [4])], [9])], "en")
    (theme,) = d["themes"]
    assert theme["name"] == "Documentation" and theme["count"] == 4
    assert theme["repositories"] == [{"repository": "acme/a", "count": 3, "prs": [1, 2, 3]},
                                     {"repository": "acme/b", "count": 1, "prs": [4]}]
    md = render_digest_md(d)
    assert "- Documentation: 4 PRs in 2 repositories — acme/a (3), acme/b (1)" in md
    assert "### acme/a\n\n> ⚠ This week is still in progress.\n" in md
    assert "acme/a (#1, #2, #3, #4, #5, 3 more)" in md


def test_a_table_cells_sentence_is_cut_between_words_and_outside_code_spans():
    """verl #6350's key contribution ended "… emitted in the \\`use_r…": the cut left a code
    span open, which Markdown showed as a stray backtick and HTML as half an identifier."""
    from repobrief.engines.offline import _short

    text = ("Fix `FSDPEngineWithLMHead.prepare_model_outputs` so that distillation top-k outputs are emitted in "
            "the `use_remove_padding=False` path of the engine")
    cut = _short(text)
    assert cut == "Fix `FSDPEngineWithLMHead.prepare_model_outputs` so that distillation top-k outputs are emitted in the…"
    assert cut.count("`") % 2 == 0 and len(cut) <= 110


@pytest.mark.parametrize(("title", "breaks"), [
    ("remove `--eager-loader/--lazy-loader` options", True),  # flask #4718
    ("drop end of life python versions (#5731)", True),  # flask #5731
    ("drop support for Python 3.8 (#5623)", True),
    ("remove deprecated as_tuple parameter from test_client", True),  # flask #4417: an API's parameter
    ("Bump minimum Python to 3.9", True),
    ("[ci] chore: remove unused parameter", False),
    ("remove debug flag", False),
    ("remove redundant config keys", False),
    ("[megatron] fix: remove the demising model.enable_gradient_checkpointing flags in the script (#2691)", False),
    ("fix: drop invalid settings in tests", False),
    ("Remove now obsolete 'audit' command from Makefile", False),
    # the review of the thirty-second session
    ("Remove Python 3.8 from CI matrix", False), ("Drop Python 3.8 from the test matrix", False),
    ("Remove Python 3.12 in CI", False), ("Remove print statements from settings page", False),
    ("Delete temp files after command finishes", False), ("Remove options for testing", False),
    ("Remove flake8 settings", False), ("drop support for Python 3.9 and 3.10", True),
])
def test_a_title_that_takes_options_or_python_versions_away_is_breaking(title, breaks):
    """flask marks no breaking change in its titles: over its whole history repobrief found
    none, though it removed CLI options and dropped Python versions. verl's history gains
    none from this (its 50 breaking PRs are the same)."""
    from repobrief.conventions import takes_away

    assert takes_away(title) is breaks


def test_names_that_share_an_address_are_one_contributor():
    """verl 2024-W44 read "2 contributors, including 2 first-time contributors": "Peter
    Sheng" and "shengguangming", committing from one address, were counted twice (telling
    who is new already took them as one). A placeholder address many people commit from
    joins nobody."""
    from repobrief.aggregate import people
    from repobrief.models import PullRequest

    def pr(n, author, email):
        return PullRequest(number=n, title="t", body="", author=author, author_email=email,
                           merged_at=datetime(2026, 1, 5, tzinfo=UTC))

    got = people([pr(1, "Peter Sheng", "ps@x.io"), pr(2, "shengguangming", "PS@x.io"), pr(3, "shengguangming", "ps@x.io"),
                  pr(4, "hl", "hl@x.io"), pr(5, "HL", None), pr(6, "Ann", "root@localhost"), pr(7, "Bo", "root@localhost")])
    assert sorted(got) == [["Ann"], ["Bo"], ["hl", "HL"], ["shengguangming", "Peter Sheng"]]


@pytest.mark.parametrize(("path", "dev"), [
    ("requirements/dev.txt", True), ("requirements/tests.in", True), ("requirements/docs.txt", True),
    ("requirements-dev.txt", True), ("requirements_test.txt", True), ("docs/requirements-docs.txt", True),
    ("requirements.txt", False), ("requirements-npu.txt", False), ("requirements/build.txt", False),
    ("pyproject.toml", False), ("requirements/base.txt", False),
])
def test_the_pins_of_the_projects_own_tools_are_no_users_dependency(path, dev):
    """78 flask PRs (Dependabot bumps of requirements/dev.txt, tests.txt, docs.txt) were told
    to users as "rebuild environments, pinned versions may conflict"; none is installed by a
    user. (4 verl PRs changed only docs/requirements-docs.txt.)"""
    from repobrief.analysis.files import is_dev_manifest

    assert is_dev_manifest(path) is dev


@pytest.mark.parametrize("title", ["Add pre-commit config for flake8", "Fix style issues on master using Black",
                                   "use ruff linter and formatter (#5331)", "apply reorder-python-imports pre-commit config"])
def test_a_title_about_the_projects_linters_is_style_not_a_feature(title):
    """flask's "Add pre-commit config for flake8" scored 7.0 as a new feature, above user-facing
    fixes, and the report told users to try it."""
    from repobrief.conventions import parse_title

    assert parse_title(title).type == "style"
    for user_facing in ("Add a black list of hosts to the dev server", "Fix crash in black-box optimizer",
                        "Add support for Black Forest Labs FLUX.1 model", "Fix black screen on startup",
                        "Fix the log formatter dropping extra fields", "Fix compatibility with pre-commit 3.0",
                        "Add Pylint plugin for Django models"):
        assert parse_title(user_facing).type != "style", user_facing
