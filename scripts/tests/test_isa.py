"""scripts/isa.py on real compiler output (fixtures/compiler_output, see fixtures/README.md)
and on small hand-written cases."""
import shutil

import pytest

import isa

TWO_STAGE_STAGED = "_ZN3toy13toy_two_stageIN8schedlab3exp10toy_report6stagedENS1_3gpu11DynamicSmemILm8192EEEEE"
TWO_STAGE_BASELINE = "_ZN3toy13toy_two_stageIN8schedlab3exp10toy_report8baselineENS1_3gpu11DynamicSmemILm0EEEEE"
CUDA_PARAMS = "vPK6__halfSA_Pfi"   # (const __half*, const __half*, float*, int)
HIP_PARAMS = "vPKDF16_S9_Pfi"      # (const _Float16*, const _Float16*, float*, int)
UNTAGGED = "_ZN3toy12toy_untaggedEPf"

# ---------------------------------------------------------------------------------------
# ptxas -v
# ---------------------------------------------------------------------------------------


def test_ptxas_fixture(compiler_output):
    kernels = isa.parse_ptxas_verbose(compiler_output("toy_two_stage.sm_90a.ptxas.log"))
    assert set(kernels) == {TWO_STAGE_STAGED + CUDA_PARAMS, TWO_STAGE_BASELINE + CUDA_PARAMS, UNTAGGED}
    staged = kernels[TWO_STAGE_STAGED + CUDA_PARAMS]
    assert staged["target"] == "sm_90a"
    assert (staged["registers"], staged["barriers"], staged["smem_bytes"]) == (32, 1, 4096)
    assert (staged["stack_frame_bytes"], staged["spill_store_bytes"], staged["spill_load_bytes"]) == (0, 0, 0)
    untagged = kernels[UNTAGGED]
    assert (untagged["registers"], untagged["barriers"], untagged["smem_bytes"]) == (12, 0, 0)


SPILLING_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for _Z6helperv
    24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z5heavyPf' for 'sm_90a'
ptxas info    : Function properties for _Z5heavyPf
    392 bytes stack frame, 388 bytes spill stores, 412 bytes spill loads
ptxas info    : Used 255 registers, used 2 barriers, 49152 bytes smem, 400 bytes cmem[0], 8 bytes cmem[2]
ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to \
the presence of Extern calls in the function '_Z5heavyPf'.
ptxas info    : Compile time = 120.000 ms
ptxas info    : Compiling entry function '_Z3oldv' for 'sm_80'
ptxas info    : Function properties for _Z3oldv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 352 bytes cmem[0]
"""


def test_ptxas_spills_cmem_and_notes():
    kernels = isa.parse_ptxas_verbose(SPILLING_LOG)
    assert set(kernels) == {"_Z5heavyPf", "_Z3oldv"}, "device functions are not kernels"
    heavy = kernels["_Z5heavyPf"]
    assert heavy["registers"] == 255 and heavy["barriers"] == 2 and heavy["smem_bytes"] == 49152
    assert (heavy["stack_frame_bytes"], heavy["spill_store_bytes"], heavy["spill_load_bytes"]) == (392, 388, 412)
    assert heavy["cmem"] == {0: 400, 2: 8}
    assert len(heavy["notes"]) == 1 and "C7515" in heavy["notes"][0]
    old = kernels["_Z3oldv"]
    assert (old["target"], old["registers"], old["barriers"], old["smem_bytes"]) == ("sm_80", 8, 0, 0)


# ---------------------------------------------------------------------------------------
# PTX entry directives
# ---------------------------------------------------------------------------------------


def test_ptx_launch_bounds_fixture(compiler_output):
    entries = isa.parse_ptx_entries(compiler_output("toy_two_stage.sm_90a.ptx"))
    assert entries[TWO_STAGE_STAGED + CUDA_PARAMS]["maxntid"] == (256, 1, 1)
    assert entries[TWO_STAGE_BASELINE + CUDA_PARAMS]["maxntid"] == (256, 1, 1)
    assert entries[UNTAGGED]["maxntid"] == (128, 1, 1)
    assert entries[UNTAGGED]["minnctapersm"] is None


def test_ptx_directives_by_hand():
    ptx = """
