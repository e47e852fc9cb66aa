#!/usr/bin/env bash
# Instructions per output on aarch64, the NEON build against the portable one (the scalar
# loops alone, ONNX_UPSAMPLE_NO_SIMD), counted under qemu-user by a TCG plugin: the
# aarch64 counterpart of benchmarks/instructions.py's callgrind counts (speed itself cannot
# be measured under emulation). Each workload runs in its own emulated process on one
# thread, as instructions.py's child (the preparing call, then two calls into out=), and only
# the instructions executed in the compiled module's code pages count.
#
# Needs build/aarch64 (scripts/aarch64_env.sh, run here first) and Debian 12's qemu-user 7.2,
# fetched here with the same private apt state: Debian 13's qemu-aarch64, which the tests
# use, is a static binary that cannot load plugins, and 7.2 runs the kernels (only
# onnxruntime's aarch64 wheel, which these counts do not import, needs 10.0).
# Usage: benchmarks/instructions_aarch64.sh [WORKLOAD NAME...]  (default: the image and
# volume workloads of instructions.py)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/aarch64_env.sh >/dev/null
top=$PWD/build/aarch64
work=$top/insn
mkdir -p "$work"

# qemu 7.2 and the libraries it needs beyond this host's, from the bookworm apt state
if [ ! -x "$work/qemu72/usr/bin/qemu-aarch64" ]; then
    d=$top/apt/bookworm
    opts=(-q -o "Dir::Etc::sourcelist=$d/sources.list" -o "Dir::Etc::sourceparts=$d/empty"
          -o "Dir::Etc::preferences=$d/preferences" -o "Dir::Etc::preferencesparts=$d/empty"
          -o "Dir::State=$d/state" -o "Dir::State::Lists=$d/lists"
          -o "Dir::State::status=$d/status" -o "Dir::Cache=$d/cache"
          -o "Dir::Cache::archives=$d/cache/archives" -o Dir::Cache::pkgcache=
          -o Dir::Cache::srcpkgcache= -o APT::Architectures=amd64,arm64
          -o APT::Sandbox::User=root -o Debug::NoLocking=1)
    rm -rf "$work/debs" "$work/qemu72" && mkdir -p "$work/debs"
    (cd "$work/debs" && apt-get "${opts[@]}" download qemu-user libcapstone4 liburing2 libnuma1) \
        >"$work/debs.log" 2>&1 || { tail -n 3 "$work/debs.log"; exit 1; }
    for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/qemu72"; done
fi
gcc -O2 -shared -fPIC -o "$work/libinsn_pages.so" benchmarks/qemu_insn_pages.c

build() {  # build NAME CFLAGS: the extension for aarch64 into $work/NAME/package
    local dest=$work/$1
    rm -rf "$dest" && mkdir -p "$dest/package"
    cp -r src/onnx_upsample "$dest/package/"
    rm -f "$dest"/package/onnx_upsample/_kernels/_native.*.so
    CFLAGS="$2" PATH="$top/bin:$PATH" "$top/bin/python3.11" setup.py build_ext \
        --build-lib "$dest/lib" --build-temp "$dest/temp" >"$dest/build.log" 2>&1 \
        || { cat "$dest/build.log"; exit 1; }
    cp "$dest"/lib/onnx_upsample/_kernels/_native.abi3.so "$dest/package/onnx_upsample/_kernels/"
}
build neon ""
build portable "-DONNX_UPSAMPLE_NO_SIMD"

count() {  # count NAME WORKLOAD: instructions per output in the module, with build NAME
    local pages=$work/pages.txt out
    out=$(PYTHONPATH="$work/$1/package:$top/site:$PWD/benchmarks" ONNX_UPSAMPLE_NUM_THREADS=1 \
          LD_LIBRARY_PATH="$work/qemu72/usr/lib/x86_64-linux-gnu" \
          "$work/qemu72/usr/bin/qemu-aarch64" -cpu neoverse-n1 -L "$top/root" \
          -E LD_LIBRARY_PATH=/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu \
          -plugin "$work/libinsn_pages.so,out=$pages" -d plugin \
          "$top/root/usr/bin/python3.11" - "$2" <<'PY'
import sys
import instructions
instructions.child(sys.argv[1], 2)
for line in open("/proc/self/maps"):
    if "_native" in line and " r-xp " in line:
        print("CODE", line.split()[0])
PY
)
    python3 - "$pages" "$out" <<'PY'
import sys
pages, out = sys.argv[1], sys.argv[2]
outputs = int(out.split("OUTPUTS")[1].split()[0]) * 3
ranges = [tuple(int(a, 16) >> 12 for a in line.split()[1].split("-"))
          for line in out.splitlines() if line.startswith("CODE")]
total = 0
for line in open(pages):
    page, n = line.split()
    if any(lo <= int(page, 16) < hi for lo, hi in ranges):
        total += int(n)
print(f"{total / outputs:.3f}")
PY
}

names=("$@")
[ "${#names[@]}" -gt 0 ] || names=("channel-last uint8 linear" "trilinear float32"
    "RGB uint8 (H, W, 3) linear" "grey uint8 linear" "RGB float32 (H, W, 3) linear"
    "RGB float32 (1, H, W, 3) linear" "RGB uint8 (H, W, 3) nearest")
echo "instructions per output in the compiled module on aarch64 (qemu 7.2, one thread)"
echo
echo "| workload | portable | NEON | NEON / portable |"
echo "|---|---|---|---|"
for name in "${names[@]}"; do
    portable=$(count portable "$name")
    neon=$(count neon "$name")
    echo "| $name | $portable | $neon | $(python3 -c "print(f'{$neon / $portable:.2f}')") |"
done
