// The kernels: the decode kernel's entry (which body a launch runs) and the combine kernel that
// merges the partials of split units.
#pragma once
#include "kernels/decode/decode_persistent.cuh"

namespace schedlab::kernels::decode_detail {

// The body a kernel runs: the (split or chunk, KV head x chunk, sequence) grid of 16-row units,
// the persistent grid, or the same grid over units of several row tiles (a group above 16),
// computed by warps or by the CTA as one warpgroup (Policy::RowTiles::kRowTileMma).
enum class DecodeBody { split, dynamic, row_tiles, warpgroup_rows };
// The body of a group above 16 under this policy and KV type.
template <class Policy, DType kKv>
inline constexpr DecodeBody kRowTileBody = kWarpgroupRows<Policy, kKv> ? DecodeBody::warpgroup_rows : DecodeBody::row_tiles;
// Threads of a body's CTA: the warpgroup body's producer warps are a second warpgroup.
template <class Policy, DType kKv, DecodeBody kBody>
inline constexpr int kThreadsOf =
    kWarpsOf<Policy, kKv> * kWarpSize * (kBody == DecodeBody::warpgroup_rows && kFp8Producers<Policy, kKv> ? 2 : 1);
template <class Policy, DType kKv, int kHeadDim, DecodeBody kBody>
inline constexpr int kSmemBytes =
    kBody == DecodeBody::warpgroup_rows ? GroupSmem<Policy, kKv, kHeadDim>::kBytes : Smem<Policy, kKv, kHeadDim>::kBytes;
// The plan reads the same layouts on the host for the device's architecture
// (decode_smem_bytes): on every architecture this build holds, what it picks and what is
// compiled here must be the same storage.
template <class Policy, DType kKv, int kHeadDim, DecodeBody kBody>
constexpr bool smem_counted_on_host() {
  constexpr bool kGroupBody = kBody == DecodeBody::row_tiles || kBody == DecodeBody::warpgroup_rows;
  for (gpu::GpuArch arch : gpu::kBuildArchs)
    if (decode_smem_bytes<Policy>(kHeadDim, kKv, arch, kGroupBody) != kSmemBytes<Policy, kKv, kHeadDim, kBody>) return false;
  return true;
}

template <class Policy, DType kKv, int kHeadDim, DecodeBody kBody, class Dyn>
__global__ void __launch_bounds__((kThreadsOf<Policy, kKv, kBody>),
                                  (kBody == DecodeBody::row_tiles || kBody == DecodeBody::warpgroup_rows
                                       ? Policy::RowTiles::kMinCtasPerSmRowTiles
                                       : kMinCtas<Policy, kKv>))
    paged_decode_kernel(const SCHEDLAB_GRID_CONSTANT Params a) {
  static_assert(Dyn::kBytes == kSmemBytes<Policy, kKv, kHeadDim, kBody>, "launch and kernel disagree on shared memory");
  static_assert(smem_counted_on_host<Policy, kKv, kHeadDim, kBody>(), "decode_smem_bytes and the storage disagree");
  SCHEDLAB_CTA_TIMELINE_RECORD(a.timeline, 0);
  extern __shared__ __align__(1024) unsigned char smem[];  // 1024: the 128-byte swizzle's period (bulk copies, wgmma)
  gpu::WaitProbe probe;
  if constexpr (kBody == DecodeBody::dynamic) decode_dynamic<Policy, kKv, kHeadDim>(a, smem, probe);
  else if constexpr (kBody == DecodeBody::row_tiles) decode_row_tiles<Policy, kKv, kHeadDim>(a, smem, probe);
#if SCHEDLAB_GPU_HAS_WGMMA
  else if constexpr (kBody == DecodeBody::warpgroup_rows) decode_warpgroup_rows<Policy, kKv, kHeadDim>(a, smem, probe);
#endif
  else decode_split<Policy, kKv, kHeadDim>(a, smem, probe);
  probe.flush(a.probe_slots);
}

// Warps of a split combine CTA.
inline constexpr int kCombineWarps = 8;

// A row of many partials merged by a CTA (the combine row list's CTA rows): warp w takes
// partials w, w + kCombineWarps, ..., kInFlight of them at a time, all loaded before any
// arithmetic, and keeps its own running maximum (rescaling what it summed when the maximum
// grows); the warps' sums are then rescaled to the row's maximum in shared memory. At most
// kCombineWarps x kInFlight partials (128) take one round of loads.
template <DType kQ, int kHeadDim>
__device__ void merge_row_in_cta(const Params& a, std::size_t row, int parts, float (*part)[kHeadDim + 1],
                                 float* warp_max) {
  constexpr int kCols = kHeadDim / kWarpSize, kInFlight = 16;
  const int w = gpu::warp_id(), lane = gpu::lane_id();
  const std::size_t slot0 = row * a.num_splits;
  float m = -INFINITY, wsum = 0.f, o[kCols] = {};
  for (int base = w; base < parts; base += kCombineWarps * kInFlight) {
    float lse[kInFlight], v[kInFlight][kCols];
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      const int sp = base + i * kCombineWarps;
      lse[i] = sp < parts ? a.partial_lse[slot0 + sp] : -INFINITY;
#pragma unroll
      for (int c = 0; c < kCols; ++c) v[i][c] = sp < parts ? a.partial_o[(slot0 + sp) * kHeadDim + lane * kCols + c] : 0.f;
    }
    float mx = m;
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) mx = fmaxf(mx, lse[i]);
    if (mx == -INFINITY) continue;  // no visible key in these partials
    const float keep = gpu::mma::fast_exp2(m - mx);  // 0 while m is -inf
    wsum *= keep;
#pragma unroll
    for (int c = 0; c < kCols; ++c) o[c] *= keep;
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      const float wgt = gpu::mma::fast_exp2(lse[i] - mx);  // 0 past the row's partials
      wsum += wgt;
#pragma unroll
      for (int c = 0; c < kCols; ++c) o[c] += wgt * v[i][c];
    }
    m = mx;
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c) part[w][lane * kCols + c] = o[c];
  if (lane == 0) {
    part[w][kHeadDim] = wsum;
    warp_max[w] = m;
  }
  gpu::block_sync();
  float mx = -INFINITY;
  for (int i = 0; i < kCombineWarps; ++i) mx = fmaxf(mx, warp_max[i]);
  using E = Element<kQ>;
  for (int d = threadIdx.x; d < kHeadDim; d += blockDim.x) {
    float sum = 0.f, weights = 0.f;
    if (mx != -INFINITY)
      for (int i = 0; i < kCombineWarps; ++i) {
        const float scale = gpu::mma::fast_exp2(warp_max[i] - mx);  // 0 for a warp with no visible key
        sum += scale * part[i][d];
        weights += scale * part[i][kHeadDim];
      }
    E::store(static_cast<typename E::storage*>(a.o), row * kHeadDim + d, weights > 0.f ? sum / weights : 0.f);
  }
}

