// Which output tiles a CTA computes, and in what order (FlashAttention-3's tile_scheduler.hpp
// is the model; the decode family's static/dynamic tile sources are the same idea over KV
// tiles). A tile is (query block, head, batch). Every role of a CTA (producer and consumers)
// walks the same deterministic sequence, so no tile id has to be handed between them.
//   OnePerTile: one CTA per tile, grid (query blocks, heads, batch); the longest causal
//     rows go first (blockIdx.x = 0 takes the last query block).
//   Persistent: one CTA per SM walks tiles blockIdx.x, blockIdx.x + gridDim.x, ...; query
//     blocks vary fastest, so the CTAs of one wave share a few heads' K/V in L2, and in
//     causal problems each head's heaviest blocks come first.
#pragma once
#include "common/gpu/device.hpp"

namespace schedlab::kernels::attention {

enum class TileSchedule { OnePerTile, Persistent };

struct TileCoord {
  int m_block, head, batch;
};

struct TileGrid {
  int m_blocks, heads, batch;
  bool longest_first;  // causal: reverse the query blocks
  __host__ __device__ int count() const { return m_blocks * heads * batch; }
};

template <TileSchedule kSchedule>
struct TileScheduler;

template <>
struct TileScheduler<TileSchedule::OnePerTile> {
  TileGrid g;
  bool done = false;
  static dim3 grid(const TileGrid& g, int /*sm_count*/) { return dim3(g.m_blocks, g.heads, g.batch); }
  __device__ explicit TileScheduler(const TileGrid& grid) : g(grid) {}
  __device__ bool next(TileCoord& t) {
    if (done) return false;
    done = true;
    const int m = static_cast<int>(blockIdx.x);
    t = {g.longest_first ? g.m_blocks - 1 - m : m, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z)};
    return true;
  }
};

template <>
struct TileScheduler<TileSchedule::Persistent> {
  TileGrid g;
  int tile;
  static dim3 grid(const TileGrid& g, int sm_count) { return dim3(g.count() < sm_count ? g.count() : sm_count); }
  __device__ explicit TileScheduler(const TileGrid& grid) : g(grid), tile(static_cast<int>(blockIdx.x)) {}
  __device__ bool next(TileCoord& t) {
    if (tile >= g.count()) return false;
    const int m = tile % g.m_blocks, bh = tile / g.m_blocks;
    t = {g.longest_first ? g.m_blocks - 1 - m : m, bh % g.heads, bh / g.heads};
    tile += static_cast<int>(gridDim.x);
    return true;
  }
};

}  // namespace schedlab::kernels::attention
