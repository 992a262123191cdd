// Kernel launch through the portability layer: the triple-chevron syntax both nvcc and
// clang-HIP accept, followed by a checked last-error read that names the kernel.
#pragma once
#include <source_location>
#include <string>
#include <utility>

#include "common/gpu/runtime.hpp"

namespace schedlab::gpu {

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  std::size_t dynamic_smem = 0;
  api::stream_t stream = nullptr;
  // Programmatic dependent launch where the backend has it (api::kDependentLaunch): the
  // kernel's launch overlaps the previous kernel's tail; it calls gpu::wait_prior_grid()
  // before it reads that kernel's output.
  bool overlap_prior = false;
};

template <class... KernelArgs, class... Args>
void launch(const char* name, void (*kernel)(KernelArgs...), const LaunchConfig& cfg, Args&&... args) {
  if (cfg.overlap_prior) {
    check(api::launch_dependent(kernel, cfg.grid, cfg.block, cfg.dynamic_smem, cfg.stream, std::forward<Args>(args)...),
          (std::string("launch of ") + name).c_str());
    return;
  }
  kernel<<<cfg.grid, cfg.block, cfg.dynamic_smem, cfg.stream>>>(static_cast<KernelArgs>(args)...);
  check_launch(name);
}

}  // namespace schedlab::gpu
