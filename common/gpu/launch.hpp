// Kernel launch through the portability layer: the triple-chevron syntax both nvcc and
// clang-HIP accept, followed by a checked last-error read that names the kernel.
#pragma once
#include <source_location>

#include "common/gpu/runtime.hpp"

namespace schedlab::gpu {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  std::size_t dynamic_smem = 0;
  api::stream_t stream = nullptr;
};

template <class... KernelArgs, class... Args>
void launch(const char* name, void (*kernel)(KernelArgs...), const LaunchConfig& cfg, Args&&... args) {
  kernel<<<cfg.grid, cfg.block, cfg.dynamic_smem, cfg.stream>>>(static_cast<KernelArgs>(args)...);
  check_launch(name);
}

}  // namespace schedlab::gpu
