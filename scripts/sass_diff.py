#!/usr/bin/env python3
"""Compare the machine code of the same kernels built from two trees: did a refactoring move
any instruction?

    scripts/sass_diff.py BEFORE AFTER [--only REGEX] [--rename OLD=NEW ...] [--show N] [--cuobjdump PATH]

BEFORE and AFTER are files or folders. A folder is searched for object files (.o, .cubin,
anything cuobjdump reads) and AMDGPU assembly (.s, from clang -S or the static report's
isa/ folder); files are paired by their path relative to the folder. Per pair:
  - NVIDIA: `cuobjdump -sass`, then per function the instruction text (isa.sass_functions:
    no addresses, no encodings) and `cuobjdump -res-usage` (registers, stack, shared,
    local memory);
  - AMD: per kernel the instruction lines (isa.kernel_body: no comments, labels or
    directives) and the .amdgpu_metadata (VGPRs, AGPRs, SGPRs, scratch, LDS, spills).
A variant that moved to another experiment (another namespace, so another mangled name) pairs
with its old self through --rename OLD=NEW: the regex OLD is replaced by NEW in BEFORE's names
(mangled names spell a namespace with its length: 21decode_work_partition).
Branch targets are absolute offsets in the function; they are compared as they are (equal
instruction lists put every target at the same offset), and with --ignore-targets replaced
by a placeholder, to see whether a difference is in the code or only in its placement.

Prints one line per function (identical, or how many lines differ and the first of them
with --show) and a total; exit status 0 when every function on both sides is identical,
1 otherwise (a function on one side only counts as a difference), 2 on a usage error.
Standard library only (plus scripts/isa.py).
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import isa  # noqa: E402
from resource_report import find_cuda_tool  # noqa: E402

OBJECT_SUFFIXES = (".o", ".obj", ".cubin", ".fatbin", ".a", ".so")
ASM_SUFFIXES = (".s",)
_RES_USAGE = re.compile(r"^\s*Function\s+(\S+):\s*$")
_BRANCH = re.compile(r"^(@!?U?P\w+\s+)?(BRA|BRX|BSSY|CALL|JMP|JMX)\b")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_ANON = re.compile(r"_GLOBAL__N__[0-9a-f]+_(\d+)_")
AMD_RESOURCES = ("vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count", "sgpr_spill_count",
                 "private_segment_fixed_size", "group_segment_fixed_size")


def run(cmd: list[str]) -> str:
    # cuobjdump -sass runs nvdisasm, found on PATH: the one beside it first (the pip wheels).
    env = dict(os.environ, PATH=f"{Path(cmd[0]).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr.strip()}")
    return proc.stdout


def stable_name(mangled: str) -> str:
    """The name with anonymous namespaces' tags (nvcc: _GLOBAL__N__<hash>_<len>_<file>_<hash>,
    hashes of the source path) cut to the file name, so two trees' functions pair up."""
    out, pos = [], 0
    while m := _ANON.search(mangled, pos):
        end = m.end() + int(m.group(1))  # the file name, then _<hash>
        tail = re.match(r"_[0-9a-f]{8}", mangled[end:])
        out.append(mangled[pos:m.start()] + "_GLOBAL__N__" + mangled[m.end():end])
        pos = end + (tail.end() if tail else 0)
    return "".join(out) + mangled[pos:]


def nvidia_functions(path: Path, cuobjdump: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """({function: instructions}, {function: resource line}) of every sm_* cubin in `path`."""
    functions = {stable_name(k): v for k, v in isa.sass_functions(run([cuobjdump, "-sass", str(path)])).items()}
    resources: dict[str, str] = {}
    current = None
    for line in run([cuobjdump, "-res-usage", str(path)]).splitlines():
        if m := _RES_USAGE.match(line):
            current = stable_name(m.group(1))
        elif current and line.strip():
            resources[current] = " ".join(line.split())
            current = None
    return functions, resources


def amd_functions(path: Path) -> tuple[dict[str, list[str]], dict[str, str]]:
    """({kernel: instructions}, {kernel: resource line}) of an AMDGPU .s file."""
    text = path.read_text()
    functions: dict[str, list[str]] = {}
    resources: dict[str, str] = {}
    for symbol, md in isa.parse_amdgpu_metadata(text).items():
        functions[symbol] = isa.kernel_body(text, symbol)
        resources[symbol] = " ".join(f"{k}={md.get(k, 0)}" for k in AMD_RESOURCES)
    return functions, resources


def read_side(path: Path, cuobjdump: str | None) -> tuple[dict[str, list[str]], dict[str, str]]:
    if path.suffix in ASM_SUFFIXES:
        return amd_functions(path)
    if cuobjdump is None:
        raise RuntimeError(f"{path}: cuobjdump not found (--cuobjdump)")
    return nvidia_functions(path, cuobjdump)


def pair_files(before: Path, after: Path) -> list[tuple[str, Path | None, Path | None]]:
    """(name, before file, after file) for two files, or for two folders by relative path."""
    if before.is_file() and after.is_file():
        return [(after.name, before, after)]
    if not (before.is_dir() and after.is_dir()):
        raise ValueError("BEFORE and AFTER must both be files or both be folders")

    def collect(root: Path) -> dict[str, Path]:
        return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
                if p.is_file() and p.suffix in OBJECT_SUFFIXES + ASM_SUFFIXES}

    a, b = collect(before), collect(after)
    return [(name, a.get(name), b.get(name)) for name in sorted(a.keys() | b.keys())]


