#!/usr/bin/env bash
# Cross-compiles the C kernels for every platform a wheel is built for, with the project's
# strict warnings (scripts/check_c.sh's, as errors), and links the extension where a link can
# be checked here: zig's C compiler (clang, with its own libc headers and stubs for each
# target) from PyPI, pinned.
#
#   scripts/check_targets.sh [-j N] [--src DIR] [TARGET...]
#   scripts/check_targets.sh --list
#
# With no TARGET, all of them. Each target compiles every C file of DIR
# (src/onnx_upsample/_kernels/_native/*.c unless --src says otherwise); then
#   - the Linux targets link _native.abi3.so and scripts/check_targets.py reads it with the
#     host's readelf: the libraries it needs (libc alone; glibc's libpthread too before
#     2.34), no glibc symbol version newer than the target's (2.28), every undefined symbol
#     either libc's or Python's (Py*/_Py*, in the stable ABI of 3.11, resolved by the
#     interpreter at load time), and PyInit_* alone exported;
#   - the Windows targets link _native.pyd against an import library of python3.dll made
#     from CPython's Misc/stable_abi.toml (so a function outside the stable ABI fails the
#     link), and the helper checks that it imports python3.dll and the system's DLLs only;
#   - the macOS targets compile only (the host's binutils do not read Mach-O).
# zig's windows-gnu targets are clang with mingw-w64's headers: GCC's extensions and POSIX
# threads (winpthreads) are there, so what only MSVC rejects is not checked here.
#
# Headers: Linux and macOS use the headers of $PYTHON (3.11 or later; Python.h is the same
# everywhere and what its pyconfig.h records, LP64 and little-endian, holds for all four);
# Windows uses CPython 3.11.2's Include/ and PC/pyconfig.h, from the upstream tarball that
# Debian's source package python3.11 (bookworm) carries, fetched once with apt-get (a private
# apt state under build/targets/, nothing installed) and checked against its SHA-256.
#
# Prints one line per target, "ok" or FAILED with the first errors, and the time taken;
# exits 1 if any target failed. Everything it fetches or builds is under build/targets/
# (zig's venv and cache, the CPython headers, each target's objects and logs in out/TARGET/);
# a second run reuses it all (zig caches each compile), so only changed files compile again.
# Environment: PYTHON (default .venv/bin/python, else python3), JOBS (default: the cores).
set -euo pipefail
cd "$(dirname "$0")/.."

CPYTHON_VERSION=3.11.2
CPYTHON_DEBIAN_SOURCE=python3.11
CPYTHON_DEBIAN_SUITE=bookworm
CPYTHON_ORIG=python3.11_3.11.2.orig.tar.gz
CPYTHON_ORIG_SHA256=2411c74bda5bbcfcddaf4531f66d1adc73f247f529aee981b029513aefdbf849
ALL_TARGETS=(x86_64-linux-gnu.2.28 aarch64-linux-gnu.2.28 x86_64-linux-musl
             aarch64-linux-musl x86_64-macos aarch64-macos x86_64-windows-gnu
             aarch64-windows-gnu)
FLAGS=(-std=c11 -O3 -ffp-contract=off -fno-fast-math -fno-trapping-math
       -fvisibility=hidden -g0 -Wall -Wextra -Wconversion -Wshadow -Werror
       # clang reports a vectorisation hint it could not honour as a warning (check_c.sh)
       -Wno-pass-failed)
ROOT=build/targets

usage() {  # the comment at the top of this file
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    echo "Targets: ${ALL_TARGETS[*]}"
}

src_dir=src/onnx_upsample/_kernels/_native
jobs_wanted=${JOBS:-$(nproc 2>/dev/null || echo 2)}
targets=()
while [ $# -gt 0 ]; do
    case $1 in
        -h|--help) usage; exit 0 ;;
        --list) printf '%s\n' "${ALL_TARGETS[@]}"; exit 0 ;;
        -j) jobs_wanted=$2; shift ;;
        -j*) jobs_wanted=${1#-j} ;;
        --src) src_dir=${2%/}; shift ;;
        -*) echo "check_targets: unknown option $1" >&2; usage >&2; exit 2 ;;
        *)
            known=0
            for target in "${ALL_TARGETS[@]}"; do [ "$1" = "$target" ] && known=1; done
            if [ "$known" = 0 ]; then
                echo "check_targets: unknown target $1 (one of: ${ALL_TARGETS[*]})" >&2
                exit 2
            fi
            targets+=("$1") ;;
    esac
    shift
