"""Compiled-code evidence for the AMD realization of prefill_pingpong, without a GPU.

Compiles experiments/prefill_pingpong/amd_kernels.cu through scripts/resource_report.py (the
same commands as the static report) for gfx942 and gfx950 and checks, in every kernel of
both variants (bf16 and f16, head dim 64 and 128):

  - ping_pong_8wave: exactly two s_barriers that a branch skips (the wave-uniform `if` on
    the wave group): one before the first v_mfma (group 1 starts one phase late) and one
    after the last (group 0 balances the count). Every v_mfma runs at raised priority: the
    code has two `s_setprio 1` ... `s_setprio 0` blocks (QK and PV), each opened right after
    an s_barrier (the memory -> matrix hand-over), holding v_mfmas and no global load.
    Between the QK block and the PV block lie exactly two s_barriers (matrix -> memory and
    memory -> matrix) with the softmax's v_exp_f32 and the next V tile's copies between them.
  - plain_8wave (same tile shape, every wave in step): no s_setprio and no skipped
    s_barrier, and fewer s_barriers than the ping-pong.
  - the static report's records of both: at most 256 VGPRs + AGPRs per wave, no scratch,
    no spills, 512 threads and at least two waves per SIMD (the eight waves of a workgroup
    on a CU's four SIMDs need two each).

Observed, not asserted (the reason is in experiments/prefill_pingpong/README.md): on gfx950
each K or V tile's global_load_lds copies are followed by `s_waitcnt vmcnt(0)` before the
next ds_read, as in the rest of the family. Run: python3 -m pytest -q kernels/prefill/tests
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
import isa  # noqa: E402

EXPERIMENT = "prefill_pingpong"
SOURCE = ROOT / "experiments" / EXPERIMENT / "amd_kernels.cu"
TARGETS = ("gfx942", "gfx950")
VARIANTS = ("ping_pong_8wave", "plain_8wave")

MFMA = re.compile(r"^v_mfma_")
BRANCH = re.compile(r"^s_cbranch_\w+\s+(\.LBB\w+)")
# Between a branch and the barrier it skips: waits for counters only.
WAIT = re.compile(r"^s_waitcnt\b")
LABEL = re.compile(r"^\.LBB\w+:$")


@pytest.fixture(scope="session")
def compiled(tmp_path_factory):
    """(asm text per target, report records) for the AMD sources of prefill_pingpong."""
    if not shutil.which("clang-22"):
        pytest.skip("clang-22 not found")
    out = tmp_path_factory.mktemp("pingpong_isa")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "resource_report.py"), "--out", str(out),
                           "--root", str(ROOT), f"--targets={','.join(TARGETS)}", "--require", ",".join(TARGETS),
                           "-j", "2", f"{EXPERIMENT}|{SOURCE}|{','.join(TARGETS)}"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    base = out / "isa" / "experiments" / EXPERIMENT
    texts = {t: (base / f"amd_kernels.{t}.s").read_text() for t in TARGETS}
    records = json.loads((out / "resources.json").read_text())
    return texts, records


def _raw_body(asm_text: str, symbol: str) -> list[str]:
    """A function's instructions and labels (`.LBB0_3:`) in an AMDGPU .s, comments dropped."""
    lines = asm_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(symbol + ":"))
    body = []
    for line in lines[start + 1:]:
        if line.startswith(".Lfunc_end"):
            break
        text = " ".join(line.split(";")[0].split())
        if text and (not text.startswith(".") or LABEL.match(text)):
            body.append(text)
    return body


def _kernels(text: str, variant: str) -> dict[str, list[str]]:
    """{symbol: body lines with labels} of every kernel of a variant (bf16, f16 and fp8 e4m3, both head dims)."""
    key = f"{EXPERIMENT}{len(variant)}{variant}E"
    bodies = {s: _raw_body(text, s) for s in isa.parse_amdgpu_metadata(text) if key in s}
    assert len(bodies) == 6, f"{variant}: expected bf16/f16/fp8 x head dim 64/128, got {list(bodies)}"
    return bodies


def _skipped_barriers(body: list[str]) -> list[int]:
    """Indices of s_barriers that a branch jumps over: `s_cbranch_* L`, waits, s_barrier,
    then (after more waits at most) the label L."""
    found = []
    for i, line in enumerate(body):
        m = BRANCH.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(body) and WAIT.match(body[j]):
            j += 1
        if j >= len(body) or not body[j].startswith("s_barrier"):
            continue
        k = j + 1
        while k < len(body) and WAIT.match(body[k]):
            k += 1
        if k < len(body) and body[k] == m.group(1) + ":":
            found.append(j)
    return found


def _priority_blocks(body: list[str]) -> list[tuple[int, int]]:
    """(index of `s_setprio 1`, index of the next `s_setprio 0`) pairs, in program text order."""
    blocks, opened = [], None
    for i, line in enumerate(body):
        if line.startswith("s_setprio"):
            level = int(line.split()[1], 0)
            if level > 0:
                assert opened is None, f"priority raised twice (line {i})"
                opened = i
            else:
                assert opened is not None, f"priority lowered without a raise (line {i})"
                blocks.append((opened, i))
                opened = None
    assert opened is None, "priority left raised"
    return blocks


def _previous_code(body: list[str], i: int) -> str:
    """The instruction before body[i], waits left out."""
    j = i - 1
    while j >= 0 and WAIT.match(body[j]):
        j -= 1
    return body[j] if j >= 0 else ""