def normalize(instructions: list[str], ignore_targets: bool) -> list[str]:
    if not ignore_targets:
        return instructions
    return [_HEX.sub("<target>", i) if _BRANCH.match(i) else i for i in instructions]


def renamed(functions: dict[str, object], renames: list[tuple[str, str]]) -> dict[str, object]:
    """`functions` with each (OLD regex, NEW) of `renames` applied to its names, in order."""
    out = {}
    for name, value in functions.items():
        for old, new in renames:
            name = re.sub(old, new, name)
        out[name] = value
    return out


def parse_rename(text: str) -> tuple[str, str]:
    old, sep, new = text.partition("=")
    if not sep or not old:
        raise argparse.ArgumentTypeError(f"--rename wants OLD=NEW, got {text!r}")
    re.compile(old)
    return old, new


def compare(name: str, before: Path | None, after: Path | None, args: argparse.Namespace) -> tuple[int, int]:
    """Prints one line per function of the pair; returns (functions, functions that differ)."""
    if before is None or after is None:
        print(f"DIFF  {name}: only in {'AFTER' if before is None else 'BEFORE'}")
        return 1, 1
    fa, ra = read_side(before, args.cuobjdump)
    fa, ra = renamed(fa, args.rename), renamed(ra, args.rename)
    fb, rb = read_side(after, args.cuobjdump)
    names = sorted(n for n in fa.keys() | fb.keys() if not args.only or re.search(args.only, n))
    differ = 0
    for fn in names:
        label = f"{name}: {fn}"
        if fn not in fa or fn not in fb:
            print(f"DIFF  {label}: only in {'AFTER' if fn not in fa else 'BEFORE'}")
            differ += 1
            continue
        ia, ib = normalize(fa[fn], args.ignore_targets), normalize(fb[fn], args.ignore_targets)
        res_same = ra.get(fn) == rb.get(fn)
        if ia == ib and res_same:
            if args.verbose:
                print(f"same  {label}: {len(ia)} instructions; {rb.get(fn, '')}")
            continue
        differ += 1
        diff = [d for d in difflib.unified_diff(ia, ib, lineterm="", n=0) if d[:1] in "+-" and d[:3] not in ("+++", "---")]
        print(f"DIFF  {label}: {len(ia)} -> {len(ib)} instructions, {len(diff)} lines differ"
              + ("" if res_same else f"; resources {ra.get(fn)} -> {rb.get(fn)}"))
        for line in diff[:args.show]:
            print(f"      {line}")
    return len(names), differ


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--only", help="compare only functions whose (mangled) name matches this regex")
    p.add_argument("--rename", type=parse_rename, action="append", default=[], metavar="OLD=NEW",
                   help="replace the regex OLD by NEW in BEFORE's function names (repeatable)")
    p.add_argument("--show", type=int, default=0, help="print the first N differing lines per function")
    p.add_argument("--ignore-targets", action="store_true", help="compare branch instructions without their targets")
    p.add_argument("--cuobjdump", default=None, help="cuobjdump to use (default: PATH, /usr/local/cuda/bin, pip wheel)")
    p.add_argument("-v", "--verbose", action="store_true", help="print identical functions too")
    args = p.parse_args(argv)
    args.cuobjdump = find_cuda_tool("cuobjdump", args.cuobjdump)
    try:
        pairs = pair_files(args.before, args.after)
    except ValueError as e:
        p.error(str(e))
    total = differ = 0
    for name, before, after in pairs:
        n, d = compare(name, before, after, args)
        total, differ = total + n, differ + d
    print(f"{total - differ} of {total} functions identical (instructions and resources) in {len(pairs)} file pair(s)")
    return 0 if differ == 0 and total > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
