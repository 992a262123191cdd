#!/usr/bin/env python3
"""Compiler launcher of the kernel libraries' CUDA sources (CMake's CUDA_COMPILER_LAUNCHER).

    nvcc_resource_log.py <nvcc> <arguments...>

Runs the compile with nvcc's --resource-usage (ptxas -v) and keeps beside its object what
the static report reads instead of compiling the source a second time (scripts/build_objects.py):

    <object>.ptxas.log   ptxas's per-kernel lines: registers, barriers, stack, spills, shared memory
    <object>.deps        the files the compile read (a copy of its dependency file, which ninja
                         deletes once it has read it)

--resource-usage only makes ptxas talk: the PTX and machine code are those the same command
without it writes (unlike -Xptxas -v, it is not recorded as a JIT option in the fat binary).
Every other line of the compiler's output passes through; a failed compile keeps nothing.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

# ptxas -v: "ptxas info    : ..." and its indented continuation lines.
_PTXAS_LINE = re.compile(r"^(ptxas info\s*:|\s+\d+ bytes (stack frame|spill)|\s+Compile time)")


def option_value(args: list[str], flag: str) -> str | None:
    """The word after `flag` (`-o obj`), or the value of `flag=value`."""
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(flag + "="):
            return arg[len(flag) + 1:]
    return None


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: nvcc_resource_log.py <nvcc> <arguments...>", file=sys.stderr)
        return 2
    obj, depfile = option_value(argv, "-o"), option_value(argv, "-MF")
    if obj is None:  # not a compile to an object (a link, a version query): run it as it is
        return subprocess.call(argv)
    log, deps = Path(obj + ".ptxas.log"), Path(obj + ".deps")
    for stale in (log, deps):
        stale.unlink(missing_ok=True)
    proc = subprocess.run([*argv, "--resource-usage"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = proc.stdout.splitlines(keepends=True)
    kept = [line for line in lines if _PTXAS_LINE.match(line)]
    sys.stderr.write("".join(line for line in lines if not _PTXAS_LINE.match(line)))
    if proc.returncode == 0:
        if depfile and Path(depfile).is_file():
            deps.write_text(Path(depfile).read_text())
        log.write_text("".join(kept))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