done
[ "${#targets[@]}" -gt 0 ] || targets=("${ALL_TARGETS[@]}")
[[ "$jobs_wanted" =~ ^[1-9][0-9]*$ ]] || { echo "check_targets: -j wants a number" >&2; exit 2; }

shopt -s nullglob
sources=("$src_dir"/*.c)
shopt -u nullglob
if [ "${#sources[@]}" = 0 ]; then
    echo "check_targets: no C file in $src_dir" >&2
    exit 2
fi
# the largest first: linear.c alone takes most of a target's time
mapfile -t sources < <(for source in "${sources[@]}"; do
                           echo "$(wc -c <"$source") $source"; done | sort -rn | cut -d' ' -f2-)

start=$(date +%s)
log() { echo "check_targets: $*"; }
has_kind() {  # has_kind PATTERN: is one of the targets asked for like PATTERN
    local target
    for target in "${targets[@]}"; do [[ $target == $1 ]] && return 0; done
    return 1
}

# --- zig (and pefile, for the Windows binaries) in a venv of their own
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "check_targets: $PYTHON is not Python 3.11 or later (the headers of the" \
         "limited API of 3.11 are needed; set PYTHON)" >&2
    exit 2
fi
# shellcheck source=scripts/zig_env.sh
source scripts/zig_env.sh
zig_env check_targets || exit 2
helper=("$ZIG_PYTHON" scripts/check_targets.py)
zig=("${ZIG[@]}")
zig_lib=$("$ZIG_PYTHON" -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))')/lib

# --- the host's headers (Linux, macOS)
host_include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
host_version=$("$PYTHON" -c 'import platform; print(platform.python_version())')
host_problem=""
[ -f "$host_include/Python.h" ] || host_problem="no $host_include/Python.h (the headers of $PYTHON)"

# --- CPython's source: Include/ and PC/pyconfig.h (Windows), Misc/stable_abi.toml
cpython=$ROOT/cpython-$CPYTHON_VERSION
fetch_cpython() {  # prints why not, on failure
    local downloads=$ROOT/downloads apt=$ROOT/apt tarball
    tarball=$downloads/$CPYTHON_ORIG
    mkdir -p "$downloads"
    if ! echo "$CPYTHON_ORIG_SHA256  $tarball" | sha256sum -c --status 2>/dev/null; then
        if ! command -v apt-get >/dev/null 2>&1; then
            echo "no apt-get here to fetch Debian's source package $CPYTHON_DEBIAN_SOURCE"
            return 1
        fi
        local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
        [ -f "$keyring" ] || { echo "no $keyring (Debian's archive keys)"; return 1; }
        mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
        echo "deb-src [signed-by=$keyring] http://deb.debian.org/debian" \
             "$CPYTHON_DEBIAN_SUITE main" >"$apt/sources.list"
        local options=(-q -o "Dir::State=$PWD/$apt" -o "Dir::State::Lists=$PWD/$apt/lists"
                       -o "Dir::Cache=$PWD/$apt/cache" -o "Dir::State::status=/dev/null"
                       -o "Dir::Etc::SourceList=$PWD/$apt/sources.list"
                       -o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::Preferences=/dev/null
                       -o Dir::Etc::PreferencesParts=/dev/null -o Debug::NoLocking=1)
        [ "$(id -u)" = 0 ] && options+=(-o APT::Sandbox::User=root)
        if ! { apt-get "${options[@]}" update \
                   && (cd "$downloads" \
                       && apt-get "${options[@]}" source --download-only \
                              "$CPYTHON_DEBIAN_SOURCE"); } >"$ROOT/cpython-fetch.log" 2>&1
        then
            echo "apt-get could not fetch the source of $CPYTHON_DEBIAN_SOURCE" \
                 "($CPYTHON_DEBIAN_SUITE); log: $ROOT/cpython-fetch.log"
            return 1
        fi
        if ! echo "$CPYTHON_ORIG_SHA256  $tarball" | sha256sum -c --status; then
            echo "$tarball is not the pinned one (SHA-256 $CPYTHON_ORIG_SHA256)"
            return 1
        fi
    fi
    rm -rf "$cpython.tmp"
    mkdir -p "$cpython.tmp"
    local top=Python-$CPYTHON_VERSION
    tar -xzf "$tarball" -C "$cpython.tmp" --strip-components=1 "$top/Include" \
        "$top/PC/pyconfig.h" "$top/Misc/stable_abi.toml" "$top/LICENSE" || return 1
    "${helper[@]}" def "$cpython.tmp/Misc/stable_abi.toml" "$cpython.tmp/python3.def" \
        || return 1
    "${zig[@]}" dlltool -m i386:x86-64 -D python3.dll -d "$cpython.tmp/python3.def" \
        -l "$cpython.tmp/libpython3-x86_64.a" || return 1
    "${zig[@]}" dlltool -m arm64 -D python3.dll -d "$cpython.tmp/python3.def" \
        -l "$cpython.tmp/libpython3-aarch64.a" || return 1
    rm -rf "$cpython"
    mv "$cpython.tmp" "$cpython"
    rm -rf "$downloads" "$apt"
}
cpython_problem=""
if { has_kind '*-linux-*' || has_kind '*-windows-*'; } && [ ! -f "$cpython/python3.def" ]; then
    log "fetching CPython $CPYTHON_VERSION's headers (Debian source package" \
        "$CPYTHON_DEBIAN_SOURCE, $CPYTHON_DEBIAN_SUITE)"
    cpython_problem=$(fetch_cpython 2>&1) || cpython_problem=${cpython_problem:-failed}
    [ -f "$cpython/python3.def" ] || cpython_problem=${cpython_problem:-failed}
fi
if [ -n "$cpython_problem" ]; then
    log "no CPython $CPYTHON_VERSION source: $cpython_problem"
    stable_abi=()
else
    stable_abi=(--stable-abi "$cpython/Misc/stable_abi.toml")
fi
setup_end=$(date +%s)

# --- compile every file for every target, JOBS at a time
out=$ROOT/out
declare -A setup_error=()
target_flags() {  # target_flags TARGET: into the array tflags
    case $1 in
        *-windows-*) tflags=(-I"$cpython/Include" -I"$cpython/PC") ;;
        *) tflags=(-fPIC -pthread -I"$host_include") ;;
    esac
}
for target in "${targets[@]}"; do
    rm -rf "${out:?}/$target"
    mkdir -p "$out/$target"
    case $target in
        *-windows-*) [ -z "$cpython_problem" ] \
                         || setup_error[$target]="no Windows headers: $cpython_problem" ;;
        *) [ -z "$host_problem" ] || setup_error[$target]=$host_problem ;;
    esac
done

running=0
spawn() {  # spawn COMMAND...: in the background, at most jobs_wanted at once
    "$@" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs_wanted" ]; then
        wait -n || true
        running=$((running - 1))
    fi
}
compile() {  # compile TARGET SOURCE
    local target=$1 source=$2 name tflags
    name=$(basename "$source" .c)
    target_flags "$target"
    "${zig[@]}" cc -target "$target" "${FLAGS[@]}" "${tflags[@]}" -c "$source" \
        -o "$out/$target/$name.o" >"$out/$target/$name.log" 2>&1 \
        || touch "$out/$target/$name.failed"
}
for source in "${sources[@]}"; do
    for target in "${targets[@]}"; do
        if [ -z "${setup_error[$target]:-}" ]; then spawn compile "$target" "$source"; fi
    done
done
wait
compile_end=$(date +%s)

# --- link the Linux and Windows builds whose files all compiled
compiled() {  # compiled TARGET: every file of it compiled
    local source
    for source in "${sources[@]}"; do
        [ -f "$out/$1/$(basename "$source" .c).o" ] \
            && [ ! -f "$out/$1/$(basename "$source" .c).failed" ] || return 1
    done
}
objects() {  # objects TARGET: into the array objs
    local source
    objs=()
    for source in "${sources[@]}"; do objs+=("$out/$1/$(basename "$source" .c).o"); done
}
link() {  # link TARGET
    local target=$1 objs
    objects "$target"
    case $target in
        *-linux-*)
            "${zig[@]}" cc -target "$target" -O3 -shared -pthread -s \
                -o "$out/$target/_native.abi3.so" "${objs[@]}" ;;
        *-windows-*)
            "${zig[@]}" cc -target "$target" -O3 -shared -s \
                -o "$out/$target/_native.pyd" "${objs[@]}" \
                "$cpython/libpython3-${target%%-*}.a" ;;
    esac >"$out/$target/link.log" 2>&1 || touch "$out/$target/link.failed"
}
running=0
for target in "${targets[@]}"; do
    case $target in
        *-linux-*|*-windows-*)
            if [ -z "${setup_error[$target]:-}" ] && compiled "$target"; then
                spawn link "$target"
            fi ;;
    esac
done
wait

# --- report
failed=0
width=0
for target in "${targets[@]}"; do [ "${#target}" -gt "$width" ] && width=${#target}; done
first_errors() {  # first_errors LOG...: the first error lines (and where the linker saw them)
    grep -h -E 'error|>>> referenced by' "$@" | head -n 8 | sed 's/^/    /'
}
for target in "${targets[@]}"; do
    label=$(printf "%-${width}s" "$target")
    if [ -n "${setup_error[$target]:-}" ]; then
        log "$label FAILED: ${setup_error[$target]}"
        failed=1
        continue
    fi
    bad=()
    logs=()
    for source in "${sources[@]}"; do
        name=$(basename "$source" .c)
        if [ -f "$out/$target/$name.failed" ] || [ ! -f "$out/$target/$name.o" ]; then
            bad+=("$name.c")
            logs+=("$out/$target/$name.log")
        fi
    done
    if [ "${#bad[@]}" -gt 0 ]; then
        log "$label FAILED: ${#bad[@]} of ${#sources[@]} files did not compile" \
            "(${bad[*]}); logs in $out/$target/"
        first_errors "${logs[@]}"
        failed=1
        continue
    fi
    case $target in
        *-macos*)
            log "$label ok: ${#sources[@]} files compiled (not linked)"
            continue ;;
    esac
    if [ -f "$out/$target/link.failed" ]; then
        log "$label FAILED: ${#sources[@]} files compiled; the link failed:"
        first_errors "$out/$target/link.log"
        failed=1
        continue
    fi
    case $target in
        *-linux-*)
            binary=$out/$target/_native.abi3.so
            check=(elf "$binary" "$target" "${stable_abi[@]}")
            [[ $target == *-musl ]] && check+=(--musl-libc "$zig_lib/libc/musl/libc.S") ;;
        *) binary=$out/$target/_native.pyd
           check=(pe "$binary" "$target" "${stable_abi[@]}") ;;
    esac
    if verdict=$("${helper[@]}" "${check[@]}" 2>&1); then
        log "$label ok: ${#sources[@]} files; $(basename "$binary") $(wc -c <"$binary")" \
            "bytes: $verdict"
    else
        log "$label FAILED: ${#sources[@]} files compiled and linked; $binary:"
        sed 's/^/    /' <<<"$verdict"
        failed=1
    fi
done
end=$(date +%s)
log "${#targets[@]} targets x ${#sources[@]} files, zig $ZIGLANG_VERSION, $jobs_wanted jobs:" \
    "$((end - start)) s (setup $((setup_end - start)) s, compile" \
    "$((compile_end - setup_end)) s, link and checks $((end - compile_end)) s)"
[ "$failed" = 0 ] && log "every target ok" || log "some targets FAILED"
exit "$failed"
