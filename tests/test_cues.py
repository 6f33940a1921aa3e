"""The cue gate: it may let through a cue that does not match, never hold back one that does."""

from __future__ import annotations

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA, DEV, EXAMPLES, SEEDS
from kgraph.catalog import Cue, _split, builtin_knowledge
from kgraph.cue_syntax import alternatives
from kgraph.cues import CueGate, most_selective, requirements
from kgraph.extract.prose import compact
from kgraph.ingest import read_inputs


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (r"(?<![A-Za-z0-9_])回滚(?![A-Za-z0-9_])", (("回滚",),)),
        (r"(失败|出错)[^，,]{0,30}(删掉|删除)", (("出错", "失败"), ("删掉", "删除"))),
        (r"\bRollBack\b", (("rollback",),)),  # casefolded, as the text is
        # Adjacent literal parts are joined: an optional group gives both readings.
        (r"\broll(s|ed)? back\b", (("roll back", "rolled back", "rolls back"),)),
        (r"`(min|max)\(", (("`max(", "`min("),)),
        (
            r"(外层|外面)的?\s*`?(min|max)",
            (("外层", "外层的", "外面", "外面的"), ("`max", "`min", "max", "min")),
        ),
        (r"[「“]x", (("“x", "「x"),)),  # a class of a few characters is an alternation
        (r"(?:a|b+)c", (("a", "b"), ("c",))),
        (r"x*", None),  # nothing is required
        (r"(a|.)", None),  # one branch requires nothing, so the alternation does not
        (r"\p{Han}+", None),  # syntax `re` cannot read: always run
        (r"[[:alpha:]]x", None),  # `re` reads a POSIX class as literal text
        (r"(?:kv){e<=1}", None),  # and a fuzzy match as literal text
    ],
)
def test_requirements_of_real_cue_shapes(expression, expected) -> None:
    assert requirements(expression) == expected


def test_too_many_joined_readings_stay_separate_requirements() -> None:
    expression = "(" + "|".join("abcdefghij") + ")(" + "|".join("klmnopqrst") + ")"
    assert requirements(expression) == (tuple("abcdefghij"), tuple("klmnopqrst"))


@pytest.mark.parametrize(
    ("found", "chosen"),
    [
        ((("`", "-1"), ("即",)), ("即",)),  # a CJK character is rarer than a backtick
        ((("abc",), ("ab", "cd")), ("abc",)),  # the longest shortest needle
        ((("ab", "cd", "ef"), ("gh", "ij")), ("gh", "ij")),  # then the fewest needles
    ],
)
def test_the_gate_indexes_the_most_selective_requirement(found, chosen) -> None:
    assert most_selective(found) == chosen


def _texts() -> list[str]:
    texts = []
    for folder in (SEEDS, DEV, EXAMPLES, DATA / "design"):
        for result in read_inputs([str(folder)], None):
            for entry in result.entries:
                texts += [entry.text, compact(entry.text)[0], entry.title]
    return texts


def test_gate_keeps_every_cue_that_matches_on_real_digests() -> None:
    knowledge = builtin_knowledge()
    cues = [cue.pattern for p in knowledge.patterns for cue in p.cues]
    gate = knowledge.cue_gate
    matched = skipped = 0
    for text in _texts():
        candidates = gate.candidates(text)
        skipped += len(cues) - len(candidates)
        for index, pattern in enumerate(cues):
            if pattern.search(text):
                matched += 1
                assert index in candidates, (pattern.pattern, text)
    assert matched > 100  # the check saw real matches,
    assert skipped > matched  # and the gate does hold cues back


def test_gate_matches_case_insensitively_like_the_cues() -> None:
    gate = CueGate.of([r"\bKV offload\b", r"回滚", r"x*"])
    assert gate.candidates("the kv OFFLOAD path") == {0, 2}
    assert gate.candidates("KV \u212a") == {2}  # the Kelvin sign folds to k, still not a match
    assert gate.candidates("失败后回滚") == {1, 2}


def test_gate_asks_for_every_requirement_in_the_same_text() -> None:
    gate = CueGate.of([r"(失败|出错)[^，]{0,30}(删掉|删除)"])
    assert gate.candidates("出错就删掉") == {0}
    assert gate.candidates("出错了") == set()
    assert gate.candidates("出错了", "删掉它") == set()  # one requirement in each text


