"""The workflows of the public code host (.github/workflows/), which nothing here can run, and
pyproject.toml's ``[tool.cibuildwheel]`` tables, which they run: what a change could break
without anyone noticing before a release. ci.yml runs .ci/run on every push; release.yml, on
a tag, builds the sdist and one cp311-abi3 wheel for each of the eight platforms from it,
each tested on CPython 3.11-3.14 with the platform-neutral tests that its platform can
install, and publishes them all by trusted publishing once every job has passed.
scripts/check_workflows.sh runs actionlint (with shellcheck) and cibuildwheel's own build
selection on the same files."""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
if not WORKFLOWS.is_dir() and (ROOT / "PKG-INFO").exists():
    pytest.skip("an unpacked sdist: the workflows are not in it", allow_module_level=True)
yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflows (the dev extra has it)")

CIBW: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
    "cibuildwheel"]
PYTHONS = ["cp311", "cp312", "cp313", "cp314"]
# (platform, CIBW_ARCHS) of a release job: the wheels' platform tags, less their versions
PLATFORM_TAGS = {
    ("linux", "x86_64"): ["manylinux_x86_64", "musllinux_x86_64"],
    ("linux", "aarch64"): ["manylinux_aarch64", "musllinux_aarch64"],
    ("macos", "x86_64"): ["macosx_x86_64"],
    ("macos", "arm64"): ["macosx_arm64"],
    ("windows", "AMD64"): ["win_amd64"],
    ("windows", "ARM64"): ["win_arm64"],
}
EIGHT = {tag for tags in PLATFORM_TAGS.values() for tag in tags}
# tests that fork, send signals or call POSIX without a skip: Linux's alone
POSIX_ONLY = re.compile(r"os\.fork\(|signal\.SIG|^import (resource|fcntl|termios)", re.M)


def _workflow(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((WORKFLOWS / name).read_text())
    # YAML 1.1 reads the key `on` as true
    loaded["on"] = loaded.pop(True, loaded.get("on"))
    return loaded


CI = _workflow("ci.yml")
RELEASE = _workflow("release.yml")
JOBS: dict[str, Any] = RELEASE["jobs"]


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job.get("steps", [])


def _uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in _steps(job) if s.get("uses", "").split("@")[0] == action]


def _selected(identifier: str, config: dict[str, Any]) -> bool:
    """cibuildwheel's build selection: matched by `build`, not by `skip` (fnmatch patterns)."""
    return (any(fnmatch(identifier, p) for p in config["build"].split())
            and not any(fnmatch(identifier, p) for p in config["skip"].split()))


def _option(identifier: str, name: str) -> Any:
    """An option for one identifier: the last override whose select matches, else the base."""
    value = CIBW.get(name)
    for override in CIBW.get("overrides", []):
        if name in override and any(fnmatch(identifier, p) for p in override["select"].split()):
            value = override[name]
    return value


def _test_files(command: str) -> list[str]:
    return re.findall(r"tests/\S+\.py", command)


@functools.cache
def _imports_directly(path: Path) -> frozenset[str]:
    """Top-level names a module imports (anywhere in it, functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return frozenset(found)


def _imports(path: Path) -> set[str]:
    """Top-level packages a test file imports, through the tests' own helper modules."""
    found: set[str] = set()
    todo, seen = [path], {path}
    while todo:
        for name in _imports_directly(todo.pop()):
            helper = ROOT / "tests" / f"{name}.py"
            if not helper.exists():
                found.add(name)
            elif helper not in seen:
                seen.add(helper)
                todo.append(helper)
    return found


# --- ci.yml ----------------------------------------------------------------------------


def test_ci_runs_the_projects_ci_on_every_push_and_for_the_release() -> None:
    assert CI["on"]["push"] == {"branches": ["**"]}  # tags: from release.yml, not twice
    assert "pull_request" in CI["on"] and "workflow_call" in CI["on"]
    (job,) = CI["jobs"].values()
    runs = [s["run"] for s in _steps(job) if "run" in s]
    assert any(re.search(r"(^|\s)bash \.ci/run$", r.strip()) for r in runs), runs
    # .ci/run takes about 50 minutes; this host's CI allows it 90
    assert 60 <= job["timeout-minutes"] <= 90
    # make builds .venv with python3 (3.11); check_wheel.sh tests the wheel on each later one
    (setup,) = _uses(job, "actions/setup-python")
    versions = setup["with"]["python-version"].split()
    assert versions[-1] == "3.11" and {"3.12", "3.13", "3.14"} <= set(versions)


