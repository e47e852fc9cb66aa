"""Build of the compiled kernels (the package metadata is in pyproject.toml).

One C extension, ``onnx_upsample._kernels._native``, compiled when the package is built: no
JIT at call time. Floating-point contraction is off for every compiler (``-ffp-contract=off``;
MSVC's ``/fp:precise``), never fast-math, and 32-bit x86 uses SSE2, not the x87 unit: the
kernels' results must be the IEEE operations of the contract, in its order. Wider vector
instructions (AVX2) are selected at run time inside the extension, so a build runs on any
x86-64. The kernels move elements through ``memcpy`` and never read one type through a
pointer to another, so the strict-aliasing rule holds by construction (``-fno-strict-aliasing``
would cost the gathers a third of their speed). ``make lint`` compiles the kernels with
``-Wall -Wextra -Wconversion -Wshadow -Werror`` (``-Wall`` includes ``-Wstrict-aliasing``) and
``make test-sanitize`` runs them under AddressSanitizer, UndefinedBehaviorSanitizer and
ThreadSanitizer (those builds keep their debug information; a wheel's extension is built
without it, ``-g0`` and stripped at link: on x86-64 about 1.1-1.3 MB, for it holds every
loop twice, baseline and AVX2, for each element type; about 0.45 MB on aarch64).

The extension uses only CPython's limited API of 3.11 (``_native/kernel_object.h`` defines
``Py_LIMITED_API``), so one wheel per platform, tagged ``cp311-abi3``, loads in CPython 3.11
and every later release. Free-threaded CPython (3.13t, 3.14t) is not declared supported: it
cannot load abi3 extensions at all, and the package's Python layers (the launcher cache, the
buffer pool, the thread settings) have not been checked without the GIL. Installed from the
sdist there, the extension is compiled against the full API, declares nothing about the GIL
(single-phase init), and the interpreter re-enables the GIL when it imports it, with a
warning that says so.
"""

from __future__ import annotations

import importlib.machinery
import os
import platform
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext

# Every C file of the extension is one unit (ARCHITECTURE.md); the headers and the
# instruction-set templates (.inc) are what they include
NATIVE = Path("src/onnx_upsample/_kernels/_native")
SOURCES = sorted(str(p) for p in NATIVE.glob("*.c"))
HEADERS = sorted(str(p) for p in [*NATIVE.glob("*.h"), *NATIVE.glob("*.inc")])

# The stable ABI the extension is written to (kernel_object.h); absent on free-threaded builds
ABI3 = None if sysconfig.get_config_var("Py_GIL_DISABLED") else "cp311"

NO_COMPILER = (
    "onnx-upsample is being built from source (no wheel of it fits this platform, or this is a "
    "checkout): that compiles its C kernels and needs a C compiler and the Python headers. "
    "Install them and try again: on Debian/Ubuntu "
    "'apt-get install gcc python3-dev python3-venv', on Fedora 'dnf install gcc "
    "python3-devel', on macOS 'xcode-select --install'. ({detail})"
)


def missing_tool() -> str | None:
    """What is missing to compile the kernels here (the C compiler, the Python headers), or
    None. The compiler is the one the build will run: $CC, else the interpreter's own (its
    sysconfig); on Windows, MSVC is located through the registry and BuildKernels reports a
    failure there."""
    if sys.platform == "win32":
        return None
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC")
    if not compiler or not compiler.strip():
        return None
    executable = shlex.split(compiler)[0]
    if shutil.which(executable) is None:
        return f"no C compiler: {executable!r} was not found"
    header = Path(sysconfig.get_paths()["include"], "Python.h")
    if not header.exists():
        return f"no Python headers: {header} does not exist"
    return None


class BuildFirstChecks(build):
    """build that stops before its first step when nothing can compile the kernels: pip shows
    a failed build's whole output, so the one line that says what to install is then its
    last, not line 64 of 70 after every file copied."""

    def run(self) -> None:
        missing = missing_tool()
        if missing is not None:
            raise SystemExit("error: " + NO_COMPILER.format(detail=missing))
        super().run()


class BuildKernels(build_ext):
    """build_ext with exact floating point for each compiler, and one clear error line
    when no compiler (or no Python header) is there."""

    def build_extensions(self) -> None:
        kind = self.compiler.compiler_type
        # an interpreter built with a run-time library path (pyenv's) links every extension
        # with it; this one needs no library but libc, and a wheel must not search the
        # build machine's folders
        linker = getattr(self.compiler, "linker_so", None)
        if linker:
            self.compiler.linker_so = [arg for arg in linker
                                       if not arg.startswith(("-Wl,-rpath", "-Wl,-R"))]
        for extension in self.extensions:
            if kind == "msvc":
                # C11 (restrict, _Pragma) and its atomics, which the pool's threads need
                # (MSVC 17.5 and later; an older one runs every job on one thread)
                extension.extra_compile_args = ["/O2", "/fp:precise", "/std:c11",
                                                "/experimental:c11atomics"]
            else:
                flags = ["-O3", "-std=c11", "-ffp-contract=off", "-fno-fast-math",
                         # lets NaN-preserving selects vectorise; values stay IEEE exact
                         "-fno-trapping-math",
                         "-fvisibility=hidden", "-Wall",
                         # compile as well as link with it (as scripts/check_c.sh does): the
                         # threads layer's POSIX threads
                         "-pthread"]
                if platform.machine().lower() in ("i386", "i486", "i586", "i686", "x86"):
                    flags += ["-msse2", "-mfpmath=sse"]
                # no debug information in the extension a user installs (-g0 after any -g
                # of the interpreter's own CFLAGS; -s strips the symbol table at link)
                extension.extra_compile_args = [*flags, "-g0"]
                extension.extra_link_args = (["-pthread", "-s"] if sys.platform != "darwin"
                                             else ["-Wl,-S"])
        try:
            super().build_extensions()
        except Exception as error:  # distutils' CompileError / DistutilsExecError / OSError
            detail = str(error).strip().splitlines()[-1] if str(error).strip() else repr(error)
            raise SystemExit("error: " + NO_COMPILER.format(detail=detail)) from None

    def copy_extensions_to_source(self) -> None:
        # An editable install keeps the extension beside its sources. One built before the
        # abi3 switch is named _native.cpython-3XY-*.so, which Python imports before
        # _native.abi3.so: remove every other build of the extension there.
        for extension in self.extensions:
            *package, name = extension.name.split(".")
            folder = Path("src", *package)
            keep = Path(self.get_ext_filename(extension.name)).name
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                stale = folder / (name + suffix)
                if stale.name != keep and stale.exists():
                    stale.unlink()
        super().copy_extensions_to_source()

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler executable found at all
            if isinstance(error, SystemExit):
                raise
            raise SystemExit("error: " + NO_COMPILER.format(detail=str(error))) from None


setup(
    ext_modules=[
        Extension("onnx_upsample._kernels._native", sources=SOURCES, depends=HEADERS,
                  py_limited_api=ABI3 is not None,
                  define_macros=[] if ABI3 else [("ONNX_UPSAMPLE_FULL_API", "1")]),
    ],
    cmdclass={"build": BuildFirstChecks, "build_ext": BuildKernels},
    options={"bdist_wheel": {"py_limited_api": ABI3}} if ABI3 else {},
)
