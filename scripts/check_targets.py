"""Helper of scripts/check_targets.sh: what a cross-linked extension needs at load time.

    check_targets.py def STABLE_ABI_TOML OUT.def
        the exports of Windows' python3.dll (CPython's stable ABI, the functions and data of
        Misc/stable_abi.toml that a Windows build has), for an import library
    check_targets.py elf SO TARGET [--stable-abi TOML] [--musl-libc LIBC_S]
        a Linux build: with the host's readelf, the libraries it needs (glibc: libc and the
        libraries glibc split from it before 2.34; musl: libc only), the newest glibc symbol
        version (at most the target's, x86_64-linux-gnu.2.28: GLIBC_2.28), every undefined
        symbol from libc (glibc: a GLIBC_ version; musl: a symbol of zig's musl stub) or from
        Python (Py*/_Py*, left for the interpreter to resolve at load time, and each in the
        stable ABI of 3.11), and that it exports PyInit_* alone
    check_targets.py pe PYD TARGET [--stable-abi TOML]
        a Windows build (pefile): the DLLs it imports (python3.dll, never python3XY.dll,
        and the system's own), the symbols it takes from python3.dll, its exports

Prints one line that sums up a good binary and exits 0, or one line for each problem and
exits 1.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

PY_NAME = re.compile(r"_?Py")


def stable_abi(path: str | None, platform: str) -> dict[str, str] | None:
    """name -> 'function' or 'data' for the stable ABI of the CPython source's toml (3.11's
    lists only what 3.11 and earlier added), as one platform's python3 has it: items under a
    feature macro only where that macro is surely defined there."""
    if path is None:
        return None
    with open(path, "rb") as file:
        data = tomllib.load(file)
    macros = data.get("feature_macro", {})
    names = {}
    for kind in ("function", "data"):
        for name, item in data.get(kind, {}).items():
            added = tuple(int(part) for part in str(item.get("added", "3.2")).split("."))
            if added > (3, 11):
                continue
            macro = item.get("ifdef")
            if macro is not None:
                windows = macros.get(macro, {}).get("windows")
                if platform == "windows" and windows is not True:
                    continue
                if platform != "windows" and (macro == "MS_WINDOWS" or windows == "maybe"):
                    continue
            names[name] = kind
    return names


def write_def(toml: str, out: str) -> int:
    names = stable_abi(toml, "windows")
    assert names is not None
    lines = ["LIBRARY python3.dll", "EXPORTS"]
    lines += [f"    {name}" + (" DATA" if kind == "data" else "")
              for name, kind in sorted(names.items())]
    Path(out).write_text("\n".join(lines) + "\n")
    return 0


def readelf(*args: str) -> str:
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True,
                          text=True).stdout


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def export_problems(exports: list[str]) -> list[str]:
    """What is wrong with an extension's exported names: it exports its PyInit_* alone."""
    problems = []
    others = [name for name in exports if not name.startswith("PyInit_")]
    if others:
        problems.append(f"exports more than PyInit_*: {', '.join(sorted(others)[:10])}")
    if not any(name.startswith("PyInit_") for name in exports):
        problems.append("exports no PyInit_* function")
    return problems