// The split combine: one CTA per (sequence, head) merges its splits with weights
// 2^(lse_s - max lse). The splits are spread over the warps and the columns over the lanes,
// so no thread walks all the partials in series (a per-CTA timeline at batch 1, 64k, 33
// splits, showed 11 us outside the decode CTAs, most of it the old one-thread-per-column
// walk). Launched dependent on the decode kernel: its launch overlaps that kernel's tail.
// kRowTiles: units of 16 x a.row_tiles query heads (the row-tile body's), else of 16.
// kWarpPerRow (DecodePolicy::Merge::kCombineWarpPerRow): a row of at most kWarpRowParts partials is
// merged by one warp instead, walking them in series (merge_row_in_warp), the first
// ceil(heads / kCombineWarps) CTAs of a sequence holding a warp per head; the CTAs after them,
// one per head and launched only where the plan has a row of more partials, merge only those
// rows and return at once for the others. For
// many rows of few partials, where a CTA per row leaves most of its warps idle and its grid of
// batch x heads CTAs (2048 at group 32, batch 32) takes more than one wave.
// kRowList (DecodePolicy::Merge::kCombineRowList, with kWarpPerRow): the grid is the plan's row list,
// a CTA for each of its first a.combine_cta_rows rows, then a warp for each of the others.
template <DType kQ, int kHeadDim, bool kRowTiles, bool kWarpPerRow = false, int kWarpRowParts = 0,
          bool kRowList = false>
