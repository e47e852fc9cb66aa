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
ThreadSanitizer.
"""

from __future__ import annotations

import platform
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCES = [
    "src/onnx_upsample/_kernels/_native/module.c",
    "src/onnx_upsample/_kernels/_native/describe.c",
    "src/onnx_upsample/_kernels/_native/pool.c",
    "src/onnx_upsample/_kernels/_native/cpu.c",
    "src/onnx_upsample/_kernels/_native/nearest.c",
    "src/onnx_upsample/_kernels/_native/linear.c",
]
HEADERS = [
    "src/onnx_upsample/_kernels/_native/kernels.h",
    "src/onnx_upsample/_kernels/_native/axis_rule.h",
    "src/onnx_upsample/_kernels/_native/stream.h",
    "src/onnx_upsample/_kernels/_native/kernel_object.h",
    "src/onnx_upsample/_kernels/_native/pool.h",
    "src/onnx_upsample/_kernels/_native/cpu.h",
    "src/onnx_upsample/_kernels/_native/linear_isa.h",
    "src/onnx_upsample/_kernels/_native/linear_sum.h",
]

NO_COMPILER = (
    "onnx-upsample compiles its kernels when it is installed, and that needs a C compiler "
    "and the Python headers. Install them and try again: on Debian/Ubuntu "
    "'apt-get install gcc python3-dev python3-venv', on Fedora 'dnf install gcc "
    "python3-devel', on macOS 'xcode-select --install'. ({detail})"
)


class BuildKernels(build_ext):
    """build_ext with exact floating point for each compiler, and one clear error line
    when no compiler (or no Python header) is there."""

    def build_extensions(self) -> None:
        kind = self.compiler.compiler_type
        for extension in self.extensions:
            if kind == "msvc":
                extension.extra_compile_args = ["/O2", "/fp:precise"]
            else:
                flags = ["-O3", "-std=c11", "-ffp-contract=off", "-fno-fast-math",
                         # lets NaN-preserving selects vectorise; values stay IEEE exact
                         "-fno-trapping-math",
                         "-fvisibility=hidden", "-Wall"]
                if platform.machine().lower() in ("i386", "i486", "i586", "i686", "x86"):
                    flags += ["-msse2", "-mfpmath=sse"]
                extension.extra_compile_args = flags
                extension.extra_link_args = ["-pthread"] if sys.platform != "darwin" else []
        try:
            super().build_extensions()
        except Exception as error:  # distutils' CompileError / DistutilsExecError / OSError
            detail = str(error).strip().splitlines()[-1] if str(error).strip() else repr(error)
            raise SystemExit("error: " + NO_COMPILER.format(detail=detail)) from None

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler executable found at all
            if isinstance(error, SystemExit):
                raise
            raise SystemExit("error: " + NO_COMPILER.format(detail=str(error))) from None


setup(
    ext_modules=[
        Extension("onnx_upsample._kernels._native", sources=SOURCES, depends=HEADERS),
    ],
    cmdclass={"build_ext": BuildKernels},
)
