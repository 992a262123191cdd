"""isa.py reads an AMDGPU .s through one index per text (AsmFile): its answers must be those of
the plain line scans it replaced, kept below as the reference, on real compiler output and on
hand-written corner cases; and the index is built once per text, not once per kernel."""
import re

import pytest

import isa

FIXTURES = ["toy_two_stage.gfx942.s", "toy_two_stage.gfx950.s", "toy_two_stage.gfx942.no_shim.s"]


# The line scans as they were before the index: every call reads the file from its start.

def _scan_start(lines: list[str], symbol: str) -> int:
    start = next((i for i, line in enumerate(lines) if line.startswith(symbol + ":")), None)
    if start is None:
        raise KeyError(f"no function body for {symbol}")
    return start


def _scan_kernel_body(asm_text: str, symbol: str) -> list[str]:
    lines = asm_text.splitlines()
    body = []
    for line in lines[_scan_start(lines, symbol) + 1:]:
        text = line.split(";", 1)[0].strip()
        if line.startswith(".Lfunc_end") or text.startswith(".size"):
            break
        if not text or text.startswith(".") or re.match(r"^([^\s:;]+):", text):
            continue
        body.append(" ".join(text.split()))
    return body


def _scan_loops(asm_text: str, symbol: str) -> dict[str, list[str]]:
    lines = asm_text.splitlines()
    label_re = re.compile(r"^([^\s:;]+):")
    found: dict[str, list[str]] = {}
    current = label = None
    for line in lines[_scan_start(lines, symbol) + 1:]:
        text = line.split(";", 1)[0].strip()
        if line.startswith(".Lfunc_end") or text.startswith(".size"):
            break
        if m := label_re.match(line):
            label, current = m.group(1), None
        if label is not None and ";" in line and (not text or label_re.match(text)):
            comment = line.split(";", 1)[1]
            if re.search(r"Loop Header: Depth=\d+", comment):
                current = label
            elif current is None and (h := re.search(r"\bin Loop: Header=([\w.$]+) Depth=\d+", comment)):
                current = ".L" + h.group(1)
            continue
        label = None
        if not text or text.startswith(".") or label_re.match(text) or current is None:
            continue
        found.setdefault(current, []).append(" ".join(text.split()))
    return found


def _scan_external_calls(asm_text: str, symbol: str) -> list[str]:
    defined = {m.group(1) for line in asm_text.splitlines() if (m := re.match(r"^([^\s:;]+):", line))}
    refs = {m.group(1) for line in _scan_kernel_body(asm_text, symbol)
            for m in re.finditer(r"([A-Za-z_.$][\w.$]*)@(?:rel32|gotpcrel32|gotpcrel|abs32)", line)}
    return sorted(name for name in refs if name not in defined)


def _labels(asm_text: str) -> list[str]:
    """Every label of the file (functions, blocks, the metadata's), plus names that are none."""
    found = [m.group(1) for line in asm_text.splitlines() if (m := re.match(r"^([^\s:;]+):", line))]
    return list(dict.fromkeys(found)) + ["_Z7missingv", "", ".LBB0"]


def _agree(asm_text: str, symbol: str) -> None:
    for indexed, scanned in ((isa.kernel_body, _scan_kernel_body), (isa.loops, _scan_loops),
                             (isa.external_calls, _scan_external_calls)):
        try:
            expected = scanned(asm_text, symbol)
        except KeyError:
            with pytest.raises(KeyError):
                indexed(asm_text, symbol)
            continue
        assert indexed(asm_text, symbol) == expected, (indexed.__name__, symbol)


@pytest.mark.parametrize("name", FIXTURES)
def test_indexed_reads_match_the_line_scans_on_compiler_output(compiler_output, name):
    asm = compiler_output(name)
    symbols = _labels(asm)
    assert len(symbols) > 10  # the toy's kernels and their blocks
    for symbol in symbols:
        _agree(asm, symbol)