def check_elf(so: str, target: str, toml: str | None, musl_libc: str | None) -> int:
    problems: list[str] = []
    arch = target.split("-")[0]
    machine = re.search(r"Machine:\s*(.*)", readelf("-h", so))
    expected = {"x86_64": "X86-64", "aarch64": "AArch64"}[arch]
    if not machine or expected not in machine.group(1):
        problems.append(f"machine {machine.group(1) if machine else '?'}, not {arch}")

    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf("-d", so))
    musl = "-musl" in target
    if musl:
        # musl's loader takes libc.so, libc.musl-ARCH.so.1, libpthread.so, ... as itself
        allowed = re.compile(r"lib(c|pthread|m|rt|dl)\.so$|libc\.musl-[\w]+\.so\.1$")
    else:
        allowed = re.compile(r"lib(c\.so\.6|pthread\.so\.0|m\.so\.6|dl\.so\.2|rt\.so\.1)$")
    for name in needed:
        if not allowed.match(name):
            problems.append(f"needs {name}, not a library of the target's libc")

    glibc_max = re.search(r"gnu\.(\d+\.\d+)$", target)
    versions = sorted(set(re.findall(r"Name: GLIBC_([\d.]+)", readelf("-V", so))),
                      key=version_key)
    if musl and versions:
        problems.append(f"glibc symbol versions in a musl build: {', '.join(versions)}")
    if glibc_max and versions and version_key(versions[-1]) > version_key(glibc_max.group(1)):
        too_new = [v for v in versions if version_key(v) > version_key(glibc_max.group(1))]
        problems.append(f"needs GLIBC_{', GLIBC_'.join(too_new)} (newer than "
                        f"GLIBC_{glibc_max.group(1)})")

    abi = stable_abi(toml, "linux")
    musl_names: set[str] | None = None
    if musl and musl_libc:
        musl_names = set(re.findall(r"^([A-Za-z_][\w.$]*):$", Path(musl_libc).read_text(),
                                    re.M))
    python, libc, exports = [], [], []
    for line in readelf("--dyn-syms", so).splitlines():
        fields = line.split()
        if len(fields) < 8 or not fields[0].rstrip(":").isdigit():
            continue
        kind, bind, ndx, full = fields[3], fields[4], fields[6], fields[7]
        name, _, version = full.partition("@")
        version = version.lstrip("@")
        if not name or kind in ("SECTION", "FILE"):
            continue
        if ndx != "UND":
            if bind in ("GLOBAL", "WEAK"):
                exports.append(name)
            continue
        if PY_NAME.match(name):
            python.append(name)
            if version:
                problems.append(f"{name}@{version}: a Python symbol bound to a version")
            elif abi is not None and name not in abi:
                problems.append(f"{name}: not in CPython 3.11's stable ABI")
        elif musl:
            libc.append(name)
            if musl_names is not None and name not in musl_names:
                problems.append(f"{name}: undefined, and not a symbol of musl's libc")
        else:
            libc.append(name)
            if not version.startswith("GLIBC_"):
                problems.append(f"{name}: undefined, and not a symbol of glibc "
                                f"(version {version or 'none'})")
    problems += export_problems(exports)
    if problems:
        print("\n".join(problems))
        return 1
    newest = f"; newest GLIBC_{versions[-1]}" if versions else ""
    abi_note = ("all in the 3.11 stable ABI" if abi is not None
                else "stable ABI not checked: no CPython source")
    print(f"needs {' '.join(needed) or 'nothing'}{newest}; {len(python)} Python symbols "
          f"({abi_note}), resolved at load; {len(libc)} libc symbols; "
          f"exports {' '.join(sorted(exports))}")
    return 0


SYSTEM_DLL = re.compile(r"(kernel32|ntdll|ucrtbase|msvcrt|api-ms-win-[\w-]+)\.dll$", re.I)


def check_pe(pyd: str, target: str, toml: str | None) -> int:
    import pefile

    problems: list[str] = []
    pe = pefile.PE(pyd)
    arch = target.split("-")[0]
    machine = {"x86_64": 0x8664, "aarch64": 0xAA64}[arch]
    if pe.FILE_HEADER.Machine != machine:
        problems.append(f"machine {pe.FILE_HEADER.Machine:#x}, not {arch}")
    dlls: list[str] = []
    python: list[str] = []
    for entry in getattr(pe, "DIRECTORY_ENTRY_IMPORT", []):
        dll = entry.dll.decode()
        dlls.append(dll)
        if dll.lower() == "python3.dll":
            python += [imp.name.decode() if imp.name else f"#{imp.ordinal}"
                       for imp in entry.imports]
        elif re.match(r"python3\d+", dll, re.I):
            problems.append(f"imports {dll}: a version's DLL, not the stable ABI's python3.dll")
        elif not SYSTEM_DLL.match(dll):
            problems.append(f"imports {dll}, which Windows does not ship")
    if not python:
        problems.append("imports nothing from python3.dll")
    abi = stable_abi(toml, "windows")
    if abi is not None:
        problems += [f"{name}: not in CPython 3.11's stable ABI" for name in python
                     if name not in abi]
    exports = [symbol.name.decode() for symbol in
               getattr(getattr(pe, "DIRECTORY_ENTRY_EXPORT", None), "symbols", [])
               if symbol.name]
    problems += export_problems(exports)
    if problems:
        print("\n".join(problems))
        return 1
    print(f"imports {' '.join(dlls)}; {len(python)} symbols from python3.dll; "
          f"exports {' '.join(sorted(exports))}")
    return 0


def option(args: list[str], name: str) -> str | None:
    if name in args:
        index = args.index(name)
        value = args[index + 1]
        del args[index:index + 2]
        return value
    return None


def main(argv: list[str]) -> int:
    args = list(argv)
    toml = option(args, "--stable-abi")
    musl_libc = option(args, "--musl-libc")
    if len(args) == 3 and args[0] == "def":
        return write_def(args[1], args[2])
    if len(args) == 3 and args[0] == "elf":
        return check_elf(args[1], args[2], toml, musl_libc)
    if len(args) == 3 and args[0] == "pe":
        return check_pe(args[1], args[2], toml)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
