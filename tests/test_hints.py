"""Hints that lead somewhere (issue 38, item 4).

The two loops the issue found, each reproduced: ``diff`` of a model with modes in upper case
recommended the backend already given (it now takes ``--legacy-modes``); the other,
``upgrade --allow-downscale``'s declarations, is tests/test_upgrade_declarations.py. Then
every command any hint prints, over every model the tests build and the
committed PyTorch exports, pasted and followed two levels (below).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from onnx_models import declared_as, tf2onnx_shrinking, upsample_model

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from runners import run_main  # noqa: E402

from onnx_upsample._spec.versions import DOWNGRADE_OPSETS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]



# --------------------------------------------------------------------- every hint, followed
#
# Every model the tests build (tests/onnx_models.py's forms, the legacy corpus with the
# exporters', the examples) and the committed PyTorch exports, each in a folder of its own,
# where the commands a user runs first are typed as `onnx-upsample COMMAND model.onnx ...`.
# Every command a hint prints (the fix in an error, a warning or a finding, as text or in
# --json's `commands`) is pasted as a user would paste it, in that folder, and followed two
# levels: each must end in success (exit 0) or print a different command, never one already
# given along the way (the same command and options, whichever files: a loop), and never
# fail without a new one. A check or inspect a hint names must find something to fix (else
# the hint led nowhere); a model a hint writes must differ from the one it read (else the
# fix did nothing); and where a finding's fix wrote a model, the inspection runs again on it,
# as a user checks the fix, and must not name the same fix again.

LEVELS = 2
PROG = "onnx-upsample"
INSPECTIONS = ("check", "inspect")


def _loaded_script(name: str) -> object:
    """scripts/NAME.py as a module (the one module, if another test file loaded it)."""
    if name not in sys.modules:
        import importlib.util

        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


legacy_corpus = _loaded_script("make_legacy_corpus")
PYTORCH = sorted((ROOT / "tests" / "data" / "pytorch").glob("*.onnx"))
EXAMPLES = sorted((ROOT / "examples").glob("*.onnx"))
# tests/onnx_models.py's forms: every source, in the modes each version names, the case old
# converters wrote, and scales that shrink
BUILT = {f"{source}-{mode}": (source, mode) for source in ("v1", "v7", "v8", "v9-raw",
                                                           "v9-constant", "v9-input", "v10")
         for mode in ("nearest", "linear", "bilinear", "BILINEAR")}
CORPUS = ([f"legacy/{entry.name}" for entry in legacy_corpus.CORPUS]  # type: ignore[attr-defined]
          + [f"pytorch/{path.name}" for path in PYTORCH]
          + [f"examples/{path.name}" for path in EXAMPLES]
          + [f"built/{name}" for name in BUILT]
          + ["built/v9-shrinking", "issue/tf2onnx-no-shape", "issue/untyped-output"])


def _subcommands() -> dict[str, object]:
    import argparse

    from onnx_upsample.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


SUBCOMMANDS = _subcommands()
# characters shlex.quote never leaves bare in a word: one that ends a word ends the sentence
_PUNCTUATION = ");,"


@dataclass(frozen=True)
class Command:
    """A command line as a user types it (the words after the program), read by the
    parser's own grammar: its model, its output (-o), and its other options."""

    words: tuple[str, ...]
    name: str
    model: str
    output: str
    options: tuple[str, ...]

    @property
    def kind(self) -> tuple[str, tuple[str, ...]]:
        """What the command does, whichever files it is given: the same kind twice along
        one chain is a loop."""
        return self.name, self.options

    def on(self, model: str) -> Command:
        """The same command, for another model."""
        words = tuple(model if index == self.words.index(self.model) else word
                      for index, word in enumerate(self.words))
        return replace(self, words=words, model=model)

    def __str__(self) -> str:
        if self.words[0] == "python":
            return shlex.join(self.words)
        return shlex.join([PROG, *self.words])


