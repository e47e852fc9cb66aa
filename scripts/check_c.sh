#!/usr/bin/env bash
# The C kernels compile with every warning that points at undefined or unintended behaviour,
# as errors: -Wall -Wextra -Wconversion -Wshadow -Werror, with GCC and, where it is
# installed, Clang, at the optimisation the package is built with. Run by `make test`.
#
# Each compiler also compiles the portable path (ONNX_UPSAMPLE_NO_SIMD: the scalar loops
# alone), and GCC for aarch64 (the NEON backend) with Debian's cross compiler: installed
# (gcc-aarch64-linux-gnu), or the one scripts/aarch64_env.sh unpacks into build/aarch64/bin,
# which CI has. The aarch64 compile uses this interpreter's headers: Python.h is the same on
# every architecture, and what pyconfig.h records (LP64, little-endian, the sizes of the C
# types) is the same for x86-64 and aarch64 Linux. scripts/check_targets.sh compiles for
# every other wheel target (Clang, through zig).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c11 -O3 -ffp-contract=off -fno-trapping-math -pthread
       -Wall -Wextra -Wconversion -Wshadow -Werror -I"$include" -c)
aarch64=aarch64-linux-gnu-gcc
if ! command -v "$aarch64" >/dev/null 2>&1 && [ -x build/aarch64/bin/aarch64-linux-gnu-gcc ]; then
    aarch64=$PWD/build/aarch64/bin/aarch64-linux-gnu-gcc
fi
checked=0
failed=0
logs=()

compile() {  # compile LABEL CC FLAGS...: every C file, in the background (a job per
    # compiler and variant: linear.c alone takes 10-20 s at -O3); finish() reports
    local label=$1 cc=$2 log; shift 2
    log="$out/job${#logs[@]}"
    logs+=("$log")
    (
        ok=1
        for source in src/onnx_upsample/_kernels/_native/*.c; do
            "$cc" "${flags[@]}" "$@" "$source" -o "$log.$(basename "$source").o" || ok=0
        done
        if [ "$ok" = 1 ]; then
            echo "check_c: $("$cc" --version | head -n 1), $label: no warnings"
        else
            echo "check_c: $label with $cc: the warnings above"; exit 1
        fi
    ) >"$log" 2>&1 &
}

for cc in gcc clang; do
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "check_c: $cc is not installed here; skipped"
        continue
    fi
    checked=1
    extra=()
    # clang reports a vectorisation hint (IVDEP) it could not honour as a warning; that is
    # about speed, not behaviour
    [ "$cc" = clang ] && extra=(-Wno-pass-failed)
    compile "$(uname -m)" "$cc" "${extra[@]}"
    compile "portable path (ONNX_UPSAMPLE_NO_SIMD)" "$cc" "${extra[@]}" -DONNX_UPSAMPLE_NO_SIMD
done
[ "$checked" = 1 ] || { echo "check_c: no C compiler (gcc or clang) found"; exit 1; }
if [ "$(uname -m)" = aarch64 ]; then
    :  # the native compiles above were the aarch64 ones
elif command -v "$aarch64" >/dev/null 2>&1; then
    compile "aarch64" "$aarch64"
elif [ -n "${CHECK_C_AARCH64:-}" ]; then
    echo "check_c: $aarch64 is not installed (CHECK_C_AARCH64 asks for the aarch64 compile):" \
         "run scripts/aarch64_env.sh, or apt-get install gcc-aarch64-linux-gnu"
    failed=1
else
    echo "check_c: $aarch64 is not installed here; the aarch64 compile skipped" \
         "(scripts/aarch64_env.sh unpacks one into build/aarch64)"
fi
wait_failed=0
for job in $(jobs -p); do
    wait "$job" || wait_failed=1
done
cat "${logs[@]}"
[ "$wait_failed" = 0 ] || failed=1
exit "$failed"
