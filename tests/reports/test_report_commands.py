"""Commands a report prints run as printed on another machine: none carries an absolute path of
the machine that made the run (a catalog theorem needs no file at all; a user's file is named
relative to where the run was made), and each parses with attnproof's own parser."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from attnproof import symbolic
from attnproof._parser import parser as _parser
from attnproof.numeric._witness import replay_command
from attnproof.report import document as doc
from attnproof.report import tex, view
from attnproof.symbolic import FLOAT64
from tests.cli.samples import sample_report

markdown_it = pytest.importorskip("markdown_it")

# the committed reference reports (what runs write under reports/ is ignored by git)
REPORTS = Path(__file__).parents[2] / "reports" / "reference"
# Folders of a reference set that are a local run's output, never committed.
LOCAL = ("pytest", "partial")
# An absolute path (POSIX, home-relative or Windows) as a word or an option's value.
ABSOLUTE = re.compile(r"(?:^|[\s='\"])(?:/|~/|[A-Za-z]:[\\/])")
MACHINE_PATHS = ("/work/", "/tmp/", "/home/", "/root/", "/Users/", "/private/", "/var/")


def committed_reports() -> list[Path]:
    found = sorted(REPORTS.rglob("*.md")) + sorted(REPORTS.rglob("*.tex"))
    return [p for p in found if p.relative_to(REPORTS).parts[0] not in LOCAL]


def joined(block: str) -> list[str]:
    """The commands of a shell block, continuation lines (a trailing backslash) joined."""
    return [" ".join(line.split()) for line in re.sub(r"\\\n\s*", " ", block).splitlines()
            if line.strip()]


def markdown_commands(text: str) -> list[str]:
    """Commands in ``sh``/``bash`` blocks, and code spans that begin with ``attnproof``."""
    found = []
    for token in markdown_it.MarkdownIt("commonmark").enable("table").parse(text):
        if token.type == "fence" and token.info.strip() in ("sh", "bash", "shell", "console"):
            found += joined(token.content)
        for child in token.children or []:
            if child.type == "code_inline" and child.content.startswith("attnproof "):
                found.append(child.content)
    return found


def latex_commands(text: str) -> list[str]:
    """Commands in verbatim blocks (and in the listings of reports rendered before them)."""
    blocks = re.findall(r"\\begin\{(?:verbatim|lstlisting)\}\n(.*?)\n\\end\{(?:verbatim|"
                        r"lstlisting)\}", text, flags=re.DOTALL)
    return [line for block in blocks for line in joined(block) if line.startswith("attnproof ")]


def printed_commands(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return markdown_commands(text) if path.suffix == ".md" else latex_commands(text)


def test_the_committed_reports_print_commands_with_no_path_of_the_machine_that_made_them():
    commands = {str(p.relative_to(REPORTS)): printed_commands(p) for p in committed_reports()}
    assert len(commands["report.tex"]) >= 195 and sum(map(len, commands.values())) >= 400
    bad = [(path, command) for path, found in commands.items() for command in found
           if ABSOLUTE.search(command) or any(m in command for m in MACHINE_PATHS)]
    assert bad == []


def test_every_attnproof_command_the_committed_reports_print_parses():
    parser = _parser()
    failures = []
    for path in committed_reports():
        for command in printed_commands(path):
            words = shlex.split(command)
            if words[0] != "attnproof":
                continue
            try:
                parser.parse_args(words[1:])
            except SystemExit:
                failures.append((str(path.relative_to(REPORTS)), command))
    assert failures == []


def test_the_catalog_reports_reproduce_commands_name_no_file():
    topics = sorted((REPORTS / "topics").glob("*.md"))
    commands = [c for page in topics for c in printed_commands(page)]
    reproduce = [c for c in commands if c.startswith("attnproof prove")]
    assert len(reproduce) >= 195
    assert not [c for c in commands if "--theorems" in c]


# -- how a file is named -------------------------------------------------------------------------


def test_a_theorem_file_is_named_relative_to_where_the_run_was_made(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert view.command_path("my_theorems/claims.py") == "my_theorems/claims.py"
    assert view.command_path(str(tmp_path / "mine" / "claims.py")) == "mine/claims.py"
    assert view.command_path("/far/away/home/me/my_theorems/claims.py") == \
        "my_theorems/claims.py"
    assert view.command_path("/claims.py") == "claims.py"
    assert view.command_path("") is None and view.command_path("<unknown>") is None
    assert view.command_path("/a/\x00b/c.py") == "\x00b/c.py"  # any text, never a crash


def test_reproduce_names_no_file_for_the_catalog_and_a_relative_one_for_a_users_own():
    report = sample_report()
    theorem = report.theorems[0]
    assert view.reproduce_command(theorem) == (
        "attnproof prove --theorem softmax_rows --theorems t/softmax.py")
    theorem.origin = str(symbolic._catalog.CATALOG_DIR / "softmax_jacobian.py")
    assert view.reproduce_command(theorem) == "attnproof prove --theorem softmax_rows"
    theorem.origin = "/tmp/cirun/main/theorems/softmax_jacobian.py"  # made elsewhere
    assert view.reproduce_command(theorem, view.in_catalog(theorem, report)) == \
        "attnproof prove --theorem softmax_rows"
    theorem.origin = "my_theorems/softmax.py"
    assert view.reproduce_command(theorem, catalog=False) == (
        "attnproof prove --theorem softmax_rows --theorems my_theorems/softmax.py")


def test_a_recorded_replay_is_printed_without_the_machines_paths():
    replay = "attnproof replay c --seed 1 --batch 4 --sizes n=2 --theorems /tmp/x/mine/c.py"
    assert view.portable_command(replay, catalog=True) == \
        "attnproof replay c --seed 1 --batch 4 --sizes n=2"
    assert view.portable_command(replay, catalog=False).endswith("--theorems mine/c.py")
    assert view.portable_command("attnproof replay c --theorems=/x/y/c.py", False) == \
        "attnproof replay c --theorems y/c.py"
    kept = "attnproof replay c --sizes 'n=2' --theorems mine/c.py"
    assert view.portable_command(kept, catalog=False) == kept  # quoting as recorded
    assert view.portable_command("not 'shell words", catalog=True) == "not 'shell words"


def test_the_theorem_section_prints_the_portable_replay():
    report = sample_report()
    wrong = report.theorems[1]
    wrong.numeric[0].replay = "attnproof replay wrong_claim --seed 1 --theorems /tmp/t/wrong.py"
    blocks = doc.theorem_section(wrong, [], catalog=False).blocks
    commands = [b.text for b in blocks if isinstance(b, doc.Command)]
    assert commands == ["attnproof replay wrong_claim --seed 1 --theorems t/wrong.py",
                        "attnproof prove --theorem wrong_claim --theorems t/wrong.py"]


def _runner(origin: str):
    theorem = SimpleNamespace(name="claim", origin=origin)
    return SimpleNamespace(plan=SimpleNamespace(theorem=theorem), row=SimpleNamespace(name="numpy"),
                           device_name="cpu", mode="eager")


def test_a_replay_command_names_a_file_relative_to_the_run_or_by_its_folder(tmp_path,
                                                                            monkeypatch):
    monkeypatch.chdir(tmp_path)
    structure = SimpleNamespace(sizes=(("n", 2),), integers=(), seed=3)
    below = replay_command(_runner(str(tmp_path / "mine" / "c.py")), FLOAT64, structure, 8)
    assert below.endswith("--sizes n=2 --theorems mine/c.py")
    elsewhere = replay_command(_runner("/far/away/theirs/c.py"), FLOAT64, structure, 8)
    assert elsewhere.endswith("--theorems theirs/c.py")
    catalog = str(symbolic._catalog.CATALOG_DIR / "masking.py")
    assert "--theorems" not in replay_command(_runner(catalog), FLOAT64, structure, 8)


# -- commands in LaTeX: broken between words only, with a continuation -------------------------


def test_a_long_command_breaks_between_words_with_a_continuation():
    command = ("attnproof replay hopfield_energy_gradient_corrected --backend jax --dtype "
               "float64 --device cpu --mode jit --seed 0 --batch 256 --sizes N=2,d_k=3 "
               "--theorems 'my theorems/claims_one.py'")
    lines = tex.command_lines(command, width=60)
    assert len(lines) > 2 and all(len(line) <= 60 for line in lines)
    assert all(line.endswith(" \\") for line in lines[:-1])
    assert lines[-1].endswith("'my theorems/claims_one.py'")
    assert lines[1] == "  --backend jax --dtype float64 --device cpu --mode jit \\"
    assert not [line for line in lines if re.search(r"--\w+ \\$", line)]  # option with value
    assert joined("\n".join(lines)) == [command]


def test_a_command_whose_quotes_do_not_close_stays_one_line():
    assert tex.command_lines("attnproof 'open " + "x " * 60) == ["attnproof 'open " + "x " * 60]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126)
                        | st.sampled_from([" ", "'", '"', "\\"]), min_size=1, max_size=30),
                min_size=1, max_size=12),
       st.integers(min_value=10, max_value=90))
@example(["0", "-00000000", "00"], 13)  # an option and its value too long for a line together
def test_broken_lines_are_the_same_shell_words(words, width):
    command = shlex.join(words)
    lines = tex.command_lines(command, width)
    pasted = "\n".join(lines).replace(" \\\n", " ")  # what a shell makes of the continuations
    assert shlex.split(pasted) == words
    assert all(len(line) <= width for line in lines) or any(len(w) + 4 > width for w in
                                                              map(shlex.quote, words))


def test_latex_sets_commands_in_verbatim_ascii_only_and_unclosable():
    latex = tex._command("attnproof replay a_b \\end{verbatim} ✓")
    assert latex.startswith("\\begin{small}\n\\begin{verbatim}\nattnproof replay a_b")
    assert latex.count("\\end{verbatim}") == 1 and "\\end {verbatim}" in latex
    assert latex.isascii()