def _scan(name: str, tokens: Iterator[str]) -> Command | None:
    """The command ``name`` whose words follow in ``tokens``, up to the first word its
    parser would not take (where the sentence around it goes on)."""
    parser = SUBCOMMANDS[name]
    actions = parser._actions  # type: ignore[attr-defined]
    wanted = sum(1 for action in actions if not action.option_strings)
    flags = {flag: action for action in actions for flag in action.option_strings}
    words, model, output, options = [name], "", "", []
    for token in tokens:
        bare = token.rstrip(_PUNCTUATION)
        last = bare != token
        flag = bare.split("=", 1)[0]
        if wanted and not bare.startswith("-"):
            words.append(bare)
            model, wanted = model or bare, wanted - 1
        elif flag in flags:
            words.append(bare)
            value = None
            if flags[flag].nargs != 0 and "=" not in bare and not last:
                value = next(tokens, None)
                if value is None:
                    return None
                last = value != value.rstrip(_PUNCTUATION)
                value = value.rstrip(_PUNCTUATION)
                words.append(value)
            if flag in ("-o", "--output"):
                output = value if value is not None else bare.split("=", 1)[1]
            else:
                options += [bare] if value is None else [bare, value]
        else:
            break
        if last:
            break
    if wanted:
        return None
    return Command(tuple(words), name, model, output, tuple(options))


def _typed(*words: object) -> Command:
    command = _scan(str(words[0]), iter([str(word) for word in words[1:]]))
    assert command is not None, words
    return command


def _python(code: str) -> Command:
    """A ``python -c`` line a hint gives for a function with no command."""
    function = re.search(r"u\.(\w+)\(", code)
    files = [json.loads(text) for text in re.findall(r'"(?:[^"\\]|\\.)*"', code)]
    assert function is not None and len(files) == 2, code
    return Command(("python", "-c", code), f"python {function.group(1)}", files[0], files[1],
                   ())


def _tokens(line: str) -> Iterator[str]:
    """The shell words of ``line``, one at a time, up to one no shell would read (an
    apostrophe in the sentence after a command)."""
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split, lexer.commenters = True, ""
    while True:
        try:
            token = lexer.get_token()
        except ValueError:
            return
        if token is None:
            return
        yield token


def _commands_in(text: str) -> list[Command]:
    """Every command the lines of ``text`` name: ``onnx-upsample COMMAND ...`` and
    ``python -c '...'``; one that no shell or parser would take fails the test."""
    found = []
    for line in text.splitlines():
        for match in re.finditer(rf"(?<![\w-]){PROG} (\w+)|python -c ", line):
            tokens = _tokens(line[match.end():])
            if match.group(1) is None:
                code = next(tokens, None)
                assert code is not None, f"a hint names python -c without its code: {line}"
                found.append(_python(code))
            elif match.group(1) in SUBCOMMANDS:
                command = _scan(match.group(1), tokens)
                assert command is not None, f"a hint that is no command line: {line}"
                found.append(command)
    return found


@dataclass(frozen=True)
class Result:
    code: int
    hints: tuple[Command, ...]
    said: str  # the last line, for the report
    out: str

    def writes(self, command: Command) -> bool:
        return self.code == 0 and bool(command.output)


def _execute(command: Command) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with (contextlib.redirect_stdout(out), contextlib.redirect_stderr(err),
          warnings.catch_warnings()):
        warnings.simplefilter("ignore")
        if command.words[0] == "python":
            try:
                exec(compile(command.words[2], "<hint>", "exec"), {"__name__": "__main__"})
                code = 0
            except Exception as error:  # as python -c reports it: exit status 1
                err.write(f"{type(error).__name__}: {error}\n")
                code = 1
        else:
            code = run_main(list(command.words))
    return code, out.getvalue(), err.getvalue()


