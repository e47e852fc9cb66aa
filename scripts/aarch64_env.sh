#!/usr/bin/env bash
# An aarch64 Linux environment for the tests, run under qemu-user on an x86-64 Linux host,
# built into build/aarch64/ from package registries only (nothing installed, nothing written
# outside build/aarch64/, no binfmt_misc registration, no root needed beyond what apt-get
# download wants):
#   qemu/   Debian 13 (trixie)'s qemu-user: a static usr/bin/qemu-aarch64 (10.0); Debian 12's
#           qemu-user-static 7.2 dies with SIGSEGV importing onnxruntime 1.32's aarch64 wheel
#   cross/  Debian 12 (bookworm)'s cross compiler for aarch64 (GCC 12, binutils, glibc 2.36)
#   root/   an arm64 CPython 3.11 from Debian 12's arm64 packages (the interpreter, its
#           standard library, its headers, the C libraries they and the wheels need)
#   site/   aarch64 wheels of the test requirements (pinned below), unzipped; on the
#           emulated interpreter's sys.path (a .pth file in root/), as is package/, where
#           scripts/test_aarch64.sh puts the package it builds
#   bin/    python, python3, python3.11: host shell wrappers that exec qemu on root/'s
#           interpreter with argv[0] set to the wrapper itself, so sys.executable is the
#           wrapper and a child process started with it (subprocess, multiprocessing's spawn
#           and forkserver) runs emulated too, without binfmt_misc;
#           aarch64-linux-gnu-gcc: the cross compiler with its host libraries found
# Each step leaves a stamp (build/aarch64/.stamp-STEP holding what it was made from) and is
# skipped while its stamp matches; change a pin or a package list and that step is redone.
# Debian packages come from the mirror this machine's apt uses (DEBIAN_MIRROR overrides it),
# through apt-get with private state under build/aarch64/apt/ (the system's apt lists, cache
# and dpkg status are neither read nor written); wheels through pip download.
# PYTHON (default .venv/bin/python, else python3) is the host Python that runs pip.
# Usage: scripts/aarch64_env.sh   (then build/aarch64/bin/python -m pytest ...)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
top=$repo/build/aarch64
PYTHON=${PYTHON:-.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3

# --- what is fetched --------------------------------------------------------------------
# The test extra of pyproject.toml, numpy, and setuptools (the build backend), as pip resolved
# them for cp311 manylinux aarch64 on 2026-12-06: every wheel, dependencies included, at the
# version taken then (the versions .venv had on x86-64 that day). Raise them together with
# pyproject.toml's caps.
WHEELS=(
    numpy==2.4.6
    onnx==1.23.2
    onnxruntime==1.32.0
    ml_dtypes==0.7.0
    pytest==9.2.0
    hypothesis==6.170.27
    threadpoolctl==3.8.0
    protobuf==7.36.2          # onnx, onnxruntime
    flatbuffers==25.12.19     # onnxruntime
    packaging==26.4           # onnxruntime, pytest
    typing_extensions==4.16.0 # onnx
    iniconfig==2.3.1          # pytest
    pluggy==1.7.0             # pytest
    pygments==2.21.0          # pytest
    sortedcontainers==2.4.0   # hypothesis
    setuptools==84.2.1        # setup.py build_ext, run by the emulated interpreter
)
# Debian 12 (bookworm), amd64: the cross compiler and the host libraries it runs with (the
# sanitizer and OpenMP runtimes libgcc-12-dev names are left out: nothing here links them).
# Versions are whatever the mirror has (stable releases: point updates only), and
# build/aarch64/manifest.txt lists the files taken; on 2026-12-06: gcc 12.2.0-14cross1,
# binutils 2.40-2, cross glibc 2.36-8cross1, python3.11 3.11.2-6+deb12u8, libc6:arm64
# 2.36-9+deb12u14, qemu-user 1:10.0.13+ds-0+deb13u1.
CROSS_DEBS=(
    gcc-12-aarch64-linux-gnu cpp-12-aarch64-linux-gnu gcc-12-aarch64-linux-gnu-base
    gcc-12-cross-base binutils-aarch64-linux-gnu libgcc-12-dev-arm64-cross
    libgcc-s1-arm64-cross libc6-dev-arm64-cross libc6-arm64-cross linux-libc-dev-arm64-cross
    libisl23 libmpc3 libmpfr6 libjansson4
)
# Debian 12 (bookworm), arm64: CPython 3.11 and the libraries its standard library and the
# wheels load (libstdc++6: onnxruntime, onnx; media-types: mimetypes)
ROOT_DEBS=(
    python3.11-minimal:arm64 libpython3.11-minimal:arm64 libpython3.11-stdlib:arm64
    libpython3.11-dev:arm64 libc6:arm64 libgcc-s1:arm64 libstdc++6:arm64 libffi8:arm64
    libssl3:arm64 zlib1g:arm64 libexpat1:arm64 libbz2-1.0:arm64 liblzma5:arm64
    libuuid1:arm64 libsqlite3-0:arm64 libncursesw6:arm64 libtinfo6:arm64
    libreadline8:arm64 libcrypt1:arm64 media-types
)
# Debian 13 (trixie), amd64: the emulator (10.0.x when written)
QEMU_DEBS=(qemu-user)

say() { echo "aarch64_env: $*"; }
die() { echo "aarch64_env: $*" >&2; exit 1; }
stamp_ok() { [ -f "$top/.stamp-$1" ] && [ "$(cat "$top/.stamp-$1")" = "$2" ]; }
first_error() {  # the line of an apt-get or pip log that says what went wrong
    { grep -E '^(E:|ERROR)' "$1"; grep -E '^(W:|WARNING)' "$1"; tail -n 1 "$1"; } | head -n 1
}
stamp_set() { printf '%s' "$2" >"$top/.stamp-$1"; }

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) die "this builds an x86-64 Linux host's emulated aarch64; $(uname -s) $(uname -m) is not one" ;;
esac
start=$SECONDS
mkdir -p "$top"
# this script's own text too: an edit (a wrapper, a check) reruns the steps that are not
# downloads; each download and unpack keeps its own stamp
key_all="$(cksum <"$repo/scripts/aarch64_env.sh")"
if stamp_ok all "$key_all" && [ -x "$top/bin/python" ]; then
    say "ready in build/aarch64 (cached; rm -rf build/aarch64 to rebuild)"
    exit 0