def test_gate_is_a_superset_on_generated_text() -> None:
    rng = __import__("random").Random(7)
    alphabet = "ab回滚失败 KVkv,，"
    expressions = [
        r"回滚",
        r"(a|b)b",
        r"\bkv\b",
        r"失败[^，]{0,3}回滚",
        r"(?i:K)V",
        r"(a|回)?,(b|kv)",
        r"[ab，]{2}滚",
        r"(?:a|b+)失败",
    ]
    gate = CueGate.of(expressions)
    compiled = [regex.compile(e, regex.IGNORECASE) for e in expressions]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        candidates = gate.candidates(text)
        for index, pattern in enumerate(compiled):
            if pattern.search(text):
                assert index in candidates, (expressions[index], text)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (r"x{2,}y", (("x",), ("y",))),  # a repeat of at least one requires its body
        (r"ab{,3}c", (("a",), ("c",))),
        (r"(?i:ab)+?c", (("ab",), ("c",))),
        (r"(?#a comment)ab", (("ab",),)),
        (r"(?P<word>ab)|(?<other>ab)c", (("ab", "abc"),)),
        (r"a\u4e00\x41\-\.", (("a一a-.",),)),
        (r"[\]x-z]q", (("q",),)),  # a range is not listed: only what follows is required
        (r"a{b", (("a{b",),)),  # not a repeat: a literal brace, as `re` reads it
        (r"(a)\1", None),  # a back reference: unreadable as a whole
        (r"(?x) a b", None),  # verbose: spaces are not text
        (r"\N{DIGIT ONE}", None),
        (r"(?>ab)c", (("ab",), ("c",))),
    ],
)
def test_cue_syntax_reads_what_the_gate_needs_and_no_more(expression, expected) -> None:
    assert requirements(expression) == expected


_atoms = st.sampled_from(["a", "b", "回", "滚", r"\.", "[ab]", "[^a]", ".", r"\s"])


@st.composite
def _expressions(draw, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 2 and draw(st.booleans()):
            inner = "|".join(draw(_expressions(depth + 1)) for _ in range(draw(st.integers(1, 3))))
            part = draw(st.sampled_from(["({})", "(?:{})", "(?i:{})"])).format(inner)
            # No repeat of a group: a repeat of repeats makes `re` backtrack exponentially
            # when hypothesis checks the texts it made.
            parts.append(part + draw(st.sampled_from(["", "?"])))
        else:
            part = draw(_atoms)
            parts.append(
                part + draw(st.sampled_from(["", "", "?", "*", "+", "{2}", "{1,3}", "*?"]))
            )
    return "".join(parts)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_cue_syntax_requirements_hold_in_every_match(data) -> None:
    """Whatever `re` matches, the text holds every requirement that was read."""
    expression = data.draw(_expressions())
    found = requirements(expression)
    text = data.draw(st.from_regex(expression, fullmatch=True))
    for needles in found or ():
        assert any(n in text.casefold() for n in needles), (expression, text, needles)


def test_alternatives_split_at_the_top_level_only() -> None:
    assert alternatives(r"a|(b|c)d|[|]x|\|y") == ["a", "(b|c)d", "[|]x", r"\|y"]
    assert alternatives("no-branch") == ["no-branch"]
    assert alternatives("(unbalanced|x") == ["(unbalanced|x"]


def test_a_concepts_cue_is_gated_and_run_one_alternative_at_a_time() -> None:
    """Each top-level alternative of a concept's cue is a cue of its own (so the gate runs
    only the alternatives whose literal the text holds), except where a flag for the whole
    expression or a back-reference ties them together."""
    whole = Cue(r"拒绝|\breject\w*|(?-i:`ValueError`)", "", "src")
    assert [c.expression for c in _split(whole)] == [r"拒绝", r"\breject\w*", "(?-i:`ValueError`)"]
    assert all(c.source == "src" for c in _split(whole))
    for tied in (r"(?i)a|b", r"(a)x|\1y"):
        assert _split(Cue(tied, "", tied)) == (Cue(tied, "", tied),)