def _successors(body: list[str], i: int) -> list[int]:
    """Where control goes after body[i] (a label is found by its line)."""
    line = body[i]
    def at(label: str) -> int:
        return body.index(label + ":")
    if line.startswith("s_endpgm"):
        return []
    m = re.match(r"^s_branch\s+(\.LBB\w+)", line)
    if m:
        return [at(m.group(1))]
    m = BRANCH.match(line)
    if m:
        return [at(m.group(1)), i + 1]
    return [i + 1] if i + 1 < len(body) else []


def _memory_phases(body: list[str], lowered: int) -> list[list[str]]:
    """Every control-flow path from the `s_setprio 0` at `lowered` to the next `s_setprio 1`
    (paths that leave the kernel instead are dropped), each cut at its s_barriers: a path
    through two hand-overs gives [before, between, after]."""
    paths, stack = [], [(lowered + 1, [[]])]
    while stack:
        i, segments = stack.pop()
        while True:
            line = body[i]
            if line.startswith("s_setprio 1"):
                paths.append(segments)
                break
            if line.startswith("s_barrier"):
                segments = segments + [[]]
            elif not line.endswith(":"):
                segments = segments[:-1] + [segments[-1] + [line]]
            nxt = _successors(body, i)
            if not nxt or len(paths) > 10000:
                break
            for other in nxt[1:]:
                stack.append((other, segments))
            i = nxt[0]
    assert paths, f"no path from line {lowered} to a matrix phase"
    return paths


@pytest.mark.parametrize("target", TARGETS)
def test_ping_pong_staggers_the_groups(compiled, target):
    for symbol, body in _kernels(compiled[0][target], "ping_pong_8wave").items():
        mfmas = [i for i, line in enumerate(body) if MFMA.match(line)]
        skipped = _skipped_barriers(body)
        assert len(skipped) == 2, (symbol, skipped)
        assert skipped[0] < mfmas[0], f"{symbol}: the group-1 barrier is not before the main loop"
        assert skipped[1] > mfmas[-1], f"{symbol}: the group-0 balancing barrier is not after the main loop"


@pytest.mark.parametrize("target", TARGETS)
def test_ping_pong_matrix_phases_run_at_raised_priority(compiled, target):
    for symbol, body in _kernels(compiled[0][target], "ping_pong_8wave").items():
        blocks = _priority_blocks(body)
        assert len(blocks) == 2, f"{symbol}: expected the QK and the PV block, got {blocks}"
        for start, end in blocks:
            assert _previous_code(body, start).startswith("s_barrier"), \
                f"{symbol}: s_setprio 1 at {start} does not follow a hand-over barrier"
            inside = body[start + 1:end]
            assert any(MFMA.match(line) for line in inside), f"{symbol}: no v_mfma in {start}..{end}"
            assert not any(line.startswith(("global_load", "s_barrier")) or line.endswith(":") for line in inside), \
                f"{symbol}: a copy, barrier or branch target inside the matrix phase {start}..{end}"
        outside = [i for i, line in enumerate(body) if MFMA.match(line)
                   and not any(s < i < e for s, e in blocks)]
        assert not outside, f"{symbol}: v_mfma at normal priority: {outside[:4]}"
        # From each matrix phase to the next one, on every path: a hand-over to the memory
        # phase, the memory phase, a hand-over back. After QK the memory phase holds the
        # softmax and V's copies, after PV the next K copies; no v_mfma runs in either.
        middles = {}
        for start, end in blocks:
            paths = _memory_phases(body, end)
            assert all(len(p) == 3 for p in paths), \
                f"{symbol}: barriers between matrix phases per path: {sorted({len(p) - 1 for p in paths})}"
            assert not any(MFMA.match(line) for p in paths for seg in p for line in seg), symbol
            middles[start] = [line for p in paths for line in p[1]]
        softmax = [s for s, lines in middles.items() if any(line.startswith("v_exp_f32") for line in lines)]
        assert len(softmax) == 1, f"{symbol}: the softmax follows {len(softmax)} matrix phases"
        for start, lines in middles.items():
            assert any(line.startswith("global_load") for line in lines), f"{symbol}: no copy after the phase at {start}"


@pytest.mark.parametrize("target", TARGETS)
def test_plain_has_no_ping_pong(compiled, target):
    text = compiled[0][target]
    ping = _kernels(text, "ping_pong_8wave")
    plain = _kernels(text, "plain_8wave")
    for symbol, body in plain.items():
        assert not any(line.startswith("s_setprio") for line in body), symbol
        assert not _skipped_barriers(body), symbol
        assert any(MFMA.match(line) for line in body), symbol
        twin = symbol.replace(f"{len('plain_8wave')}plain_8wave", f"{len('ping_pong_8wave')}ping_pong_8wave")
        barriers = {name: sum(line.startswith("s_barrier") for line in b)
                    for name, b in (("plain", body), ("ping_pong", ping[twin]))}
        assert barriers["plain"] < barriers["ping_pong"], (symbol, barriers)


def test_two_waves_per_simd_without_scratch(compiled):
    records = [r for r in compiled[1] if r["experiment"] == EXPERIMENT]
    assert {(r["variant"], r["target"]) for r in records} == {(v, t) for v in VARIANTS for t in TARGETS}
    assert len(records) == 2 * 2 * 3 * 2  # variants x targets x dtypes (bf16, f16, fp8) x head dims
    for r in records:
        name = f"{r['variant']} {r['target']} {r['symbol'][-60:]}"
        assert r["block_size"] == 512, name
        assert r["vgpr_total"] <= 256, f"{name}: {r['vgpr_total']} VGPRs + AGPRs leave no room for two waves per SIMD"
        assert r["scratch_bytes_per_lane"] == 0 and r["vgpr_spill_regs"] == 0 and r["sgpr_spill_regs"] == 0, name
        assert r["waves_per_simd"] >= 2 and r["workgroups_per_cu"] >= 1, name
