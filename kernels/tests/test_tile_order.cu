// The attention tile walk on the host (no GPU): every order visits each output tile once, a
// causal walk is longest first within each section, head_sections() picks the sections it
// says, and on a model of the hardware's block dispatch (a free SM takes the next CTA) the
// sections keep the last wave balanced where the walk within each head does not; a ragged
// batch's query blocks cover every sequence once and its walk starts with the heaviest; the
// split tail's walk computes every key tile of every tile once, its pieces numbered as the
// kernel's meeting needs, and balances the CTAs to one key tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include "kernels/attention/ragged_blocks.hpp"
#include "kernels/attention/split_tail.hpp"
#include "kernels/attention/tile_scheduler.hpp"

namespace schedlab::kernels::attention {
namespace {

constexpr int kSms = 132;  // H200

std::vector<TileCoord> walk(const TileGrid& g) {
  std::vector<TileCoord> tiles;
  for (int i = 0; i < g.count(); ++i) tiles.push_back(g.at(i));
  return tiles;
}

TileGrid causal_grid(int m_blocks, int heads, int batch, CausalOrder order) {
  return TileGrid{m_blocks, heads, batch, true, head_sections(order, m_blocks, heads * batch, kSms)};
}

TEST(TileOrder, EveryWalkVisitsEachTileOnce) {
  for (auto [m_blocks, heads, batch] : {std::tuple{64, 16, 2}, std::tuple{43, 16, 2}, std::tuple{4, 16, 2},
                                        std::tuple{7, 5, 3}, std::tuple{1, 1, 1}, std::tuple{33, 3, 1}}) {
    std::vector<TileGrid> grids{TileGrid{m_blocks, heads, batch, false}};
    for (auto order : {CausalOrder::WithinHead, CausalOrder::AcrossHeads, CausalOrder::Sections})
      grids.push_back(causal_grid(m_blocks, heads, batch, order));
    const int pairs = heads * batch;
    for (int sections = 1; sections <= pairs; ++sections)  // every section count, uneven sizes included
      grids.push_back(TileGrid{m_blocks, heads, batch, true, HeadSections{pairs / sections, pairs % sections}});
    for (const TileGrid& g : grids) {
      std::set<std::tuple<int, int, int>> seen;
      for (const TileCoord& t : walk(g)) {
        ASSERT_TRUE(t.m_block >= 0 && t.m_block < m_blocks && t.head >= 0 && t.head < heads && t.batch >= 0 &&
                    t.batch < batch);
        EXPECT_TRUE(seen.insert({t.m_block, t.head, t.batch}).second) << "tile visited twice";
      }
      EXPECT_EQ(int(seen.size()), g.count());
    }
  }
}

TEST(TileOrder, UnevenSectionsCoverEveryPair) {
  // 32 pairs in sections of 5 with two sections of 6: 6 + 6 + 5 x 4.
  const TileGrid g{8, 16, 2, true, HeadSections{5, 2}};
  std::set<std::tuple<int, int, int>> seen;
  for (const TileCoord& t : walk(g)) seen.insert({t.m_block, t.head, t.batch});
  EXPECT_EQ(int(seen.size()), g.count());
  // The third section starts at pair 12 with query block 7 (the longest).
  const TileCoord t = g.at(12 * 8);
  EXPECT_EQ(t.m_block, 7);
  EXPECT_EQ(t.head + 16 * t.batch, 12);
}

TEST(TileOrder, NonCausalWalksQueryBlocksFastest) {
  const TileGrid g{5, 3, 2, false};
  for (int i = 0; i < g.count(); ++i) {
    const TileCoord t = g.at(i);
    EXPECT_EQ(t.m_block, i % 5);
    EXPECT_EQ(t.head + 3 * t.batch, i / 5);
  }
}

TEST(TileOrder, WithinHeadAndAcrossHeadsKeepTheirWalks) {
  const TileGrid within = causal_grid(64, 16, 2, CausalOrder::WithinHead);
  const TileGrid across = causal_grid(64, 16, 2, CausalOrder::AcrossHeads);
  for (int i = 0; i < within.count(); ++i) {
    const TileCoord a = within.at(i), b = across.at(i);
    EXPECT_EQ(a.m_block, 63 - i % 64);
    EXPECT_EQ(a.head + 16 * a.batch, i / 64);
    EXPECT_EQ(b.m_block, 63 - i / 32);
    EXPECT_EQ(b.head + 16 * b.batch, i % 32);
  }
}

TEST(TileOrder, SectionsAreLongestFirst) {
  for (int m_blocks : {64, 43, 128, 16}) {
    const TileGrid g = causal_grid(m_blocks, 16, 2, CausalOrder::Sections);
    const int n_sections = g.sections.larger_sections +
                           (32 - g.sections.larger_sections * (g.sections.section_pairs + 1)) / g.sections.section_pairs;
    int first = 0, i = 0;
    for (int s = 0; s < n_sections; ++s) {
      const int n = g.sections.section_pairs + (s < g.sections.larger_sections ? 1 : 0);
      for (int k = 0; k < n * m_blocks; ++k, ++i) {
        const TileCoord t = g.at(i);
        EXPECT_EQ(t.m_block, m_blocks - 1 - k / n);
        EXPECT_EQ(t.head + 16 * t.batch, first + k % n);
      }
      first += n;
    }
    EXPECT_EQ(i, g.count());
  }
}

TEST(TileOrder, HeadSectionsRule) {
  // Head dim 128, sequence 8192, 128-row tiles: 64 query blocks; at least 2 x 132 / 64 -> 5
  // pairs a section, so 6 sections of 32 pairs: two of 6, four of 5.
  HeadSections s = head_sections(CausalOrder::Sections, 64, 32, kSms);
  EXPECT_EQ(s.section_pairs, 5);
  EXPECT_EQ(s.larger_sections, 2);
  // Head dim 64, 192-row tiles: 43 query blocks -> 7 wanted, 4 sections of 8.
  s = head_sections(CausalOrder::Sections, 43, 32, kSms);
  EXPECT_EQ(s.section_pairs, 8);
  EXPECT_EQ(s.larger_sections, 0);
  // Fewer tiles than SMs (sequence 512): within each head, whatever the order asked.
  for (auto order : {CausalOrder::Sections, CausalOrder::AcrossHeads}) {
    s = head_sections(order, 4, 32, kSms);
    EXPECT_EQ(s.section_pairs, 1);
    EXPECT_EQ(s.larger_sections, 0);
  }
  s = head_sections(CausalOrder::AcrossHeads, 64, 32, kSms);
  EXPECT_EQ(s.section_pairs, 32);
  s = head_sections(CausalOrder::WithinHead, 64, 32, kSms);
  EXPECT_EQ(s.section_pairs, 1);
  // More wanted than there are pairs: one section of all of them.
  s = head_sections(CausalOrder::Sections, 8, 20, kSms);
  EXPECT_EQ(s.section_pairs, 20);
  EXPECT_EQ(s.larger_sections, 0);
}

// The time a causal walk takes on kSms SMs when each free SM takes the next tile (the
// hardware's dispatch of one-tile CTAs), over the time of perfectly shared work: 1 is no idle
// SM at the end. A tile costs its K/V tiles plus one for its start and its output.
double modeled_makespan(const TileGrid& g, int block_m, int block_n, int seq) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int i = 0; i < kSms; ++i) free_at.push(0.);
  double total = 0., end = 0.;
  for (const TileCoord& t : walk(g)) {
    const double cost = (std::min(seq, (t.m_block + 1) * block_m) + block_n - 1) / block_n + 1;
    const double start = free_at.top();
    free_at.pop();
    free_at.push(start + cost);
    end = std::max(end, start + cost);
    total += cost;
  }
  return end / (total / kSms);
}

