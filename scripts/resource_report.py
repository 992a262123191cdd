#!/usr/bin/env python3
"""Static resource report: compile every kernel source for sm_90a (nvcc + ptxas) and for
gfx942 / gfx950 (clang-22, HIP, no ROCm install) and tabulate, per kernel, registers,
spills, shared memory / LDS and theoretical occupancy. No GPU is needed.

    scripts/resource_report.py --out build/static_report \\
        'decode_kv_streaming|/abs/kernels/decode/decode.cu' [--entries-file FILE] \\
        [--targets sm_90a,gfx942,gfx950] [--require sm_90a,gfx942,gfx950] [-j N]

Writes <out>/resources.json (a list of kernel records), <out>/resources.md (tables grouped
by experiment), <out>/provenance.json (commit, tools, flags, notes) and keeps every
intermediate under <out>/isa/ (.ptx, .cubin, .ptxas.log, .sass, AMD .s, one .log with the
commands and compiler output per source and target).

The sm_90a rows of a source the CUDA build compiled are read from the build's object while it
is fresh (its PTX, cubin and SASS with cuobjdump; ptxas's lines kept by the build's compiler
launcher): --build-objects, scripts/build_objects.py. The source is not compiled a second time.

A compile whose commands and input files (the source and every header it read) are those of
an earlier one is not run again: its output comes from the compile cache (<root>/build/
compile_cache, --compile-cache, $SCHEDLAB_COMPILE_CACHE; scripts/compile_cache.py), so the
ISA tests read what the build's static-report test compiled. --no-compile-cache compiles all
that the build's objects do not give.

Conventions read from kernel names (see cmake/SchedlabKernels.cmake):
  - dynamic shared memory: a template argument schedlab::gpu::DynamicSmem<N> (N bytes);
    a kernel without one uses none;
  - experiment / variant: the policy struct schedlab::exp::<experiment>::<variant> (or
    schedlab::experiments::...); a kernel without one gets the experiment of its source
    entry and variant "-".

Occupancy is theoretical: the resident blocks (waves) the hardware limits allow for the
kernel's register, shared-memory and block-size needs; see sm90_occupancy() and
amd_occupancy() for the formulas and their sources.

Exit status: 0 when every compile succeeded and every --require target was compiled and
gave at least one kernel per source; 1 otherwise (a compile error prints the compiler's
output); --skip-status N when there was nothing to do (no sources or no compiler).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime
import hashlib
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Mapping, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_objects  # noqa: E402
import compile_cache  # noqa: E402
import isa  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
NVIDIA_TARGETS = ("sm_90a",)
AMD_TARGETS = ("gfx942", "gfx950")
TARGETS = NVIDIA_TARGETS + AMD_TARGETS
COMPILE_TIMEOUT_S = 1800

# ---------------------------------------------------------------------------------------
# Occupancy
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class NvidiaSm:
    """Per-SM limits of an NVIDIA compute capability, as cuda_occupancy.h uses them."""
    regs_per_sm: int = 65536
    regs_per_block: int = 65536
    reg_alloc_granule: int = 256          # registers per warp are allocated in these units
    max_regs_per_thread: int = 255
    sub_partitions: int = 4
    max_warps_per_sm: int = 64
    max_blocks_per_sm: int = 32
    max_threads_per_block: int = 1024
    smem_per_sm: int = 228 * 1024         # largest carveout
    smem_per_block_optin: int = 227 * 1024
    reserved_smem_per_block: int = 1024   # the driver's, added to every block since sm_80
    smem_alloc_granule: int = 128
    warp_size: int = 32


SM90 = NvidiaSm()


def _round_up(value: int, granule: int) -> int:
    return -(-value // granule) * granule


def _pick_limiter(limits: dict[str, int]) -> tuple[int, str]:
    """The smallest limit and its name. The first listed wins a tie, so list the hardware
    caps first: a kernel at full occupancy is limited by them, not by its resources."""
    name = min(limits, key=lambda k: limits[k])
    return limits[name], name


def sm90_occupancy(registers: int, block_size: int, static_smem: int, dynamic_smem: int,
                   sm: NvidiaSm = SM90) -> dict:
    """Theoretical blocks and warps per SM on sm_90, following cuda_occupancy.h (CUDA 13.0:
    cudaOccMaxBlocksPerSMRegsLimit / ...SMemLimit / ...WarpsLimit) with partitioned global
    caching off and the largest shared-memory carveout (228 KiB, opt-in 227 KiB per block):

      warps/block  W = ceil(T / 32)
      registers    per warp = roundup(R * 32, 256); warps per sub-partition =
                   floor((65536 / 4) / that); blocks = floor(4 * that / W); 0 when the
                   block needs more than 65536 registers (counting W rounded up to 4, the
                   hardware's check) or R > 255
      shared mem   per block = roundup(static + dynamic + 1 KiB reserved, 128);
                   blocks = floor(228 KiB / that); 0 above 227 KiB + 1 KiB
      warps        floor(64 / W);  blocks: 32
    Example: 128 registers x 256 threads -> 4096 registers per warp, 4 warps per
    sub-partition, 16 warps -> 2 blocks/SM (16 warps, 25 %).
    """
    warps_per_block = -(-block_size // sm.warp_size)
    regs_per_warp = _round_up(registers * sm.warp_size, sm.reg_alloc_granule)
    if (block_size > sm.max_threads_per_block or registers > sm.max_regs_per_thread
            or regs_per_warp * _round_up(warps_per_block, sm.sub_partitions) > sm.regs_per_block):
        by_regs = 0
    elif regs_per_warp == 0:
        by_regs = sm.max_blocks_per_sm
    else:
        warps_per_sub_partition = (sm.regs_per_sm // sm.sub_partitions) // regs_per_warp
        by_regs = warps_per_sub_partition * sm.sub_partitions // warps_per_block
    smem = _round_up(static_smem + dynamic_smem + sm.reserved_smem_per_block, sm.smem_alloc_granule)
    by_smem = 0 if smem > sm.smem_per_block_optin + sm.reserved_smem_per_block else sm.smem_per_sm // smem
    by_warps = sm.max_warps_per_sm // warps_per_block if block_size <= sm.max_threads_per_block else 0
    blocks, limiter = _pick_limiter({
        "warps": by_warps, "blocks": sm.max_blocks_per_sm, "registers": by_regs, "shared memory": by_smem})
    warps = blocks * warps_per_block
    return {"blocks_per_sm": blocks, "warps_per_sm": warps, "occupancy": warps / sm.max_warps_per_sm,
            "occupancy_limiter": limiter}


@dataclasses.dataclass(frozen=True)
class AmdCdna:
    """Per-CU limits of a CDNA3 / CDNA4 GPU (wave64)."""
    lds_per_cu: int
    max_lds_per_workgroup: int
    simds_per_cu: int = 4
    max_waves_per_simd: int = 8
    vgprs_per_simd_lane: int = 512     # unified arch VGPR + AGPR file
    vgpr_alloc_granule: int = 8
    lds_alloc_granule: int = 512
    max_workgroups_per_cu: int = 16    # barrier slots, for workgroups of more than one wave
    wave_size: int = 64


AMD_ARCHS = {
    "gfx942": AmdCdna(lds_per_cu=64 * 1024, max_lds_per_workgroup=64 * 1024),     # MI300X / MI325X
    "gfx950": AmdCdna(lds_per_cu=160 * 1024, max_lds_per_workgroup=160 * 1024),   # MI350X / MI355X
}


def amd_sgpr_waves(sgprs: int) -> int:
    """Waves per SIMD the 800-entry SGPR file allows on gfx8/gfx9 (LLVM
    GCNSubtarget::getOccupancyWithNumSGPRs, the VOLCANIC_ISLANDS..GFX9 branch)."""
    return 10 if sgprs <= 80 else 9 if sgprs <= 88 else 8 if sgprs <= 100 else 7


def amd_occupancy(arch: str, vgpr_total: int, sgprs: int, lds_bytes: int, block_size: int) -> dict:
    """Theoretical waves per SIMD and workgroups per CU on gfx942 / gfx950.

      VGPRs      waves/SIMD = min(8, floor(512 / roundup(max(vgpr_total, 1), 8))), where
                 vgpr_total is the metadata's .vgpr_count: arch VGPRs (rounded up to 4)
                 plus AGPRs in the unified 512-entry file (LLVM getTotalNumVGPRs,
                 getNumWavesPerEUWithNumVGPRs; granule 8, AMD CDNA3 ISA guide "VGPR
                 allocation is in groups of eight")
      SGPRs      waves/SIMD = amd_sgpr_waves(.sgpr_count), capped at 8
      workgroup  W = ceil(block / 64) waves; the waves of a workgroup are spread over the
                 CU's 4 SIMDs, so a per-SIMD limit L allows floor(4 L / W) workgroups;
                 multi-wave workgroups need a barrier slot: at most 16 per CU (LLVM
                 getMaxWorkGroupsPerCU)
      LDS        workgroups = floor(LDS per CU / roundup(static + dynamic, 512)) with 64 KiB
                 (gfx942) or 160 KiB (gfx950) per CU; 0 when a workgroup needs more than
                 that (CDNA3 ISA guide: LDS is allocated in 512-byte blocks; the same
                 granule is assumed for gfx950)
      result     workgroups/CU = min of the above; waves/SIMD = min(ceil(workgroups * W / 4),
                 VGPR and SGPR limits)
    This is LLVM's computeOccupancy (whose "; Occupancy" comment counts static LDS only)
    with the dynamic LDS of the DynamicSmem<N> tag added. Example: 172 VGPRs -> 176 -> 2
    waves/SIMD.
    """
    cu = AMD_ARCHS[arch]
    waves_per_wg = -(-block_size // cu.wave_size)
    vgpr_alloc = _round_up(max(vgpr_total, 1), cu.vgpr_alloc_granule)
    vgpr_waves = min(cu.max_waves_per_simd, cu.vgprs_per_simd_lane // vgpr_alloc)
    sgpr_waves = min(cu.max_waves_per_simd, amd_sgpr_waves(sgprs))
    lds_alloc = _round_up(lds_bytes, cu.lds_alloc_granule)
    if lds_alloc > cu.max_lds_per_workgroup:
        by_lds = 0
    else:
        by_lds = cu.lds_per_cu // lds_alloc if lds_alloc else cu.max_waves_per_simd * cu.simds_per_cu

    def by_waves(per_simd: int) -> int:
        return cu.simds_per_cu * per_simd // waves_per_wg

    by_barriers = cu.max_workgroups_per_cu if waves_per_wg > 1 else by_waves(cu.max_waves_per_simd)
    workgroups, limiter = _pick_limiter({
        "waves": by_waves(cu.max_waves_per_simd), "barriers": by_barriers,
        "VGPRs": by_waves(vgpr_waves), "SGPRs": by_waves(sgpr_waves), "LDS": by_lds})
    waves = min(-(-workgroups * waves_per_wg // cu.simds_per_cu), vgpr_waves, sgpr_waves)
    return {"waves_per_simd": waves, "workgroups_per_cu": workgroups,
            "occupancy": waves / cu.max_waves_per_simd, "occupancy_limiter": limiter}


# ---------------------------------------------------------------------------------------
# Naming conventions
# ---------------------------------------------------------------------------------------

_DYNAMIC_SMEM = re.compile(r"schedlab::gpu::DynamicSmem<(?:\([^)]*\))?(\d+)[uUlL]*>")
_POLICY = re.compile(r"schedlab::(?:exp|experiments)::(\w+)::(\w+)")


def dynamic_smem_bytes(demangled: str) -> int:
    """N from a schedlab::gpu::DynamicSmem<N> template argument; 0 without one."""
    sizes = {int(n) for n in _DYNAMIC_SMEM.findall(demangled)}
    if len(sizes) > 1:
        raise ValueError(f"several DynamicSmem sizes in {demangled}")
    if not sizes and "DynamicSmem<" in demangled:
        raise ValueError(f"DynamicSmem without a byte count in {demangled}")
    return sizes.pop() if sizes else 0


def experiment_variant(demangled: str, fallback_experiment: str) -> tuple[str, str]:
    """(experiment, variant) from the first policy schedlab::exp::<experiment>::<variant>
    (the sources so far spell the namespace schedlab::experiments, which is read too)."""
    m = _POLICY.search(demangled)
    return (m.group(1), m.group(2)) if m else (fallback_experiment, "-")


# The C++ GpuArch enumerators (common/gpu/arch.hpp), in order: a demangler spells a
# non-type template argument of it as (schedlab::gpu::GpuArch)N or GpuArch::name.
GPU_ARCHS = ("sm_90a", "gfx942", "gfx950")
_ARCH_INSTANTIATION = re.compile(
    r"schedlab::kernels::(\w+)For<.*?,\s*(?:\(schedlab::gpu::GpuArch\)(\d+)|schedlab::gpu::GpuArch::(\w+))>")


def smem_limit_per_block(target: str) -> int:
    """Shared memory (LDS) a block (workgroup) may have on a target, as common/gpu/arch.hpp
    states it: 227 KiB on sm_90a, 64 KiB on gfx942, 160 KiB on gfx950."""
    return SM90.smem_per_block_optin if target in NVIDIA_TARGETS else AMD_ARCHS[target].max_lds_per_workgroup


def launch_status(demangled: str, target: str, smem_bytes: int) -> str | None:
    """None when the target's plan may launch the kernel, else why it never does.

    The plans pick a per-architecture instantiation (kernels/prefill/prefill_plan.hpp: a policy
    whose tiles overflow an architecture runs as PrefillPolicyFor<Policy, arch>, its key tile
    cut; a decode policy that does not fit is refused, require_decode_fits in
    kernels/decode/paged_decode.hpp), so a
    HIP binary, which holds every kernel for both gfx942 and gfx950, carries kernels one of the
    two never launches. Those rows are reported as such, not as failures:
      - an instantiation made for another architecture (a <Name>For<..., arch> policy);
      - shared memory over the target's per-block limit: refused at plan time, or run as the
        architecture's own instantiation where the family has one."""
    m = _ARCH_INSTANTIATION.search(demangled)
    if m:
        arch = GPU_ARCHS[int(m.group(2))] if m.group(2) is not None else m.group(3)
        if arch != target:
            return f"not launched on {target}: instantiated for {arch} ({m.group(1)}For); {target}'s plan runs the policy's own tiles"
    limit = smem_limit_per_block(target)
    if smem_bytes > limit:
        return (f"not launched on {target}: needs {smem_bytes} bytes of shared memory, over its {limit}; the plan "
                f"runs the architecture's instantiation (PrefillPolicyFor) or refuses the variant")
    return None


def launch_check(records: list[dict]) -> dict[str, dict]:
    """Per target: rows the plans may launch, and which of them spill to scratch or fit no
    block (workgroup) per SM (CU). The project's bar: none on gfx942 and gfx950."""
    out: dict[str, dict] = {}
    for r in records:
        t = out.setdefault(r["target"], {"launched": 0, "not_launched": 0, "scratch": [], "no_block": []})
        if not r.get("launched", True):
            t["not_launched"] += 1
            continue
        t["launched"] += 1
        if r.get("scratch_bytes_per_lane") or r.get("spill_store_bytes") or r.get("stack_frame_bytes"):
            t["scratch"].append(short_kernel_name(r["kernel"]))
        per_unit = r.get("workgroups_per_cu", r.get("blocks_per_sm"))
        if per_unit is not None and per_unit < 1:
            t["no_block"].append(short_kernel_name(r["kernel"]))
    return out


def short_kernel_name(demangled: str) -> str:
    """The demangled name without its return type and parameter list."""
    depth, end = 0, len(demangled)
    for i, ch in enumerate(demangled):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0:
            end = i
            break
    name = demangled[:end]
    return name[len("void "):] if name.startswith("void ") else name


# ---------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------


def pip_nvidia_bin_dirs() -> list[Path]:
    """bin folders of the NVIDIA pip wheels (nvidia-cuda-cuobjdump installs
    <site-packages>/nvidia/cu13/bin/cuobjdump; CUDA 12 wheels used nvidia/<pkg>/bin)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    return sorted(d for root in spec.submodule_search_locations for d in Path(root).glob("*/bin") if d.is_dir())


def find_cuda_tool(name: str, explicit: str | None = None) -> str | None:
    """`explicit`, else `name` on PATH, in /usr/local/cuda/bin, then in the pip wheels."""
    if explicit:
        return shutil.which(explicit)
    if found := shutil.which(name):
        return found
    for folder in [Path("/usr/local/cuda/bin"), *pip_nvidia_bin_dirs()]:
        if (folder / name).is_file() and os.access(folder / name, os.X_OK):
            return str(folder / name)
    return None


def _first_line(cmd: list[str], pattern: str) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return next((line.strip() for line in out.splitlines() if re.search(pattern, line)), "unknown")


@dataclasses.dataclass
class Toolchain:
    nvcc: str | None = None
    ptxas: str | None = None
    clang: str | None = None
    clang_resource_dir: str | None = None
    cuobjdump: str | None = None
    nvdisasm: str | None = None
    demangler: str | None = None
    versions: dict[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def discover(cls, args: argparse.Namespace) -> Toolchain:
        tools = cls()
        tools.nvcc = find_cuda_tool("nvcc", args.nvcc)
        if tools.nvcc:
            sibling = Path(tools.nvcc).resolve().parent / "ptxas"
            tools.ptxas = str(sibling) if sibling.is_file() else find_cuda_tool("ptxas")
            tools.versions["nvcc"] = _first_line([tools.nvcc, "--version"], r"release")
        if not args.no_sass:
            tools.cuobjdump = find_cuda_tool("cuobjdump", args.cuobjdump)
            tools.nvdisasm = find_cuda_tool("nvdisasm")
        tools.clang = shutil.which(args.clang or "clang-22")
        if tools.clang:
            tools.versions["clang"] = _first_line([tools.clang, "--version"], r"clang version")
            tools.clang_resource_dir = subprocess.run(
                [tools.clang, "-print-resource-dir"], capture_output=True, text=True, check=True).stdout.strip()
        tools.demangler = isa.find_demangler()
        return tools

    def missing_for(self, target: str) -> str | None:
        """Why `target` cannot be compiled here, or None."""
        if target in NVIDIA_TARGETS:
            if not self.nvcc:
                return "nvcc not found (PATH, /usr/local/cuda/bin)"
            if not self.ptxas:
                return f"ptxas not found next to {self.nvcc}"
        elif not self.clang:
            return "clang-22 not found on PATH"
        return None

    def sass_missing(self) -> str | None:
        if not self.cuobjdump:
            return ("cuobjdump not found (PATH, /usr/local/cuda/bin, pip nvidia-cuda-cuobjdump): "
                    "SASS listings skipped")
        if not self.nvdisasm:
            return ("nvdisasm, which cuobjdump -sass runs, not found (PATH, /usr/local/cuda/bin, pip "
                    "nvidia-cuda-nvdisasm): SASS listings skipped")
        return None


# ---------------------------------------------------------------------------------------
# AMD device-library stand-ins
# ---------------------------------------------------------------------------------------

# With -nogpulib (no ROCm device libraries) every ockl/ocml function the HIP headers call
# (threadIdx -> __ockl_get_local_id, __syncthreads -> __atomic_work_item_fence, expf ->
# __ocml_exp_f32, ...) is an external call, and the compiler then reports the calling
# convention's register use instead of the kernel's (a 12-VGPR kernel shows 46 VGPRs, 40
# AGPRs and a dynamic stack). These definitions replace the common ones with the builtins
# the device library itself uses, so the kernel inlines as it would with ROCm; anything
# left shows up as `external_calls` in the record.
_OCML = [  # (name, return/argument type, arity, expression over a, b, c)
    ("exp2_f32", "float", 1, "__builtin_exp2f(a)"),
    ("exp_f32", "float", 1, "__builtin_expf(a)"),
    ("log2_f32", "float", 1, "__builtin_log2f(a)"),
    ("log_f32", "float", 1, "__builtin_logf(a)"),
    ("sqrt_f32", "float", 1, "__builtin_sqrtf(a)"),
    ("rsqrt_f32", "float", 1, "__builtin_amdgcn_rsqf(a)"),
    ("fabs_f32", "float", 1, "__builtin_fabsf(a)"),
    ("floor_f32", "float", 1, "__builtin_floorf(a)"),
    ("ceil_f32", "float", 1, "__builtin_ceilf(a)"),
    ("trunc_f32", "float", 1, "__builtin_truncf(a)"),
    ("rint_f32", "float", 1, "__builtin_rintf(a)"),
    ("round_f32", "float", 1, "__builtin_roundf(a)"),
    ("fmax_f32", "float", 2, "__builtin_fmaxf(a, b)"),
    ("fmin_f32", "float", 2, "__builtin_fminf(a, b)"),
    ("fma_f32", "float", 3, "__builtin_fmaf(a, b, c)"),
    ("native_exp_f32", "float", 1, "__builtin_amdgcn_exp2f(a * 1.44269504088896340736f)"),
    ("native_exp2_f32", "float", 1, "__builtin_amdgcn_exp2f(a)"),
    ("native_log2_f32", "float", 1, "__builtin_amdgcn_logf(a)"),
    ("native_log_f32", "float", 1, "__builtin_amdgcn_logf(a) * 0.69314718055994530942f"),
    ("native_sqrt_f32", "float", 1, "__builtin_amdgcn_sqrtf(a)"),
    ("native_rsqrt_f32", "float", 1, "__builtin_amdgcn_rsqf(a)"),
    ("native_recip_f32", "float", 1, "__builtin_amdgcn_rcpf(a)"),
    ("exp2_f16", "_Float16", 1, "__builtin_exp2f16(a)"),
    ("fmax_f16", "_Float16", 2, "__builtin_fmaxf16(a, b)"),
    ("fmin_f16", "_Float16", 2, "__builtin_fminf16(a, b)"),
    ("fabs_f16", "_Float16", 1, "__builtin_fabsf16(a)"),
]

_SHIM_HEAD = """\
// Generated by scripts/resource_report.py: stand-ins for the ROCm device library (ockl,
// ocml) for a -nogpulib compile, included after the kernel source. See _OCML there.
#if defined(__HIP_DEVICE_COMPILE__)
#define SCHEDLAB_SHIM __attribute__((device, always_inline))

// __builtin_amdgcn_fence takes its ordering and scope as constants, hence the literal cases.
#define SCHEDLAB_SHIM_FENCE(order)                                                   \
  switch (scope) {                                                                   \
    case __memory_scope_sub_group: __builtin_amdgcn_fence(order, "wavefront"); break; \
    case __memory_scope_work_group: __builtin_amdgcn_fence(order, "workgroup"); break; \
    case __memory_scope_device: __builtin_amdgcn_fence(order, "agent"); break;        \
    case __memory_scope_all_svm_devices: __builtin_amdgcn_fence(order, ""); break;    \
    default: break; /* a work-item fence orders nothing */                           \
  }

extern "C" {
// Work-item functions (code object v5: the block counts open the implicit kernel arguments).
SCHEDLAB_SHIM __SIZE_TYPE__ __ockl_get_local_id(unsigned int dim) {
  return dim == 0 ? __builtin_amdgcn_workitem_id_x() : dim == 1 ? __builtin_amdgcn_workitem_id_y()
       : dim == 2 ? __builtin_amdgcn_workitem_id_z() : 0;
}
SCHEDLAB_SHIM __SIZE_TYPE__ __ockl_get_group_id(unsigned int dim) {
  return dim == 0 ? __builtin_amdgcn_workgroup_id_x() : dim == 1 ? __builtin_amdgcn_workgroup_id_y()
       : dim == 2 ? __builtin_amdgcn_workgroup_id_z() : 0;
}
SCHEDLAB_SHIM __SIZE_TYPE__ __ockl_get_local_size(unsigned int dim) {
  return dim == 0 ? __builtin_amdgcn_workgroup_size_x() : dim == 1 ? __builtin_amdgcn_workgroup_size_y()
       : dim == 2 ? __builtin_amdgcn_workgroup_size_z() : 1;
}
SCHEDLAB_SHIM __SIZE_TYPE__ __ockl_get_num_groups(unsigned int dim) {
  const unsigned int* block_count = static_cast<const unsigned int*>(__builtin_amdgcn_implicitarg_ptr());
  return dim < 3 ? block_count[dim] : 1;
}
SCHEDLAB_SHIM unsigned int __ockl_lane_u32() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}
// __syncthreads_or (and __syncthreads_count / _and through it): the work-group OR. ockl's
// reduces each wave, lets the first wave store and the others OR into an LDS word between
// two barriers, and reads it back; so does this, with one LDS word where ockl keeps its
// 256-byte scratch array. Unresolved, the call made the kernel report the calling
// convention's registers (AGPRs among them) and a stack.
SCHEDLAB_SHIM int __ockl_wgred_or_i32(int x) {
  __attribute__((shared)) static int word;
  const int wave_or = __builtin_amdgcn_ballot_w64(x != 0) != 0;
  const bool first_lane = __ockl_lane_u32() == 0;
  const bool first_wave = __builtin_amdgcn_workitem_id_x() < 64 && __builtin_amdgcn_workitem_id_y() == 0 &&
                          __builtin_amdgcn_workitem_id_z() == 0;
  if (first_lane && first_wave) word = wave_or;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (first_lane && !first_wave && wave_or) __atomic_fetch_or(&word, 1, __ATOMIC_RELAXED);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  return word;
}
#if defined(HIP_INCLUDE_HIP_AMD_DETAIL_DEVICE_LIBRARY_DECLS_H)
// __syncthreads and __threadfence*: the fence the ROCm 6 headers emit inline.
SCHEDLAB_SHIM void __atomic_work_item_fence(__cl_mem_fence_flags, __memory_order order, __memory_scope scope) {
  switch (order) {
    case __memory_order_acquire: SCHEDLAB_SHIM_FENCE(__ATOMIC_ACQUIRE) break;
    case __memory_order_release: SCHEDLAB_SHIM_FENCE(__ATOMIC_RELEASE) break;
    case __memory_order_acq_rel: SCHEDLAB_SHIM_FENCE(__ATOMIC_ACQ_REL) break;
    case __memory_order_seq_cst: SCHEDLAB_SHIM_FENCE(__ATOMIC_SEQ_CST) break;
    default: break;
  }
}
#endif
"""


def amd_device_library_shim() -> str:
    """The C++ text that defines the ockl/ocml stand-ins (see _OCML)."""
    lines = [_SHIM_HEAD, "// Math: the clang builtins the AMDGPU backend expands inline."]
    for name, ty, arity, expr in _OCML:
        params = ", ".join(f"{ty} {p}" for p in "abc"[:arity])
        lines.append(f"SCHEDLAB_SHIM {ty} __ocml_{name}({params}) {{ return {expr}; }}")
    lines += ['}  // extern "C"', "#undef SCHEDLAB_SHIM_FENCE", "#undef SCHEDLAB_SHIM", "#endif", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Entry:
    experiment: str
    source: Path
    # The targets the source is written for (empty: every target). Hopper-only kernels
    # (wgmma, setmaxnreg) name sm_90a: the AMD rows of such a source do not exist, by design.
    only: tuple[str, ...] = ()

    def builds_for(self, target: str) -> bool:
        return not self.only or target in self.only


@dataclasses.dataclass
class Options:
    root: Path
    isa_dir: Path
    hip_include: str
    defines: list[str]
    nvcc_flags: list[str]
    clang_flags: list[str]
    amd_shim: Path | None
    sass: bool
    cache: compile_cache.CompileCache | None = None
    # {source: the CUDA build's object of it} (scripts/build_objects.py): the sm_90a rows of a
    # source whose object is fresh are read from it, not compiled again.
    build_objects: dict[Path, Path] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class CompileResult:
    entry: Entry
    target: str
    ok: bool
    log: str
    kernels: list[dict]   # raw per-kernel facts: symbol plus target-specific fields
    notes: list[str] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    reused: bool = False  # the compiler's output came from the compile cache
    from_build: Path | None = None  # ... or from this object of the build


def default_compile_cache(root: Path, folder: Path | None = None) -> compile_cache.CompileCache:
    """`folder`, else $SCHEDLAB_COMPILE_CACHE, else <root>/build/compile_cache."""
    return compile_cache.CompileCache(folder or Path(
        os.environ.get("SCHEDLAB_COMPILE_CACHE") or Path(root).resolve() / "build" / "compile_cache"))


def sm90_sass_texts(root: Path, experiments: Sequence[str], scratch: Path,
                    sources: Mapping[str, str] | None = None) -> dict[str, str]:
    """{experiment: cuobjdump SASS text of experiments/<experiment>/kernels.cu for sm_90a}, and
    {name: the same of a kernel source outside the experiments} for `sources` ({name: path from
    the root}, such as a family library's kernels).

    Where the build's object of a source is fresh, its listing comes straight out of it
    through the default compile cache (what the build's static-report test dumped is reused);
    the other sources go through the report's commands into `scratch`, as their rows would.
    Raises RuntimeError when a compile fails; returns {} without nvcc and cuobjdump (the
    caller skips)."""
    cuobjdump, nvdisasm = find_cuda_tool("cuobjdump"), find_cuda_tool("nvdisasm")
    if not (find_cuda_tool("nvcc") and cuobjdump):
        return {}
    sources = {**{e: (root / "experiments" / e / "kernels.cu").resolve() for e in experiments},
               **{name: (root / path).resolve() for name, path in (sources or {}).items()}}
    mapping = build_objects.default_mapping(root)
    objects = build_objects.read_mapping(mapping) if mapping else {}
    cache = default_compile_cache(root)
    env = dict(os.environ, PATH=f"{Path(nvdisasm).parent}{os.pathsep}{os.environ.get('PATH', '')}") if nvdisasm else None
    texts = {}
    for e, source in sources.items():
        obj = objects.get(source)
        if nvdisasm is None or obj is None or build_objects.staleness(obj):
            continue
        sass = scratch / f"{e}.sm_90a.sass"
        runs = build_objects.extract(obj, cuobjdump, scratch / f"{e}.sm_90a.ptx", scratch / f"{e}.sm_90a.cubin", sass,
                                     env, cache, nvdisasm)
        if runs and all(proc.returncode == 0 for _, proc in runs) and sass.is_file():
            texts[e] = sass.read_text()
    rest = [e for e in sources if e not in texts]
    if rest:
        entries = [f"{e}|{sources[e]}|sm_90a" for e in rest]
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--out", str(scratch / "report"),
                               "--root", str(root), "--targets=sm_90a", "-j", "2", *entries],
                              capture_output=True, text=True, cwd=root)
        if proc.returncode != 0:
            raise RuntimeError(proc.stdout[-4000:] + proc.stderr[-4000:])
        for e in rest:
            stem = scratch / "report" / "isa" / Path(display_path(sources[e], root)).with_suffix("")
            texts[e] = stem.with_name(f"{stem.name}.sm_90a.sass").read_text()
    return texts


def display_path(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def artifact_stem(entry: Entry, opts: Options) -> Path:
    """<isa>/<source path relative to the root, without .cu>; outside the root, _external/."""
    shown = Path(display_path(entry.source, opts.root))
    relative = shown if not shown.is_absolute() else Path("_external") / shown.name
    stem = opts.isa_dir / relative.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    return stem


class CommandLog:
    """Runs commands, keeping each command line and its output for the .log file."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def run(self, cmd: list[str], env: dict | None = None, log_stdout: bool = True) -> subprocess.CompletedProcess:
        self.parts.append("$ " + " ".join(str(c) for c in cmd))
        try:
            proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                                  timeout=COMPILE_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            proc = subprocess.CompletedProcess(cmd, 124, "", f"timed out after {COMPILE_TIMEOUT_S} s\n")
        self.parts.append((proc.stdout if log_stdout else "") + proc.stderr)
        return proc

    def text(self) -> str:
        return "\n".join(self.parts)


def cache_description(kind: str, tools: Sequence[str | None], versions: Sequence[str], commands: Sequence[list],
                      opts: Options, generated: Sequence[str] = ()) -> list[str]:
    """What a compile's output depends on besides the files it reads: the tools (binary and
    version), each command's arguments (the tool itself, and paths into this run's isa/
    folder, written as placeholders so another run's folder gives the same description) and
    the text of inputs the report generated."""
    def placeholder(arg: object) -> str:
        return str(arg).replace(str(opts.isa_dir.resolve()), "<isa>").replace(str(opts.isa_dir), "<isa>")
    return [kind, *(compile_cache.binary_identity(t) for t in tools), *versions,
            *(json.dumps([placeholder(a) for a in cmd[1:]]) for cmd in commands),
            *("generated input sha256 " + hashlib.sha256(placeholder(text).encode()).hexdigest() for text in generated)]


def store_in_cache(opts: Options, description: list[str], outputs: dict[str, Path], dependency_file: Path,
                   log: CommandLog) -> None:
    """Keeps a successful compile with the files it read (its dependency file), less those the
    report generated in this run's isa/ folder: their text is part of the description."""
    if opts.cache is None:
        return
    isa_dir = opts.isa_dir.resolve()
    try:
        inputs = [d for d in compile_cache.read_dependency_file(dependency_file)
                  if not d.resolve().is_relative_to(isa_dir)]
    except OSError:
        return  # no dependency file: nothing says when the output would be stale
    opts.cache.store(description, outputs, inputs, log.text())


def restore_cached(opts: Options, description: list[str], outputs: dict[str, Path], log: CommandLog) -> bool:
    """Puts a cached compile's outputs in place and its log in `log`; False on a miss."""
    if opts.cache is None:
        return False
    cached = opts.cache.restore(description, outputs)
    if cached is None:
        return False
    log.parts.append(f"(reused from {opts.cache.entry(description)}: the same commands, every input file unchanged)")
    log.parts.append(cached)
    return True


def compile_nvidia(entry: Entry, target: str, tools: Toolchain, opts: Options) -> CompileResult:
    """nvcc -ptx, then ptxas -v (what `nvcc -cubin -Xptxas -v` runs, per nvcc -dryrun), so
    the PTX is kept: its .maxntid gives the block size that ptxas -v does not print. Where the
    build's object of the source is fresh, the same files are read out of it instead."""
    stem = artifact_stem(entry, opts)
    ptx, cubin, ptxas_log, sass_file, deps = (stem.with_name(f"{stem.name}.{target}.{ext}")
                                              for ext in ("ptx", "cubin", "ptxas.log", "sass", "d"))
    arch = target.removeprefix("sm_")
    log = CommandLog()
    result = CompileResult(entry, target, False, "", [])
    want_sass = opts.sass and not tools.sass_missing()
    sass_env = dict(os.environ, PATH=f"{Path(tools.nvdisasm).parent}{os.pathsep}{os.environ.get('PATH', '')}") \
        if want_sass else None
    if obj := fresh_build_object(entry, opts, log):
        log.parts.append(f"(read from the build's object {obj}; ptxas's lines from {obj.name}.ptxas.log)")
        for cmd, proc in build_objects.extract(obj, tools.cuobjdump, ptx, cubin, sass_file if want_sass else None,
                                               sass_env, opts.cache, tools.nvdisasm):
            log.parts += ["$ " + " ".join(cmd), proc.stderr]
            if "-sass" in cmd and proc.returncode != 0:
                result.notes.append(f"cuobjdump -sass failed on {cubin.name}: {proc.stderr.strip()}")
            else:
                result.ok = proc.returncode == 0
        if result.ok:
            shutil.copyfile(f"{obj}.ptxas.log", ptxas_log)
            result.from_build = obj
        result.log = log.text()
        return nvidia_kernels(result, ptx, ptxas_log, sass_file if want_sass and not result.notes else None) \
            if result.ok else result
    front_cmd = [tools.nvcc, "-std=c++20", "-O3", "--expt-relaxed-constexpr", "-lineinfo", f"-I{opts.root}",
                 *(f"-D{d}" for d in opts.defines), *opts.nvcc_flags,
                 f"-gencode=arch=compute_{arch},code=sm_{arch}", "-ptx", entry.source, "-o", ptx, "-MD", "-MF", deps]
    back_cmd = [tools.ptxas, f"-arch={target}", "-m64", "-v", ptx, "-o", cubin]
    dump_cmd = [tools.cuobjdump, "-sass", cubin]
    outputs = {"ptx": ptx, "cubin": cubin, "ptxas.log": ptxas_log, **({"sass": sass_file} if want_sass else {})}
    description = cache_description(
        "nvidia", [tools.nvcc, tools.ptxas, *((tools.cuobjdump, tools.nvdisasm) if want_sass else ())],
        [tools.versions.get("nvcc", "")], [front_cmd, back_cmd, *([dump_cmd] if want_sass else [])], opts)
    if restore_cached(opts, description, outputs, log):
        result.ok = result.reused = True
    else:
        front = log.run(front_cmd)
        if front.returncode == 0:
            back = log.run(back_cmd)
            ptxas_log.write_text(back.stdout + back.stderr)
            result.ok = back.returncode == 0
        if result.ok and want_sass:
            dump = log.run(dump_cmd, env=sass_env, log_stdout=False)
            if dump.returncode == 0:
                sass_file.write_text(dump.stdout)
            else:
                result.notes.append(f"cuobjdump -sass failed on {cubin.name}: {dump.stderr.strip()}")
        if result.ok and not result.notes:
            store_in_cache(opts, description, outputs, deps, log)
    result.log = log.text()
    if not result.ok:
        return result
    return nvidia_kernels(result, ptx, ptxas_log, sass_file if want_sass and not result.notes else None)


def fresh_build_object(entry: Entry, opts: Options, log: CommandLog) -> Path | None:
    """The build's object of the entry's source when it stands for the report's compile: fresh,
    and no define or nvcc flag of the report's own (the build's flags are the report's less
    the report's extras; -DNDEBUG aside, which only removes assertions)."""
    obj = opts.build_objects.get(entry.source.resolve())
    if obj is None or opts.defines or opts.nvcc_flags:
        return None
    if why := build_objects.staleness(obj):
        log.parts.append(f"(the build's object is not used: {why})")
        return None
    return obj


def nvidia_kernels(result: CompileResult, ptx: Path, ptxas_log: Path, sass_file: Path | None) -> CompileResult:
    """Fills `result.kernels` from the PTX (block sizes), ptxas's lines and the SASS listing."""
    entries = isa.parse_ptx_entries(ptx.read_text())
    sass = isa.sass_functions(sass_file.read_text()) if sass_file is not None else {}
    for symbol, res in isa.parse_ptxas_verbose(ptxas_log.read_text()).items():
        bounds = entries.get(symbol, {})
        ntid = bounds.get("reqntid") or bounds.get("maxntid")
        result.kernels.append({
            "symbol": symbol, "registers": res["registers"], "barriers": res["barriers"],
            "stack_frame_bytes": res["stack_frame_bytes"], "spill_store_bytes": res["spill_store_bytes"],
            "spill_load_bytes": res["spill_load_bytes"], "static_smem_bytes": res["smem_bytes"],
            "block_size": math.prod(ntid) if ntid else None,
            "block_size_source": (".reqntid" if bounds.get("reqntid") else ".maxntid") if ntid else None,
            "min_blocks_per_sm": bounds.get("minnctapersm"),
            "instructions": len(sass[symbol]) if symbol in sass else None,
            "compiler_notes": res["notes"]})
    return result


def compile_amd(entry: Entry, target: str, tools: Toolchain, opts: Options) -> CompileResult:
    """clang-22 -x hip --cuda-device-only -S for one gfx target, against the Debian HIP
    headers, with the device-library stand-ins included after the source."""
    stem = artifact_stem(entry, opts)
    asm, deps = (stem.with_name(f"{stem.name}.{target}.{ext}") for ext in ("s", "d"))
    source = entry.source
    generated = []
    if opts.amd_shim is not None:
        source = stem.with_name(f"{stem.name}.{target}.tu.hip")
        source.write_text(f'#include "{entry.source.resolve()}"\n#include "{opts.amd_shim.resolve()}"\n')
        generated = [source.read_text(), opts.amd_shim.read_text()]
    # The device compile's dependency file, system headers included (the driver's -MD does
    # not reach the device compile of --cuda-device-only -S).
    dependency_flags = [f for option in ("-dependency-file", str(deps), "-MT", str(asm), "-sys-header-deps")
                        for f in ("-Xclang", option)]
    cmd = [tools.clang, "-x", "hip", f"--offload-arch={target}", "-nogpulib", "-nogpuinc",
           f"-I{opts.hip_include}", "-isystem", tools.clang_resource_dir, f"-I{opts.root}",
           "-D__HIP_PLATFORM_AMD__", "-D__AMDGCN_WAVEFRONT_SIZE=64", "--cuda-device-only", "-O3",
           "-std=c++20", *(f"-D{d}" for d in opts.defines), *opts.clang_flags, "-S", source, "-o", asm,
           *dependency_flags]
    log = CommandLog()
    description = cache_description("amdgpu", [tools.clang], [tools.versions.get("clang", "")], [cmd], opts, generated)
    reused = restore_cached(opts, description, {"s": asm}, log)
    if not reused:
        proc = log.run(cmd)
        if proc.returncode == 0:
            store_in_cache(opts, description, {"s": asm}, deps, log)
    result = CompileResult(entry, target, reused or proc.returncode == 0, log.text(), [], reused=reused)
    if not result.ok:
        return result
    text = asm.read_text()
    listing = isa.AsmFile(text)
    for symbol, md in isa.parse_amdgpu_metadata(text).items():
        vgpr_total = md["vgpr_count"]
        agprs = md.get("agpr_count", 0)
        result.kernels.append({
            "symbol": symbol, "vgpr_total": vgpr_total, "vgpr": md.get("arch_vgpr_count"), "agpr": agprs,
            "sgpr": md["sgpr_count"], "vgpr_spill_regs": md.get("vgpr_spill_count", 0),
            "sgpr_spill_regs": md.get("sgpr_spill_count", 0),
            "scratch_bytes_per_lane": md.get("private_segment_fixed_size", 0),
            "static_smem_bytes": md.get("group_segment_fixed_size", 0),
            "block_size": md.get("max_flat_workgroup_size"), "block_size_source": ".max_flat_workgroup_size",
            "wavefront_size": md.get("wavefront_size"), "compiler_waves_per_simd": md.get("compiler_occupancy"),
            "instructions": len(listing.kernel_body(symbol)),
            "external_calls": listing.external_calls(symbol)})
    return result


def compile_one(entry: Entry, target: str, tools: Toolchain, opts: Options) -> CompileResult:
    start = time.monotonic()
    compile_fn = compile_nvidia if target in NVIDIA_TARGETS else compile_amd
    result = compile_fn(entry, target, tools, opts)
    result.seconds = time.monotonic() - start
    stem = artifact_stem(entry, opts)
    stem.with_name(f"{stem.name}.{target}.log").write_text(result.log)
    return result


# ---------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------


def make_record(raw: dict, result: CompileResult, demangled: str, compiler: str, root: Path) -> dict:
    """One kernel on one target: the compiler's facts plus names, dynamic smem, occupancy."""
    experiment, variant = experiment_variant(demangled, result.entry.experiment)
    record = {"kernel": demangled, "symbol": raw["symbol"], "source": display_path(result.entry.source, root),
              "experiment": experiment, "variant": variant, "target": result.target, "compiler": compiler}
    record.update({k: v for k, v in raw.items() if k != "symbol"})
    notes = []
    try:
        record["dynamic_smem_bytes"] = dynamic_smem_bytes(demangled)
    except ValueError as err:
        record["dynamic_smem_bytes"] = 0
        notes.append(str(err))
    block = record["block_size"]
    if block is None:
        notes.append("block size unknown (no __launch_bounds__): occupancy not computed")
        occupancy = {}
    elif result.target in NVIDIA_TARGETS:
        occupancy = sm90_occupancy(record["registers"], block, record["static_smem_bytes"],
                                   record["dynamic_smem_bytes"])
    else:
        occupancy = amd_occupancy(result.target, record["vgpr_total"], record["sgpr"],
                                  record["static_smem_bytes"] + record["dynamic_smem_bytes"], block)
    record.update(occupancy)
    why_not = launch_status(demangled, result.target, record["static_smem_bytes"] + record["dynamic_smem_bytes"])
    record["launched"] = why_not is None
    if why_not:
        notes.append(why_not)
    if record.get("external_calls"):
        notes.append("calls unresolved functions (" + ", ".join(record["external_calls"]) +
                     "): register counts include the calling convention's")
    notes.extend(record.pop("compiler_notes", []))
    record["notes"] = notes
    return record


def build_records(results: list[CompileResult], tools: Toolchain, root: Path) -> list[dict]:
    names = isa.demangle((k["symbol"] for r in results for k in r.kernels), tools.demangler)
    records = []
    for result in results:
        compiler = tools.versions["nvcc" if result.target in NVIDIA_TARGETS else "clang"]
        records.extend(make_record(raw, result, names[raw["symbol"]], compiler, root) for raw in result.kernels)
    target_order = {t: i for i, t in enumerate(TARGETS)}
    records.sort(key=lambda r: (r["experiment"], r["source"], short_kernel_name(r["kernel"]),
                                target_order.get(r["target"], 99)))
    return records


# ---------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------


def _md_cells(r: dict) -> list[str]:
    smem = f"{r['static_smem_bytes']} + {r['dynamic_smem_bytes']}"
    if r["target"] in NVIDIA_TARGETS:
        regs = str(r["registers"])
        spills = f"{r['spill_store_bytes']} / {r['spill_load_bytes']} B"
        if r["stack_frame_bytes"]:
            spills += f", stack {r['stack_frame_bytes']} B"
        occ = (f"{r['blocks_per_sm']} blocks, {r['warps_per_sm']} warps/SM" if "blocks_per_sm" in r else "?")
    else:
        regs = f"{r['vgpr_total']} (v {r['vgpr']}, a {r['agpr']}), s {r['sgpr']}"
        spills = f"v {r['vgpr_spill_regs']} / s {r['sgpr_spill_regs']} regs"
        if r["scratch_bytes_per_lane"]:
            spills += f", scratch {r['scratch_bytes_per_lane']} B/lane"
        occ = (f"{r['waves_per_simd']} waves/SIMD, {r['workgroups_per_cu']} WG/CU" if "waves_per_simd" in r else "?")
    if "occupancy" in r:
        occ += f" ({r['occupancy']:.0%})"
    return [f"`{short_kernel_name(r['kernel'])}`", r["variant"], r["target"], regs, spills, smem,
            str(r["block_size"] or "?"), occ, r.get("occupancy_limiter", "?"),
            "; ".join(r["notes"]).replace("|", "\\|")]


def write_markdown(path: Path, records: list[dict], provenance: dict) -> None:
    lines = ["# Static resource report", "",
             f"Commit {provenance['commit'] or 'unknown'}{' (dirty)' if provenance['dirty'] else ''}, "
             f"generated {provenance['generated_utc']}. " +
             "; ".join(f"{k}: {v}" for k, v in provenance["tools"].items()) + ".", "",
             "regs: registers per thread (sm_90a) or unified VGPRs (arch v + acc a) and SGPRs per wave (AMD). "
             "spills: bytes stored / loaded (sm_90a), registers (AMD). smem: static + dynamic "
             "(DynamicSmem<N>) bytes. Occupancy is theoretical; see scripts/resource_report.py.", ""]
    lines += [f"- {note}" for note in provenance["notes"]]
    lines += ["", "## Launch check", "",
              "Rows a target's plan may launch (the others are marked in their notes: an instantiation for "
              "another architecture, or shared memory over the target's limit, refused at plan time), and "
              "how many of them spill (sm_90a: spill or stack bytes; AMD: scratch) or fit no block (workgroup) "
              "per SM (CU).", "",
              "| target | launched | not launched | with spills / scratch | with 0 blocks per SM / CU |",
              "|---|---|---|---|---|"]
    for target, c in sorted(launch_check(records).items(), key=lambda kv: TARGETS.index(kv[0])
                            if kv[0] in TARGETS else 99):
        lines.append(f"| {target} | {c['launched']} | {c['not_launched']} | {len(c['scratch'])} | {len(c['no_block'])} |")
    header = ["kernel", "variant", "target", "regs", "spills", "smem", "block", "occupancy", "limiter", "notes"]
    for experiment in sorted({r["experiment"] for r in records}):
        lines += ["", f"## {experiment}", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_md_cells(r)) + " |" for r in records if r["experiment"] == experiment]
    path.write_text("\n".join(lines) + "\n")


def git_state(root: Path) -> tuple[str | None, bool]:
    def git(*args: str) -> str | None:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else None
    status = git("status", "--porcelain")
    return git("rev-parse", "HEAD"), bool(status)


# ---------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------


def parse_entry(text: str) -> Entry:
    """'experiment|/path/to/source.cu' or 'experiment|/path/to/source.cu|sm_90a[,...]'."""
    experiment, sep, rest = text.strip().partition("|")
    source, _, only = rest.partition("|")
    if not sep or not experiment or not source:
        raise argparse.ArgumentTypeError(f"expected 'experiment|/path/to/source.cu[|targets]', got '{text}'")
    targets = tuple(t for t in (s.strip() for s in only.split(",")) if t)
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown target(s) {', '.join(unknown)} in '{text}'")
    return Entry(experiment, Path(source), targets)


def read_entries(args: argparse.Namespace) -> list[Entry]:
    """Positional entries plus those of --entries-file (one per line or a CMake ';' list)."""
    entries = list(args.entries)
    for file in args.entries_file:
        for item in re.split(r"[;\n]", Path(file).read_text()):
            if item.strip() and not item.strip().startswith("#"):
                entries.append(parse_entry(item))
    entries = list(dict.fromkeys(entries))
    experiments: dict[Path, str] = {}
    for e in entries:
        if experiments.setdefault(e.source.resolve(), e.experiment) != e.experiment:
            raise argparse.ArgumentTypeError(
                f"{e.source} is listed for experiments {experiments[e.source.resolve()]} and {e.experiment}")
    return entries


def target_list(text: str) -> list[str]:
    targets = [t for t in (s.strip() for s in text.split(",")) if t]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    return targets


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("entries", nargs="*", type=parse_entry, help="'experiment|/path/to/source.cu'")
    p.add_argument("--entries-file", action="append", default=[], help="file of entries (lines or a CMake list)")
    p.add_argument("--out", type=Path, help="output folder")
    p.add_argument("--root", type=Path, default=REPO_ROOT, help="repository root, the include root")
    p.add_argument("--targets", type=target_list, default=list(TARGETS), help="comma-separated targets")
    p.add_argument("--require", type=target_list, default=[],
                   help="targets that must compile: a missing compiler, a failed compile or a source "
                        "without kernels for one of them fails the run")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--nvcc", help="nvcc to use (default: PATH, then /usr/local/cuda/bin)")
    p.add_argument("--clang", help="clang to use for AMD targets (default: clang-22 on PATH)")
    p.add_argument("--cuobjdump", help="cuobjdump to use (default: PATH, /usr/local/cuda/bin, pip wheel)")
    p.add_argument("--hip-include", default="/usr/include", help="folder holding hip/hip_runtime.h")
    p.add_argument("-D", "--define", action="append", default=[], help="NAME[=VALUE] for every compile")
    p.add_argument("--nvcc-flag", action="append", default=[], help="extra nvcc argument")
    p.add_argument("--clang-flag", action="append", default=[], help="extra clang argument")
    p.add_argument("--no-sass", action="store_true", help="do not dump SASS with cuobjdump")
    p.add_argument("--require-sass", action="store_true", help="fail when SASS cannot be dumped")
    p.add_argument("--compile-cache", type=Path,
                   help="folder of the compile cache (default: $SCHEDLAB_COMPILE_CACHE, else <root>/build/"
                        "compile_cache): a source compiled before with the same commands and unchanged inputs "
                        "is not compiled again; see scripts/compile_cache.py")
    p.add_argument("--no-compile-cache", action="store_true", help="compile everything; read and keep nothing")
    p.add_argument("--build-objects", metavar="FILE|none",
                   help="the CUDA build's map of kernel sources to objects (default: <root>/build/cuda/"
                        f"{build_objects.MAPPING_NAME} where it exists): a source whose object is fresh gives its "
                        "sm_90a rows from the object, not from a compile; see scripts/build_objects.py")
    p.add_argument("--no-amd-shim", action="store_true",
                   help="compile AMD targets without the ockl/ocml stand-ins (calls stay unresolved)")
    p.add_argument("--skip-status", type=int, default=0,
                   help="exit status when there is nothing to do: no sources, or no compiler for any target")
    p.add_argument("--find-tool", choices=["nvcc", "cuobjdump", "nvdisasm"],
                   help="print where the tool is found (exit 1 if nowhere) and stop")
    args = p.parse_args(argv)
    if args.find_tool is None and args.out is None:
        p.error("--out is required")
    if not set(args.require) <= set(args.targets):
        p.error("--require names targets missing from --targets")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.find_tool:
        found = find_cuda_tool(args.find_tool)
        print(found or "")
        return 0 if found else 1
    try:
        entries = read_entries(args)
    except (OSError, argparse.ArgumentTypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    missing_sources = [str(e.source) for e in entries if not e.source.is_file()]
    if missing_sources:
        print("error: kernel sources not found: " + ", ".join(missing_sources), file=sys.stderr)
        return 1
    if not entries:
        print("static report: no kernel sources given, nothing to do")
        return args.skip_status

    if not args.targets:
        print("static report: no targets requested, nothing compiled")
        return args.skip_status
    tools = Toolchain.discover(args)
    failures: list[str] = []
    notes: list[str] = []
    targets = []
    for target in args.targets:
        if why := tools.missing_for(target):
            notes.append(f"{target}: not compiled, {why}")
            if target in args.require:
                failures.append(f"required target {target} cannot be compiled: {why}")
        else:
            targets.append(target)
    if any(t in NVIDIA_TARGETS for t in targets) and not args.no_sass and (why := tools.sass_missing()):
        notes.append(why)
        if args.require_sass:
            failures.append(why)
    for note in notes:
        print(f"note: {note}")
    if not targets:
        print("static report: no compiler for any requested target, nothing compiled")
        for failure in failures:
            print(f"error: {failure}", file=sys.stderr)
        return 1 if failures else args.skip_status

    out: Path = args.out
    isa_dir = out / "isa"
    shutil.rmtree(isa_dir, ignore_errors=True)
    isa_dir.mkdir(parents=True)
    shim = None
    if not args.no_amd_shim and any(t in AMD_TARGETS for t in targets):
        shim = isa_dir / "amd_device_library_shim.hip"
        shim.write_text(amd_device_library_shim())
    cache = None
    if not args.no_compile_cache:
        cache = default_compile_cache(args.root, args.compile_cache)
    mapping = None if args.build_objects == "none" else \
        Path(args.build_objects) if args.build_objects else build_objects.default_mapping(args.root)
    try:
        objects = build_objects.read_mapping(mapping) if mapping else {}
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    opts = Options(root=args.root.resolve(), isa_dir=isa_dir, hip_include=args.hip_include, defines=args.define,
                   nvcc_flags=args.nvcc_flag, clang_flags=args.clang_flag, amd_shim=shim, sass=not args.no_sass,
                   cache=cache, build_objects=objects)

    jobs = [(e, t) for e in entries for t in targets if e.builds_for(t)]
    results: list[CompileResult] = []
    print_lock = threading.Lock()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(compile_one, e, t, tools, opts) for e, t in jobs]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            r = future.result()
            results.append(r)
            shown = display_path(r.entry.source, opts.root)
            status = f"{len(r.kernels)} kernel(s)" if r.ok else "FAILED"
            with print_lock:
                origin = ", compiled before: reused" if r.reused else ", read from the build's object" \
                    if r.from_build else ""
                print(f"[{done:{len(str(len(jobs)))}}/{len(jobs)}] {r.target:<7} {shown}: {status} "
                      f"({r.seconds:.1f} s{origin})", flush=True)
                if not r.ok:
                    print(r.log, flush=True)
                    failures.append(f"{r.target}: {shown} failed to compile")
                for note in r.notes:
                    print(f"note: {note}")
                    notes.append(note)
                    if args.require_sass:
                        failures.append(note)

    records = build_records(results, tools, opts.root)
    for target in args.require:
        if target not in targets:
            continue
        produced = {r["source"] for r in records if r["target"] == target}
        for entry in entries:
            if entry.builds_for(target) and display_path(entry.source, opts.root) not in produced:
                failures.append(f"{target}: {display_path(entry.source, opts.root)} produced no kernel "
                                "(a kernel source needs explicit instantiations of its kernels)")

    commit, dirty = git_state(opts.root)
    provenance = {
        "commit": commit, "dirty": dirty,
        "generated_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tools": {k: v for k, v in tools.versions.items()},
        "paths": {k: getattr(tools, k) for k in ("nvcc", "ptxas", "clang", "cuobjdump", "nvdisasm", "demangler")},
        "targets": targets, "defines": args.define, "amd_device_library_shim": shim is not None,
        "compile_cache": str(cache.folder) if cache else None,
        "reused_from_compile_cache": sorted(f"{display_path(r.entry.source, opts.root)} {r.target}"
                                            for r in results if r.reused),
        "read_from_build_objects": sorted(f"{display_path(r.entry.source, opts.root)} {r.target}"
                                          for r in results if r.from_build),
        "notes": notes}
    out.mkdir(parents=True, exist_ok=True)
    (out / "resources.json").write_text(json.dumps(records, indent=1) + "\n")
    (out / "provenance.json").write_text(json.dumps(provenance, indent=1) + "\n")
    write_markdown(out / "resources.md", records, provenance)
    print(f"static report: {len(records)} kernel record(s) from {len(entries)} source(s) -> {out / 'resources.md'}")
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
