"""Every code snippet of README.md and docs/ runs, and prints what the page shows.

The rules (docs/contributing.md, "Snippets that run") in short:

- A fenced ```python block runs.  The blocks of one page run in order, in one namespace of their
  own (a module made for the page), so a later block may use what an earlier one defined.
- A fenced ```text block that follows a block that runs, with only blank lines between, is what
  that block prints, compared line by line; ``...`` in it matches any text (doctest's ELLIPSIS).
  A block of any language preceded by ``<!-- snippet: output -->`` is the output of the last block
  run (so generated code can be shown as Python).
- A fenced ```console block runs each ``$ `` line in the repository's top folder (``s2s-ad`` and
  ``python`` are this interpreter's): it must exit with status 0, and what it prints to standard
  output is compared with the lines that follow it.
- ``<!-- snippet: requires scipy -->`` before a block: it runs where SciPy can be imported, and is
  skipped elsewhere (a failure with ``S2S_AD_REQUIRE_EXTRAS=1``, as in CI's job with the extras).
- ``<!-- snippet: excerpt of PATH -->`` before a block: the block is not run; its text must appear
  word for word in that file of the repository.
- Blocks fenced as ```sh (install, test and benchmark commands, which CI runs itself), and blocks
  with no language, are shown only.

Each block is written to a file of its own before it runs, at the line it has in the page (the lines
above it blank), because s2s_ad reads the source of the functions it differentiates.
"""
from __future__ import annotations

import contextlib
import doctest
import io
import linecache
import os
import re
import shlex
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

from conftest import optional_import

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("**/*.md"))
RUN = ("python", "console")
SHOWN = ("sh", "")
_DIRECTIVE = re.compile(r"<!--\s*snippet:\s*(.*?)\s*-->")


@dataclass
class Block:
    """One fenced block of a page: its language, its text, the line its text starts at, and the
    directives (``<!-- snippet: ... -->``) written just before it."""

    language: str
    text: str
    line: int
    directives: list[str] = field(default_factory=list)
    follows_run: bool = False  # only blank lines between this block and a block that runs

    def directive(self, word: str) -> Optional[str]:
        """The rest of the directive that starts with ``word`` ("" when nothing follows), or None."""
        for d in self.directives:
            if d == word or d.startswith(word + " "):
                return d[len(word):].strip()
        return None


def blocks_of(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, in order."""
    found: list[Block] = []
    lines = text.splitlines()
    pending: list[str] = []
    blank_since_run = False
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.fullmatch(line.strip())
        if directive:
            pending.append(directive.group(1))
        elif line.startswith("```"):
            language = line[3:].strip()
            end = i + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            if end == len(lines):
                raise ValueError(f"line {i + 1}: a fenced block that never closes")
            found.append(Block(language, "\n".join(lines[i + 1:end]) + "\n", i + 2, pending,
                               follows_run=blank_since_run))
            pending = []
            blank_since_run = language in RUN and found[-1].directive("excerpt of") is None
            i = end
        elif line.strip():
            pending = []
            blank_since_run = False
        i += 1
    return found


class Page:
    """Runs the blocks of one page in its own module, each from a file of its own."""

    def __init__(self, path: Path, folder: Path) -> None:
        self.path = path
        self.name = path.relative_to(ROOT).as_posix()
        stem = re.sub(r"\W", "_", self.name)
        self.module = types.ModuleType(f"docs_snippets_{stem}")
        self.folder = folder
        self.stem = stem
        self.last_output: Optional[str] = None  # what the last block run printed, not yet compared
        self.last_skipped = False  # the last block that runs was skipped (its output block is too)
        self.skipped: list[str] = []

    def where(self, block: Block) -> str:
        return f"{self.name}:{block.line}"

    def run_python(self, block: Block) -> None:
        source = self.folder / f"{self.stem}_{block.line}.py"
        source.write_text("\n" * (block.line - 1) + block.text)
        linecache.checkcache(str(source))
        code = compile(source.read_text(), str(source), "exec")
        printed = io.StringIO()
        sys.modules[self.module.__name__] = self.module
        try:
            with contextlib.redirect_stdout(printed):
                exec(code, self.module.__dict__)
        except Exception as exc:
            raise AssertionError(f"{self.where(block)}: the snippet raised {type(exc).__name__}: {exc}") from exc
        finally:
            sys.modules.pop(self.module.__name__, None)
        self.last_output = printed.getvalue()

    def run_console(self, block: Block) -> None:
        """Each ``$ `` line run in the repository's folder, its output compared with the lines after it."""
        commands: list[tuple[str, list[str]]] = []
        for line in block.text.splitlines():
            if line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands:
                commands[-1][1].append(line)
            else:
                raise AssertionError(f"{self.where(block)}: a console block starts with a command ($ ...)")
        for command, shown in commands:
            words = shlex.split(command)
            if words[0] == "s2s-ad":
                words = [sys.executable, "-m", "s2s_ad"] + words[1:]
            elif words[0] == "python":
                words = [sys.executable] + words[1:]
            else:
                raise AssertionError(f"{self.where(block)}: a console block runs s2s-ad or python, not {words[0]}")
            environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
            done = subprocess.run(words, cwd=ROOT, capture_output=True, text=True, env=environment, timeout=600)
            where = f"{self.where(block)}: $ {command}"
            assert done.returncode == 0, f"{where}: exit status {done.returncode}\n{done.stderr}"
            compare(where, "\n".join(shown) + "\n", done.stdout)  # what it prints; warnings go elsewhere

    def run(self, block: Block) -> None:
        excerpt_of = block.directive("excerpt of")
        if excerpt_of is not None:
            whole = (ROOT / excerpt_of).read_text(encoding="utf-8")
            assert block.text in whole, f"{self.where(block)}: this block is not in {excerpt_of} as shown"
            return
        if block.directive("output") is not None or (block.language == "text" and block.follows_run):
            if self.last_skipped:  # the output of a block skipped for a missing package
                self.last_skipped = False
                return
            assert self.last_output is not None, f"{self.where(block)}: an output block with no block run before it"
            printed, self.last_output = self.last_output, None
            compare(self.where(block), block.text, printed)
            return
        if block.language not in RUN:
            assert block.language in SHOWN or block.language == "text", \
                f"{self.where(block)}: a block fenced as {block.language!r}: use python, console, text or sh"
            return
        self.check_unread_output(block)
        self.last_skipped = False
        required = block.directive("requires")
        if required is not None:
            missing = [name for name in required.split() if optional_import(name) is None]
            if missing:
                self.skipped.append(f"{self.where(block)} (could not import {', '.join(missing)})")
                self.last_output, self.last_skipped = None, True
                return
        if block.language == "python":
            self.run_python(block)
        else:
            self.run_console(block)
            self.last_output = None

    def check_unread_output(self, block: Optional[Block]) -> None:
        """A block that printed something the page does not show fails: the reader would not see it."""
        if self.last_output:
            where = self.where(block) if block is not None else f"{self.name} (end)"
            raise AssertionError(f"{where}: the block before printed text the page does not show:\n"
                                 f"{self.last_output}")


def compare(where: str, shown: str, printed: str) -> None:
    """The page's text ``shown`` against what was ``printed``: line by line, trailing spaces aside,
    ``...`` matching anything."""
    want = "\n".join(line.rstrip() for line in shown.strip("\n").splitlines()) + "\n"
    got = "\n".join(line.rstrip() for line in printed.strip("\n").splitlines()) + "\n"
    if not doctest.OutputChecker().check_output(want, got, doctest.ELLIPSIS):
        import difflib
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "the page shows", "printed"))
        raise AssertionError(f"{where}: the page shows other output than the snippet prints:\n{diff}")


