"""Read compiler output for GPU kernels: ptxas -v logs, PTX entry directives, AMDGPU assembly
(.s with its .amdgpu_metadata block) and cuobjdump SASS listings; demangle names; find
instruction-order evidence in a kernel's instruction list.

Standard library only, so it runs wherever python3 does (CI, the H200 machine, a laptop).
Used by scripts/resource_report.py and by tests that check what the compiler did with a
scheduling knob (e.g. "a ds_read sits between the PV and QK v_mfma groups").
"""
from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence

Regex = str | re.Pattern[str]

# ---------------------------------------------------------------------------------------
# NVIDIA: ptxas -v, PTX and SASS
# ---------------------------------------------------------------------------------------

_PTXAS_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PTXAS_PROPERTIES = re.compile(r"Function properties for (\S+)")
_PTXAS_FRAME = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_USED = re.compile(r"\bUsed (\d+) registers\b(.*)")
_PTXAS_QUOTED_NAME = re.compile(r"'([^']+)'")


def parse_ptxas_verbose(text: str) -> dict[str, dict]:
    """Per-kernel resources from `ptxas -v` output (or `nvcc -Xptxas -v`).

    Returns {mangled entry name: record}. A record has `target`, `registers`, `barriers`,
    `stack_frame_bytes`, `spill_store_bytes`, `spill_load_bytes` (ptxas counts spills in
    bytes), `smem_bytes` (static shared memory; dynamic shared memory is a launch
    parameter ptxas never sees), `cmem` ({bank: bytes}) and `notes` (other ptxas lines
    that name the kernel, e.g. the wgmma serialization warnings C7510 / C7515). Only entry
    functions (kernels) are returned; non-inlined device functions are left out.
    """
    kernels: dict[str, dict] = {}
    properties: dict[str, tuple[int, int, int]] = {}
    notes: dict[str, list[str]] = {}
    current: str | None = None  # the function the next "Used ..." line belongs to
    for line in text.splitlines():
        if m := _PTXAS_ENTRY.search(line):
            current = m.group(1)
            kernels[current] = {
                "target": m.group(2), "registers": None, "barriers": 0, "stack_frame_bytes": 0,
                "spill_store_bytes": 0, "spill_load_bytes": 0, "smem_bytes": 0, "cmem": {}, "notes": []}
        elif m := _PTXAS_PROPERTIES.search(line):
            current = m.group(1)
        elif m := _PTXAS_FRAME.search(line):
            if current is not None:
                properties[current] = tuple(int(g) for g in m.groups())
        elif m := _PTXAS_USED.search(line):
            if current in kernels:
                _parse_used(kernels[current], int(m.group(1)), m.group(2))
        else:
            for name in _PTXAS_QUOTED_NAME.findall(line):
                notes.setdefault(name, []).append(line.strip())
    for name, record in kernels.items():
        if name in properties:
            record["stack_frame_bytes"], record["spill_store_bytes"], record["spill_load_bytes"] = properties[name]
        record["notes"] = notes.get(name, [])
    return kernels


def _parse_used(record: dict, registers: int, rest: str) -> None:
    """The tail of "Used R registers, used B barriers, S bytes smem, C bytes cmem[0], ..."."""
    record["registers"] = registers
    for item in rest.split(","):
        item = item.strip()
        if m := re.fullmatch(r"used (\d+) barriers?", item):
            record["barriers"] = int(m.group(1))
        elif m := re.fullmatch(r"(\d+) bytes smem", item):
            record["smem_bytes"] = int(m.group(1))
        elif m := re.fullmatch(r"(\d+) bytes cmem\[(\d+)\]", item):
            record["cmem"][int(m.group(2))] = int(m.group(1))


