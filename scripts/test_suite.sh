#!/usr/bin/env bash
# The whole suite in two lanes, one per core of a 2-core machine (make test must stay under 10
# minutes there): the kernels' tests, then the differential suites and the tests of the
# (H, W, C) identity block, the row pairs, the collapsed rows, the corner cache, the
# streamed outputs at every offset in a cache line and the fast paths' counts once more on
# the baseline instruction set with streaming stores for every output, in one process; everything else (the model
# tools, the suite, the command line, files, dask) in another, whose progress prints live.
# The kernel lane's output follows when both are done. Exit status: non-zero if either lane
# failed.
#
# usage: PYTHON=.venv/bin/python scripts/test_suite.sh DIFFERENTIAL_FILE...
set -u
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
differential=("$@")
kernels=("${differential[@]}" tests/test_identity_block.py tests/test_native.py
         tests/test_native_constants.py tests/test_kernels.py tests/test_kernel_description.py
         tests/test_linear_variants.py tests/test_row_pairs.py tests/test_collapsed_axes.py
         tests/test_corner_cache.py tests/test_streaming_lines.py tests/test_fast_paths.py
         tests/test_nearest_rows.py tests/test_c_units.py
         tests/test_layouts.py tests/test_reference.py tests/test_reference_types.py
         tests/test_nan_bits.py tests/test_threads.py tests/test_buffers.py tests/test_memory.py
         tests/test_dtypes.py)
ignored=()
for file in "${kernels[@]}"; do ignored+=("--ignore=$file"); done
export HYPOTHESIS_PROFILE=ci
log=$(mktemp)
trap 'rm -f "$log"' EXIT
{
    "$py" -m pytest -q -p no:cacheprovider "${kernels[@]}" && {
        echo "== the differential suites again: baseline instruction set, streaming stores on"
        ONNX_UPSAMPLE_ISA=baseline ONNX_UPSAMPLE_STREAMING_STORES=always \
            "$py" -m pytest -q -p no:cacheprovider "${differential[@]}" \
                tests/test_identity_block.py tests/test_row_pairs.py tests/test_collapsed_axes.py \
                tests/test_corner_cache.py tests/test_streaming_lines.py tests/test_fast_paths.py
    }
} >"$log" 2>&1 &
lane=$!
echo "== the kernels' tests run in a second process; their output follows the rest's"
"$py" -m pytest -p no:cacheprovider "${ignored[@]}"
tools=$?
wait "$lane"
kernel=$?
echo "== the kernels' tests"
cat "$log"
[ "$tools" = 0 ] && [ "$kernel" = 0 ]