fi

# --- Debian packages through a private apt state ------------------------------------------
command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 \
    || die "apt-get and dpkg are needed (a Debian or Ubuntu host) to fetch the Debian packages"
# shellcheck source=scripts/debian_mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian_mirror.sh"
mirror=$(debian_mirror)

apt_opts() {  # apt_opts SUITE ARCHS: options that keep apt-get inside build/aarch64/apt/SUITE
    local d=$top/apt/$1
    echo "-q -o Dir::Etc::sourcelist=$d/sources.list -o Dir::Etc::sourceparts=$d/empty" \
         "-o Dir::Etc::preferences=$d/preferences -o Dir::Etc::preferencesparts=$d/empty" \
         "-o Dir::State=$d/state -o Dir::State::Lists=$d/lists -o Dir::State::status=$d/status" \
         "-o Dir::Cache=$d/cache -o Dir::Cache::archives=$d/cache/archives" \
         "-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=" \
         "-o APT::Architectures=$2 -o APT::Sandbox::User=root -o Acquire::Retries=3" \
         "-o Debug::NoLocking=1"
}

apt_update() {  # apt_update SUITE ARCHS KEYRING
    local d=$top/apt/$1 key="$1 $2 $mirror $3"
    if stamp_ok "apt-$1" "$key"; then return; fi
    rm -rf "$d"
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/state" "$d/empty"
    : >"$d/status"
    : >"$d/preferences"
    echo "deb [signed-by=$3] $mirror $1 main" >"$d/sources.list"
    say "apt-get update: $mirror $1 ($2)"
    # shellcheck disable=SC2046
    apt-get $(apt_opts "$1" "$2") --error-on=any update >"$d/update.log" 2>&1 || die \
        "cannot reach the Debian mirror $mirror ($1): $(first_error "$d/update.log")"
    stamp_set "apt-$1" "$key"
}

fetch_debs() {  # fetch_debs SUITE ARCHS GROUP PACKAGE...: .deb files into debs/GROUP
    local suite=$1 archs=$2 group=$3; shift 3
    local key="$suite $mirror $*" dir=$top/debs/$group
    if stamp_ok "debs-$group" "$key"; then return; fi
    rm -rf "$dir"
    mkdir -p "$dir"
    say "downloading $# Debian $suite packages ($group)"
    # shellcheck disable=SC2046
    (cd "$dir" && apt-get $(apt_opts "$suite" "$archs") download "$@") >"$dir.log" 2>&1 || die \
        "cannot download from the Debian mirror $mirror ($suite): $(first_error "$dir.log")"
    stamp_set "debs-$group" "$key"
}

