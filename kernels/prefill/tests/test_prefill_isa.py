"""Compiled-code evidence for the prefill experiments, without a GPU.

Compiles each experiment's kernels.cu through scripts/resource_report.py (the same
commands as the static report) for sm_90a and gfx950 and checks what the compiler did
with each knob. Run: python3 -m pytest -q kernels/prefill/tests

What is checked, honestly:
  - prefill_sched_barrier, sm_90a: the hints are no-ops, so the three variants compile
    to the same SASS; in each, after the block barrier that ends tile j - 1, K's LDSM
    comes before the first QK HMMA of tile j (the barrier, not a hint, pins it).
  - prefill_sched_barrier, gfx950: the pinned variant carries two sched_barrier fences
    around the K fragment loads and the default none; interleaved carries the
    sched_group_barrier pairs (DS_READ 1, MFMA 2 * m16 tiles). With a real MFMA backend
    (v_mfma in the code) the pinned variant must show a ds_read between the PV and QK
    v_mfma groups; the emulated backend has no v_mfma, so there the check is the fences'
    placement: between the two fences there are only the K loads (ldmatrix_x4 calls or
    loads), no matrix op.
  - prefill_kv_tiles, sm_90a: separate registers put a transposed V load (LDSM.16.MT88)
    before the softmax's first MUFU.EX2; the union does not.
  - prefill_lds_buffers, sm_90a: one buffer waits four times per tile (BAR.SYNC) against
    one for two buffers; padded rows cost more shared memory than swizzled ones.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
import isa  # noqa: E402
import resource_report  # noqa: E402

EXPERIMENTS = ("prefill_sched_barrier", "prefill_kv_tiles", "prefill_lds_buffers")


def _targets() -> list[str]:
    targets = []
    if resource_report.find_cuda_tool("nvcc") and resource_report.find_cuda_tool("cuobjdump"):
        targets.append("sm_90a")
    if shutil.which("clang-22"):
        targets.append("gfx950")
    return targets


@pytest.fixture(scope="session")
def compiled(tmp_path_factory):
    """{(experiment, target): compiler output text} for every experiment and found target."""
    targets = _targets()
    if not targets:
        pytest.skip("neither nvcc + cuobjdump nor clang-22 found")
    out = tmp_path_factory.mktemp("prefill_isa")
    entries = [f"{e}|{ROOT / 'experiments' / e / 'kernels.cu'}" for e in EXPERIMENTS]
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "resource_report.py"), "--out", str(out),
                           "--root", str(ROOT), f"--targets={','.join(targets)}", "-j", "6", *entries],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    texts = {}
    for e in EXPERIMENTS:
        base = out / "isa" / "experiments" / e
        if "sm_90a" in targets:
            texts[(e, "sm_90a")] = (base / "kernels.sm_90a.sass").read_text()
        if "gfx950" in targets:
            texts[(e, "gfx950")] = (base / "kernels.gfx950.s").read_text()
    return texts


def _need(compiled, experiment, target):
    if (experiment, target) not in compiled:
        pytest.skip(f"no compiler for {target}")
    return compiled[(experiment, target)]


def _kernel(names, experiment, variant, head_dim=128, dtype=1):
    """The one kernel symbol of a policy at a head dim and dtype (1 = bf16, 2 = f16)."""
    key = f"{experiment}{len(variant)}{variant}ELNS_5DTypeE{dtype}ELi{head_dim}E"
    found = [n for n in names if key in n]
    assert len(found) == 1, f"{key}: {found}"
    return found[0]


def _sass(text, experiment, variant):
    functions = isa.sass_functions(text)
    return functions[_kernel(functions, experiment, variant)]


def _raw_body(asm_text: str, symbol: str) -> list[str]:
    """A function's lines in an AMDGPU .s with comments kept (sched_barrier shows only as a comment)."""
    lines = asm_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(symbol + ":"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(".Lfunc_end"))
    return [" ".join(line.split()) for line in lines[start + 1:end] if line.strip()]


FENCE = "sched_barrier mask(0x00000000)"


# ---------------------------------------------------------------------------------------
# prefill_sched_barrier
# ---------------------------------------------------------------------------------------


def test_sm90a_sched_hints_are_noops(compiled):
    text = _need(compiled, "prefill_sched_barrier", "sm_90a")
    base = _sass(text, "prefill_sched_barrier", "compiler")
    for variant in ("pinned", "interleaved"):
        assert _sass(text, "prefill_sched_barrier", variant) == base, f"{variant} differs from compiler on sm_90a"


