// Provenance every results file carries: how the binary was built (baked in at build
// time by cmake/write_provenance.cmake) and what it ran on.
#pragma once
#include <map>
#include <string>

#include "common/gpu/device_info.hpp"

namespace schedlab {

struct BuildInfo {
  std::string commit, dirty, backend, archs, flags, compiler, build_type;
};
const BuildInfo& build_info();

// Key/value context for a results file: build info, the device, and how hints behave.
std::map<std::string, std::string> provenance_context(const gpu::DeviceInfo* device);

// Adds every entry to Google Benchmark's context (AddCustomContext).
void add_benchmark_context(const std::map<std::string, std::string>& context);

}  // namespace schedlab
