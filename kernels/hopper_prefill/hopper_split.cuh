// Where the pieces of a split tile meet (Config::kSplitTail; the split is attention/split_tail.hpp's).
// Each consumer warp of each piece writes its rows' partial state (O unnormalized, running max
// and sum) to its slot, then counts itself in with an atomic add per (split tile, warp); the
// warp that arrives last merges the other pieces' slots into its registers and writes the rows
// as an unsplit tile does. No warp waits for another, so the pieces may run in any order on any
// CTAs. The same kernel computes every piece, so a lane holds the same rows and columns in each:
// a slot is the lanes' registers as they are (a float4 of 32 lanes, 512 contiguous bytes, per
// store), whatever the accumulators' layout (fp8's paired columns included).
#pragma once
#include "kernels/hopper_prefill/hopper_config.cuh"

namespace schedlab::kernels::hopper_detail {

template <class Cfg>
struct PieceMeeting {
  static constexpr int kOQuads = Cfg::kORegs / 4;  // float4s of a lane's O
  static constexpr int kQuads = kOQuads + 1;       // then its two rows' max and sum
  static_assert(Cfg::kORegs % 4 == 0 && Cfg::Rows::kRowSlots == 2, "O in float4s, two rows a lane");
  // The floats of the partials buffer a launch needs.
  static std::size_t floats(const attention::SplitTail& split) {
    return std::size_t(split.split_tiles) * split.max_pieces() * Cfg::kConsumerWarps * kQuads * 4 * kWarpSize;
  }
  // The lane's float4s of a slot, kWarpSize apart. The lane index is read afresh: threadIdx.x % 32,
  // shared with the key-tile loop's uses, made ptxas schedule Fp8Meet's loop otherwise (the 128
  // exp2s in one run, P's converts after them rather than among them: 7% slower).
  static __device__ float4* slot(const Params& a, const attention::SplitUnit& u, int piece, int warp) {
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;\n" : "=r"(lane));
    const std::size_t at = (std::size_t(u.split_tile) * a.max_pieces + piece) * Cfg::kConsumerWarps + warp;
    return reinterpret_cast<float4*>(a.partials) + at * kQuads * kWarpSize + lane;
  }

  // Piece u.piece of its tile by consumer warp `warp` (0 .. kConsumerWarps - 1): true once st
  // holds the whole tile's rows (this warp was the last of the pieces), false otherwise.
  template <class State>
  static __device__ bool arrive(const Params& a, const attention::SplitUnit& u, int warp, State& st) {
    float4* mine = slot(a, u, u.piece, warp);
#pragma unroll
    for (int q = 0; q < kOQuads; ++q) {
      const float(&c)[4] = st.o[0][q];
      mine[q * kWarpSize] = make_float4(c[0], c[1], c[2], c[3]);
    }
    mine[kOQuads * kWarpSize] = make_float4(st.m[0][0], st.m[0][1], st.l[0][0], st.l[0][1]);
    __threadfence();  // the slot is visible device-wide before the count says so
    // Every lane counts itself in, 32 a warp (no branch by lane, no lane index: slot() says why).
    unsigned* count = a.arrivals + u.split_tile * Cfg::kConsumerWarps + warp;
    const unsigned before = atomicAdd(count, 1u);
    if (!gpu::warp_any(before == unsigned(kWarpSize * u.pieces - 1))) return false;
    *count = 0u;  // every piece is in: zero for the next launch (every lane writes the one word)
    __threadfence();
    if constexpr (Cfg::kFault != HopperFault::split_pieces_unmerged) merge_others(a, u, warp, st);
    return true;
  }

  // The other pieces' slots merged into st: each row's O and sum rescaled to the larger max.
  template <class State>
  static __device__ void merge_others(const Params& a, const attention::SplitUnit& u, int warp, State& st) {
    for (int p = 0; p < u.pieces; ++p) {
      if (p == u.piece) continue;
      const float4* other = slot(a, u, p, warp);
      const float4 ml = __ldcg(other + kOQuads * kWarpSize);  // from L2: another SM wrote it
      const float m_other[2] = {ml.x, ml.y}, l_other[2] = {ml.z, ml.w};
      float mine_by[2], other_by[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float m_new = fmaxf(st.m[0][r], m_other[r]);
        const float use = m_new == -INFINITY ? 0.f : m_new;  // rows that saw no key keep zeros
        mine_by[r] = exp2f(st.m[0][r] - use);
        other_by[r] = exp2f(m_other[r] - use);
        st.l[0][r] = st.l[0][r] * mine_by[r] + l_other[r] * other_by[r];
        st.m[0][r] = m_new;
      }
#pragma unroll
      for (int q = 0; q < kOQuads; ++q) {
        const float4 v = __ldcg(other + q * kWarpSize);
        const float in[4] = {v.x, v.y, v.z, v.w};
        // Element i of an m16n8 C tile is row slot i / 2 (float4 q is C tile q).
#pragma unroll
        for (int i = 0; i < 4; ++i) st.o[0][q][i] = st.o[0][q][i] * mine_by[i / 2] + in[i] * other_by[i / 2];
      }
    }
  }
};

}  // namespace schedlab::kernels::hopper_detail