TEST(TileOrder, SectionsBalanceTheLastWave) {
  // The benchmark's causal shapes at sequence 8192 (16 heads, batch 2): head dim 128 runs
  // 128 x 176 tiles, head dim 64 192 x 128.
  for (auto [block_m, block_n] : {std::pair{128, 176}, std::pair{192, 128}}) {
    const int m_blocks = (8192 + block_m - 1) / block_m;
    const double within = modeled_makespan(causal_grid(m_blocks, 16, 2, CausalOrder::WithinHead), block_m, block_n, 8192);
    const double sections = modeled_makespan(causal_grid(m_blocks, 16, 2, CausalOrder::Sections), block_m, block_n, 8192);
    EXPECT_GT(within, 1.04) << "block_m " << block_m;  // the last head's long tiles run alone
    EXPECT_LT(sections, 1.02) << "block_m " << block_m;
  }
}

// ---- ragged batches (ragged_blocks.hpp) -------------------------------------------------

TEST(RaggedBlocks, EveryBlockOfEverySequenceOnceFewestKeyTilesFirst) {
  const std::vector<int> lengths{300, 1, 128, 129, 1000};
  for (bool causal : {false, true}) {
    const auto blocks = ragged_blocks(lengths, 128, 176, causal);
    std::set<std::pair<int, int>> seen;
    for (const RaggedBlock& b : blocks) {
      EXPECT_TRUE(seen.insert({b.seq, b.m_block}).second) << b.seq << " " << b.m_block;
      int start = 0;
      for (int s = 0; s < b.seq; ++s) start += lengths[std::size_t(s)];
      EXPECT_EQ(b.start, start);
      EXPECT_EQ(b.len, lengths[std::size_t(b.seq)]);
      EXPECT_LT(b.m_block * 128, b.len);
      const int key_end = causal ? std::min(b.len, (b.m_block + 1) * 128) : b.len;
      EXPECT_EQ(b.key_tiles, (key_end + 175) / 176);
    }
    EXPECT_EQ(seen.size(), 3u + 1u + 1u + 2u + 8u);  // ceil(length / 128) each
    EXPECT_TRUE(std::is_sorted(blocks.begin(), blocks.end(),
                               [](const RaggedBlock& a, const RaggedBlock& b) { return a.key_tiles < b.key_tiles; }));
  }
  EXPECT_THROW(ragged_blocks({5, 0}, 128, 128, true), std::invalid_argument);
}

