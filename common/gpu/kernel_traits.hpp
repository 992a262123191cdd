// Compile-time facts a kernel carries in its type, so static tools can read them from
// the symbol name (the resource report adds DynamicSmem<N> to the static shared memory).
#pragma once
#include <cstddef>

namespace schedlab::gpu {

template <std::size_t kBytes_>
struct DynamicSmem {
  static constexpr std::size_t kBytes = kBytes_;
};

}  // namespace schedlab::gpu
