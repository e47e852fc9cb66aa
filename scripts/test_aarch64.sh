#!/usr/bin/env bash
# The tests given as arguments on aarch64 Linux, emulated by qemu-user on an x86-64 Linux
# host: scripts/aarch64_env.sh builds (once) build/aarch64/ with qemu, a cross compiler, an
# arm64 CPython 3.11 and the test requirements' aarch64 wheels; this script then builds the
# extension for aarch64 into build/aarch64/package/, beside a copy of the Python package, and
# runs pytest there under the emulator. Exit status: pytest's.
#
#   scripts/test_aarch64.sh [--wheel WHEEL] TEST_FILE... (pytest arguments)
#
# With --wheel, the package is that wheel instead (a manylinux aarch64 wheel of
# scripts/build_wheel.sh, what users install), unpacked as pip installs it: the extension is
# then the one zig compiled with setup.py's flags, not built here. Without it:
#
# The extension is built as an aarch64 machine builds it: setup.py build_ext, run by the
# emulated CPython, so its sysconfig applies (Debian's CFLAGS, the abi3 suffix, the headers
# of root/usr/include/python3.11 and its aarch64 pyconfig.h) with setup.py's own GCC flags and
# source list; the compiler its sysconfig names, aarch64-linux-gnu-gcc, is build/aarch64/bin's
# (the unpacked cross compiler), an x86-64 program the emulated interpreter starts natively.
#
# sys.executable is build/aarch64/bin/python3.11, a host script that execs qemu, so the tests'
# child processes run emulated too. AARCH64_CPU picks qemu's -cpu (default neoverse-n1);
# AARCH64_QEMU_ARGS adds qemu options. Timings under emulation mean nothing: compare
# instruction counts, never times.
set -euo pipefail
cd "$(dirname "$0")/.."
wheel=""
if [ "${1:-}" = --wheel ]; then wheel=$(realpath "$2"); shift 2; fi
[ "$#" -gt 0 ] || { echo "usage: $0 [--wheel WHEEL] TEST_FILE... (pytest arguments)"; exit 2; }
start=$SECONDS
scripts/aarch64_env.sh
top=$PWD/build/aarch64
py=$top/bin/python3.11

built=$SECONDS
rm -rf "$top/package" "$top/ext"
mkdir -p "$top/package"
if [ -n "$wheel" ]; then
    # the wheel's files where pip puts them (its dist-info: the version and requirements
    # that tests read through importlib.metadata)
    "${PYTHON:-.venv/bin/python}" -m zipfile -e "$wheel" "$top/package"
    so=$top/package/onnx_upsample/_kernels/_native.abi3.so
    [ -f "$so" ] || { echo "test_aarch64: no onnx_upsample/_kernels/_native.abi3.so in $wheel"; exit 1; }
    origin="the wheel ${wheel##*/}"
else
    cp -r src/onnx_upsample "$top/package/"
    rm -f "$top"/package/onnx_upsample/_kernels/_native.*.so
    find "$top/package" -name __pycache__ -type d -prune -exec rm -rf {} +
    # dist_info: the package's metadata beside the copy, as an installed package has it (its
    # version, its requirements: tests read them through importlib.metadata)
    PATH="$top/bin:$PATH" "$py" setup.py build_ext --build-lib "$top/ext/lib" \
        --build-temp "$top/ext/temp" dist_info --output-dir "$top/package" \
        >"$top/build.log" 2>&1 || { cat "$top/build.log"; exit 1; }
    sos=("$top"/ext/lib/onnx_upsample/_kernels/_native*.so)
    [ "${#sos[@]}" = 1 ] && [ "$(basename "${sos[0]}")" = _native.abi3.so ] \
        || { cat "$top/build.log"; echo "test_aarch64: expected _native.abi3.so, built: ${sos[*]##*/}"; exit 1; }
    cp "${sos[0]}" "$top/package/onnx_upsample/_kernels/"
    so=$top/package/onnx_upsample/_kernels/_native.abi3.so
    # premise: every C file was compiled by the cross compiler with setup.py's flags (the exact
    # floating point and the -g0 that come last)
    compiles=$(grep -c '^aarch64-linux-gnu-gcc .* -c ' "$top/build.log" || true)
    exact=$(grep '^aarch64-linux-gnu-gcc .* -c ' "$top/build.log" \
            | grep -c -- ' -ffp-contract=off .*-g0' || true)
    [ "$compiles" -gt 0 ] && [ "$compiles" = "$exact" ] \
        || { echo "test_aarch64: $((compiles - exact)) of $compiles compiles lack setup.py's flags" \
                  "(build/aarch64/build.log)"; exit 1; }
    origin="$compiles C files"
fi
# premise: an ELF shared object for aarch64 (64-bit, little-endian, e_machine 183 = EM_AARCH64)
header=$(od -An -tx1 -N 20 "$so" | tr -d ' \n')
[ "${header:0:12}" = 7f454c460201 ] && [ "${header:32:8}" = 0300b700 ] \
    || { echo "test_aarch64: $so is not an aarch64 ELF shared object (header $header)"; exit 1; }
echo "test_aarch64: ${so#"$PWD"/} from $origin ($(wc -c <"$so") bytes, aarch64 ELF)" \
     "in $((SECONDS - built)) s"

# The oracle of the linear bits: onnxruntime's aarch64 build fuses multiply-adds, so the
# outputs are held to those the x86-64 build (this checkout's, in .venv) and onnxruntime's
# x86-64 build give on the same inputs, recorded first (tests/recorded_bits.py)
host_python=${PYTHON:-.venv/bin/python}
"$host_python" tests/recorded_bits.py "$top/recorded_bits.npz"
export ONNX_UPSAMPLE_RECORDED_BITS=$top/recorded_bits.npz
# Emulation is several times slower: ONNX_UPSAMPLE_SLOW_BUILD=1 makes the tests' time limits
# 10 times longer (tests/slowdown.py; it changes nothing else)
export PYTHONPATH="$top/package:$top/site" HYPOTHESIS_PROFILE=ci ONNX_UPSAMPLE_SLOW_BUILD=1
"$py" -c '
import platform, sys
import onnx_upsample._kernels._native as native
assert native.__file__.startswith(sys.argv[1]), native.__file__
assert platform.machine() == "aarch64", platform.machine()
print("test_aarch64: the extension imports under qemu (" + platform.machine() + ")")
' "$top/package"
# a background job of a shell without job control (cmd &, nohup cmd &) starts with SIGINT
# ignored, and so does every process it starts: the tests that interrupt a child with it
# (test_native.py's ctrl_c) then time out, on any platform
[ -z "$(trap -p INT)" ] || echo "test_aarch64: warning: SIGINT is ignored in this process" \
    "(started in the background?): tests that interrupt a child with it will fail"
tests=$SECONDS
status=0
"$py" -m pytest -q -p no:cacheprovider "$@" || status=$?
echo "test_aarch64: pytest took $((SECONDS - tests)) s (all: $((SECONDS - start)) s), exit status $status"
exit "$status"