// The kernel's walk over a ragged batch (a TileGrid of one query block per entry, batch 1,
// longest first in head sections) visits every (block, head) once and starts with the
// heaviest blocks, whichever sequence holds them.
TEST(RaggedBlocks, TheWalkIsLongestFirstAcrossSequences) {
  const std::vector<int> lengths{1536, 32768, 900, 4000, 32768};
  const auto blocks = ragged_blocks(lengths, 128, 128, true);
  const int n = int(blocks.size()), heads = 64;
  const TileGrid g{n, heads, 1, true, head_sections(CausalOrder::Sections, n, heads, kSms)};
  std::set<std::pair<int, int>> seen;
  for (const TileCoord& t : walk(g)) {
    EXPECT_EQ(t.batch, 0);
    EXPECT_TRUE(seen.insert({t.m_block, t.head}).second);
  }
  EXPECT_EQ(seen.size(), std::size_t(n) * heads);
  // Within each section the blocks come heaviest first, whichever sequence holds them; the
  // first is a last block of a 32k sequence.
  EXPECT_EQ(blocks[std::size_t(g.at(0).m_block)].key_tiles, 32768 / 128);
  const int section_tiles = g.sections.section_pairs * n;
  ASSERT_EQ(g.sections.larger_sections, 0);
  for (int i = 1; i < g.count(); ++i) {
    if (i % section_tiles == 0) continue;  // a new section starts heavy again
    EXPECT_LE(blocks[std::size_t(g.at(i).m_block)].key_tiles, blocks[std::size_t(g.at(i - 1).m_block)].key_tiles) << i;
  }
}

// Every CTA's walk of a split tail, as the kernel's scheduler steps it (SplitTail::next).
std::vector<std::vector<SplitUnit>> split_walks(const SplitTail& split, int ctas) {
  std::vector<std::vector<SplitUnit>> walks(static_cast<std::size_t>(ctas));
  for (int c = 0; c < ctas; ++c) {
    int cursor = split.start(c);
    SplitUnit u{};
    while (split.next(c, ctas, cursor, u)) walks[std::size_t(c)].push_back(u);
  }
  return walks;
}

