"""The requirements of pyproject.toml follow its version policy (the comment above its
``[build-system]``): every requirement has a floor; a cap only where a "cap:" comment right
above its line says which break it guards against, and then one that the release this
environment runs (``make test`` installs the newest allowed) is within and the versioning of
that project allows to break us; the floors are what CI installs the wheel against
(``.ci/lowest.txt``); and the extras bring only what their features use."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT_TEXT = (ROOT / "pyproject.toml").read_text()
PYPROJECT = tomllib.loads(PYPROJECT_TEXT)
PROJECT = PYPROJECT["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
SELF = canonicalize_name(PROJECT["name"])
# the extras of developers, of the conformance report, the benchmarks and the docs; every
# other extra is a user's
TOOL_EXTRAS = ("test", "conformance", "dev", "bench", "docs")
# released in minor steps that may break (besides every 0.x project): a new opset and IR
# version in each of onnx's; new reports in each of the linters'
MINOR_STEPS = {"onnx", "onnxruntime", "mypy", "ruff"}


def _requirements(where: str, lines: list[str]) -> list[tuple[str, Requirement]]:
    return [(where, Requirement(line)) for line in lines
            if canonicalize_name(Requirement(line).name) != SELF]


ALL = (_requirements("build-system", PYPROJECT["build-system"]["requires"])
       + _requirements("dependencies", PROJECT["dependencies"])
       + [r for extra, lines in EXTRAS.items() for r in _requirements(f"[{extra}]", lines)])


def _ends(requirement: Requirement) -> tuple[Version | None, Version | None]:
    """(floor, cap) of a requirement: from >= and <, or from a minor pin (==1.23.*)."""
    floor = cap = None
    for spec in requirement.specifier:
        if spec.operator == ">=":
            floor = Version(spec.version)
        elif spec.operator == "<":
            cap = Version(spec.version)
        elif spec.operator == "==" and spec.version.endswith(".*"):
            floor = Version(spec.version[:-2])
            cap = Version(f"{floor.major}.{floor.minor + 1}")
    return floor, cap


def _next_breaking(name: str, version: Version) -> Version:
    """The first release after ``version`` whose project's versioning allows a break."""
    if version.major == 0 or canonicalize_name(name) in MINOR_STEPS:
        return Version(f"{version.major}.{version.minor + 1}")
    return Version(str(version.major + 1))


def _comment_above(requirement: Requirement) -> str:
    """The comment lines right above the requirement's line in pyproject.toml (a requirement
    capped in several extras has a line, and a comment, in each)."""
    lines = PYPROJECT_TEXT.splitlines()
    comments = []
    for number, line in enumerate(lines):
        text = line.strip().rstrip(",").strip("\"")
        try:
            same = Requirement(text) == requirement
        except InvalidRequirement:
            same = False
        if same:
            above = number - 1
            block = []
            while above >= 0 and lines[above].strip().startswith("#"):
                block.insert(0, lines[above].strip())
                above -= 1
            comments.append(" ".join(block))
    return " | ".join(comments)


@pytest.mark.parametrize(("where", "requirement"), ALL, ids=[f"{w}:{r}" for w, r in ALL])
def test_every_requirement_has_a_floor(where: str, requirement: Requirement) -> None:
    floor, _ = _ends(requirement)
    assert floor is not None, (
        f"{where} {requirement}: the version policy wants a floor (>=), the oldest release "
        "that works")


CAPPED = [(where, r) for where, r in ALL if _ends(r)[1] is not None]


def test_only_a_few_requirements_are_capped() -> None:
    """The policy's premise: caps are the exception (onnx's, the oracle's, and the tools that
    turn a new release's new reports into failures: the linters, the docs' builder)."""
    assert {canonicalize_name(r.name) for _, r in CAPPED} <= MINOR_STEPS | {"sphinx"}


@pytest.mark.parametrize(("where", "requirement"), CAPPED,
                         ids=[f"{w}:{r}" for w, r in CAPPED])
def test_each_cap_says_which_break_it_guards_against(where: str,
                                                     requirement: Requirement) -> None:
    comments = _comment_above(requirement)
    assert comments and all("cap:" in block for block in comments.split(" | ")), (
        f"{where} {requirement}: a cap needs a '# cap: ...' comment right above its line "
        f"in pyproject.toml saying which break it guards against (found: {comments!r})")