.visible .entry _Z1av(
\t.param .u64 _Z1av_param_0
)
.reqntid 64, 2
.minnctapersm 2
.maxnreg 128
{
\tret;
}
.entry _Z1bv()
{
\tret;
}
"""
    entries = isa.parse_ptx_entries(ptx)
    assert entries["_Z1av"] == {"maxntid": None, "reqntid": (64, 2, 1), "minnctapersm": 2, "maxnreg": 128}
    assert entries["_Z1bv"] == {"maxntid": None, "reqntid": None, "minnctapersm": None, "maxnreg": None}


# ---------------------------------------------------------------------------------------
# SASS
# ---------------------------------------------------------------------------------------


def test_sass_fixture(compiler_output):
    functions = isa.sass_functions(compiler_output("toy_two_stage.sm_90a.sass"))
    assert set(functions) == {TWO_STAGE_STAGED + CUDA_PARAMS, TWO_STAGE_BASELINE + CUDA_PARAMS, UNTAGGED}
    staged = functions[TWO_STAGE_STAGED + CUDA_PARAMS]
    assert staged[0] == "LDC R1, c[0x0][0x28]"
    assert isa.has_instruction(staged, r"^HMMA\.16816\.F32 ")
    assert isa.has_instruction(staged, r"^LDSM\.16\.M88\.4 ")
    assert isa.has_instruction(staged, r"^@!P0 BRA ")
    assert not any("/*" in ins or ins.endswith(";") for ins in staged)
    assert not isa.has_instruction(functions[UNTAGGED], r"^LDSM")


def test_sass_by_hand():
    listing = """
\tcode for sm_90a
\t\tFunction : _Z1kv
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                         /* 0x00000a00ff017b82 */
                                                                                  /* 0x000fe20000000800 */
        /*0010*/              @!P0 BRA 0x90;                                      /* 0xfffffffc00fc7947 */
        /*0020*/                   EXIT ;                                         /* 0x000000000000794d */
\t\t..........
\t\tFunction : _Z1jv
        /*0000*/                   NOP;                                           /* 0x0000000000007918 */
"""
    assert isa.sass_functions(listing) == {"_Z1kv": ["LDC R1, c[0x0][0x28]", "@!P0 BRA 0x90", "EXIT"],
                                           "_Z1jv": ["NOP"]}


def test_sass_loops_by_hand():
    # 0: prologue; 1-5 an outer loop (branch at 5 back to 0x10) around an inner one (2-3, the
    # branch at 3 back to 0x20); a forward branch (6) and a branch to itself's start are not loops.
    body = ["S2R R0, SR_TID.X", "IADD3 R1, R1, 0x1, RZ", "FFMA R2, R2, R2, R2", "@P0 BRA 0x20", "NOP",
            "@P1 BRA 0x10", "@P2 BRA 0x80", "EXIT"]
    assert isa.sass_loops(body) == [range(2, 4), range(1, 6)]
    assert isa.sass_loops(body, innermost=True) == [range(2, 4)]
    assert isa.sass_loops(["BRA 0x0"]) == [] and isa.sass_loops([]) == []


# ---------------------------------------------------------------------------------------
# AMDGPU .s
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_amdgpu_metadata_fixture(compiler_output, arch):
    kernels = isa.parse_amdgpu_metadata(compiler_output(f"toy_two_stage.{arch}.s"))
    assert set(kernels) == {TWO_STAGE_STAGED + HIP_PARAMS, TWO_STAGE_BASELINE + HIP_PARAMS, UNTAGGED}
    staged = kernels[TWO_STAGE_STAGED + HIP_PARAMS]
    assert staged["group_segment_fixed_size"] == 4096, "static LDS only: 4 KiB tile array"
    assert staged["max_flat_workgroup_size"] == 256
    assert staged["wavefront_size"] == 64
    assert staged["symbol"] == TWO_STAGE_STAGED + HIP_PARAMS + ".kd"
    assert staged["vgpr_spill_count"] == 0 and staged["sgpr_spill_count"] == 0
    assert staged["uses_dynamic_stack"] is False
    untagged = kernels[UNTAGGED]
    assert untagged["max_flat_workgroup_size"] == 128
    assert untagged["agpr_count"] == 4, "the accumulator is pinned to AGPRs"
    for k in kernels.values():
        assert k["compiler_occupancy"] == 8


@pytest.mark.parametrize("name", ["toy_two_stage.gfx942.s", "toy_two_stage.gfx950.s", "toy_two_stage.gfx942.no_shim.s"])
def test_vgpr_count_is_the_unified_total(compiler_output, name):
    """On gfx90a+ .vgpr_count = arch VGPRs rounded up to 4 + AGPRs (LLVM getTotalNumVGPRs)."""
    for k in isa.parse_amdgpu_metadata(compiler_output(name)).values():
        arch = k["arch_vgpr_count"]
        assert k["vgpr_count"] == (-(-arch // 4) * 4 + k["agpr_count"] if k["agpr_count"] else arch)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_amdhsa_descriptors_fixture(compiler_output, arch):
    """clang's default for HIP keeps f16/f64 and f32 subnormals (mode 3: flush none)."""
    text = compiler_output(f"toy_two_stage.{arch}.s")
    descriptors = isa.amdhsa_descriptors(text)
    assert set(descriptors) == set(isa.parse_amdgpu_metadata(text))
    for d in descriptors.values():
        assert d["float_denorm_mode_16_64"] == 3 and d["float_denorm_mode_32"] == 3
        assert d["private_segment_fixed_size"] == 0