HAND_WRITTEN = """\
\t.type\tk,@function
k:                                      ; @k
\ts_load_dword s0, s[0:1], 0x0
.LBB0_1:                                ; =>This Loop Header: Depth=1
\tv_add_f32 v0, v0, v1   ; add
\ts_getpc_b64 s[4:5]
\ts_add_u32 s4, s4, ext_fn@rel32@lo+4
\ts_cbranch_scc1 .LBB0_1
\ts_endpgm
.Lfunc_end0:
\t.size\tk, .Lfunc_end0-k
k2:
\ts_add_u32 s4, s4, k@rel32@lo+4
\ts_endpgm
\t.size\tk2, .-k2
weird name: ; a line that only a scan by prefix finds
\tv_mov_b32 v0, 0
.Lfunc_end1:
k:
\tv_mov_b32 v9, 9
.Lfunc_end2:
"""


@pytest.mark.parametrize("symbol", ["k", "k2", "weird name", "weird", "ext_fn", "missing", ".LBB0_1", ""])
def test_indexed_reads_match_the_line_scans_by_hand(symbol):
    _agree(HAND_WRITTEN, symbol)


def test_first_definition_wins_and_prefixes_do_not_match():
    assert isa.kernel_body(HAND_WRITTEN, "k")[0] == "s_load_dword s0, s[0:1], 0x0"
    assert isa.external_calls(HAND_WRITTEN, "k") == ["ext_fn"]
    assert isa.external_calls(HAND_WRITTEN, "k2") == [], "k is defined in the file"
    assert isa.kernel_body(HAND_WRITTEN, "weird name") == ["v_mov_b32 v0, 0"]


def test_answers_are_copies():
    body = isa.kernel_body(HAND_WRITTEN, "k")
    body.append("changed")
    isa.loops(HAND_WRITTEN, "k")[".LBB0_1"].clear()
    isa.external_calls(HAND_WRITTEN, "k").clear()
    assert isa.kernel_body(HAND_WRITTEN, "k") == _scan_kernel_body(HAND_WRITTEN, "k")
    assert isa.loops(HAND_WRITTEN, "k") == _scan_loops(HAND_WRITTEN, "k")
    assert isa.external_calls(HAND_WRITTEN, "k") == ["ext_fn"]


def _many_kernels(count: int) -> str:
    parts = []
    for i in range(count):
        parts.append(f"\t.type\t_Z1k{i}v,@function\n_Z1k{i}v:\n\tv_mov_b32 v0, {i}\n\ts_endpgm\n"
                     f".Lfunc_end{i}:\n\t.size\t_Z1k{i}v, .Lfunc_end{i}-_Z1k{i}v\n")
    return "".join(parts)


def test_one_index_per_text(monkeypatch):
    built = []
    original = isa.AsmFile.__init__

    def counting_init(self, asm_text):
        built.append(len(asm_text))
        original(self, asm_text)

    monkeypatch.setattr(isa.AsmFile, "__init__", counting_init)
    isa._asm_file.cache_clear()
    text = _many_kernels(300)
    for i in range(300):
        symbol = f"_Z1k{i}v"
        assert isa.kernel_body(text, symbol) == ["v_mov_b32 v0, " + str(i), "s_endpgm"]
        assert isa.external_calls(text, symbol) == [] and isa.loops(text, symbol) == {}
    assert len(built) == 1


def test_parsers_memoized_per_text_hand_out_copies(compiler_output):
    asm = compiler_output("toy_two_stage.gfx942.s")
    first = isa.parse_amdgpu_metadata(asm)
    next(iter(first.values()))["vgpr_count"] = -1
    assert -1 not in [k["vgpr_count"] for k in isa.parse_amdgpu_metadata(asm).values()]
    descriptors = isa.amdhsa_descriptors(asm)
    next(iter(descriptors.values())).clear()
    assert all(isa.amdhsa_descriptors(asm).values())
    sass_text = compiler_output("toy_two_stage.sm_90a.sass")
    functions = isa.sass_functions(sass_text)
    next(iter(functions.values())).clear()
    assert all(isa.sass_functions(sass_text).values())
