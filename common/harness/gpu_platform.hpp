// The harness on a GPU: device-event timing, L2 flush, and the ceilings measured in the
// same process (device-to-device copy bandwidth), recorded beside the kernels' numbers.
#pragma once
#include <optional>

#include "common/harness/bench_main.hpp"

namespace schedlab::harness {

// Empty when no GPU is visible.
std::optional<Platform> gpu_platform();

// Bytes read plus bytes written per second of a large device-to-device copy (median of
// several), the memory ceiling the decode family is judged against.
double measure_copy_bandwidth(std::size_t bytes, int repeats);

}  // namespace schedlab::harness