def test_amdhsa_descriptors_by_hand():
    text = """\t.amdhsa_kernel k1
\t\t.amdhsa_float_denorm_mode_32 0
\t\t.amdhsa_float_denorm_mode_16_64 3
\t.end_amdhsa_kernel
\t.amdhsa_float_denorm_mode_32 1
\t.amdhsa_kernel k2
\t\t.amdhsa_next_free_vgpr 12
\t.end_amdhsa_kernel
"""
    assert isa.amdhsa_descriptors(text) == {"k1": {"float_denorm_mode_32": 0, "float_denorm_mode_16_64": 3},
                                            "k2": {"next_free_vgpr": 12}}


def test_amdgpu_metadata_by_hand():
    asm = """
\t.type\t_Z1kv,@function
_Z1kv:
\ts_endpgm
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     8
    .args:
      - .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 1024
    .name:           _Z1kv
    .sgpr_count:     20
    .symbol:         _Z1kv.kd
    .vgpr_count:     40
    .vgpr_spill_count: 3
  - .name:           _Z1jv
    .vgpr_count:     1
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...
\t.end_amdgpu_metadata
"""
    kernels = isa.parse_amdgpu_metadata(asm)
    assert kernels["_Z1kv"] == {"agpr_count": 8, "group_segment_fixed_size": 1024, "name": "_Z1kv",
                                "sgpr_count": 20, "symbol": "_Z1kv.kd", "vgpr_count": 40, "vgpr_spill_count": 3}
    assert kernels["_Z1jv"] == {"name": "_Z1jv", "vgpr_count": 1}


def test_kernel_body(compiler_output):
    asm = compiler_output("toy_two_stage.gfx950.s")
    body = isa.kernel_body(asm, TWO_STAGE_STAGED + HIP_PARAMS)
    assert body[-1] == "s_endpgm"
    assert body[0].startswith("s_load_")
    assert not any(ins.startswith(".") or ins.endswith(":") or ";" in ins for ins in body)
    assert isa.has_instruction(body, r"^v_mfma_f32_16x16x16_f16 ")
    assert "v_mfma_f32_16x16x16_f16 v[2:5], v[8:9], v[16:17], v[2:5]" in body, "whitespace is collapsed"
    assert len(isa.kernel_body(asm, UNTAGGED)) < len(body)
    with pytest.raises(KeyError):
        isa.kernel_body(asm, "_Z7missingv")


def test_loops(compiler_output):
    asm = compiler_output("toy_two_stage.gfx950.s")
    body = isa.kernel_body(asm, TWO_STAGE_STAGED + HIP_PARAMS)
    found = isa.loops(asm, TWO_STAGE_STAGED + HIP_PARAMS)
    assert len(found) == 1
    (loop,) = found.values()
    assert 0 < len(loop) < len(body) and body[-1] not in loop
    assert isa.has_instruction(loop, r"^v_mfma_f32_16x16x16_f16 "), "the toy's matrix ops are in its loop"
    assert isa.loops(asm, UNTAGGED) == {}


def test_loops_by_hand():
    asm = """\
_Z1kv:
\ts_mov_b32 s0, 0
.LBB0_1:                                ; =>This Loop Header: Depth=1
\tv_add_f32 v0, v0, v1
.LBB0_2:                                ;   Parent Loop BB0_1 Depth=1
                                        ; =>  This Inner Loop Header: Depth=2
\tv_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]
\ts_cbranch_scc1 .LBB0_2
.LBB0_3:                                ;   in Loop: Header=BB0_1 Depth=1
\ts_cbranch_scc1 .LBB0_1 ; back
.LBB0_4:
\ts_endpgm
.Lfunc_end0:
"""
    assert isa.loops(asm, "_Z1kv") == {
        ".LBB0_1": ["v_add_f32 v0, v0, v1", "s_cbranch_scc1 .LBB0_1"],
        ".LBB0_2": ["v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]", "s_cbranch_scc1 .LBB0_2"]}