unpack_debs() {  # unpack_debs GROUP DEST: every .deb of debs/GROUP unpacked into DEST
    local group=$1 dest=$2 key
    key=$(cd "$top/debs/$group" && ls -- *.deb)
    if stamp_ok "unpack-$group" "$key" && [ -d "$dest" ]; then return; fi
    rm -rf "$dest"
    mkdir -p "$dest"
    say "unpacking $group into ${dest#"$repo"/}"
    for deb in "$top/debs/$group"/*.deb; do
        dpkg-deb -x "$deb" "$dest" || die "could not unpack $deb"
    done
    stamp_set "unpack-$group" "$key"
}

# bookworm first: its keyring package (signed with the bookworm keys this host trusts) has
# the trixie keys, so trixie is checked with it whatever this host's keyring holds
system_keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$system_keyring" ] || die "$system_keyring is missing (package debian-archive-keyring)"
apt_update bookworm amd64,arm64 "$system_keyring"
fetch_debs bookworm amd64,arm64 keyring debian-archive-keyring
unpack_debs keyring "$top/keyring"
apt_update trixie amd64 "$top/keyring/usr/share/keyrings/debian-archive-keyring.gpg"

fetch_debs trixie amd64 qemu "${QEMU_DEBS[@]}"
fetch_debs bookworm amd64,arm64 cross "${CROSS_DEBS[@]}"
fetch_debs bookworm amd64,arm64 root "${ROOT_DEBS[@]}"

unpack_debs qemu "$top/qemu"
# only the emulator for aarch64 is kept (the package has every target: 460 MB unpacked)
find "$top/qemu/usr/bin" -type f ! -name qemu-aarch64 -delete
find "$top/qemu/usr/bin" -type l -delete
rm -rf "$top/qemu/usr/share/man" "$top/qemu/usr/libexec"
[ -x "$top/qemu/usr/bin/qemu-aarch64" ] || die "qemu-user has no usr/bin/qemu-aarch64"

unpack_debs cross "$top/cross"
ln -sf aarch64-linux-gnu-gcc-12 "$top/cross/usr/bin/aarch64-linux-gnu-gcc"

if ! stamp_ok unpack-root "$(cd "$top/debs/root" && ls -- *.deb)"; then
    unpack_debs root "$top/root"
    # qemu -L looks a guest path up in root/ first and falls back to the host's: folders
    # that exist here keep the host's Python packages (/usr/lib/python3/dist-packages, where
    # a Debian CPython looks) out of the emulated interpreter's sys.path
    mkdir -p "$top/root/usr/lib/python3/dist-packages" \
             "$top/root/usr/local/lib/python3.11/dist-packages" \
             "$top/root/usr/local/lib/python3/dist-packages" \
             "$top/root/usr/lib/python3.11/dist-packages"
fi

# --- wheels -----------------------------------------------------------------------------
key_wheels="${WHEELS[*]}"
if ! stamp_ok wheels "$key_wheels"; then
    rm -rf "$top/wheels" "$top/site"
    mkdir -p "$top/wheels"
    say "downloading ${#WHEELS[@]} aarch64 wheels (pip download)"
    "$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip to download the wheels with"
    if ! "$PYTHON" -m pip download --no-deps --only-binary=:all: --dest "$top/wheels" \
            --platform manylinux2014_aarch64 --platform manylinux_2_28_aarch64 \
            --python-version 3.11 --implementation cp --abi cp311 --abi abi3 --abi none \
            "${WHEELS[@]}" >"$top/wheels.log" 2>&1; then
        unreachable=$(grep -m 1 -E 'NewConnectionError|Connection refused|Name or service not known|Temporary failure in name resolution|timed out|ProxyError|SSLError' "$top/wheels.log" || true)
        unreachable=${unreachable#*broken by }
        [ -z "$unreachable" ] || die "cannot reach the package index: ${unreachable:0:300}"
        die "cannot download the wheels from the package index: $(first_error "$top/wheels.log")"
    fi
    say "unzipping the wheels into build/aarch64/site"
    "$PYTHON" - "$top/wheels" "$top/site" <<'EOF'
import pathlib, sys, zipfile
wheels, site = map(pathlib.Path, sys.argv[1:])
site.mkdir()
for wheel in sorted(wheels.glob("*.whl")):
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            archive.extract(info, site)
            mode = info.external_attr >> 16
            if mode & 0o111:
                (site / info.filename).chmod(mode & 0o777)
EOF
    stamp_set wheels "$key_wheels"
fi

# The wheels (and the package copy scripts/test_aarch64.sh builds, once it is there) are on
# the emulated interpreter's path without PYTHONPATH too, through a .pth file in a folder
# Debian's CPython reads: a child a test starts with its own PYTHONPATH still finds them
printf '%s\n' "$top/site" "$top/package" \
    >"$top/root/usr/lib/python3/dist-packages/aarch64_env.pth"

# --- wrappers -----------------------------------------------------------------------------
mkdir -p "$top/bin"
cat >"$top/bin/python3.11" <<'EOF'
#!/bin/sh
# The emulated aarch64 CPython (written by scripts/aarch64_env.sh). argv[0] is this file, so
# sys.executable is too, and a child started with it runs under qemu as well. AARCH64_CPU:
# qemu's -cpu (default neoverse-n1); AARCH64_QEMU_ARGS: more qemu options (e.g. -strace).
here=$(cd "$(dirname "$0")" && pwd -P)
top=${here%/bin}
# shellcheck disable=SC2086
exec "$top/qemu/usr/bin/qemu-aarch64" -cpu "${AARCH64_CPU:-neoverse-n1}" -L "$top/root" \
    -E LD_LIBRARY_PATH=/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu \
    ${AARCH64_QEMU_ARGS:-} -0 "$here/$(basename "$0")" "$top/root/usr/bin/python3.11" "$@"
EOF
chmod +x "$top/bin/python3.11"
ln -sf python3.11 "$top/bin/python3"
ln -sf python3.11 "$top/bin/python"
cat >"$top/bin/aarch64-linux-gnu-gcc" <<'EOF'
#!/bin/sh
# Debian 12's GCC 12 for aarch64, unpacked (written by scripts/aarch64_env.sh). The sysroot
# is the unpacked folder: glibc's libc.so names its files by absolute paths
# (/usr/aarch64-linux-gnu/lib/libc.so.6), which ld looks up inside the sysroot. The emulated
# CPython's headers are found as on an aarch64 machine: an -I/usr/... option names root/usr/...
# where that exists (what qemu -L does for the emulated programs; the emulated CPython's
# sysconfig gives -I/usr/include/python3.11), and root/usr/include is searched after the
# other folders (its python3.11/pyconfig.h includes <aarch64-linux-gnu/python3.11/pyconfig.h>).
top=$(cd "$(dirname "$0")/.." && pwd -P)
for arg do
    shift
    case $arg in
        -I/usr/*) [ -d "$top/root${arg#-I}" ] && arg="-I$top/root${arg#-I}" ;;
    esac
    set -- "$@" "$arg"
done
PATH="$top/cross/usr/bin:$PATH" \
LD_LIBRARY_PATH="$top/cross/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    exec "$top/cross/usr/bin/aarch64-linux-gnu-gcc-12" --sysroot="$top/cross" \
    -idirafter "$top/root/usr/include" "$@"
EOF
chmod +x "$top/bin/aarch64-linux-gnu-gcc"

# --- checks -------------------------------------------------------------------------------
printf '#include <math.h>\n#include <pthread.h>\n#include <stdio.h>\nint main(int c, char **v) { (void)v; return (int)sqrt((double)c) - 1; }\n' >"$top/hello.c"
"$top/bin/aarch64-linux-gnu-gcc" -O2 -pthread "$top/hello.c" -o "$top/hello" -lm >"$top/cross.log" 2>&1 \
    || { cat "$top/cross.log" >&2; die "the cross compiler does not work (above)"; }
"$top/qemu/usr/bin/qemu-aarch64" -L "$top/root" "$top/hello" \
    || die "qemu-aarch64 does not run an aarch64 program"
"$top/bin/python" -c '
import subprocess, sys
import numpy, onnx, onnxruntime, ml_dtypes, pytest, hypothesis, threadpoolctl
assert sys.platform == "linux" and __import__("platform").machine() == "aarch64"
child = subprocess.run([sys.executable, "-c", "import platform; print(platform.machine())"],
                       capture_output=True, text=True, check=True).stdout.strip()
assert child == "aarch64", child
print("aarch64_env: Python", sys.version.split()[0], "numpy", numpy.__version__,
      "onnxruntime", onnxruntime.__version__, "onnx", onnx.__version__, "(child processes: ok)")
' || die "the emulated Python does not import the test requirements (above)"

{
    echo "# what scripts/aarch64_env.sh fetched (mirror $mirror)"
    for group in qemu cross root keyring; do (cd "$top/debs/$group" && ls -- *.deb); done
    (cd "$top/wheels" && ls -- *.whl)
} >"$top/manifest.txt"
mb() { du -cm "$@" | tail -n 1 | cut -f 1; }
# apt's "Fetched 17.6 MB in 2s" lines: what the indexes took to download
indexes=$(cat "$top"/apt/*/update.log | awk '/^Fetched/ {
    n += $2 * ($3 == "kB" ? 0.001 : $3 == "B" ? 0.000001 : 1) } END { printf "%.0f", n }')
say "downloaded: apt indexes ${indexes} MB, Debian packages $(mb "$top"/debs/*/*.deb) MB," \
    "wheels $(mb "$top"/wheels/*.whl) MB (build/aarch64/manifest.txt); $(mb "$top") MB on disk"
stamp_set all "$key_all"
say "ready in build/aarch64 after $((SECONDS - start)) s ($("$top/qemu/usr/bin/qemu-aarch64" --version | head -n 1))"