class Folder:
    """One corpus model's folder, where its commands run; each command runs once (every
    chain that reaches it reads the same result)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results: dict[tuple[str, ...], Result] = {}

    def run(self, command: Command) -> Result:
        if command.words not in self.results:
            with contextlib.chdir(self.path):
                code, out, err = _execute(command)
            json_output = "--json" in command.options
            hints = _commands_in(err + ("" if json_output else out))
            if json_output and code in (0, 1) and out.strip():
                hints += [found for finding in json.loads(out).get("findings", [])
                          for text in finding["commands"] for found in _commands_in(text)]
            lines = (err or out).strip().splitlines()
            self.results[command.words] = Result(
                code, tuple(dict.fromkeys(hints)), lines[-1] if lines else "", out)
        return self.results[command.words]

    def same_model(self, first: str, second: str) -> bool:
        return (self.path / first).read_bytes() == (self.path / second).read_bytes()


def _follow(folder: Folder, chain: list[Command], level: int, hinted: bool,
            problems: list[str]) -> None:
    """Run ``chain[-1]`` (a command at ``level`` hints from the first; ``hinted``: a hint
    named it, else it is the first or a check run again after its fix) and follow what it
    names."""
    command = chain[-1]
    result = folder.run(command)
    given = {step.kind for step in chain}
    where = " -> ".join(map(str, chain))
    for hint in result.hints:
        if hint.kind in given:
            problems.append(f"loop: {where} -> {hint}")
    new = [hint for hint in result.hints if hint.kind not in given]
    if level and not new:
        if result.code != 0:
            problems.append(f"{where}: exit {result.code} and no other command: {result.said}")
        elif hinted and command.name in INSPECTIONS:
            problems.append(f"{where}: finds nothing to fix ({result.said})")
    if level == LEVELS:
        return
    for hint in new:
        _follow(folder, [*chain, hint], level + 1, True, problems)
        if not folder.run(hint).writes(hint):
            continue
        if folder.same_model(hint.output, hint.model):
            problems.append(f"{where} -> {hint}: writes a model identical to {hint.model}")
        elif command.name in INSPECTIONS:
            # the fix of a finding, done: the inspection again, on the model it wrote
            _follow(folder, [*chain, hint, command.on(hint.output)], level + 1, False,
                    problems)


MODEL = "model.onnx"
UPGRADED = "model_upgraded.onnx"
# the commands a user runs first on a model, and on its upgrade the way back down (to the
# lowest opset: where that fails, the hints name the others)
FIRST: dict[str, tuple[object, ...]] = {
    "check": ("check", MODEL),
    "check --json": ("check", MODEL, "--json"),
    "inspect": ("inspect", MODEL),
    "upgrade": ("upgrade", MODEL, "-o", UPGRADED),
    "downgrade": ("downgrade", MODEL, "-o", "model_downgraded.onnx"),
    "fold": ("fold", MODEL, "-o", "model_folded.onnx"),
    "run": ("run", MODEL, "--random"),
    "upgraded, downgrade": ("downgrade", UPGRADED, "-o", "model_back.onnx", "--opset",
                            DOWNGRADE_OPSETS[0]),
}


def _write(name: str, folder: Path) -> None:
    """Corpus model ``name`` as ``folder/model.onnx`` (its external data beside it)."""
    group, _, item = name.partition("/")
    if group == "legacy":
        return  # written with the rest of the legacy corpus
    folder.mkdir(parents=True)
    if group in ("pytorch", "examples"):
        source = ROOT / ("tests/data/pytorch" if group == "pytorch" else "examples") / item
        shutil.copyfile(source, folder / MODEL)
        return
    if name == "built/v9-shrinking":
        model = upsample_model("v9-raw", [1, 1, 0.5, 0.5], shape=[1, 1, 4, 6])
    elif name == "issue/tf2onnx-no-shape":
        model = tf2onnx_shrinking(0.5, "no shape")
    elif name == "issue/untyped-output":
        model = upsample_model("v9-raw", [1, 1, 2, 2], shape=[1, 1, 2, 3])
        model.graph.output[0].CopyFrom(declared_as(model.graph.output[0], "no type"))
    else:
        source, mode = BUILT[item]
        model = upsample_model(source, [1, 1, 2, 2], mode, shape=[1, 1, 2, 3])
    onnx.save(model, str(folder / MODEL))


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Folder]:
    base = tmp_path_factory.mktemp("hints")
    legacy_corpus.write(base / "legacy")  # type: ignore[attr-defined]
    found = {}
    for name in CORPUS:
        _write(name, base / name)
        found[name] = Folder(base / name)
    return found


# ------------------------------------------------------------------ diff's hints, followed

OURS = ("--backend", "onnxruntime", "--backend", "onnx-reference+onnx-upsample")


def test_diff_of_modes_in_upper_case_names_legacy_modes_not_the_backend_given(
        folders: dict[str, Folder]) -> None:
    """The loop was: diff exits 2 and says to choose another backend, such as
    onnx-reference+onnx-upsample, the one already given."""
    folder = folders["legacy/ir3_opset7_upper_case_NEAREST"]
    command = _typed("diff", MODEL, *OURS, "--json")
    problems: list[str] = []
    _follow(folder, [command], 0, False, problems)
    assert not problems, "\n".join(problems)
    refused = folder.run(command)
    assert refused.code == 2 and "such as onnx-reference" not in refused.said, refused.said
    # the command given, with --legacy-modes: the same runtimes, the mode in lower case
    assert [hint.words for hint in refused.hints] == [(*command.words, "--legacy-modes")]
    document = json.loads(folder.run(refused.hints[0]).out)
    # onnx-upsample's Upsample is onnxruntime's, bit for bit: the node is compared, not
    # refused, and the same
    assert [node["verdict"] for node in document["nodes"]] == ["identical"], document
    assert document["warnings"] == ["Upsample node 'up': mode 'NEAREST' (the case old "
                                    "converters wrote, which onnx's checker and onnxruntime "
                                    "refuse) is written 'nearest'"]


def test_the_fix_that_names_diff_is_the_conformance_call_in_python() -> None:
    from onnx_upsample.onnx._fixes import Action

    assert (Action("diff", (("legacy_modes", True),)).python()
            == "onnx_upsample.conformance.diff(model, ours, theirs, legacy_modes=True)")


def test_diff_of_a_node_no_runtime_runs_names_what_does(folders: dict[str, Folder]) -> None:
    """diff runs the model in two worker processes (a second or two each), so it is
    followed from the models a runtime refuses, not from every model: a mode in upper case
    (above) and scales below 1 (here: check, whose fix is upgrade --allow-downscale)."""
    folder = folders["legacy/ir4_opset9_tf2onnx_downscale"]
    command = _typed("diff", MODEL, *OURS)
    problems: list[str] = []
    _follow(folder, [command], 0, False, problems)
    assert not problems, "\n".join(problems)
    assert [hint.name for hint in folder.run(command).hints] == ["check"]


# the corpus' one model upgrade refuses also with --allow-downscale (no Resize-11+ rounds as
# its Resize-10 does at every input size): it has no upgraded model to bring down
NOT_UPGRADED = {"pytorch/mixed_nearest_dynamic_opset10.onnx"}
DOWNSCALING = (*FIRST["upgrade"], "--allow-downscale")


def _upgraded(folder: Folder) -> bool:
    """Whether the folder holds the model's upgrade: by the plain command, or, for scales
    below 1, by the one its hint names."""
    return (folder.run(_typed(*FIRST["upgrade"])).code == 0
            or folder.run(_typed(*DOWNSCALING)).code == 0)


def test_the_models_that_do_not_upgrade_are_those_named(folders: dict[str, Folder]) -> None:
    assert {name for name in CORPUS if not _upgraded(folders[name])} == NOT_UPGRADED


@pytest.mark.parametrize(("name", "first"), [
    pytest.param(name, first, id=f"{name}: {first}") for name in CORPUS for first in FIRST
    if not (name in NOT_UPGRADED and FIRST[first][1] == UPGRADED)])
def test_every_hint_ends_in_success_or_another_command_that_works(
        folders: dict[str, Folder], name: str, first: str) -> None:
    folder = folders[name]
    command = _typed(*FIRST[first])
    if command.model == UPGRADED:
        assert _upgraded(folder), name
    problems: list[str] = []
    _follow(folder, [command], 0, False, problems)
    assert not problems, "\n".join(problems)