# --- release.yml ---------------------------------------------------------------------------


def test_release_runs_on_version_tags() -> None:
    assert RELEASE["on"] == {"push": {"tags": ["v*"]}}
    assert RELEASE["permissions"] == {"contents": "read"}
    assert JOBS["ci"]["uses"] == "./.github/workflows/ci.yml"


def test_the_sdist_job_checks_that_the_tag_is_the_version() -> None:
    job = JOBS["sdist"]
    builds = [s["run"] for s in _steps(job) if "python -m build --sdist" in s.get("run", "")]
    assert builds
    (check,) = [s for s in _steps(job) if s.get("id") == "version"]
    assert check["env"]["TAG"] == "${{ github.ref_name }}"
    # the version as built: from the sdist's file name, not from pyproject.toml's text
    assert 'tag != "v" + version' in check["run"] and "dist" in check["run"]
    assert job["outputs"]["file"] == "${{ steps.version.outputs.file }}"


def test_the_wheel_jobs_cover_the_eight_platforms_on_native_runners() -> None:
    job = JOBS["wheels"]
    entries = job["strategy"]["matrix"]["include"]
    assert job["strategy"]["fail-fast"] is False
    pairs = [(e["platform"], e["archs"]) for e in entries]
    assert sorted(pairs) == sorted(PLATFORM_TAGS)
    for entry in entries:
        runner, platform, arch = entry["runner"], entry["platform"], entry["archs"]
        arm = arch in ("aarch64", "arm64", "ARM64")
        # native: nothing emulated (qemu) or cross-built untested (macOS, Windows)
        if platform == "macos":
            assert runner.startswith("macos-") and runner.endswith("-intel") != arm, entry
        else:
            assert runner.startswith({"linux": "ubuntu-", "windows": "windows-"}[platform])
            assert runner.endswith("-arm") == arm, entry
    # what each job builds and tests: cibuildwheel's selection from pyproject.toml
    built: dict[str, list[str]] = {}
    for platform, arch in pairs:
        for tag in PLATFORM_TAGS[platform, arch]:
            built[tag] = [py for py in PYTHONS if _selected(f"{py}-{tag}", CIBW)]
    assert set(built) == EIGHT
    assert all(pythons == PYTHONS for pythons in built.values()), built
    assert not _selected("cp314t-manylinux_x86_64", CIBW)  # free-threaded: no abi3


def test_the_wheel_jobs_build_from_the_sdist_with_its_own_settings() -> None:
    job = JOBS["wheels"]
    assert job["needs"] == "sdist"
    (cibuildwheel,) = _uses(job, "pypa/cibuildwheel")
    assert cibuildwheel["with"]["package-dir"] == "sdist/${{ needs.sdist.outputs.file }}"
    assert cibuildwheel["env"] == {"CIBW_PLATFORM": "${{ matrix.platform }}",
                                   "CIBW_ARCHS": "${{ matrix.archs }}"}
    # the version checked by scripts/check_workflows.sh is the one the workflow runs
    pinned = re.search(r"cibuildwheel==(\S+)", (ROOT / "scripts/check_workflows.sh").read_text())
    assert pinned and cibuildwheel["uses"] == f"pypa/cibuildwheel@v{pinned[1]}"


def test_publishing_is_trusted_and_waits_for_every_job() -> None:
    job = JOBS["publish"]
    assert set(job["needs"]) == {"ci", "sdist", "wheels"}
    assert job["permissions"] == {"id-token": "write"}
    assert job["environment"]["name"] == "pypi"
    (publish,) = _uses(job, "pypa/gh-action-pypi-publish")
    assert "password" not in publish.get("with", {})  # no token: trusted publishing
    (download,) = _uses(job, "actions/download-artifact")
    assert download["with"]["merge-multiple"] is True
    # every artifact the builds upload is downloaded, and only those
    uploads = [s["with"]["name"] for name in ("sdist", "wheels")
               for s in _uses(JOBS[name], "actions/upload-artifact")]
    assert uploads and all(fnmatch(u, download["with"]["pattern"]) for u in uploads)
    # which wheels must be there: the eight platforms
    check = next(s["run"] for s in _steps(job) if "expected" in s.get("run", ""))
    expected = re.search(r"^ *expected = (\{.*?\})$", check, re.M | re.S)
    assert expected and ast.literal_eval(expected[1]) == EIGHT


