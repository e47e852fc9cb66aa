"""What ``conformance run``'s options mean: the verdicts ``--fail-on`` names, each
backend's share of ``--backend-option``, the command a kept failure replays, and where
``--failures-dir`` may write. The command (``cli/conformance.py``) reads them here."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._errors import UpsampleError
from ._common import PROG

#: Seconds one case may take, unless --timeout says otherwise.
DEFAULT_TIMEOUT = 60.0


#: ``--fail-on`` words that are not verdict kinds: the default kinds, and no kind at all.
DEFAULT_WORD, NONE_WORD = "default", "none"


def fail_on_kinds() -> list[str]:
    from ..conformance._waivers import VERDICTS

    return list(VERDICTS)


def default_kinds() -> Sequence[str]:
    from ..conformance._grade import FAILURES

    return FAILURES


def default_fail_on() -> str:
    return ", ".join(default_kinds())


def ort_versions() -> str:
    from ..conformance._waivers import ORT_VERSIONS

    return f"{ORT_VERSIONS}.x"


def default_memory() -> str:
    from ..conformance._process import DEFAULT_MEMORY_LIMIT

    if DEFAULT_MEMORY_LIMIT is None:
        return "none"
    return f"{DEFAULT_MEMORY_LIMIT / 2**30:.3g}G"


def parse_fail_on(text: str | None) -> list[str]:
    """The verdict kinds of ``--fail-on``: full names or unique prefixes of them, ``default``
    for :data:`onnx_upsample.conformance._grade.FAILURES` (also what no ``--fail-on``
    gives), ``none`` for no kind."""
    if text is None:
        return list(default_kinds())
    kinds = fail_on_kinds()
    words = [w.strip() for w in text.split(",") if w.strip()]
    if NONE_WORD in words:
        if len(words) > 1:
            raise UpsampleError(f"--fail-on {text!r}: {NONE_WORD!r} means no verdict fails; "
                                "give it alone, or list the kinds that fail")
        return []
    chosen: list[str] = []
    for word in words:
        if word == DEFAULT_WORD:
            matches = list(default_kinds())
        else:
            matches = [word] if word in kinds else [k for k in kinds if k.startswith(word)]
        if not matches or (len(matches) > 1 and word != DEFAULT_WORD):
            how = "matches " + ", ".join(matches) if matches else "is not a verdict kind"
            raise UpsampleError(f"--fail-on {text!r}: {word!r} {how}; give a comma list of "
                                f"{', '.join(kinds)}, or {DEFAULT_WORD!r} ("
                                f"{default_fail_on()}), or {NONE_WORD!r}, e.g. --fail-on "
                                f"{DEFAULT_WORD},waived")
        chosen += [m for m in matches if m not in chosen]
    if not chosen:
        raise UpsampleError(f"--fail-on {text!r} names no verdict kind; give a comma list of "
                            f"{', '.join(kinds)}, or {DEFAULT_WORD!r}, or {NONE_WORD!r}")
    return chosen


def backend_options(words: Sequence[str]) -> dict[str, str]:
    """``--backend-option KEY=VALUE`` words as a dict (a key given twice is an error)."""
    options: dict[str, str] = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key.strip():
            raise UpsampleError(f"--backend-option {word!r}: expected KEY=VALUE, e.g. "
                                "--backend-option graph_optimization_level=extended")
        if key.strip() in options:
            raise UpsampleError(f"--backend-option {key.strip()} is given twice; give it once")
        options[key.strip()] = value.strip()
    return options


def replay_words(args: argparse.Namespace, backend: str, form: str,
                  options: dict[str, str], memory_limit: int | None) -> list[str]:
    """The command that grades one backend as this run did (``--cases ID`` follows): the
    same settings, tolerance, waivers, verdicts that fail, and memory limit (written out:
    the default depends on the machine)."""
    words = [PROG, "conformance", "run", "--backend", backend]
    if args.suite is not None:
        words += ["--suite", str(Path(args.suite).absolute())]
    if form != "upsample":
        words += ["--form", form]
    for key, value in options.items():
        words += ["--backend-option", f"{key}={value}"]
    timeout = None if args.timeout == DEFAULT_TIMEOUT else f"{args.timeout:g}"
    limit = "none" if memory_limit is None else f"{memory_limit >> 20}M"
    flags: list[tuple[str, str | None]] = [
        ("--tolerance", args.tolerance), ("--timeout", timeout), ("--memory-limit", limit),
        ("--fail-on", args.fail_on)]
    words += [word for flag, value in flags if value is not None for word in (flag, value)]
    if args.expected_failures is not None:
        words += ["--expected-failures", str(Path(args.expected_failures).absolute())]
    return words


def backend_shares(backends: Sequence[str], options: dict[str, str]) -> dict[str, dict[str, str]]:
    """Each backend's share of ``--backend-option``: the keys it takes (a custom backend
    takes every key); a key no backend of the run takes is an error, before anything runs."""
    from ..conformance._backend_base import check_options, options_of

    shares = {}
    for backend in backends:
        table = options_of(backend)
        shares[backend] = {key: value for key, value in options.items()
                           if table is None or key in table}
        check_options(backend, shares[backend])
    for key in options:
        if not any(key in share for share in shares.values()):
            check_options(backends[0], {key: options[key]})  # words the refusal
    return shares


def failures_dir_usable(name: str, replaceable: Any) -> None:
    """Checked before the run: a new or empty directory, or one an earlier run wrote (what
    the run may replace when it ends)."""
    path = Path(name)
    if not name.strip():
        raise UpsampleError("--failures-dir is empty; give a directory name")
    if path.exists() and not path.is_dir():
        raise UpsampleError(f"--failures-dir {name!r} is a file; give a directory")
    if path.is_dir() and not replaceable(path):
        raise UpsampleError(f"--failures-dir {name!r} holds other files; give a new or "
                            "empty directory (or one an earlier --failures-dir wrote)")
    if not path.absolute().parent.is_dir():
        raise UpsampleError(f"--failures-dir {name!r}: its folder does not exist; "
                            "create it first")
