#!/usr/bin/env bash
# The compiled kernels under the sanitizers: the extension is built twice more, with
# AddressSanitizer + UndefinedBehaviorSanitizer and with ThreadSanitizer, into build/sanitize/,
# beside a copy of the Python package; the tests that drive the C layer hardest run against
# each build (the sanitizer runtime preloaded into the interpreter, which is not built with
# it). Any report fails the run. ONNX_UPSAMPLE_SLOW_BUILD=1 tells the tests to relax their
# time limits (a sanitized build is several times slower), and only those.
#
#   address+undefined: native and kernel tests, the description checks, streaming stores
#                      (at every offset of the output in a cache line),
#                      the nearest row loops' overlapping vector loads at every row width,
#                      threads and buffer pool, the large ORT differential cases, the fuzzer,
#                      rank-3 images (whose identity sums read a channel past a row's end);
#                      not the two tests that fork while other threads are inside calls:
#                      the sanitizer's allocator (GCC 12, Clang 14) takes no lock around
#                      fork, so a child forked while another thread is in its malloc waits
#                      forever on that thread's lock (seen 1 run in 11: the child's helper
#                      blocked in __sanitizer::SizeClassAllocator64::GetFromAllocator).
#                      glibc's malloc locks its arenas around fork; the plain run covers
#                      both tests.
#   thread:            the pool under concurrent calls, thread-count changes and helpers that
#                      join late (no fork: ThreadSanitizer does not follow a forked child)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
CC=${CC:-gcc}
root=build/sanitize
include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
sources=(src/onnx_upsample/_kernels/_native/*.c)

build() {  # build NAME FLAGS...: the package with a sanitized extension in $root/NAME
    local name=$1; shift
    rm -rf "${root:?}/$name"
    mkdir -p "$root/$name"
    cp -r src/onnx_upsample "$root/$name/"
    rm -f "$root/$name"/onnx_upsample/_kernels/_native.*.so
    # the instrumented loops cannot honour every unroll pragma; the compiler's notes about
    # that go to a log, shown only if the build fails
    "$CC" -shared -fPIC -std=c11 -O2 -g -fno-omit-frame-pointer -ffp-contract=off \
        -pthread "$@" -I"$include" "${sources[@]}" \
        -o "$root/$name/onnx_upsample/_kernels/_native$suffix" 2>"$root/$name/build.log" \
        || { cat "$root/$name/build.log"; exit 1; }
}

runtime() {  # the compiler's runtime library of a sanitizer, or a clear failure
    local path
    path=$("$CC" -print-file-name="$1")
    [ -f "$path" ] || { echo "test_sanitize: $CC has no $1 (install the compiler's" \
        "sanitizer runtimes, e.g. libasan8 libubsan1 libtsan2 on Debian)"; exit 1; }
    echo "$path"
}

export ONNX_UPSAMPLE_SLOW_BUILD=1 HYPOTHESIS_PROFILE=ci PYTHONDONTWRITEBYTECODE=1

echo "test_sanitize: building with -fsanitize=address,undefined"
build address -fsanitize=address,undefined -fno-sanitize-recover=all
asan=$(runtime libasan.so)
ubsan=$(runtime libubsan.so)
LD_PRELOAD="$asan:$ubsan" PYTHONPATH="$root/address" \
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$PYTHON" -m pytest -q -p no:cacheprovider -p no:randomly \
    tests/test_native.py tests/test_kernels.py tests/test_kernel_description.py \
    tests/test_threads.py tests/test_buffers.py tests/test_ort_large.py tests/test_fuzz.py \
    tests/test_layouts.py tests/test_nearest_rows.py tests/test_identity_block.py \
    tests/test_row_pairs.py tests/test_collapsed_axes.py tests/test_corner_cache.py \
    tests/test_streaming_lines.py \
    --deselect tests/test_native.py::test_forked_child_runs_parallel_calls \
    --deselect "tests/test_threads.py::test_fork_from_a_signal_handler_during_a_call_is_an_error_in_the_child"

echo "test_sanitize: building with -fsanitize=thread"
build thread -fsanitize=thread
tsan=$(runtime libtsan.so)
LD_PRELOAD="$tsan" PYTHONPATH="$root/thread" TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0 \
    "$PYTHON" -m pytest -q -p no:cacheprovider -p no:randomly -k "not fork" \
    tests/test_threads.py tests/test_kernels.py \
    "tests/test_native.py::test_thread_count_changes_during_calls_from_other_threads"