TEST(SplitTail, EveryKeyTileOnceAndPiecesNumberedForTheMeeting) {
  // The benchmark's 2048 tiles (head dim 128 at every length) on 132 SMs, head dim 64's 2752,
  // fewer tiles than SMs, fewer key tiles than SMs, two key tiles a tile.
  for (auto [tiles, key_tiles] : {std::pair{2048, 32}, std::pair{2048, 3}, std::pair{2752, 64}, std::pair{64, 6},
                                  std::pair{16, 5}, std::pair{100, 2}, std::pair{1088, 12}}) {
    const SplitTail split = SplitTail::of(tiles, key_tiles, kSms, 0.9f);
    ASSERT_GT(split.split_tiles, 0) << tiles;
    const int ctas = std::max(std::min(tiles, kSms), split.split_ctas);
    std::map<int, std::vector<SplitUnit>> by_tile;
    std::vector<int> load;
    for (const auto& units : split_walks(split, ctas)) {
      int keys = 0;
      for (const SplitUnit& u : units) {
        ASSERT_TRUE(u.tile >= 0 && u.tile < tiles && u.first >= 0 && u.first < u.end && u.end <= key_tiles);
        by_tile[u.tile].push_back(u);
        keys += u.end - u.first;
      }
      load.push_back(keys);
    }
    ASSERT_EQ(int(by_tile.size()), tiles) << "a tile no CTA computes";
    for (auto& [tile, units] : by_tile) {
      std::sort(units.begin(), units.end(), [](const SplitUnit& a, const SplitUnit& b) { return a.first < b.first; });
      int next_key = 0;
      for (std::size_t i = 0; i < units.size(); ++i) {
        const SplitUnit& u = units[i];
        EXPECT_EQ(u.first, next_key) << "tile " << tile << ": key tiles missed or computed twice";
        next_key = u.end;
        EXPECT_EQ(u.pieces, int(units.size())) << "tile " << tile;
        EXPECT_EQ(u.piece, int(i)) << "tile " << tile;
        EXPECT_LT(u.piece, std::max(1, split.max_pieces()));
        if (u.pieces > 1) EXPECT_EQ(u.split_tile, tile - split.whole_tiles);
      }
      EXPECT_EQ(next_key, key_tiles) << "tile " << tile;
      if (tile < split.whole_tiles) EXPECT_EQ(units.size(), 1u) << "a whole-wave tile split";
    }
    const auto [least, most] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*most - *least, 1) << tiles << " tiles: the CTAs' key tiles";
    EXPECT_LE(*most, (tiles * key_tiles + ctas - 1) / ctas) << tiles << " tiles: the longest CTA";
  }
}

TEST(SplitTail, NothingSplitWhereTheLastWaveIsFullOrNearlySo) {
  for (auto [tiles, fill] : {std::pair{2 * kSms, 0.9f}, std::pair{kSms + 130, 0.9f}, std::pair{2048, 0.f}}) {
    const SplitTail split = SplitTail::of(tiles, 32, kSms, fill);
    EXPECT_EQ(split.split_tiles, 0) << tiles;
    EXPECT_EQ(split.whole_tiles, tiles);
    std::set<int> seen;
    for (const auto& units : split_walks(split, std::min(tiles, kSms)))
      for (const SplitUnit& u : units) {
        EXPECT_EQ(u.pieces, 1);
        EXPECT_EQ(u.end - u.first, 32);
        EXPECT_TRUE(seen.insert(u.tile).second);
      }
    EXPECT_EQ(int(seen.size()), tiles);
  }
  EXPECT_EQ(SplitTail::of(100, 1, kSms, 0.9f).split_tiles, 0) << "one key tile cannot be split";
  // Shares of at least 4 key tiles: 68 x 32 of them on 132 CTAs are 16 each, 68 x 3 one or two.
  EXPECT_GT(SplitTail::of(2048, 32, kSms, 0.9f, 4).split_tiles, 0);
  EXPECT_EQ(SplitTail::of(2048, 3, kSms, 0.9f, 4).split_tiles, 0) << "shares under the least";
}

}  // namespace
}  // namespace schedlab::kernels::attention
