#include "common/data.hpp"

namespace schedlab {

void fill_normal_host(DType t, void* dst, std::size_t n, std::uint64_t seed, float stddev) {
  for (std::size_t i = 0; i < n; ++i) store_from_float(t, dst, i, stddev * normal_at(seed, i));
}

}  // namespace schedlab