__global__ void __launch_bounds__(kCombineWarps * kWarpSize) decode_combine_kernel(Params a) {
  SCHEDLAB_CTA_TIMELINE_RECORD(a.timeline, 1);
  constexpr int kCols = kHeadDim / kWarpSize;  // consecutive columns per lane
  static_assert(kHeadDim % kWarpSize == 0, "whole columns per lane");
  static_assert(!kRowList || kWarpPerRow, "a row list is of warp and CTA rows");
  using E = Element<kQ>;
  __shared__ float part[kCombineWarps][kHeadDim + 1];  // per warp: weighted O sum, then the weight sum
  __shared__ float warp_max[kCombineWarps];
  // The row list comes from the host, not the decode kernel: with it, this CTA finds its row
  // and its partial count while the decode grid may still be running.
  if constexpr (!kRowList) gpu::wait_prior_grid();  // the decode kernel's partials are complete and visible
  // With warps per row the grid is (sequence, slice) so that the CTAs of one row each, which
  // come after the warps' CTAs, alternate between sequences: a long sequence's rows are not
  // left to the end of the grid.
  const int w = gpu::warp_id(), lane = gpu::lane_id();
  int seq, head, list_parts = 0;
  bool warp_row;  // this warp merges a row alone
  if constexpr (kRowList) {
    warp_row = int(blockIdx.x) >= a.combine_cta_rows;
    const int i = warp_row ? a.combine_cta_rows + (blockIdx.x - a.combine_cta_rows) * kCombineWarps + w : blockIdx.x;
    if (warp_row && i >= a.combine_cta_rows + a.combine_warp_rows) return;
    const int row = a.combine_rows[2 * i];
    list_parts = a.combine_rows[2 * i + 1];  // with the row: no load that waits on another
    seq = row / a.q_heads;
    head = row % a.q_heads;
  } else {
    seq = kWarpPerRow ? blockIdx.x : blockIdx.y;
    const int slice = kWarpPerRow ? blockIdx.y : blockIdx.x;
    const int warp_ctas = kWarpPerRow ? (a.q_heads + kCombineWarps - 1) / kCombineWarps : 0;
    warp_row = kWarpPerRow && slice < warp_ctas;
    head = warp_row ? slice * kCombineWarps + w : slice - warp_ctas;
    if (warp_row && head >= a.q_heads) return;
  }
  const std::size_t slot0 = (std::size_t(seq) * a.q_heads + head) * a.num_splits;
  // Splits fill every slot; a persistent grid as many as warps worked on the head's unit, a
  // token-balanced one as many as the plan cut it into.
  const int unit_rows = kRowTiles ? kDecodeMaxGroup * a.row_tiles : kDecodeMaxGroup;
  const int group = a.q_heads / a.kv_heads, chunks = (group + unit_rows - 1) / unit_rows;
  const int unit = (seq * a.kv_heads + head / group) * chunks + (head % group) / unit_rows;
  int slots;
  if constexpr (kRowList) slots = list_parts;  // its unit's count as the work list holds it (negated)
  else slots = a.persistent ? Schedule(a).published[unit] : a.unit_partials ? a.unit_partials[unit] : a.num_splits;
  // A token-balanced unit merged here carries its partial count negated; the others wrote their
  // output whole (one chunk) or were merged by their last chunk in the decode kernel.
  if (a.unit_partials) {
    if (slots > 0) return;
    slots = -slots;
  }
  if (kWarpPerRow && warp_row != (slots <= kWarpRowParts)) return;  // the row is the other part's
  if constexpr (kRowList) gpu::wait_prior_grid();
  // A shared tail's counter is zeroed for the next launch here, the decode grid being done.
  if (a.schedule && !a.persistent && (warp_row ? lane : threadIdx.x) == 0 && head % group % unit_rows == 0)
    a.schedule[unit] = 0;
  if (warp_row) {
    merge_row_in_warp<kQ, kHeadDim>(a, std::size_t(seq) * a.q_heads + head, slots);
    return;
  }
  if constexpr (kRowList) {
    merge_row_in_cta<kQ, kHeadDim>(a, std::size_t(seq) * a.q_heads + head, slots, part, warp_max);
    return;
  }
  float m = -INFINITY;
  for (int sp = threadIdx.x; sp < slots; sp += blockDim.x) m = fmaxf(m, a.partial_lse[slot0 + sp]);
  for (int off = kWarpSize / 2; off > 0; off /= 2) m = fmaxf(m, gpu::shfl_xor(m, off));
  if (lane == 0) warp_max[w] = m;
  gpu::block_sync();
  m = warp_max[0];
  for (int i = 1; i < kCombineWarps; ++i) m = fmaxf(m, warp_max[i]);
  float o[kCols] = {}, wsum = 0.f;
  if (m != -INFINITY) {
    auto add = [&](int sp) {
      const float wgt = gpu::mma::fast_exp2(a.partial_lse[slot0 + sp] - m);
      const float* src = a.partial_o + (slot0 + sp) * kHeadDim + lane * kCols;
      wsum += wgt;
#pragma unroll
      for (int c = 0; c < kCols; ++c) o[c] += wgt * src[c];
    };
    if constexpr (kWarpPerRow) {  // only rows of many partials get here: four in flight a warp
#pragma unroll 4
      for (int sp = w; sp < slots; sp += kCombineWarps) add(sp);
    } else {
      for (int sp = w; sp < slots; sp += kCombineWarps) {
        const float wgt = gpu::mma::fast_exp2(a.partial_lse[slot0 + sp] - m);
        const float* src = a.partial_o + (slot0 + sp) * kHeadDim + lane * kCols;
        wsum += wgt;
#pragma unroll
        for (int c = 0; c < kCols; ++c) o[c] += wgt * src[c];
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c) part[w][lane * kCols + c] = o[c];
  if (lane == 0) part[w][kHeadDim] = wsum;
  gpu::block_sync();
  for (int d = threadIdx.x; d < kHeadDim; d += blockDim.x) {
    float sum = 0.f, weights = 0.f;
    for (int i = 0; i < kCombineWarps; ++i) {
      sum += part[i][d];
      weights += part[i][kHeadDim];
    }
    E::store(static_cast<typename E::storage*>(a.o), (std::size_t(seq) * a.q_heads + head) * kHeadDim + d,
             weights > 0.f ? sum / weights : 0.f);  // no visible key: zeros, as the reference
  }
}

}  // namespace schedlab::kernels::decode_detail
