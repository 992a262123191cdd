// The end of a unit inside its CTA: the warps' rows merged in shared memory and written, and a
// token-balanced unit's partials merged by its last chunk to finish.
#pragma once
#include "kernels/decode/decode_warp_math.cuh"

namespace schedlab::kernels::decode_detail {

// Who takes part in a CTA's closing steps (finish_unit): every thread (kThreads 0, barrier 0),
// or the kThreads computing threads alone through a named barrier, once producer warps have left.
template <int kThreads>
struct CtaSync {
  static constexpr int kBarrier = DecodeBarrier::kCtaClose;
  static __device__ __forceinline__ void sync() {
    if constexpr (kThreads == 0) {
      gpu::block_sync();
    } else {
#if SCHEDLAB_GPU_HAS_WGMMA
      gpu::named_barrier_sync(kBarrier, kThreads);
#endif
    }
  }
  static __device__ __forceinline__ int threads() { return kThreads == 0 ? int(blockDim.x) : kThreads; }
  template <int kWarpsIfAll>
  static constexpr int kWarps = kThreads == 0 ? kWarpsIfAll : kThreads / kWarpSize;
  // Whether `pred` holds on thread 0 (the others pass false), seen by every participant; `word`:
  // a shared word no participant reads or writes meanwhile.
  static __device__ __forceinline__ bool thread0_says(bool pred, int* word) {
    if constexpr (kThreads == 0) {
      return gpu::block_any_in_spent_smem(pred);
    } else {
      if (threadIdx.x == 0) *word = pred;
      sync();
      return *word != 0;
    }
  }
};

// Each warp writes its (m, l, O) rows; the CTA merges them and writes the final output
// (`whole`: the CTA saw every key of its rows) or a normalized partial with its log-sum-exp.
// With row tiles, warp w holds rows 16 (w % kRowTiles) .. + 15 of the CTA's `rows`, and the
// warps holding the same rows are merged.
// Columns: the tile whose o_column maps the accumulator's n8 tiles to head-dim columns (the
// warp body's fp8 PV permutes them; the warpgroup body's are in order for every KV type).
template <class Policy, DType kKv, int kHeadDim, int kRowTiles = 1, class Columns = Tile<kKv, kHeadDim>,
          class Sync = CtaSync<0>>
__device__ void combine_warps(Softmax<kHeadDim>& st, float* smem, const Params& a, int seq, int kvh, int split,
                              int head0, int rows, bool whole) {
  constexpr int kStride = kHeadDim + 2;  // O row, then m and l
  constexpr int kSameRows = kWarpsOf<Policy, kKv> / kRowTiles;  // warps holding each row
  const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
  float* mine = smem + gpu::warp_id() * kDecodeMaxGroup * kStride;
  const int my_rows = rows - kDecodeMaxGroup * (gpu::warp_id() % kRowTiles);
  using E = Element<kQueryType<kKv>>;
  if constexpr (kSameRows == 1 && !kOnWarpTile) {
    // Every row is one warp's (row tiles, a warp per 16-row tile): nothing to merge, so each
    // lane writes its own columns of O straight from its registers, scaled once per row. The
    // round trip through shared memory below, an exp2 and a division per element, was about a
    // tenth of fp8 MQA's warp samples on the H200 (experiments/decode_work_partition/LOG.md).
    const float v_scale = a.v_scale ? a.v_scale[kvh] : 1.f;
    const int row_base = kDecodeMaxGroup * (gpu::warp_id() % kRowTiles);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = st.l[r];
      l += gpu::shfl_xor(l, 1);
      l += gpu::shfl_xor(l, 2);
      const int row = g + 8 * r;
      if (row >= my_rows) continue;
      const int head = head0 + row_base + row;
      const float inv = inverse_sum(l, v_scale);
      if (whole) {
        auto* o = static_cast<typename E::storage*>(a.o) + (std::size_t(seq) * a.q_heads + head) * kHeadDim;
#pragma unroll
        for (int n = 0; n < kHeadDim / 8; ++n)
#pragma unroll
          for (int c = 0; c < 2; ++c) E::store(o, Columns::o_column(n, 2 * t + c), st.o[n][2 * r + c] * inv);
      } else {
        const std::size_t slot = (std::size_t(seq) * a.q_heads + head) * a.num_splits + split;
        float* o = a.partial_o + slot * kHeadDim;
#pragma unroll
        for (int n = 0; n < kHeadDim / 8; ++n) {
          if constexpr (!Columns::kFp8) {  // columns in order: a lane's pair is adjacent
            *reinterpret_cast<float2*>(o + n * 8 + 2 * t) = float2{st.o[n][2 * r] * inv, st.o[n][2 * r + 1] * inv};
          } else {
#pragma unroll
            for (int c = 0; c < 2; ++c) o[Columns::o_column(n, 2 * t + c)] = st.o[n][2 * r + c] * inv;
          }
        }
        // A lost-split fault writes the middle split's partial with no weight in the combine.
        const bool lost = Policy::kFault == DecodeFault::lose_split && split == a.num_splits / 2;
        if (t == 0) a.partial_lse[slot] = lost ? -INFINITY : row_lse(st.m[r], l);
      }
    }
    return;
  }
  if constexpr (kOnWarpTile) {
    stash_rows_on_tile<kKv, kHeadDim>(st, mine, kStride, my_rows);
  } else {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      st.l[r] += gpu::shfl_xor(st.l[r], 1);
      st.l[r] += gpu::shfl_xor(st.l[r], 2);
      const int row = g + 8 * r;
      if (row >= my_rows) continue;
#pragma unroll
      for (int n = 0; n < kHeadDim / 8; ++n) {
        mine[row * kStride + Columns::o_column(n, 2 * t)] = st.o[n][2 * r];
        mine[row * kStride + Columns::o_column(n, 2 * t + 1)] = st.o[n][2 * r + 1];
      }
      if (t == 0) {
        mine[row * kStride + kHeadDim] = st.m[r];
        mine[row * kStride + kHeadDim + 1] = st.l[r];
      }
    }
  }
  Sync::sync();
  const float v_scale = a.v_scale ? a.v_scale[kvh] : 1.f;
  for (int idx = threadIdx.x; idx < rows * kHeadDim; idx += Sync::threads()) {
    const int row = idx / kHeadDim, d = idx % kHeadDim;
    const int tile = kRowTiles == 1 ? 0 : row / kDecodeMaxGroup, tile_row = row - kDecodeMaxGroup * tile;
    auto at = [&](int i) { return smem + ((i * kRowTiles + tile) * kDecodeMaxGroup + tile_row) * kStride; };
    float m = -INFINITY;
    for (int i = 0; i < kSameRows; ++i) m = fmaxf(m, at(i)[kHeadDim]);
    float l = 0.f, o = 0.f;
    if (m != -INFINITY) {
      for (int i = 0; i < kSameRows; ++i) {
        const float* r = at(i);
        const float c = gpu::mma::fast_exp2(r[kHeadDim] - m);
        l += r[kHeadDim + 1] * c;
        o += r[d] * c;
      }
    }
    const int head = head0 + row;
    const float out = l > 0.f ? o * v_scale / l : 0.f;  // no visible key: zeros, as the reference
    if (whole) {
      E::store(static_cast<typename E::storage*>(a.o), (std::size_t(seq) * a.q_heads + head) * kHeadDim + d, out);
    } else {
      const std::size_t slot = (std::size_t(seq) * a.q_heads + head) * a.num_splits + split;
      a.partial_o[slot * kHeadDim + d] = out;
      // A lost-split fault writes the middle split's partial with no weight in the combine.
      const bool lost = Policy::kFault == DecodeFault::lose_split && split == a.num_splits / 2;
      if (d == 0) a.partial_lse[slot] = lost ? -INFINITY : row_lse(m, l);
    }
  }
}

