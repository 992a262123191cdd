// The paged decode kernel with each DecodeFault, and without one (the family's configurations
// SplitRows and TokenBalancedRows), at head dim 128 (kernels/tests/fault_kernels.hpp).
#include <stdexcept>
#include <string>

#include "kernels/decode/paged_decode.cuh"
#include "kernels/tests/fault_kernels.hpp"

namespace schedlab::kernels {
namespace {

// Row tiles as SplitRows and TokenBalancedRows: a group above 16 runs the warpgroup row-tile
// body, 16 or fewer the body as before (fp8 at head dim 128: S on the raw K tiles, Q split into
// e4m3 high and low parts, which the high-part fault spoils).
template <DecodeFault kF, TileSchedule kS>
struct Faulty : SplitRows {
  struct Partition : SplitRows::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = kS;
  };
  /* Fault = */ static constexpr DecodeFault kFault = kF;
};

template <class F>
decltype(auto) with_kv_at_128(const DecodeProblem& p, F&& f) {
  if (p.head_dim != 128) throw std::invalid_argument("fault kernels run at head dim 128");
  switch (p.kv_dtype) {
    case DType::bf16: return f.template operator()<DType::bf16>();
    case DType::f16: return f.template operator()<DType::f16>();
    default: return f.template operator()<DType::fp8_e4m3>();
  }
}

// The KV dtypes a fault is built for: those the fault tests run it in (each dtype is kernels of
// its own, and this file is among the slowest of the build to compile). q_high_only spoils fp8's
// raw-keys body; stale_max runs on sharp scores, which only 16-bit KV computes exactly enough;
// max_unchecked shows as f16's P overflowing.
template <DecodeFault kF, DType kKv>
inline constexpr bool kBuiltFor = kF == DecodeFault::q_high_only     ? kKv == DType::fp8_e4m3
                                  : kF == DecodeFault::stale_max     ? kKv != DType::fp8_e4m3
                                  : kF == DecodeFault::max_unchecked ? kKv == DType::f16
                                                                     : true;

template <class Policy, DType kKv>
void require_built(const DecodeProblem& p) {
  if constexpr (!kBuiltFor<Policy::kFault, kKv>)
    throw std::invalid_argument("decode_fault_kernel: this fault is not built for " +
                                std::string(dtype_name(p.kv_dtype)) + " KV (kBuiltFor)");
}

template <class Policy>
DecodeKernel at_head_dim_128() {
  return {[](const DecodeArgs& a, const DecodePlan& plan, gpu::api::stream_t s) {
            with_kv_at_128(*a.problem, [&]<DType kKv>() {
              require_built<Policy, kKv>(*a.problem);
              if constexpr (kBuiltFor<Policy::kFault, kKv>) decode_detail::launch_for<Policy, kKv, 128>(a, plan, s);
            });
          },
          [](const DecodeProblem& p, int forced) {
            return with_kv_at_128(p, [&]<DType kKv>() {
              require_built<Policy, kKv>(p);
              if constexpr (kBuiltFor<Policy::kFault, kKv>) return decode_detail::plan_for<Policy, kKv, 128>(p, forced);
              else return DecodePlan{};
            });
          }};
}

template <TileSchedule kS>
DecodeKernel with_schedule(DecodeFault fault) {
  switch (fault) {
    case DecodeFault::drop_tile: return at_head_dim_128<Faulty<DecodeFault::drop_tile, kS>>();
    case DecodeFault::stale_tile: return at_head_dim_128<Faulty<DecodeFault::stale_tile, kS>>();
    case DecodeFault::lose_split: return at_head_dim_128<Faulty<DecodeFault::lose_split, kS>>();
    case DecodeFault::stale_max: return at_head_dim_128<Faulty<DecodeFault::stale_max, kS>>();
    case DecodeFault::q_high_only: return at_head_dim_128<Faulty<DecodeFault::q_high_only, kS>>();
    case DecodeFault::max_unchecked: return at_head_dim_128<Faulty<DecodeFault::max_unchecked, kS>>();
    case DecodeFault::none: return at_head_dim_128<Faulty<DecodeFault::none, kS>>();
  }
  throw std::invalid_argument("decode_fault_kernel: an unknown fault");
}

}  // namespace

DecodeKernel decode_fault_kernel(DecodeFault fault, TileSchedule schedule) {
  switch (schedule) {
    case TileSchedule::split: return with_schedule<TileSchedule::split>(fault);
    case TileSchedule::token_balanced: return with_schedule<TileSchedule::token_balanced>(fault);
    default: throw std::invalid_argument("decode_fault_kernel: split and token_balanced schedules only");
  }
}

}  // namespace schedlab::kernels
