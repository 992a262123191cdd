// The online softmax of FlashAttention (Dao 2023, arXiv 2307.08691, Algorithm 1 lines 9-12)
// on a warp's score tiles: per query row a running max m and sum l, updated tile by tile,
// the factor the O accumulator is rescaled by, and the final 1 / l. Scores live in the log2
// domain (the softmax scale times log2(e) folds into one FFMA before exp2).
//
// T is the architecture's warp tile (common/gpu/attention_tile.hpp): which rows and keys a
// lane's accumulator elements belong to (row, col, kRowSlots, kPerSlot), the reductions over
// the lanes sharing a row, and how P is packed for the PV product. Nothing here derives a
// row from the warp's place in the CTA: the caller passes each m16 tile's first query row,
// since with a producer warp(group) the consumers' warp ids do not start at zero.
#pragma once
#include <cmath>
#include <cstdint>

#include "common/gpu/device.hpp"
#include "common/gpu/warp_mma.hpp"

namespace schedlab::kernels::attention {

// What the online softmax of a warp's rows does beyond the plain algorithm. The functions
// below take any type with these two members as their Rescale (a family's config does).
template <float kRescaleThresholdT, bool kSkipUnitRescaleT>
struct RescalePolicy {
  // > 0 (FA4): a row keeps its stale max until the new one exceeds it by more than this (log2
  // units), and O *= corr is skipped unless some row of the warp moved its max.
  static constexpr float kRescaleThreshold = kRescaleThresholdT;
  // Branch around O *= corr when no row of this lane saw a larger max (corr is exactly 1).
  static constexpr bool kSkipUnitRescale = kSkipUnitRescaleT;
};

// The lane's rows of kMTiles m16 tiles: running max (log2 domain), this lane's share of the
// running sum, and the O accumulator fragments the softmax rescales.
template <class T, int kMTiles>
struct RowState {
  static constexpr int kSlots = T::kRowSlots;
  float m[kMTiles][kSlots];
  float l[kMTiles][kSlots];
  float o[kMTiles][T::kOTiles][4];
  __device__ RowState() {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int r = 0; r < kSlots; ++r) m[mt][r] = -INFINITY;
#pragma unroll
      for (int r = 0; r < kSlots; ++r) l[mt][r] = 0.f;
#pragma unroll
      for (int n = 0; n < T::kOTiles; ++n) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.f;
    }
  }
};

// How a family writes the softmax of a row, beyond the plain algorithm: members of the Form
// (a family's config) that the functions below read, each optional, the first form when absent.
//   kRowChains (1): independent max and sum chains per row slot, chain c taking the n8 tiles
//     n with n % kRowChains == c, folded at the end: shorter dependency chains for long rows.
//   kFoldSum (false): the tile's exponentials are summed apart and added once, l = l corr +
//     sum, after both row slots' maxima; otherwise each slot's l is rescaled first and takes
//     each n8 tile's part as its exponentials are computed.
//   kRowLimitMask (false): a masked tile compares each key with its row's first invisible key,
//     computed once per row slot, the mask causal when Form::kCausal (known at compile time);
//     otherwise each element is tested against kv_len and the runtime a.causal.
template <class F>
inline constexpr int kRowChainsOf = [] {
  if constexpr (requires { F::kRowChains; }) return int(F::kRowChains);
  else return 1;
}();
template <class F>
inline constexpr bool kFoldSumOf = [] {
  if constexpr (requires { F::kFoldSum; }) return bool(F::kFoldSum);
  else return false;
}();
template <class F>
inline constexpr bool kRowLimitMaskOf = [] {
  if constexpr (requires { F::kRowLimitMask; }) return bool(F::kRowLimitMask);
  else return false;
}();

// One row's running max m meets the max of a new score tile, both in the log2 domain: m moves
// to the larger (thresholded: only past kThreshold above it, FA4's stale max), and the step
// gives the factor the row's sum and O are rescaled by and the offset its exponentials
// subtract. A row with no visible key so far keeps m = -inf; m_use is then a finite stand-in,
// so that no inf - inf is taken and every exponential of the row is 0. Every family's softmax
// moves its maxima through this step, however it reduces and masks its scores.
struct MaxStep {
  float corr;   // exp2(m_old - m_use): 1 where the max stayed, 0 on a row's first visible key
  float m_use;  // the offset of this tile's exponentials
};
template <float kThreshold = 0.f>
__device__ __forceinline__ MaxStep advance_max(float& m, float tile_max) {
  float m_new = fmaxf(m, tile_max);
  // Thresholded: the stale max stays while the new one is within the threshold above it (a
  // row's first visible key always moves it from -inf).
  if constexpr (kThreshold > 0.f) m_new = m_new > m + kThreshold ? m_new : m;
  const float m_use = m_new == -INFINITY ? 0.f : m_new;
  const MaxStep step{gpu::mma::fast_exp2(m - m_use), m_use};
  m = m_new;
  return step;
}

