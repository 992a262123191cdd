// The last wave's tiles split by keys (stream-K's data-parallel-then-split form: Osama et al.
// 2023, arXiv 2301.03598). Equal tiles (non-causal, one length) on a persistent grid of G CTAs
// leave the last wave part-empty: 2048 tiles on 132 SMs are 15 whole waves and 68 tiles, so
// 64 SMs idle for a tile's time, 3% of the launch. Here every CTA computes its whole-wave tiles
// as ever, then an equal share of the key tiles of the last wave's tiles, in order: a CTA's
// share is at most a tile's key tiles, so it covers the end of one tile and the start of the
// next, and each of those tiles is a few CTAs' pieces. The pieces' partial rows (unnormalized
// O, running max and sum) meet in global memory; the last piece of a tile to arrive merges the
// others' into its own and writes the tile (kernels/hopper_prefill/hopper_split.cuh).
// Host and device code: tests walk the units on the host (kernels/tests/test_tile_order.cu); the
// kernel walks them with SplitTailScheduler (tile_scheduler.hpp).
#pragma once
#include <algorithm>
#include <climits>

#include "common/numeric.hpp"  // SCHEDLAB_HD

namespace schedlab::kernels::attention {

// One unit of a CTA's walk: tile `tile` of the walk (TileGrid::at), key tiles [first, end) of
// it, piece `piece` of the tile's `pieces` (1: the whole tile, written as ever), `split_tile`
// its index among the split tiles (for the pieces' meeting place).
struct SplitUnit {
  int tile, first, end, piece, pieces, split_tile;
};

struct SplitTail {
  int whole_tiles = 0;  // tiles walked whole, blockIdx.x, + gridDim.x, ...: every tile when nothing is split
  int split_tiles = 0;  // the tiles after them, each split among a few CTAs (0: none)
  int key_tiles = 0;    // key tiles of every tile
  int split_ctas = 0;   // CTAs 0.. that share the split tiles' key tiles (each at least one)

  // The split tail of `tiles` equal tiles of `key_tiles` key tiles on `ctas` persistent CTAs,
  // where the last wave fills at most `max_fill` of them (a fuller one saves less than the
  // pieces' meeting costs) and a CTA's share is at least `min_share` key tiles (a piece's own
  // cost, its Q and first tiles' copies and its partial rows, is paid on fewer); else none.
  // The shares' bounds stay in 32-bit arithmetic.
  static SplitTail of(int tiles, int key_tiles, int ctas, float max_fill, int min_share = 1) {
    SplitTail s{tiles, 0, key_tiles, 0};
    const int last_wave = tiles % ctas;
    if (max_fill <= 0.f || key_tiles < 2 || last_wave == 0 || last_wave > max_fill * ctas ||
        double(last_wave) * key_tiles * (ctas + 1) >= INT_MAX ||
        last_wave * key_tiles < std::max(min_share, 1) * std::min(ctas, last_wave * key_tiles))
      return s;
    s.whole_tiles = tiles - last_wave;
    s.split_tiles = last_wave;
    s.split_ctas = std::min(ctas, last_wave * key_tiles);
    return s;
  }
  SCHEDLAB_HD int work() const { return split_tiles * key_tiles; }
  // CTA c's share of the split key tiles, [begin(c), begin(c + 1)) of work().
  SCHEDLAB_HD int begin(int c) const { return c * work() / split_ctas; }
  // The CTA whose share holds split key tile x.
  SCHEDLAB_HD int owner(int x) const { return ((x + 1) * split_ctas - 1) / work(); }
  // At most how many pieces a tile is cut into: a share is at least work() / split_ctas key tiles.
  int max_pieces() const {
    if (split_tiles == 0) return 0;
    const int least = work() / split_ctas;
    return (key_tiles - 1 + least - 1) / least + 1;
  }
  // The unit of CTA c at split key tile x (x in its share): up to the end of its tile or share.
  SCHEDLAB_HD SplitUnit unit_at(int c, int x) const {
    const int s = x / key_tiles, first = x - s * key_tiles;
    const int share_end = first + begin(c + 1) - x, end = share_end < key_tiles ? share_end : key_tiles;
    const int lead = owner(s * key_tiles);
    return {whole_tiles + s, first, end, c - lead, owner(s * key_tiles + key_tiles - 1) - lead + 1, s};
  }

  // CTA c's walk of a grid of `ctas`: its whole tiles (c, c + ctas, ...), then a unit for each
  // split tile its share touches. One word of state, `cursor`: the next whole tile, or
  // whole_tiles + the next split key tile (INT_MAX: none).
  SCHEDLAB_HD int start(int c) const { return c < whole_tiles ? c : enter_split(c); }
  SCHEDLAB_HD int enter_split(int c) const { return c < split_ctas ? whole_tiles + begin(c) : INT_MAX; }
  SCHEDLAB_HD bool next(int c, int ctas, int& cursor, SplitUnit& u) const {
    if (cursor < whole_tiles) {
      u = {cursor, 0, key_tiles, 0, 1, 0};
      cursor += ctas;
      if (cursor >= whole_tiles) cursor = enter_split(c);
      return true;
    }
    if (cursor == INT_MAX || cursor - whole_tiles >= begin(c + 1)) return false;
    u = unit_at(c, cursor - whole_tiles);
    cursor += u.end - u.first;
    return true;
  }
};

}  // namespace schedlab::kernels::attention