// Token-balanced chunks merge their own partials: every CTA of a unit counts its arrival on the
// unit's counter once its partial is visible, and the last to arrive merges the unit's rows
// with weights 2^(lse - max lse), one warp per row and the columns over the lanes, and leaves
// the counter zero for the next launch. This replaces the split combine's second kernel, whose
// launch and wave (one CTA per sequence and head) were about a tenth of the one-long fp8
// batch's time on the H200.
// The partials of a unit: a token-balanced plan's own count per unit (negated where the combine
// kernel merges them: never 1, never above 1, so neither a whole output nor a merge here), else
// the grid's splits.
template <class Policy>
__device__ __forceinline__ int unit_parts(const Params& a, int unit) {
  if constexpr (Policy::Partition::kTileSchedule == TileSchedule::token_balanced)
    if (a.unit_partials) return a.unit_partials[unit];
  return a.num_splits;
}
// One query row (row: sequence x q_heads + head) merged by one warp: its `parts` partials
// weighted by 2^(lse - max lse), the columns over the lanes, then normalized into O. Coherent
// loads: the partials may come from other CTAs of the same kernel.
template <DType kQ, int kHeadDim>
__device__ __forceinline__ void merge_row_in_warp(const Params& a, std::size_t row, int parts) {
  constexpr int kCols = kHeadDim / kWarpSize;  // consecutive columns per lane
  const int lane = gpu::lane_id();
  const std::size_t slot0 = row * a.num_splits;
  float m = -INFINITY;
  for (int sp = lane; sp < parts; sp += kWarpSize) m = fmaxf(m, gpu::load_coherent(a.partial_lse + slot0 + sp));
  for (int off = kWarpSize / 2; off > 0; off /= 2) m = fmaxf(m, gpu::shfl_xor(m, off));
  float o[kCols] = {}, wsum = 0.f;
  if (m != -INFINITY) {
#pragma unroll 4
    for (int sp = 0; sp < parts; ++sp) {
      const float wgt = gpu::mma::fast_exp2(gpu::load_coherent(a.partial_lse + slot0 + sp) - m);
      const float* src = a.partial_o + (slot0 + sp) * kHeadDim + lane * kCols;
      wsum += wgt;
#pragma unroll
      for (int c = 0; c < kCols; ++c) o[c] += wgt * gpu::load_coherent(src + c);
    }
  }
  using E = Element<kQ>;
#pragma unroll
  for (int c = 0; c < kCols; ++c)  // no visible key: zeros, as the reference
    E::store(static_cast<typename E::storage*>(a.o), row * kHeadDim + lane * kCols + c, wsum > 0.f ? o[c] / wsum : 0.f);
}
template <class Policy, DType kKv, int kHeadDim, class Sync = CtaSync<0>>
__device__ void merge_unit_if_last(const Params& a, int unit, int seq, int head0, int rows, int parts, int* word) {
  gpu::fence_device();  // this thread's partial is visible before the CTA's arrival is counted
  Sync::sync();
  bool last = false;
  if (threadIdx.x == 0) {
    last = atomicAdd(a.schedule + unit, 1) == parts - 1;
    if (last) gpu::fence_device();  // acquire: the partials counted before this arrival are visible
  }
  // The verdict reaches every thread through the barrier itself (__syncthreads_or; on AMD,
  // whose device library's keeps LDS of its own, through the shared memory, done with here):
  // a static shared word would pad every decode kernel's shared memory.
  if (!Sync::thread0_says(last, word)) return;
  for (int row = gpu::warp_id(); row < rows; row += Sync::template kWarps<kWarpsOf<Policy, kKv>>)
    merge_row_in_warp<kQueryType<kKv>, kHeadDim>(a, std::size_t(seq) * a.q_heads + head0 + row, parts);
  if (threadIdx.x == 0) a.schedule[unit] = 0;
}

}  // namespace schedlab::kernels::decode_detail
