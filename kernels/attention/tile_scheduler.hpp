// Which output tiles a CTA computes, and in what order (FlashAttention-3's tile_scheduler.hpp
// is the model; the decode family's static/dynamic tile sources are the same idea over KV
// tiles). A tile is (query block, head, batch). Every role of a CTA (producer and consumers)
// walks the same deterministic sequence, so no tile id has to be handed between them.
//   OnePerTile: one CTA per tile.
//   OnePerTileGrid: one CTA per tile on a 3-D grid (query blocks, heads, batch): the tile is
//     the block index, with no division (the walk of longest_first within each head, which
//     is the order the hardware dispatches a 3-D grid in; grid() refuses other walks).
//   Persistent: one CTA per SM walks tiles blockIdx.x, blockIdx.x + gridDim.x, ...
//   Dynamic: one CTA per SM starts at tile blockIdx.x and takes each next tile from a global
//     counter, so a CTA that drew short tiles takes more (dynamic_tile_scheduler.hpp, sm_90).
//   Persistent with a split tail (SplitTailScheduler): the persistent walk's whole waves, then
//     the last wave's tiles split by keys among every CTA (split_tail.hpp).
// Both walk the tiles in one order (CTAs are dispatched in block order):
//   - equal tiles (non-causal): query blocks fastest, so the CTAs of one wave share a few
//     heads' K/V in L2;
//   - causal: longest first within sections of (head, batch) pairs: a section's last query
//     blocks, then the ones before, ..., then the next section. One pair per section is
//     longest first within each head (the K/V of the two or three heads a wave covers stay
//     in L2, but each head's long tiles start after the previous head's short ones, so the
//     last head's long tiles run alone at the end); every pair in one section is the
//     longest-processing-time order across heads (balanced, but a wave then reads the K/V
//     of every head). head_sections() picks the smallest sections that keep the balance.
#pragma once
#include <algorithm>
#include <stdexcept>

#include "common/gpu/device.hpp"
#include "kernels/attention/split_tail.hpp"
#include "kernels/attention/tile_schedule.hpp"

namespace schedlab::kernels::attention {

struct TileGrid {
  int m_blocks, heads, batch;
  bool longest_first;        // causal: the last query blocks (the most keys) first
  HeadSections sections{};   // with longest_first: the sections of (head, batch) pairs
  // Dynamic only: the counter the CTAs draw tiles from, and its value when this launch began.
  // A launch draws exactly count() times (each CTA's draws past its first tile, plus one
  // draw per CTA that finds no tile left), so the host advances `base` by count() per launch
  // and the counter is never reset (unsigned arithmetic wraps consistently).
  unsigned* counter = nullptr;
  unsigned base = 0;
  __host__ __device__ int count() const { return m_blocks * heads * batch; }
  // The tile at position `i` of the walk.
  __host__ __device__ TileCoord at(int i) const {
    int m, bh;
    if (longest_first) {
      // Section s holds pairs [first, first + n); within it, query block m_blocks - 1 of
      // every pair, then m_blocks - 2, ...
      const int n_large = sections.section_pairs + 1, large_tiles = sections.larger_sections * n_large * m_blocks;
      int first, n, rel;
      if (i < large_tiles) {
        n = n_large;
        const int s = i / (n * m_blocks);
        first = s * n;
        rel = i - first * m_blocks;
      } else {
        n = sections.section_pairs;
        const int s = (i - large_tiles) / (n * m_blocks);
        first = sections.larger_sections * n_large + s * n;
        rel = i - first * m_blocks;
      }
      m = m_blocks - 1 - rel / n;
      bh = first + rel % n;
    } else {
      m = i % m_blocks;
      bh = i / m_blocks;
    }
    return {m, bh % heads, bh / heads};
  }
};

template <TileSchedule kSchedule>
struct TileScheduler;  // Dynamic: DynamicTileScheduler (dynamic_tile_scheduler.hpp), by TileSchedulerOf

template <>
struct TileScheduler<TileSchedule::OnePerTile> {
  const TileGrid& g;  // in kernel-parameter space: read from the constant bank, not held in registers
  bool done = false;
  static dim3 grid(const TileGrid& g, int /*sm_count*/) { return dim3(g.count()); }
  template <class... Unused>  // the dynamic scheduler's queue and role
  __device__ explicit TileScheduler(const TileGrid& grid, Unused&&...) : g(grid) {}
  __device__ bool next(TileCoord& t) {
    if (done) return false;
    done = true;
    t = g.at(static_cast<int>(blockIdx.x));
    return true;
  }
};

template <>
struct TileScheduler<TileSchedule::OnePerTileGrid> {
  bool done = false;
  static dim3 grid(const TileGrid& g, int /*sm_count*/) {
    if (!g.longest_first || g.sections.section_pairs != 1 || g.sections.larger_sections != 0)
      throw std::invalid_argument("OnePerTileGrid walks the query blocks longest first within each head");
    return dim3(g.m_blocks, g.heads, g.batch);
  }
  // The CTA's one tile. A kernel that computes exactly one tile asks this rather than next():
  // the `done` test, folded late, changed the register-tile kernels' SASS from the first
  // instruction on.
  static __device__ __forceinline__ TileCoord tile() {
    return {static_cast<int>(gridDim.x - 1 - blockIdx.x), static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z)};
  }
  template <class... Unused>  // the grid, the dynamic scheduler's queue and role: the block index says it all
  __device__ explicit TileScheduler(Unused&&...) {}
  __device__ bool next(TileCoord& t) {
    if (done) return false;
    done = true;
    t = tile();
    return true;
  }
};

template <>
struct TileScheduler<TileSchedule::Persistent> {
  const TileGrid& g;  // in kernel-parameter space: read from the constant bank, not held in registers
  int tile;
  static dim3 grid(const TileGrid& g, int sm_count) { return dim3(g.count() < sm_count ? g.count() : sm_count); }
  template <class... Unused>
  __device__ explicit TileScheduler(const TileGrid& grid, Unused&&...) : g(grid), tile(static_cast<int>(blockIdx.x)) {}
  __device__ bool next(TileCoord& t) {
    if (tile >= g.count()) return false;
    t = g.at(tile);
    tile += static_cast<int>(gridDim.x);
    return true;
  }
};

// The persistent walk with its last wave split by keys (split_tail.hpp), on the device.
struct SplitTailScheduler {
  const SplitTail& split;  // in kernel-parameter space
  int cursor;
  template <class... Unused>  // the dynamic scheduler's queue and role
  __device__ explicit SplitTailScheduler(const SplitTail& s, Unused&&...) : split(s), cursor(s.start(int(blockIdx.x))) {}
  __device__ bool next(SplitUnit& u) { return split.next(int(blockIdx.x), int(gridDim.x), cursor, u); }
};

}  // namespace schedlab::kernels::attention
