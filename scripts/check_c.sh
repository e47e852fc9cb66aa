#!/usr/bin/env bash
# The C kernels compile with every warning that points at undefined or unintended behaviour,
# as errors: -Wall -Wextra -Wconversion -Wshadow -Werror, with GCC and, where it is
# installed, Clang, at the optimisation the package is built with. Run by `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=(-std=c11 -O3 -ffp-contract=off -fno-trapping-math -pthread
       -Wall -Wextra -Wconversion -Wshadow -Werror -I"$include" -c)
checked=0
failed=0
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
    for source in src/onnx_upsample/_kernels/_native/*.c; do
        "$cc" "${flags[@]}" "${extra[@]}" "$source" -o "$out/$(basename "$source").o" || failed=1
    done
    [ "$failed" = 1 ] || echo "check_c: $("$cc" --version | head -n 1): no warnings"
done
[ "$checked" = 1 ] || { echo "check_c: no C compiler (gcc or clang) found"; exit 1; }
exit "$failed"