def test_external_calls(compiler_output):
    no_shim = compiler_output("toy_two_stage.gfx942.no_shim.s")
    calls = isa.external_calls(no_shim, TWO_STAGE_STAGED + HIP_PARAMS)
    assert {"__ockl_get_local_id", "__ockl_get_group_id", "__atomic_work_item_fence"} <= set(calls)
    kernels = isa.parse_amdgpu_metadata(no_shim)
    assert kernels[TWO_STAGE_STAGED + HIP_PARAMS]["uses_dynamic_stack"] is True
    assert "compiler_occupancy" not in kernels[TWO_STAGE_STAGED + HIP_PARAMS], "occupancy is an expression"
    with_shim = compiler_output("toy_two_stage.gfx942.s")
    for symbol in isa.parse_amdgpu_metadata(with_shim):
        assert isa.external_calls(with_shim, symbol) == []


# ---------------------------------------------------------------------------------------
# Demangling
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", isa.DEMANGLERS)
def test_demangle(tool):
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")
    names = isa.demangle([TWO_STAGE_STAGED + CUDA_PARAMS, UNTAGGED, "not_mangled"], shutil.which(tool))
    assert names[TWO_STAGE_STAGED + CUDA_PARAMS] == (
        "void toy::toy_two_stage<schedlab::exp::toy_report::staged, schedlab::gpu::DynamicSmem<8192ul>>"
        "(__half const*, __half const*, float*, int)")
    assert names[UNTAGGED] == "toy::toy_untagged(float*)"
    assert names["not_mangled"] == "not_mangled"


def test_demangle_without_tool(monkeypatch):
    monkeypatch.setattr(isa, "find_demangler", lambda: None)
    assert isa.demangle([UNTAGGED]) == {UNTAGGED: UNTAGGED}


# ---------------------------------------------------------------------------------------
# Instruction order
# ---------------------------------------------------------------------------------------

MFMA, DS_READ = r"^v_mfma", r"^ds_read"


@pytest.mark.parametrize("instrs, expected", [
    (["v_mfma a", "v_mfma b", "ds_read_b64 c", "s_waitcnt", "v_mfma d"], (1, 2, 4)),
    (["v_mfma a", "ds_read_b64 c", "ds_read_b64 d", "v_mfma e"], (0, 1, 3)),
    (["v_mfma a", "v_mfma b", "v_mfma c"], None),                   # no mid at all
    (["ds_read_b64 c", "v_mfma a", "v_mfma b"], None),              # mid before the first group
    (["v_mfma a", "ds_read_b64 c"], None),                          # no group after the mid
    (["v_add a", "ds_read_b64 c", "v_add d"], None),                # no groups
    ([], None),
])
def test_find_between_same_group_pattern(instrs, expected):
    assert isa.find_between(instrs, MFMA, DS_READ, MFMA) == expected


def test_find_between_distinct_groups():
    pv, qk = r"^v_mfma_pv", r"^v_mfma_qk"
    # the read sits after the whole PV group and before QK
    assert isa.find_between(["v_mfma_pv", "v_mfma_pv", "ds_read", "v_mfma_qk"], pv, DS_READ, qk) == (1, 2, 3)
    # a read interleaved inside the PV group is not after it
    assert isa.find_between(["v_mfma_pv", "ds_read", "v_mfma_pv", "v_mfma_qk"], pv, DS_READ, qk) is None
    # a QK group without a read closes the gap; the next PV group opens a new one
    order = ["v_mfma_pv", "v_mfma_qk", "ds_read", "v_mfma_qk", "v_mfma_pv", "ds_read", "v_mfma_qk"]
    assert isa.find_between(order, pv, DS_READ, qk) == (4, 5, 6)
    # reversed roles: QK first, then PV
    assert isa.find_between(["v_mfma_qk", "ds_read", "v_mfma_pv"], pv, DS_READ, qk) is None


def test_find_between_on_real_isa(compiler_output):
    """The toy kernel reads P (and V) from LDS between its QK and PV matrix groups."""
    amd = isa.kernel_body(compiler_output("toy_two_stage.gfx950.s"), TWO_STAGE_STAGED + HIP_PARAMS)
    assert isa.find_between(amd, MFMA, DS_READ, MFMA)
    assert not isa.find_between(amd, MFMA, r"^global_store", MFMA), "the output is stored after the loop"
    sass = isa.sass_functions(compiler_output("toy_two_stage.sm_90a.sass"))[TWO_STAGE_STAGED + CUDA_PARAMS]
    assert isa.find_between(sass, r"^HMMA", r"^LDSM", r"^HMMA")
    assert not isa.find_between(sass, r"^HMMA", r"^STG", r"^HMMA")


def test_has_instruction_accepts_compiled_patterns():
    import re
    assert isa.has_instruction(["s_nop 0", "s_setprio 3"], re.compile(r"^s_setprio [1-3]$"))
    assert not isa.has_instruction(["s_nop 0"], r"^s_setprio")