// The factor a row of O is multiplied by at the end, o_scale / l (o_scale: a dequantization
// scale of V, else 1), from the row's whole sum l. A row that saw no key has l = 0 and is
// written as zeros, as the reference does.
__device__ __forceinline__ float inverse_sum(float l, float o_scale = 1.f) { return l > 0.f ? o_scale / l : 0.f; }

// A row's log-sum-exp in the log2 domain, from its running max and whole sum: the weight of a
// partial row when the partials of one row are merged (split-KV decode). -inf for a row that
// saw no key, so that such a partial weighs nothing.
__device__ __forceinline__ float row_lse(float m, float l) { return l > 0.f ? m + log2f(l) : -INFINITY; }

// One m16 tile: masks (kMask: the tile crosses the causal diagonal or the end of the keys),
// updates the running max and sum, and gives the factor O is rescaled by (corr); S becomes P
// = exp2(S scale - m) in place. Element i of accumulator tile n belongs to row slot
// i / kPerSlot; T::row / T::col give its query row (from q_row0, the tile's first row) and
// key (from key0, the tile's first key).
// The mask is bottom-right aligned causal attention and the end of the keys
// (common/problem.hpp): key k is visible to query row r when k < kv_len and, causal,
// k <= r + kv_len - q_len. Args is anything with the fields the mask reads (kv_len, q_len,
// and causal unless the Form's row limit fixes it), in practice the kernel's parameter block,
// read in place so they stay in kernel-parameter space. The per-element test is written out
// here rather than in a mask type's member function: inlined later, that form changed the
// register-tile kernels' SASS (other compare forms, an 8-byte spill at head dim 128).
// Gate (kFoldSum only): before_exps(m) once the rows' maxima are known (m: each row slot's
// offset, which every exponential reads, so a gate can tie them after it), after_exps(sum)
// once every exponential is computed (sum: the tile's row sums, which read each of them); a
// family may hold its warpgroups' exponentials apart there (NoGate: nothing).
struct NoGate {
  template <class M>
  __device__ void before_exps(M&) const {}
  template <class Sum>
  __device__ void after_exps(const Sum&) const {}
};
template <class T, class Form, bool kMask, class Args, class Gate = NoGate>
__device__ __forceinline__ void softmax_rows(float (&s)[T::kSTiles][4], float (&m)[T::kRowSlots], float (&l)[T::kRowSlots],
                                             float (&corr)[T::kRowSlots], const Args& a, float scale_log2, int key0,
                                             int q_row0, const Gate& gate = {}) {
  constexpr int kSlots = T::kRowSlots, kPer = T::kPerSlot, kChains = kRowChainsOf<Form>;
  static_assert(kSlots * kPer == 4, "an accumulator tile holds 4 elements per lane");
  static_assert(T::kSTiles % kChains == 0, "whole n8 tiles per chain");
  float tile_max[kSlots][kChains];
#pragma unroll
  for (int r = 0; r < kSlots; ++r)
#pragma unroll
    for (int c = 0; c < kChains; ++c) tile_max[r][c] = -INFINITY;
  [[maybe_unused]] int limit[kSlots];  // kRowLimitMask: the first invisible key of each row slot, from key0
  if constexpr (kMask && kRowLimitMaskOf<Form>) {
#pragma unroll
    for (int r = 0; r < kSlots; ++r)
      limit[r] = (Form::kCausal ? min(a.kv_len, T::row(q_row0, r * kPer) + a.kv_len - a.q_len + 1) : a.kv_len) - key0;
  }
#pragma unroll
  for (int n = 0; n < T::kSTiles; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (kMask && kRowLimitMaskOf<Form>) {
        s[n][i] = T::col(0, n, i) < limit[i / kPer] ? s[n][i] : -INFINITY;
      } else if constexpr (kMask) {
        const int q_row = T::row(q_row0, i), key = T::col(key0, n, i);
        const bool visible = key < a.kv_len && (!a.causal || key <= q_row + a.kv_len - a.q_len);
        if (!visible) s[n][i] = -INFINITY;
      }
      tile_max[i / kPer][n % kChains] = fmaxf(tile_max[i / kPer][n % kChains], s[n][i]);
    }
  [[maybe_unused]] float m_rows[kSlots];  // kFoldSum: each slot's max as the exponentials use it
#pragma unroll
  for (int r = 0; r < kSlots; ++r) {
#pragma unroll
    for (int c = 1; c < kChains; ++c) tile_max[r][0] = fmaxf(tile_max[r][0], tile_max[r][c]);
    tile_max[r][0] = T::row_max(tile_max[r][0]);  // the lanes sharing the row
    const MaxStep step = advance_max<Form::kRescaleThreshold>(m[r], tile_max[r][0] * scale_log2);
    const float m_use = step.m_use;
    corr[r] = step.corr;
    if constexpr (kFoldSumOf<Form>) {
      m_rows[r] = m_use;
    } else {
      l[r] *= corr[r];
#pragma unroll
      for (int n = 0; n < T::kSTiles; ++n) {
#pragma unroll
        for (int e = 0; e < kPer; ++e) s[n][kPer * r + e] = gpu::mma::fast_exp2(fmaf(s[n][kPer * r + e], scale_log2, -m_use));
        float part = s[n][kPer * r];
#pragma unroll
        for (int e = 1; e < kPer; ++e) part += s[n][kPer * r + e];
        l[r] += part;
      }
    }
  }
  if constexpr (kFoldSumOf<Form>) {
    gate.before_exps(m_rows);
    float sum[kSlots][kChains];
#pragma unroll
    for (int r = 0; r < kSlots; ++r)
#pragma unroll
      for (int c = 0; c < kChains; ++c) sum[r][c] = 0.f;
#pragma unroll
    for (int n = 0; n < T::kSTiles; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        s[n][i] = gpu::mma::fast_exp2(fmaf(s[n][i], scale_log2, -m_rows[i / kPer]));
        sum[i / kPer][n % kChains] += s[n][i];
      }
    gate.after_exps(sum);
#pragma unroll
    for (int r = 0; r < kSlots; ++r) {
#pragma unroll
      for (int c = 1; c < kChains; ++c) sum[r][0] += sum[r][c];
      l[r] = l[r] * corr[r] + sum[r][0];
    }
  }
}