_PTX_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$.]+)\s*\(", re.M)
_PTX_DIRECTIVE = re.compile(r"^\s*\.(maxntid|reqntid|minnctapersm|maxnreg)\s+([\d,\s]+)$")


def parse_ptx_entries(ptx_text: str) -> dict[str, dict]:
    """The performance-tuning directives of each `.entry` in a PTX file.

    `__launch_bounds__(T, M)` becomes `.maxntid T, 1, 1` and `.minnctapersm M`. Returns
    {mangled: {"maxntid": (x, y, z) | None, "reqntid": ..., "minnctapersm": int | None,
    "maxnreg": int | None}}. The block size ptxas assumed is the product of maxntid (or
    reqntid); ptxas -v itself does not print it.
    """
    entries: dict[str, dict] = {}
    matches = list(_PTX_ENTRY.finditer(ptx_text))
    for i, m in enumerate(matches):
        header_end = ptx_text.find("{", m.end())
        header = ptx_text[m.end(): header_end if header_end >= 0 else len(ptx_text)]
        record = {"maxntid": None, "reqntid": None, "minnctapersm": None, "maxnreg": None}
        for line in header.splitlines():
            if d := _PTX_DIRECTIVE.match(line):
                values = tuple(int(v) for v in re.findall(r"\d+", d.group(2)))
                if d.group(1) in ("maxntid", "reqntid"):
                    record[d.group(1)] = values + (1,) * (3 - len(values))
                else:
                    record[d.group(1)] = values[0]
        entries[m.group(1)] = record
    return entries


_SASS_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")
_SASS_ADDRESS = re.compile(r"\s*/\*[0-9a-fA-F]+\*/\s+")  # an instruction line's start: "  /*0a80*/  "


def sass_functions(cuobjdump_text: str) -> dict[str, list[str]]:
    """{mangled function: [instruction text]} from `cuobjdump -sass` (or `nvdisasm`) output.

    Instruction text keeps predicates and operands ("@P0 BRA 0x90", "HMMA.16816.F32 R4, R8,
    R12, R4") and drops addresses, encodings and the trailing ';'.
    """
    return {name: list(body) for name, body in _sass_functions(cuobjdump_text).items()}


@functools.lru_cache(maxsize=4)
def _sass_functions(cuobjdump_text: str) -> dict[str, tuple[str, ...]]:
    # Parsed once per listing: tests look up one function after another in the same text. A
    # Hopper experiment's listing is about 100 MB, so a line is cut with string methods after
    # one anchored match (a regex over each whole line took 2.5 times as long).
    functions: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in cuobjdump_text.splitlines():
        if (m := _SASS_ADDRESS.match(line)) is not None:
            if current is None:
                continue
            text = line[m.end():].rstrip()
            start = text.rfind("/*")  # the encoding's comment, "/* 0x000fe20000000800 */"
            if start >= 0 and text.endswith("*/") and "*" not in text[start + 2:-2]:
                text = text[:start].rstrip()
            text = text.removesuffix(";").strip()
            if text and not text.startswith("/*"):
                current.append(text)
        elif "Function" in line and (m := _SASS_FUNCTION.match(line)):
            current = functions.setdefault(m.group(1), [])
    return {name: tuple(body) for name, body in functions.items()}


_SASS_BRANCH = re.compile(r"\bBRA\S*\s+0x([0-9a-fA-F]+)")


def sass_loops(body: Sequence[str], innermost: bool = False) -> list[range]:
    """The loops of one SASS function (sass_functions' instructions): for each backward
    branch, the indices from its target to the branch, in program order. SASS instructions
    are 16 bytes and cuobjdump's branch targets count from the function's start, so
    instruction i is at 16 i. innermost: only the loops around no other loop (a branch back
    over a whole body, which ptxas may leave, holds its prologue and epilogue too)."""
    spans = [range(int(m.group(1), 16) // 16, i + 1) for i, ins in enumerate(body)
             if (m := _SASS_BRANCH.search(ins)) and int(m.group(1), 16) // 16 < i]
    if innermost:
        spans = [a for a in spans if not any(b != a and b.start >= a.start and b.stop <= a.stop for b in spans)]
    return spans


# ---------------------------------------------------------------------------------------
# AMD: assembly (.s) from clang -S for amdgcn
# ---------------------------------------------------------------------------------------


def _metadata_block(asm_text: str) -> list[str]:
    start = asm_text.find(".amdgpu_metadata")
    end = asm_text.find(".end_amdgpu_metadata", start)
    if start < 0 or end < 0:
        return []
    return asm_text[start:end].splitlines()[1:]


def _yaml_scalar(text: str) -> int | str:
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def parse_amdgpu_metadata(asm_text: str) -> dict[str, dict]:
    """Per-kernel records from the `.amdgpu_metadata` YAML of an AMDGPU .s file.

    Returns {kernel function symbol (the metadata `.name`, also the label of its body in
    the .s): {key without the leading dot: scalar}}, e.g. `vgpr_count`, `agpr_count`,
    `sgpr_count`, `vgpr_spill_count`, `sgpr_spill_count` (spilled registers, not bytes),
    `group_segment_fixed_size` (static LDS bytes), `private_segment_fixed_size` (scratch
    bytes per lane), `max_flat_workgroup_size`, `wavefront_size`, `symbol` (the kernel
    descriptor, name + ".kd"). Nested lists such as `.args` are skipped.

    On gfx90a and later `vgpr_count` is the unified total: arch VGPRs rounded up to 4 plus
    AGPRs (LLVM AMDGPU::getTotalNumVGPRs); the arch count alone is added as `arch_vgpr_count`
    from the `.set <name>.num_vgpr` line when the .s has it. `compiler_occupancy` is LLVM's
    own waves/SIMD from the "; Occupancy:" comment when it is a number (it counts static LDS
    only and becomes an expression when the kernel calls unresolved functions).
    """
    return {name: dict(record) for name, record in _amdgpu_metadata(asm_text).items()}


@functools.lru_cache(maxsize=64)
def _amdgpu_metadata(asm_text: str) -> dict[str, dict]:
    kernels: list[dict] = []
    in_kernels = False
    item_indent = None
    for line in _metadata_block(asm_text):
        if not line.strip() or line.strip() in ("---", "..."):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 0:
            in_kernels = line.startswith("amdhsa.kernels:")
            continue
        if not in_kernels:
            continue
        body = line.lstrip(" ")
        if body.startswith("- ") and (item_indent is None or indent == item_indent):
            item_indent = indent
            kernels.append({})
            body, indent = body[2:], indent + 2
        if not kernels or indent != item_indent + 2:
            continue  # a nested entry (.args)
        if m := re.match(r"\.([\w.]+):\s*(.*)$", body):
            if m.group(2).strip():
                kernels[-1][m.group(1)] = _yaml_scalar(m.group(2))
    records = {k["name"]: k for k in kernels if "name" in k}
    for name, value in _asm_function_facts(asm_text).items():
        if name in records:
            records[name].update(value)
    return records


_ASM_TYPE_FUNCTION = re.compile(r"^\s*\.type\s+([^,\s]+),\s*@function")
_ASM_LABEL = re.compile(r"^([^\s:;]+):")
_ASM_NUM_VGPR = re.compile(r"^\s*\.set\s+(\S+)\.num_vgpr,\s*(?:max\()?(\d+)\b")
_ASM_OCCUPANCY = re.compile(r"^\s*;\s*Occupancy:\s*(\d+)\s*$")


def _asm_function_facts(asm_text: str) -> dict[str, dict]:
    """arch VGPRs and LLVM's occupancy comment per function, from the .s text."""
    facts: dict[str, dict] = {}
    functions: set[str] = set()
    current = None
    for line in asm_text.splitlines():
        if m := _ASM_TYPE_FUNCTION.match(line):
            functions.add(m.group(1))
        elif (m := _ASM_LABEL.match(line)) and m.group(1) in functions:
            current = m.group(1)
        elif m := _ASM_NUM_VGPR.match(line):
            facts.setdefault(m.group(1), {})["arch_vgpr_count"] = int(m.group(2))
        elif (m := _ASM_OCCUPANCY.match(line)) and current is not None:
            facts.setdefault(current, {})["compiler_occupancy"] = int(m.group(1))
    return facts


_AMDHSA_KERNEL = re.compile(r"^\s*\.amdhsa_kernel\s+(\S+)")
_AMDHSA_FIELD = re.compile(r"^\s*\.amdhsa_(\w+)\s+(-?\d+)\s*$")


def amdhsa_descriptors(asm_text: str) -> dict[str, dict[str, int]]:
    """Per kernel, the fields of its kernel descriptor block (.amdhsa_kernel SYM ...
    .end_amdhsa_kernel) without the prefix: float_denorm_mode_16_64, next_free_vgpr, ...
    These set the wave's MODE register at launch (the denormal modes, for example)."""
    return {name: dict(fields) for name, fields in _amdhsa_descriptors(asm_text).items()}


@functools.lru_cache(maxsize=64)
def _amdhsa_descriptors(asm_text: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in asm_text.splitlines():
        if m := _AMDHSA_KERNEL.match(line):
            current = out.setdefault(m.group(1), {})
        elif line.strip() == ".end_amdhsa_kernel":
            current = None
        elif current is not None and (m := _AMDHSA_FIELD.match(line)):
            current[m.group(1)] = int(m.group(2))
    return out


class AsmFile:
    """An AMDGPU .s text split into lines once, with the line of each label's first
    definition; each function's instructions, loops and external calls are worked out when
    first asked for and kept. kernel_body, loops and external_calls below use one per text
    (the last few texts asked about); a caller that reads every kernel of one file may hold
    its own. A compiled experiment has hundreds of kernels in a file of hundreds of thousands
    of lines: scanning the whole file again for each kernel made a check over all of them
    take minutes."""

    def __init__(self, asm_text: str) -> None:
        self.lines = asm_text.splitlines()
        self.label_line: dict[str, int] = {}
        for i, line in enumerate(self.lines):
            if m := _ASM_LABEL.match(line):
                self.label_line.setdefault(m.group(1), i)
        self._bodies: dict[str, tuple[str, ...]] = {}
        self._loops: dict[str, dict[str, tuple[str, ...]]] = {}
        self._calls: dict[str, tuple[str, ...]] = {}

    def start(self, symbol: str) -> int:
        """The index of the first line that starts with `symbol:`. A label holds no
        whitespace, ':' or ';', so for a symbol without them that is its first definition;
        any other symbol is looked for line by line."""
        i = self.label_line.get(symbol)
        if i is None:
            i = next((i for i, line in enumerate(self.lines) if line.startswith(symbol + ":")), None)
        if i is None:
            raise KeyError(f"no function body for {symbol}")
        return i

    def function_lines(self, symbol: str) -> Iterator[tuple[str, str]]:
        """(line, line without its comment) from after `symbol:` to the function's end (its
        `.Lfunc_end` label or `.size` directive)."""
        for i in range(self.start(symbol) + 1, len(self.lines)):
            line = self.lines[i]
            text = _strip_asm_comment(line)
            if line.startswith(".Lfunc_end") or text.startswith(".size"):
                return
            yield line, text

    def kernel_body(self, symbol: str) -> list[str]:
        """As the module's kernel_body."""
        if symbol not in self._bodies:
            self._bodies[symbol] = tuple(" ".join(text.split()) for _, text in self.function_lines(symbol)
                                         if text and not text.startswith(".") and not _ASM_LABEL.match(text))
        return list(self._bodies[symbol])

    def loops(self, symbol: str) -> dict[str, list[str]]:
        """As the module's loops."""
        if symbol not in self._loops:
            self._loops[symbol] = {header: tuple(body) for header, body in self._find_loops(symbol).items()}
        return {header: list(body) for header, body in self._loops[symbol].items()}

    def _find_loops(self, symbol: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        current: str | None = None
        label: str | None = None  # a block label whose comment lines are still being read
        for line, text in self.function_lines(symbol):
            if m := _ASM_LABEL.match(line):
                label, current = m.group(1), None
            if label is not None and ";" in line and (not text or _ASM_LABEL.match(text)):
                comment = line.split(";", 1)[1]
                if _ASM_LOOP_HEADER.search(comment):
                    current = label
                elif current is None and (h := _ASM_IN_LOOP.search(comment)):
                    current = ".L" + h.group(1)
                continue
            label = None
            if not text or text.startswith(".") or _ASM_LABEL.match(text) or current is None:
                continue
            found.setdefault(current, []).append(" ".join(text.split()))
        return found

    def external_calls(self, symbol: str) -> list[str]:
        """As the module's external_calls."""
        if symbol not in self._calls:
            refs = {m.group(1) for line in self.kernel_body(symbol) for m in _ASM_SYMBOL_REF.finditer(line)}
            self._calls[symbol] = tuple(sorted(name for name in refs if name not in self.label_line))
        return list(self._calls[symbol])


@functools.lru_cache(maxsize=64)
def _asm_file(asm_text: str) -> AsmFile:
    # A test goes through every kernel of one file, then the next; the next test does so
    # again, so the cache must hold every file a test module reads or each pass evicts the
    # file the next one needs (the decode tests read 9 sources x 2 targets, about 60 MB of
    # text; 16 entries made every lookup a miss once they passed 8 sources).
    return AsmFile(asm_text)


def _strip_asm_comment(line: str) -> str:
    return line.split(";", 1)[0].strip()


def kernel_body(asm_text: str, symbol: str) -> list[str]:
    """The instruction lines of one function in an AMDGPU .s, in program order.

    Starts after the `symbol:` label and ends at its `.Lfunc_end` label (code placed after
    s_endpgm, such as cold blocks, is included). Comments, labels and assembler directives
    are dropped; whitespace inside an instruction is collapsed to single spaces. Raises
    KeyError when the symbol has no body in the file.
    """
    return _asm_file(asm_text).kernel_body(symbol)


_ASM_LOOP_HEADER = re.compile(r"Loop Header: Depth=\d+")
_ASM_IN_LOOP = re.compile(r"\bin Loop: Header=([\w.$]+) Depth=\d+")


def loops(asm_text: str, symbol: str) -> dict[str, list[str]]:
    """The instructions of each loop of one function in an AMDGPU .s, by its header's label.

    LLVM writes the loop structure as comments on block labels (and the comment lines right
    after): a header block says "=>This Loop Header: Depth=d" (or "Inner Loop Header"), any
    other block of a loop says "in Loop: Header=BB0_3 Depth=d", naming the innermost loop it
    belongs to ("Parent Loop" lines name the outer ones). A block belongs to that innermost
    loop alone (an outer loop's list leaves out its inner loops' blocks); blocks with no such
    comment, and the code before the first block label, belong to none. Instructions as
    kernel_body gives them, in program order (not execution order).
    """
    return _asm_file(asm_text).loops(symbol)


_ASM_SYMBOL_REF = re.compile(r"([A-Za-z_.$][\w.$]*)@(?:rel32|gotpcrel32|gotpcrel|abs32)")


def external_calls(asm_text: str, symbol: str) -> list[str]:
    """Functions a kernel refers to (calls) that the .s does not define.

    Their register use is unknown to the compiler, which then assumes the calling
    convention's worst case: a kernel with external calls reports inflated VGPR/SGPR counts
    and a dynamic stack. With -nogpulib every ROCm device-library function (ockl/ocml) is
    such a call unless something defines it.
    """
    return _asm_file(asm_text).external_calls(symbol)


# ---------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------

DEMANGLERS = ("llvm-cxxfilt-22", "llvm-cxxfilt", "c++filt")


def find_demangler() -> str | None:
    return next((path for tool in DEMANGLERS if (path := shutil.which(tool))), None)


def demangle(names: Iterable[str], tool: str | None = None) -> dict[str, str]:
    """{mangled: demangled} for many names in one demangler run.

    Uses llvm-cxxfilt-22, llvm-cxxfilt or c++filt (the first found); "> >" is written ">>"
    whichever prints it, so names compare equal across machines. A name the tool cannot
    demangle maps to itself; with no tool at all every name maps to itself.
    """
    names = list(dict.fromkeys(names))
    tool = tool or find_demangler()
    if not names or tool is None:
        return {n: n for n in names}
    out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    demangled = out.stdout.splitlines()
    if len(demangled) != len(names):
        raise RuntimeError(f"{tool} returned {len(demangled)} lines for {len(names)} names")
    return {n: re.sub(r">\s+(?=>)", ">", d.strip()) for n, d in zip(names, demangled)}


# ---------------------------------------------------------------------------------------
# Instruction-order evidence
# ---------------------------------------------------------------------------------------


def _compile(pattern: Regex) -> re.Pattern[str]:
    return pattern if isinstance(pattern, re.Pattern) else re.compile(pattern)


def has_instruction(instrs: Sequence[str], pattern: Regex) -> bool:
    """Whether any instruction matches `pattern` (re.search, e.g. r"^v_mfma", r"\\bLDSM\\b")."""
    regex = _compile(pattern)
    return any(regex.search(ins) for ins in instrs)


def find_between(instrs: Sequence[str], first: Regex, mid: Regex, last: Regex) -> tuple[int, int, int] | None:
    """Find a `mid` instruction in the gap after a group of `first` instructions and before
    the next group of `last` instructions.

    Scans in program order: after an instruction matching `first`, a `mid` instruction
    followed by a `last` instruction, with no `first` or `last` in between, is a match.
    An instruction matching `first` again restarts the gap (mid must come after the whole
    first group), and a `last` seen without a mid in the gap closes it. `first` and `last`
    may be the same pattern ("a ds_read between two v_mfma groups"). Patterns are regexes
    applied with re.search.

    Returns (index of the last `first`, index of the first `mid` in the gap, index of the
    `last`) for the first match in program order, or None. The tuple is truthy, so
    `assert find_between(...)` reads as a yes/no check. Program order is not execution
    order across branches: a loop's QK group follows its PV group only through the back
    edge, so check the loop body or both orders as the case needs.
    """
    first_re, mid_re, last_re = _compile(first), _compile(mid), _compile(last)
    last_first: int | None = None
    gap_mid: int | None = None
    for i, ins in enumerate(instrs):
        if last_re.search(ins) and gap_mid is not None:
            return (last_first, gap_mid, i)
        if first_re.search(ins):
            last_first, gap_mid = i, None
        elif last_re.search(ins):
            last_first, gap_mid = None, None
        elif last_first is not None and gap_mid is None and mid_re.search(ins):
            gap_mid = i
    return None