@pytest.mark.parametrize(("where", "requirement"), CAPPED,
                         ids=[f"{w}:{r}" for w, r in CAPPED])
def test_each_cap_is_a_breaking_release_beyond_the_one_installed(
        where: str, requirement: Requirement) -> None:
    """The cap is a release whose project's versioning allows a break (a major release; a
    minor one for 0.x, onnx's and the linters'), and not below the first one after the
    version installed: CI's fresh environment installs the newest release allowed. Checked
    where the requirement is installed (the conformance extra's tools are installed by make
    conformance-doc only)."""
    try:
        installed = Version(importlib.metadata.version(requirement.name))
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{requirement.name} is not installed here (an extra make test does not "
                    "install)")
    _, cap = _ends(requirement)
    assert cap is not None
    assert requirement.specifier.contains(installed, prereleases=True), (
        f"{where} {requirement}: {requirement.name} {installed} is installed here, outside "
        "the range (rebuild .venv: make .venv/.installed)")
    minor_steps = cap.major == 0 or canonicalize_name(requirement.name) in MINOR_STEPS
    boundary = cap.release == ((cap.major, cap.minor) if minor_steps else (cap.major,))
    assert boundary and cap >= _next_breaking(requirement.name, installed), (
        f"{where} {requirement}: with {installed} installed, the cap is a release from "
        f"<{_next_breaking(requirement.name, installed)} on where the versioning allows a "
        "break")


def test_lowest_constraints_pin_exactly_the_floors_of_what_users_install() -> None:
    """check_wheel.sh installs the wheel with every user extra against .ci/lowest.txt: every
    pin there must be a declared floor, and every floor must be pinned."""
    floors: dict[str, Version] = {}
    for where, requirement in ALL:
        user = where == "dependencies" or where.strip("[]") in set(EXTRAS) - set(TOOL_EXTRAS)
        floor, _ = _ends(requirement)
        if user and floor is not None:
            floors[canonicalize_name(requirement.name)] = floor
    pins = {}
    for line in (ROOT / ".ci" / "lowest.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.strip().split("==")
            pins[canonicalize_name(name)] = Version(version)
    assert pins == floors


def _names(extra: str) -> set[str]:
    """Every distribution an extra brings, through the extras it names."""
    names = set()
    for line in EXTRAS[extra]:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == SELF:
            for inner in requirement.extras:
                names |= _names(inner)
        else:
            names.add(canonicalize_name(requirement.name))
    return names


def test_the_dask_extra_does_not_bring_distributed() -> None:
    """onnx_upsample.dask uses distributed only where the process imported it already (for an
    active client's workers): a local dask user does not install it, a cluster user asks
    for it with the 'distributed' extra."""
    assert "distributed" not in _names("dask")
    assert {"dask", "zarr", "distributed"} <= _names("distributed")
    assert "distributed" in _names("dev")  # so that make test runs tests/test_distributed.py


def test_the_changelog_has_a_section_for_the_version() -> None:
    """The version lives in pyproject.toml alone; the changelog names it before a release is
    tagged (the release workflow refuses a tag that differs from it)."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## [{PROJECT['version']}]" in changelog
    assert "version" not in PROJECT.get("dynamic", [])


def test_the_docs_host_builds_what_make_docs_builds() -> None:
    """.readthedocs.yaml installs the package with the docs extra and builds docs/conf.py with
    warnings as errors, as make docs does; the project's Documentation URL is that site."""
    yaml = pytest.importorskip("yaml", reason="PyYAML (brought by dask) reads the docs config")
    config = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text())
    assert (ROOT / config["sphinx"]["configuration"]).is_file()
    assert config["sphinx"]["fail_on_warning"] is True
    [install] = config["python"]["install"]
    assert install["path"] == "." and install["extra_requirements"] == ["docs"]
    assert "docs" in EXTRAS
    assert "readthedocs" in PROJECT["urls"]["Documentation"]
    assert "-W" in (ROOT / "Makefile").read_text().split("\ndocs:", 1)[1].split("\n\n")[0]
