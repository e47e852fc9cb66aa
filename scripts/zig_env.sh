# Sourced by the scripts that compile with zig (check_targets.sh, build_wheel.sh): the one
# place that pins zig's C compiler (clang with every target's libc headers and stubs, from
# PyPI) and pefile (which reads Windows binaries), installed into a venv of their own.
#
#   source scripts/zig_env.sh
#   zig_env LOG_PREFIX    # sets ZIG (an array: the command before `cc ...`) and ZIG_PYTHON,
#                         # exports zig's cache folders; returns 1, having said why, on failure
#
# Everything lives under build/targets/ (the venv and zig's cache: a compile seen before is
# taken from the cache). PYTHON, when set, is the interpreter that makes the venv.

# zig 0.15.2's compiler_rt has no __cpu_model (what __builtin_cpu_supports reads), so no
# x86-64 build linked; 0.17.1 links (and its stubs are never read: cpu.c asks cpuid itself).
# zig cc hands -O3 to clang as -O2.
ZIGLANG_VERSION=0.17.1
PEFILE_VERSION=2024.8.26
ZIG_ROOT=build/targets

zig_env() {
    local prefix=$1 python=${PYTHON:-} venv pins
    if [ -z "$python" ]; then
        if [ -x .venv/bin/python ]; then python=.venv/bin/python; else python=python3; fi
    fi
    venv=$ZIG_ROOT/zig-$ZIGLANG_VERSION
    pins="ziglang==$ZIGLANG_VERSION pefile==$PEFILE_VERSION"
    if [ "$(cat "$venv/.pins" 2>/dev/null)" != "$pins" ]; then
        echo "$prefix: installing $pins into $venv"
        rm -rf "$venv"
        mkdir -p "$ZIG_ROOT"
        # shellcheck disable=SC2086  # pins is a list of requirements
        if ! { "$python" -m venv "$venv" \
                   && "$venv/bin/python" -m pip install -q --disable-pip-version-check $pins
             } >"$ZIG_ROOT/zig-install.log" 2>&1; then
            cat "$ZIG_ROOT/zig-install.log" >&2
            echo "$prefix: could not install $pins (log: $ZIG_ROOT/zig-install.log)" >&2
            return 1
        fi
        echo "$pins" >"$venv/.pins"
    fi
    ZIG_PYTHON=$PWD/$venv/bin/python
    ZIG=("$ZIG_PYTHON" -m ziglang)
    export ZIG_GLOBAL_CACHE_DIR=$PWD/$ZIG_ROOT/zig-cache ZIG_LOCAL_CACHE_DIR=$PWD/$ZIG_ROOT/zig-cache
}
