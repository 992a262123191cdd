// Named instruction classes for scheduling hints, so no kernel carries a raw mask.
// Values are the AMDGPU sched_barrier / sched_group_barrier masks (LLVM AMDGPUUsage,
// "llvm.amdgcn.sched.barrier"): for sched_barrier a class listed may be moved across
// the barrier; for sched_group_barrier the class fills the group.
#pragma once

namespace schedlab::gpu {

enum class Sched : unsigned {
  NONE = 0x0000,        // nothing may cross: a full scheduling fence
  ALU = 0x0001,         // all non-memory, non-side-effect instructions
  VALU = 0x0002,
  SALU = 0x0004,
  MFMA = 0x0008,        // matrix instructions (MFMA / WMMA)
  VMEM = 0x0010,        // all global/buffer memory instructions
  VMEM_READ = 0x0020,
  VMEM_WRITE = 0x0040,
  DS = 0x0080,          // all LDS instructions
  DS_READ = 0x0100,
  DS_WRITE = 0x0200,
  TRANS = 0x0400,       // transcendental ALU (exp, rcp, ...)
};

constexpr Sched operator|(Sched a, Sched b) {
  return static_cast<Sched>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

}  // namespace schedlab::gpu
