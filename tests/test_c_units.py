"""The C layer's rules of ARCHITECTURE.md, read from the source and the compiler.

The extension is units, each a ``.c`` with a header that declares what the others may call
(a few are inline functions only; the instruction-set variant units are templates, ``.inc``,
which ``isa_base.c`` and ``isa_avx2.c`` build once per instruction set). Every header
compiles on its own and in any order beside the others; the units include each other in
one direction only; the raw intrinsics of an instruction set, and the spellings of one
compiler, live in their layer's files alone; and no function runs past about 80 lines.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

NATIVE = Path(__file__).resolve().parents[1] / "src" / "onnx_upsample" / "_kernels" / "_native"
HEADERS = sorted(p.name for p in NATIVE.glob("*.h"))
SOURCES = sorted(p.name for p in [*NATIVE.glob("*.c"), *NATIVE.glob("*.h"), *NATIVE.glob("*.inc")])

# The SIMD layer's backends: the only files with an instruction set's intrinsics (and the
# CPU-feature query, which asks the CPU with cpuid and xgetbv).
BACKENDS = {"simd_x86.h", "simd_sse2.h", "simd_avx2.h", "simd_neon.h", "simd_scalar.h"}
INTRINSIC_FILES = BACKENDS | {"cpu.c"}
# The compiler layer and the layers that must speak to one compiler or processor: the only
# files with attributes, builtins, inline assembly or a compiler's pragmas.
COMPILER_FILES = {"compiler.h", "threads.c", "cpu.c", "cpu.h"} | BACKENDS
# A header chosen by another (simd.h picks one backend per unit): included through it only.
NOT_STANDALONE = BACKENDS
# Units whose header has another name, and files with no header of their own: the
# instantiations of the variant units, and the module's entry point.
UNIT_OF = {"describe_linear": "describe", "isa_base": "isa", "isa_avx2": "isa",
           "linear_sum_acc": "linear_sum", "linear_vec": "linear_sum"}
MAX_FUNCTION_LINES = 80

INTRINSIC = re.compile(r"\b_mm(256|512)?_\w+\s*\(|\b__m(128|256|512)[id]?\b"
                       r"|\bv\w+q_(s|u|f)(8|16|32|64)\b|#\s*include\s*<\w*(intrin|neon)\.h>")
COMPILER_SPECIFIC = re.compile(r"__attribute__|__builtin_|__asm__|\basm\s*\(|__declspec"
                               r"|__forceinline|#\s*pragma\s+(GCC|clang)|_Pragma\(\"(GCC|clang)")


def text_of(name: str) -> str:
    """A file's code, its comments blanked out (line numbers kept)."""
    text = (NATIVE / name).read_text()
    return re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)


def test_raw_intrinsics_only_in_the_simd_backends() -> None:
    found = {name: m.group() for name in SOURCES if name not in INTRINSIC_FILES
             for m in [INTRINSIC.search(text_of(name))] if m}
    assert not found, f"intrinsics outside the SIMD layer's backends: {found}"


def test_compiler_specific_code_only_in_the_compiler_layer() -> None:
    found = {name: m.group() for name in SOURCES if name not in COMPILER_FILES
             for m in [COMPILER_SPECIFIC.search(text_of(name))] if m}
    assert not found, f"compiler-specific spellings outside compiler.h and the layers: {found}"


def unit(name: str) -> str:
    stem = name.split(".")[0]
    return UNIT_OF.get(stem, stem)


def includes(name: str) -> list[str]:
    return re.findall(r'#\s*include\s*"([^"]+)"', text_of(name))


def test_units_include_each_other_one_way() -> None:
    """No cycle among the units (a .c and its header are one unit; a unit's own template
    files are part of it)."""
    graph: dict[str, set[str]] = {}
    for name in SOURCES:
        graph.setdefault(unit(name), set()).update(
            unit(target) for target in includes(name) if unit(target) != unit(name))
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            assert state.get(target) != 1, f"units include each other: {[*path, target]}"
            if target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def test_every_unit_has_its_header() -> None:
    """Each .c is a unit with a header of its name (or its unit's), which it includes first,
    so that the header is seen to compile without what the .c includes before it."""
    missing, first = [], []
    for source in sorted(NATIVE.glob("*.c")):
        header = unit(source.name) + ".h"
        if unit(source.name) in ("isa", "module"):
            continue
        if not (NATIVE / header).exists():
            missing.append(source.name)
        elif includes(source.name)[:1] != [header]:
            first.append(source.name)
    assert not missing, f"units without a header: {missing}"
    assert not first, f"units that do not include their own header first: {first}"


def function_lengths(name: str) -> dict[str, int]:
    """Lines of each function definition (from its name to its closing brace at the start
    of a line) and of each macro definition."""
    lines = text_of(name).splitlines()
    lengths: dict[str, int] = {}
    start = None
    for number, line in enumerate(lines):
        if line.startswith("#define") and line.rstrip().endswith("\\"):
            end = number
            while lines[end].rstrip().endswith("\\"):
                end += 1
            lengths[f"{name}:{number + 1} {line.split()[1]}"] = end - number + 1
        elif start is None and re.match(r"[A-Za-z_].*\(", line) and not line.rstrip().endswith(
                (";", "\\")) and not line.startswith(("typedef", "#", "static const", "const")):
            start = number
        elif start is not None and line.startswith("}"):
            lengths[f"{name}:{start + 1} {lines[start].split('(')[0].split()[-1]}"] = (
                number - start + 1)
            start = None
        elif start is not None and line.rstrip().endswith(";") and "{" not in "".join(
                lines[start:number + 1]):
            start = None  # a declaration spread over lines
    return lengths


def test_no_function_longer_than_80_lines() -> None:
    lengths = {k: v for name in SOURCES for k, v in function_lengths(name).items()}
    assert len(lengths) > 100, "the C parser found too few functions to be right"
    long = {k: v for k, v in lengths.items() if v > MAX_FUNCTION_LINES}
    assert not long, f"functions and macros over {MAX_FUNCTION_LINES} lines: {long}"


def compiler() -> str:
    found = shutil.which("gcc") or shutil.which("clang") or shutil.which("cc")
    if found is None:
        pytest.fail("no C compiler (gcc, clang or cc) on PATH: the package cannot have been built")
    return found


def compiles(code: str) -> subprocess.CompletedProcess[str]:
    include = sysconfig.get_paths()["include"]
    return subprocess.run(
        [compiler(), "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
         f"-I{NATIVE}", f"-I{include}", "-x", "c", "-"],
        input=code, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("header", [h for h in HEADERS if h not in NOT_STANDALONE])
def test_header_compiles_alone(header: str) -> None:
    result = compiles(f'#include "{header}"\n')
    assert result.returncode == 0, f"{header} alone:\n{result.stderr[-3000:]}"


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_headers_compile_in_any_order(order: str) -> None:
    headers = [h for h in HEADERS if h not in NOT_STANDALONE]
    if order == "reverse":
        headers.reverse()
    result = compiles("".join(f'#include "{h}"\n' for h in headers))
    assert result.returncode == 0, f"headers in {order} order:\n{result.stderr[-3000:]}"
