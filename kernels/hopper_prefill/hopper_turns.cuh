// How the Hopper prefill kernel's consumer warpgroups order themselves: ping-pong's turns at
// their matrix ops (TurnOrder) and fp8's meeting between their exponentials (ExpMeet), both on
// named barriers of two warpgroups (hopper_config.cuh numbers them).
#pragma once
#include "kernels/hopper_prefill/hopper_config.cuh"

namespace schedlab::kernels::hopper_detail {

// Ping-pong: consumer c issues its matrix ops only in its turn and then hands the turn to
// consumer c + 1 (round robin), so one's GEMMs run while the others do their softmax (FA3
// 3.1). Each hand-over is one barrier of two warpgroups: the next one's sync, this one's
// arrive. The last consumer opens consumer 0's first turn; consumer 0 takes the last hand-over.
template <bool kOn, int kConsumers>
struct TurnOrder {
  int mine, other;
  __device__ explicit TurnOrder(int consumer)
      : mine(kTurnBarrier0 + consumer), other(kTurnBarrier0 + (consumer + 1) % kConsumers) {}
  __device__ void begin() const {
    if constexpr (kOn) gpu::named_barrier_sync(mine, 2 * kWarpGroupThreads);  // wait for my turn
  }
  __device__ void end() const {
    if constexpr (kOn) gpu::named_barrier_arrive(other, 2 * kWarpGroupThreads);  // hand the turn over
  }
};

// The softmax's gate (attention::softmax_rows) when the two consumers' exponentials alternate
// (Config::kExpMeet): they meet once a key tile, consumer 1 before its exp2s and consumer 0 once
// its own are done, each waiting for the other (cuDNN's fp8 loop meets so, at one BAR.SYNC on
// each side). Here the meeting is two named barriers, each a wait on one side and an arrival on
// the other, as ping-pong's turns: kExpMeetBarrier, consumer 0's arrival and consumer 1's wait,
// then kExpMeetBarrier + 1, consumer 1's arrival and consumer 0's wait (compute-sanitizer's
// synccheck reports two waits at two instructions on one barrier as divergent threads). ptxas
// moves register arithmetic across a barrier it has no data dependence with (behind a plain
// barrier it started 52 of consumer 1's 128 exp2s ahead of it), so each side is tied to the
// exp2s by data: consumer 0's arrival is predicated on the tile's row sums (which read every
// exp2) not being below -kv_len, which no sum is; consumer 1's row offsets take in a shared word
// loaded after its wait (a word of the warp's own staging rows, which nothing writes during the
// key tiles), made -inf or a NaN, of which fmaxf keeps the offset.
template <bool kOn>
struct ExpMeet {
  int consumer;
  float below;
  const unsigned char* own_word;
  template <int kSlots>
  __device__ void before_exps(float (&m_use)[kSlots]) const {
    if constexpr (kOn) {
      if (consumer == 1) {
        gpu::named_barrier_sync(kExpMeetBarrier, 2 * kWarpGroupThreads);
        gpu::named_barrier_arrive(kExpMeetBarrier + 1, 2 * kWarpGroupThreads);
        std::uint32_t word;
        asm volatile("ld.volatile.shared.u32 %0, [%1];\n" : "=r"(word) : "r"(gpu::smem_u32(own_word)) : "memory");
        const float never_above = __uint_as_float(word | 0xff800000u);  // -inf or a NaN
#pragma unroll
        for (int r = 0; r < kSlots; ++r) m_use[r] = fmaxf(m_use[r], never_above);
      }
    }
  }
  template <int kSlots, int kChains>
  __device__ void after_exps(const float (&sum)[kSlots][kChains]) const {
    if constexpr (kOn) {
      float all = 0.f;
#pragma unroll
      for (int r = 0; r < kSlots; ++r)
#pragma unroll
        for (int c = 0; c < kChains; ++c) all += sum[r][c];
      if (consumer == 0) {
        asm volatile("{\n .reg .pred low;\n setp.lt.f32 low, %0, %1;\n @!low bar.arrive %2, %3;\n}\n" ::"f"(all),
                     "f"(below), "n"(kExpMeetBarrier), "n"(2 * kWarpGroupThreads)
                     : "memory");
        gpu::named_barrier_sync(kExpMeetBarrier + 1, 2 * kWarpGroupThreads);
      }
    }
  }
};

}  // namespace schedlab::kernels::hopper_detail
