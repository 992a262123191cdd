#include "common/harness/provenance.hpp"

#include <benchmark/benchmark.h>

namespace schedlab {

namespace {
std::string version_string(int v) {
  // CUDA and HIP encode versions as major*1000 + minor*10 (HIP adds a patch field).
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10) + " (" + std::to_string(v) + ")";
}
}  // namespace

std::map<std::string, std::string> provenance_context(const gpu::DeviceInfo* device) {
  const BuildInfo& b = build_info();
  std::map<std::string, std::string> ctx{
      {"schedlab_commit", b.commit},   {"schedlab_dirty", b.dirty},       {"backend", b.backend},
      {"build_archs", b.archs},        {"compiler_flags", b.flags},       {"compiler", b.compiler},
      {"build_type", b.build_type},
  };
  if (device) {
    ctx["device"] = device->name;
    ctx["arch"] = device->arch;
    ctx["sm_count"] = std::to_string(device->sm_count);
    ctx["l2_bytes"] = std::to_string(device->l2_bytes);
    ctx["sm_clock_mhz"] = std::to_string(device->sm_clock_khz / 1000);
    ctx["mem_clock_mhz"] = std::to_string(device->mem_clock_khz / 1000);
    ctx["mem_bus_bits"] = std::to_string(device->mem_bus_bits);
    ctx["driver_version"] = version_string(device->driver_version);
    ctx["toolkit_version"] = version_string(device->runtime_version);
  } else {
    ctx["device"] = "none (CPU)";
  }
  return ctx;
}

void add_benchmark_context(const std::map<std::string, std::string>& context) {
  for (const auto& [k, v] : context) benchmark::AddCustomContext(k, v);
}

}  // namespace schedlab