def test_sm90a_k_ldsm_between_barrier_and_qk_hmma(compiled):
    text = _need(compiled, "prefill_sched_barrier", "sm_90a")
    for variant in ("compiler", "pinned"):
        instrs = _sass(text, "prefill_sched_barrier", variant)
        last_bar = last_hmma = None
        groups = 0
        for i, ins in enumerate(instrs):
            if re.search(r"\bBAR\.SYNC", ins):
                last_bar = i
            elif re.search(r"\bHMMA\.", ins):
                if last_bar is not None and (last_hmma is None or last_bar > last_hmma):
                    between = instrs[last_bar + 1:i]
                    assert any(re.search(r"\bLDSM\.16\.M88\b", b) for b in between), f"{variant}: no K LDSM at {i}"
                    groups += 1
                last_hmma = i
        assert groups >= 1, f"{variant}: no HMMA group after a barrier"


def test_gfx950_pinned_fences_the_k_load(compiled):
    text = _need(compiled, "prefill_sched_barrier", "gfx950")
    names = isa.parse_amdgpu_metadata(text)
    for head_dim in (64, 128):
        default = _raw_body(text, _kernel(names, "prefill_sched_barrier", "compiler", head_dim))
        pinned = _raw_body(text, _kernel(names, "prefill_sched_barrier", "pinned", head_dim))
        assert not any(FENCE in line for line in default)
        fences = [i for i, line in enumerate(pinned) if FENCE in line]
        assert len(fences) == 2, fences
        inside = [line for line in pinned[fences[0] + 1:fences[1]] if not line.startswith(";")]
        assert not any("mma_16816" in line or line.startswith("v_mfma") for line in inside), "a matrix op inside the fences"
        assert any("ldmatrix_x4E" in line or re.match(r"(ds_read|flat_load|global_load|buffer_load)", line)
                   for line in inside), "no K load inside the fences"
        code = [line for line in pinned if not line.startswith(";")]
        if isa.has_instruction(code, r"^v_mfma"):  # a real MFMA backend: the seed's evidence
            assert isa.find_between(code, r"^v_mfma", r"^ds_read", r"^v_mfma")
            assert not isa.find_between([line for line in default if not line.startswith(";")],
                                        r"^v_mfma", r"^ds_read", r"^v_mfma")


def test_gfx950_interleaved_groups(compiled):
    text = _need(compiled, "prefill_sched_barrier", "gfx950")
    names = isa.parse_amdgpu_metadata(text)
    body = _raw_body(text, _kernel(names, "prefill_sched_barrier", "interleaved", 128))
    ds = [line for line in body if "sched_group_barrier mask(0x00000100) size(1) SyncID(0)" in line]
    mfma = [line for line in body if "sched_group_barrier mask(0x00000008) size(2) SyncID(0)" in line]
    assert ds and len(ds) == len(mfma)


# ---------------------------------------------------------------------------------------
# prefill_kv_tiles
# ---------------------------------------------------------------------------------------


def _v_load_before_softmax(instrs) -> bool:
    first_exp = next(i for i, ins in enumerate(instrs) if re.search(r"\bMUFU\.EX2", ins))
    last_hmma_before = max(i for i, ins in enumerate(instrs[:first_exp]) if re.search(r"\bHMMA\.", ins))
    return any(re.search(r"\bLDSM\.16\.MT88", ins) for ins in instrs[last_hmma_before - 16:first_exp])


def test_sm90a_separate_prefetches_v_before_softmax(compiled):
    text = _need(compiled, "prefill_kv_tiles", "sm_90a")
    assert _v_load_before_softmax(_sass(text, "prefill_kv_tiles", "kv_separate"))
    assert not _v_load_before_softmax(_sass(text, "prefill_kv_tiles", "kv_union"))


# ---------------------------------------------------------------------------------------
# prefill_lds_buffers
# ---------------------------------------------------------------------------------------


def test_sm90a_single_buffer_waits_more(compiled):
    text = _need(compiled, "prefill_lds_buffers", "sm_90a")
    bars = {v: sum(bool(re.search(r"\bBAR\.SYNC", i)) for i in _sass(text, "prefill_lds_buffers", v))
            for v in ("single", "double_buffer")}
    assert bars["single"] > bars["double_buffer"], bars


def test_padded_layout_costs_shared_memory(compiled):
    text = _need(compiled, "prefill_lds_buffers", "sm_90a")
    names = isa.sass_functions(text)
    smem = {v: int(re.search(r"DynamicSmemILm(\d+)E", _kernel(names, "prefill_lds_buffers", v)).group(1))
            for v in ("double_buffer", "double_padded")}
    assert smem["double_padded"] > smem["double_buffer"], smem