def test_the_runner_reads_blocks_and_directives() -> None:
    """The rules above, on a small page (so a mistake in the runner cannot pass every page)."""
    page = ("Text.\n\n```python\nprint(1)\n```\n\n```text\n1\n```\n\nMore.\n\n```text\nnot output\n```\n\n"
            "<!-- snippet: requires scipy -->\n```python\nx = 2\n```\n")
    found = blocks_of(page)
    assert [(b.language, b.line, b.follows_run) for b in found] == [
        ("python", 4, False), ("text", 8, True), ("text", 14, False), ("python", 19, False)]
    assert found[3].directive("requires") == "scipy" and found[0].directive("requires") is None


def test_a_wrong_output_fails(tmp_path: Path) -> None:
    page = Page(ROOT / "README.md", tmp_path)
    page.run(Block("python", "print(6 * 7)\n", 10))
    with pytest.raises(AssertionError, match="other output"):
        page.run(Block("text", "41\n", 14, follows_run=True))
    page.run(Block("python", "print('a long line')\n", 20))
    page.run(Block("text", "a ... line\n", 24, follows_run=True))  # ... matches anything


@pytest.mark.parametrize("path", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_snippet_runs_and_prints_what_the_page_shows(path: Path, tmp_path: Path) -> None:
    page = Page(path, tmp_path)
    for block in blocks_of(path.read_text(encoding="utf-8")):
        page.run(block)
    page.check_unread_output(None)
    if page.skipped:
        pytest.skip(f"{len(page.skipped)} snippet(s) need an optional extra: " + "; ".join(page.skipped))


def test_the_readme_links_to_pages_that_exist() -> None:
    """The README is not part of the site MkDocs checks: its links into docs/ are checked here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?:docs|examples)/[^)#]*)(?:#[^)]*)?\)", readme)
    assert targets and all((ROOT / target).exists() for target in targets), targets


def test_the_refusal_table_shows_each_message_as_it_is() -> None:
    """docs/supported-python.md lists each function of tests/corpora/refused_functions.py with the words its
    TransformError says after ``cannot differentiate``, and nothing else."""
    import inspect

    import numpy as np
    import refused_functions

    import s2s_ad

    page = (ROOT / "docs" / "supported-python.md").read_text(encoding="utf-8")
    table = page.split("<!-- refusals: begin -->\n")[1].split("<!-- refusals: end -->")[0]
    shown = dict(re.findall(r"^\| `(\w+)` \| (.*) \|$", table, re.MULTILINE))
    said = {}
    for name, fn in inspect.getmembers(refused_functions, inspect.isfunction):
        if fn.__module__ != refused_functions.__name__ or name == "helper_without_rule_or_source" or name[0] == "_":
            continue
        with pytest.raises(s2s_ad.TransformError) as caught:
            s2s_ad.grad(fn)(np.ones(2))
        said[name] = str(caught.value).split("cannot differentiate ", 1)[1].replace("|", "\\|")
    assert shown == said
