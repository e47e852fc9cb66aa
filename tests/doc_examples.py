"""Test helper: the code examples of the README and of the documentation pages, found and
run as a reader would run them (no tests here; tests/test_doc_examples.py runs every page,
tests/test_package_readme.py the package index's page).

A page's fenced blocks run in order, sharing one namespace, from a folder laid out as the
checkout's root is once ``make demo`` has run (``examples/`` and ``docs/`` linked, the model
inputs ``make demo`` writes in ``build/demo/``):

- ``python``: executed; a block of ``>>>`` lines is a doctest, whose output lines must be what
  the statements print (a trailing ``# comment`` on an output line is prose, not output).
- ``bash`` (or ``sh``, ``shell``): each ``onnx-upsample ...`` command runs in this process and
  must exit 0, or 1 where a command reports findings (a failed case, a differing node): never
  2 (a bad argument or file) or a crash. A ``python - <<'EOF'`` heredoc runs as Python; any
  other command fails the test, so a block of other commands must be marked as not run.
- ``console``: each ``$ onnx-upsample ...`` runs as in ``bash`` (or exits 2: the transcript
  of an error), and what it prints (stderr, then stdout) must be the lines shown up to the
  next ``$``, with versions (``1.32.0``) and numbers with a fraction (compared to 6
  significant digits: the last bits of onnxruntime's convolutions depend on the CPU)
  normalised, and a line ``...`` standing for any lines.
- A block right after an HTML comment ``<!-- not run: REASON -->`` is skipped (the reason is
  required: a command that needs a file of the reader's own, a benchmark of minutes, a
  transcript another test compares).
- Blocks in any other language, or none, are text: outputs, formulas, listings.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import os
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

PYTHON = {"python", "py", "pycon"}
SHELL = {"bash", "sh", "shell"}
CONSOLE = {"console"}
RUN = PYTHON | SHELL | CONSOLE

_NOT_RUN = re.compile(r"<!--\s*not run:\s*(.*?)\s*-->", re.DOTALL)


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: its language, its first line's number, its text, and the
    reason given for not running it (None when it runs)."""

    page: str
    line: int
    language: str
    text: str
    not_run: str | None

    @property
    def runs(self) -> bool:
        return self.language in RUN and self.not_run is None

    def where(self) -> str:
        return f"{self.page}:{self.line} ({self.language})"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown page, in order."""
    page = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    lines = path.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if fence is None:
            i += 1
            continue
        marker, language = fence.group(1), fence.group(2).lower()
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith(marker):
            body.append(lines[i])
            i += 1
        before = "\n".join(lines[max(0, start - 8):start]).rstrip()
        reason = None
        if before.endswith("-->"):
            comment = before[before.rfind("<!--"):]
            matched = _NOT_RUN.fullmatch(comment)
            reason = matched.group(1) if matched else None
        found.append(Block(page, start + 1, language, "\n".join(body) + "\n", reason))
        i += 1
    return found


def pages() -> list[Path]:
    """The README and every page of the documentation (docs/pypi.md included: it is the
    package index's page, and its example runs too)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


# ---------------------------------------------------------------------------------------------
# the folder the examples run in
# ---------------------------------------------------------------------------------------------

def _load_script(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lay_out(folder: Path) -> None:
    """``folder`` as the checkout's root is after ``make demo``, for what the examples read:
    examples/ and docs/ (linked), and the model inputs make demo writes into build/demo/."""
    for name in ("examples", "docs"):
        (folder / name).symlink_to(ROOT / name)
    (folder / "build").mkdir()
    if importlib.util.find_spec("onnx") is not None:
        previous = Path.cwd()
        os.chdir(folder)
        try:
            _load_script("make_legacy_model").write_inputs("build/demo")
        finally:
            os.chdir(previous)


# ---------------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------------

def _strip_comment(line: str) -> str:
    return re.sub(r"\s+#\s.*$", "", line)


def run_doctest(block: Block, namespace: dict[str, Any]) -> None:
    """A block of ``>>>`` lines, as doctest runs it, in the page's namespace."""
    parser = doctest.DocTestParser()
    examples = parser.get_examples(block.text)
    for example in examples:
        example.want = "".join(_strip_comment(line) + "\n"
                               for line in example.want.splitlines())
    test = doctest.DocTest(examples, namespace, block.where(), block.page, block.line, None)
    report: list[str] = []
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    runner.run(test, out=report.append, clear_globs=False)
    assert runner.failures == 0, "".join(report)


def run_python(block: Block, namespace: dict[str, Any]) -> None:
    if re.search(r"^\s*>>> ", block.text, re.MULTILINE):
        run_doctest(block, namespace)
        return
    code = compile(block.text, block.where(), "exec")
    exec(code, namespace)  # the example, as written


def _commands(text: str) -> Iterator[tuple[str, list[str]]]:
    """(kind, lines) of a shell block: ("command", [line]) with continuations joined, or
    ("heredoc", [python lines])."""
    lines = iter(text.splitlines())
    for line in lines:
        while line.endswith("\\"):
            line = line[:-1] + " " + next(lines).strip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped in ("python - <<'EOF'", "python - <<EOF", 'python - <<"EOF"'):
            yield "heredoc", list(iter(lines.__next__, "EOF"))
        else:
            yield "command", [stripped]


def _run_command(block: Block, line: str, main: Callable[[list[str]], int],
                 exits: tuple[int, ...] = (0, 1)) -> int:
    words = shlex.split(line, comments=True)
    assert words and words[0] == "onnx-upsample", (
        f"{block.where()}: {line!r} is not a command this runner runs; run it, or mark the "
        "block <!-- not run: REASON -->")
    code = main(words[1:])
    assert code in exits, f"{block.where()}: {line!r} exited {code}"
    return code


def run_shell(block: Block, namespace: dict[str, Any],
              main: Callable[[list[str]], int]) -> None:
    for kind, lines in _commands(block.text):
        if kind == "heredoc":
            exec(compile("\n".join(lines), block.where(), "exec"), {})
        else:
            _run_command(block, lines[0], main)


def _normalised(line: str) -> str:
    line = re.sub(r"\b\d+\.\d+\.\d+\b", "V", line.rstrip())
    return re.sub(r"-?\d+\.\d+(e[-+]\d+)?", lambda m: f"{float(m.group()):.6g}", line)


def _matches(shown: list[str], printed: list[str]) -> bool:
    """The printed lines are the shown ones; a shown ``...`` stands for any lines."""
    if not shown:
        return not printed
    if shown[0].strip() == "...":
        return any(_matches(shown[1:], printed[k:]) for k in range(len(printed) + 1))
    return bool(printed) and _normalised(shown[0]) == _normalised(printed[0]) \
        and _matches(shown[1:], printed[1:])


def run_console(block: Block, main: Callable[[list[str]], int],
                capsys: pytest.CaptureFixture[str]) -> None:
    transcript: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            transcript.append((line[2:], []))
        elif transcript:
            transcript[-1][1].append(line)
        elif line.strip():
            raise AssertionError(f"{block.where()}: a transcript starts with '$ COMMAND'")
    for command, shown in transcript:
        capsys.readouterr()
        # a transcript may show an error (exit 2): what it prints is what is compared
        _run_command(block, command, main, exits=(0, 1, 2))
        captured = capsys.readouterr()
        printed = (captured.err + captured.out).splitlines()
        while shown and not shown[-1].strip():
            shown = shown[:-1]
        assert _matches(shown, printed), (
            f"{block.where()}: $ {command}\nshown:\n" + "\n".join(shown)
            + "\nprinted:\n" + "\n".join(printed))


def close_clusters(namespace: dict[str, Any]) -> None:
    """Close what an example left open: distributed clients and clusters."""
    for value in list(namespace.values()):
        if type(value).__name__ in ("Client", "LocalCluster"):
            with contextlib.suppress(Exception):
                value.close()


def run_page(path: Path, folder: Path, capsys: pytest.CaptureFixture[str],
             main: Callable[[list[str]], int]) -> int:
    """Run every block of a page that runs, in order, from ``folder`` (laid out already);
    returns how many ran."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    ran = 0
    previous = Path.cwd()
    os.chdir(folder)
    try:
        for block in blocks(path):
            if not block.runs:
                continue
            try:
                if block.language in PYTHON:
                    run_python(block, namespace)
                elif block.language in SHELL:
                    run_shell(block, namespace, main)
                else:
                    run_console(block, main, capsys)
            except AssertionError:
                raise
            except Exception as error:
                raise AssertionError(f"{block.where()} failed: {error!r}") from error
            ran += 1
    finally:
        close_clusters(namespace)
        os.chdir(previous)
    return ran