// softmax_rows, then P packed as the PV product's fragments.
template <class T, class Op, class Form, bool kMask, class Args, int kPvSteps>
__device__ __forceinline__ void update_rows(float (&s)[T::kSTiles][4], float (&m)[T::kRowSlots], float (&l)[T::kRowSlots],
                                            float (&corr)[T::kRowSlots], std::uint32_t (&pa)[kPvSteps][T::kPWords],
                                            const Args& a, float scale_log2, int key0, int q_row0) {
  softmax_rows<T, Form, kMask>(s, m, l, corr, a, scale_log2, key0, q_row0);
  T::template pack_p<Op>(pa, s);
}

// O *= corr on one m16 tile's accumulators: its n8 C tiles, element i in row slot i / kPerSlot.
// Whether to rescale at all is the caller's: a family gates it on its own test.
template <int kPerSlot, int kOTiles, int kSlots>
__device__ __forceinline__ void scale_o_rows(float (&o)[kOTiles][4], const float (&corr)[kSlots]) {
  static_assert(kSlots * kPerSlot == 4, "an accumulator tile holds 4 elements per lane");
#pragma unroll
  for (int n = 0; n < kOTiles; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) o[n][i] *= corr[i / kPerSlot];
}

// O *= corr for every m16 tile, after all their updates: one straight-line block, so the
// tiles' independent max / exp2 / sum chains can interleave, and at most one branch.
// Thresholded, the branch is warp-uniform and, after the first tiles, almost never taken.
template <class T, class Rescale, int kMTiles>
__device__ __forceinline__ void rescale_o(RowState<T, kMTiles>& st, const float (&corr)[kMTiles][T::kRowSlots]) {
  constexpr bool kThresholded = Rescale::kRescaleThreshold > 0.f;
  constexpr int kPer = T::kPerSlot;
  bool rescale = !Rescale::kSkipUnitRescale && !kThresholded;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < T::kRowSlots; ++r) rescale = rescale || corr[mt][r] != 1.f;
  if constexpr (kThresholded) rescale = gpu::warp_any(rescale);
  if (rescale) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) scale_o_rows<kPer>(st.o[mt], corr[mt]);
  }
}

// The online softmax of one score tile of the warp's kMTiles m16 tiles, rows from row0 (the
// warp's first query row), masked as update_rows says: S becomes P (packed into pa), m and l
// move on, O is rescaled.
template <class T, class Op, class Rescale, bool kMask, class Args, int kMTiles, int kPvSteps>
__device__ __forceinline__ void online_softmax(float (&s)[kMTiles][T::kSTiles][4], RowState<T, kMTiles>& st,
                                               std::uint32_t (&pa)[kMTiles][kPvSteps][T::kPWords], const Args& a,
                                               float scale_log2, int key0, int row0) {
  float corr[kMTiles][T::kRowSlots];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
    update_rows<T, Op, Rescale, kMask>(s[mt], st.m[mt], st.l[mt], corr[mt], pa[mt], a, scale_log2, key0,
                                       row0 + mt * T::kMmaRows);
  rescale_o<T, Rescale>(st, corr);
}

// Final normalisation of row slot r of m16 tile mt: inverse_sum of the row's sum over its lanes.
template <class T, int kMTiles>
__device__ __forceinline__ float row_normalizer(const RowState<T, kMTiles>& st, int mt, int r, float o_scale) {
  return inverse_sum(T::row_sum(st.l[mt][r]), o_scale);
}

}  // namespace schedlab::kernels::attention