def test_actions_are_pinned_to_a_release() -> None:
    for name, workflow in (("ci.yml", CI), ("release.yml", RELEASE)):
        for job in workflow["jobs"].values():
            for step in _steps(job):
                if "uses" not in step:
                    continue
                action, _, ref = step["uses"].partition("@")
                # a major version's tag; cibuildwheel by its exact release (a new one can
                # change which wheels it builds), the PyPI action by its release branch
                assert re.fullmatch(r"v\d+", ref) or (
                    action == "pypa/cibuildwheel" and re.fullmatch(r"v\d+\.\d+\.\d+", ref)) or (
                    action == "pypa/gh-action-pypi-publish" and ref == "release/v1"), (
                    name, step["uses"])


def test_every_job_has_a_time_limit() -> None:
    for name, workflow in (("ci.yml", CI), ("release.yml", RELEASE)):
        for job_name, job in workflow["jobs"].items():
            assert "uses" in job or "timeout-minutes" in job, (name, job_name)


# --- pyproject.toml's [tool.cibuildwheel] ----------------------------------------------------


def test_one_abi3_wheel_per_platform_tested_on_every_cpython() -> None:
    # cibuildwheel builds the cp311-abi3 wheel once and reuses it for the later CPythons
    # (it only tests there), which works only while cp311 is among those selected
    assert CIBW["build"].split() == [f"{py}-*" for py in PYTHONS]
    for source in CIBW["test-sources"]:
        assert (ROOT / source).exists(), source
    assert CIBW["test-environment"] == {"HYPOTHESIS_PROFILE": "ci"}


@pytest.mark.parametrize("tag", sorted(EIGHT))
def test_each_platform_runs_tests_it_can_install(tag: str) -> None:
    identifier = f"cp311-{tag}"
    command = _option(identifier, "test-command")
    files = _test_files(command)
    assert command.startswith("pytest ") and files
    assert len(files) == len(command.split()) - command.split().index(files[0])
    for file in files:
        assert (ROOT / file).is_file(), file
    # the packages each platform can install (pip download's answer on 2026-12-06): musl has
    # no wheel of onnx, onnxruntime or ml_dtypes; macOS x86-64 none of onnxruntime
    missing = ({"onnx", "onnxruntime", "ml_dtypes"} if tag.startswith("musllinux")
               else {"onnxruntime"} if tag == "macosx_x86_64" else set())
    extras = _option(identifier, "test-extras")
    requires = " ".join(_option(identifier, "test-requires") or [])
    assert not any(name in requires for name in missing)
    if missing:
        assert "test" not in extras
    else:
        assert extras == ["test"]
    for file in files:
        imported = _imports(ROOT / file)
        # a test that needs onnxruntime imports it through tests/ort_oracle.py, which skips
        # the module where no wheel of it exists; one that imports it itself would fail
        direct = _imports_directly(ROOT / file)
        assert not (direct & missing & {"onnxruntime"}), (tag, file)
        assert not (imported & missing - {"onnxruntime"}), (tag, file, imported & missing)
    # forks and signals on Linux alone
    if not tag.startswith(("manylinux", "musllinux")):
        for file in files:
            assert not POSIX_ONLY.search((ROOT / file).read_text()), (tag, file)



def test_glibc_windows_and_macos_arm64_run_the_same_tests() -> None:
    commands = {tag: _option(f"cp311-{tag}", "test-command") for tag in EIGHT}
    full = {"manylinux_x86_64", "manylinux_aarch64", "macosx_arm64", "win_amd64", "win_arm64"}
    assert len({commands[tag] for tag in full}) == 1
    # macOS x86-64: the same, less the files that import onnxruntime themselves
    base = _test_files(CIBW["test-command"])
    without = [f for f in base if "onnxruntime" not in _imports_directly(ROOT / f)]
    assert _test_files(commands["macosx_x86_64"]) == without
