// What the harness records about a device; vendor-free so CPU code can hold it.
#pragma once
#include <string>

namespace schedlab::gpu {

struct DeviceInfo {
  std::string name, arch, backend;
  int sm_count = 0, l2_bytes = 0, smem_per_block_optin = 0, smem_per_sm = 0, regs_per_sm = 0, warp_size = 0;
  int max_threads_per_sm = 0, sm_clock_khz = 0, mem_clock_khz = 0, mem_bus_bits = 0;
  int driver_version = 0, runtime_version = 0;
};

}  // namespace schedlab::gpu
