// Host side of the paged decode kernel: the split plan and what the kernel supports.
// The kernel instantiations live in each experiment's .cu (one per policy).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/decode/decode_policy.hpp"
#include "kernels/decode/paged_decode.hpp"

namespace schedlab::kernels {

DecodePlan plan_decode(const DecodeProblem& p, const DecodePlanOptions& o) {
  const int cta_slots = o.cta_slots, warps = o.warps, forced_splits = o.forced_splits;
  const TileSchedule schedule = o.schedule;
  const int max_row_tiles = o.max_row_tiles, max_merge_rows_per_warp = o.max_merge_rows_per_warp;
  const int max_merge_steps = o.max_merge_steps, combine_warp_row_parts = o.combine_warp_row_parts;
  if (cta_slots < 1 || warps < 1) throw std::invalid_argument("plan_decode: no CTA slots or warps");
  if (max_merge_rows_per_warp < 1) throw std::invalid_argument("plan_decode: max_merge_rows_per_warp must be >= 1");
  if (combine_warp_row_parts < 0) throw std::invalid_argument("plan_decode: combine_warp_row_parts must be >= 0");
  if (max_merge_steps < 1) throw std::invalid_argument("plan_decode: max_merge_steps must be >= 1");
  // Before any launch and any allocation: a bad batch description (a length below 1, a page id
  // outside the pool, a length needing more pages than its block-table row) is an
  // InvalidProblem naming the sequence and entry, and nothing is written. (A shape outside the
  // kernel's limits is an UnsupportedProblem, which the harness skips.)
  require_support(p, paged_decode_support());
  const int row_tiles = decode_row_tiles(p, schedule, max_row_tiles);
  const int group_chunks = decode_group_chunks(p, row_tiles);
  int max_tiles = 0;
  std::int64_t total_tiles = 0;
  for (int b = 0; b < p.batch; ++b) {
    const int first_tile = p.first_visible_key(b) / kDecodeTileTokens;
    const int last_tile = (p.context_lens[b] + kDecodeTileTokens - 1) / kDecodeTileTokens;
    max_tiles = std::max(max_tiles, last_tile - first_tile);
    total_tiles += std::int64_t(last_tile - first_tile) * p.kv_heads * group_chunks;
  }
  DecodePlan plan;
  plan.row_tiles = row_tiles;
  if (schedule == TileSchedule::token_balanced && forced_splits <= 0) {
    // Chunks of at least kMinTilesPerWarp tiles per warp, as the split grid keeps.
    const int heads = p.kv_heads * group_chunks;
    const DecodeWorkPartition w =
        partition_decode_work(p.context_lens, heads, kDecodeTileTokens, cta_slots, warps * kMinTilesPerWarp, p.window,
                              o.chunk_overhead_tiles, o.fill_slots);
    plan.num_splits = w.max_partials;
    plan.tiles_per_split = w.chunk_tiles;
    DecodeWorkList& list = plan.work;
    for (const DecodeWorkChunk& c : w.chunks) list.chunks.push_back({c.seq * heads + c.head, c.first_tile, c.tiles, c.partial});
    // The most partials a unit's last CTA merges itself: a warp per row, one step per row and
    // partial. Once a unit has more, every cut unit goes to the combine kernel: sending such
    // units alone was measured too (decode_partial_merge's tried).
    const int unit_rows = std::min(p.q_heads / p.kv_heads, kDecodeMaxGroup * row_tiles);
    // (A unit of more rows a warp than max_merge_rows_per_warp merges nothing in the kernel.)
    const int rows_per_warp = (unit_rows + warps - 1) / warps;
    const int kernel_parts = rows_per_warp > max_merge_rows_per_warp ? 1 : std::max(1, max_merge_steps / rows_per_warp);
    const bool all_to_combine = w.max_partials > kernel_parts;
    list.unit_partials = w.partial_count;
    for (int parts : w.partial_count) {
      const bool combine = parts > 1 && (all_to_combine || parts > kernel_parts);
      list.combine_merged.push_back(combine);
      plan.combine_merges = plan.combine_merges || combine;
      plan.kernel_merges = plan.kernel_merges || (parts > 1 && !combine);
    }
    if (combine_warp_row_parts > 0 && plan.combine_merges) {
      // Unit seq * heads + head covers query heads kvh * group + chunk * unit_rows on, where
      // head = kvh * group_chunks + chunk (the combine kernel numbers them the same way).
      const int group = p.q_heads / p.kv_heads, units = static_cast<int>(w.partial_count.size());
      std::vector<DecodeWorkList::CombineRow> cta_rows, warp_rows;
      for (int u = 0; u < units; ++u) {
        if (!list.combine_merged[u]) continue;  // whole, or merged in the decode kernel
        const int parts = list.unit_partials[u];
        const int seq = u / heads, kvh = u % heads / group_chunks, chunk = u % heads % group_chunks;
        auto& rows = parts > combine_warp_row_parts ? cta_rows : warp_rows;
        for (int r = chunk * unit_rows; r < std::min(group, (chunk + 1) * unit_rows); ++r)
          rows.push_back({seq * p.q_heads + kvh * group + r, parts});
      }
      plan.combine_cta_rows = static_cast<int>(cta_rows.size());
      plan.combine_warp_rows = static_cast<int>(warp_rows.size());
      list.combine_rows = std::move(cta_rows);
      list.combine_rows.insert(list.combine_rows.end(), warp_rows.begin(), warp_rows.end());
    }
    return plan;
  }
  if (schedule == TileSchedule::persistent && forced_splits <= 0) {
    // As many CTAs as keep every warp at kMinTilesPerWarp tiles, at most one resident wave.
    const std::int64_t per_cta = std::int64_t(warps) * kMinTilesPerWarp;
    plan.ctas = static_cast<int>(std::clamp<std::int64_t>((total_tiles + per_cta - 1) / per_cta, 1, cta_slots));
    const int pairs = decode_work_pairs(p);
    plan.num_splits = (plan.ctas * warps + pairs - 1) / pairs + kDynamicJoins;
    plan.tiles_per_split = max_tiles;
    return plan;
  }
  if (forced_splits > 0) {
    plan.num_splits = forced_splits;
  } else {
    const int ctas = p.batch * p.kv_heads * group_chunks;
    const int wanted = std::max(1, cta_slots / ctas);
    const int most = std::max(1, max_tiles / (warps * kMinTilesPerWarp));
    plan.num_splits = std::clamp(wanted, 1, most);
  }
  plan.tiles_per_split = std::max(1, (max_tiles + plan.num_splits - 1) / plan.num_splits);
  if (forced_splits <= 0) plan.num_splits = std::max(1, (max_tiles + plan.tiles_per_split - 1) / plan.tiles_per_split);
  // The row-tile body keeps fixed ranges: every warp of a CTA must see the same tiles.
  plan.shared_tail = schedule != TileSchedule::split && plan.num_splits > 1 && row_tiles == 1;
  return plan;
}

namespace {

// Tiles of unit u's k-th of c chunks: as even as whole tiles allow.
int chunk_begin(int n, int c, int k) { return int(std::int64_t(n) * k / c); }

// When the last of `sizes` (tiles, longest first) ends if each goes to whichever of `slots` CTA
// slots frees first, a chunk costing its tiles plus `overhead`: the model the
// partition minimizes (the hardware hands CTAs to free slots in grid order).
std::int64_t finish_time(const std::vector<int>& sizes, int slots, int overhead) {
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> free_at;
  std::int64_t end = 0;
  for (int s : sizes) {
    std::int64_t start = 0;
    if (int(free_at.size()) == slots) {
      start = free_at.top();
      free_at.pop();
    }
    free_at.push(start + s + overhead);
    end = std::max(end, start + s + overhead);
  }
  return end;
}

// The filled partition at slot load `load` (tiles plus `overhead` per piece): whole units (a
// unit that fits one slot's load) go, largest first, to the least-loaded slot; the other units
// are cut, largest first, into pieces that fill what the slots have left, the slot with the
// most left first (McNaughton's wrap-around rule, with parallel pieces of one unit allowed).
// A piece is at least min_piece tiles unless its unit's rest is shorter. Returns the pieces
// with their slot and the time the model starts them (a slot runs its cut piece first, then
// its whole units), or nothing if `load` is too small to place every tile.
struct FilledPiece {
  int unit, first, tiles, slot;
  std::int64_t start;
};
std::vector<FilledPiece> fill_slots_at(const std::vector<int>& unit_tiles, const std::vector<int>& unit_first, int slots,
                                       int min_piece, int overhead, std::int64_t load) {
  const int units = static_cast<int>(unit_tiles.size());
  std::vector<int> order(units);
  for (int u = 0; u < units; ++u) order[u] = u;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return unit_tiles[a] > unit_tiles[b]; });
  std::vector<std::int64_t> used(slots, 0);
  std::vector<std::vector<FilledPiece>> cut(slots), whole(slots);
  // Whole units, largest first, each to the least-loaded slot (ties: the lowest slot).
  using Slot = std::pair<std::int64_t, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> least;
  for (int k = 0; k < slots; ++k) least.push({0, k});
  std::vector<int> long_units;
  for (int u : order) {
    if (unit_tiles[u] + overhead > load) {
      long_units.push_back(u);
      continue;
    }
    auto [at, k] = least.top();
    if (at + unit_tiles[u] + overhead > load) return {};
    least.pop();
    whole[k].push_back({u, unit_first[u], unit_tiles[u], k, 0});
    used[k] = at + unit_tiles[u] + overhead;
    least.push({used[k], k});
  }
  // The cut units fill the slots' rest, the slot with the most left first.
  std::vector<int> by_room(slots);
  for (int k = 0; k < slots; ++k) by_room[k] = k;
  std::stable_sort(by_room.begin(), by_room.end(), [&](int a, int b) { return used[a] < used[b]; });
  std::size_t next = 0;
  for (int u : long_units) {
    int first = unit_first[u], rest = unit_tiles[u];
    while (rest > 0) {
      while (next < by_room.size() && load - used[by_room[next]] - overhead < std::min(min_piece, rest)) ++next;
      if (next == by_room.size()) return {};
      const int k = by_room[next];
      int piece = static_cast<int>(std::min<std::int64_t>(rest, load - used[k] - overhead));
      // Never leave a rest shorter than a piece may be: leave exactly min_piece where this
      // piece stays that long, else take the rest too (over the load by less than min_piece).
      if (rest - piece > 0 && rest - piece < min_piece) piece = rest - min_piece >= min_piece ? rest - min_piece : rest;
      cut[k].push_back({u, first, piece, k, 0});
      used[k] += piece + overhead;
      first += piece;
      rest -= piece;
    }
  }
  std::vector<FilledPiece> out;
  for (int k = 0; k < slots; ++k) {
    std::int64_t t = 0;
    for (auto* list : {&cut[k], &whole[k]})
      for (FilledPiece f : *list) {
        f.start = t;
        t += f.tiles + overhead;
        out.push_back(f);
      }
  }
  return out;
}

// The work partition of filled pieces: the grid lists them by the model's start time (each
// slot's first piece, then the rest in the order slots free up), so the hardware, which hands
// the next CTA to the first free slot, runs each where the plan put it; a unit's partials are
// numbered in key order.
DecodeWorkPartition filled_partition(std::vector<FilledPiece> pieces, int sequences, int heads) {
  DecodeWorkPartition w;
  const int units = sequences * heads;
  w.partial_count.assign(units, 0);
  std::stable_sort(pieces.begin(), pieces.end(), [](const FilledPiece& a, const FilledPiece& b) {
    return a.unit != b.unit ? a.unit < b.unit : a.first < b.first;
  });
  std::vector<int> partial(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) partial[i] = w.partial_count[pieces[i].unit]++;
  int offset = 0;
  for (int u = 0; u < units; ++u) {
    w.partial_offset.push_back(offset);
    offset += w.partial_count[u];
    w.max_partials = std::max(w.max_partials, w.partial_count[u]);
  }
  std::vector<std::size_t> order(pieces.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return pieces[a].start != pieces[b].start ? pieces[a].start < pieces[b].start : pieces[a].slot < pieces[b].slot;
  });
  for (std::size_t i : order) {
    const FilledPiece& f = pieces[i];
    w.chunks.push_back({f.unit / heads, f.unit % heads, f.first, f.tiles, partial[i]});
    w.chunk_tiles = std::max(w.chunk_tiles, f.tiles);
  }
  return w;
}

}  // namespace

DecodeWorkPartition partition_decode_work(const std::vector<int>& lengths, int heads, int tile_tokens, int slots,
                                          int min_chunk_tiles, int window, int overhead_tiles, bool fill_slots) {
  if (heads < 1 || tile_tokens < 1 || slots < 1 || min_chunk_tiles < 1 || overhead_tiles < 0)
    throw std::invalid_argument(
        "partition_decode_work: heads, tile size, slots and the least chunk must be >= 1, the chunk overhead >= 0");
  std::vector<int> first(lengths.size()), tiles(lengths.size());
  std::int64_t total = 0;
  int longest = 0;
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] < 1)
      throw std::invalid_argument("partition_decode_work: sequence " + std::to_string(s) + " has length " +
                                  std::to_string(lengths[s]) + " (must be >= 1)");
    first[s] = (window > 0 ? std::max(0, lengths[s] - window) : 0) / tile_tokens;
    tiles[s] = (lengths[s] + tile_tokens - 1) / tile_tokens - first[s];
    total += std::int64_t(tiles[s]) * heads;
    longest = std::max(longest, tiles[s]);
  }
  const auto count = [](int n, int size) { return (n + size - 1) / size; };
  const auto chunks_at = [&](int size) {
    std::int64_t c = 0;
    for (int n : tiles) c += std::int64_t(count(n, size)) * heads;
    return c;
  };
  const auto sizes_at = [&](int size) {
    std::vector<int> out;
    for (int n : tiles)
      for (int h = 0; h < heads; ++h)
        for (int c = count(n, size), k = 0; k < c; ++k) out.push_back(chunk_begin(n, c, k + 1) - chunk_begin(n, c, k));
    std::stable_sort(out.begin(), out.end(), std::greater<>());
    return out;
  };
  // Candidates: the smallest chunk that fits every chunk in one wave of the slots (if the units
  // fit at all), and chunks of total / (slots x waves) for a few waves.
  std::vector<int> candidates;
  if (chunks_at(std::max(longest, min_chunk_tiles)) <= slots) {
    int lo = min_chunk_tiles, hi = std::max(longest, min_chunk_tiles);
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (chunks_at(mid) <= slots) hi = mid;
      else lo = mid + 1;
    }
    candidates.push_back(lo);
  }
  for (std::int64_t waves : {1, 2, 4, 8})
    candidates.push_back(int(std::max<std::int64_t>(min_chunk_tiles, (total + slots * waves - 1) / (slots * waves))));
  // Largest first; a smaller chunk (more CTA starts, partials and combine work, which the
  // model prices only roughly) must end kSmallerChunkGain earlier in the model to be taken.
  std::sort(candidates.begin(), candidates.end(), std::greater<>());
  constexpr double kSmallerChunkGain = 0.05;
  int best = 0;
  std::int64_t best_end = 0;
  for (int size : candidates) {
    const std::int64_t end = finish_time(sizes_at(size), slots, overhead_tiles);
    if (best == 0 || double(end) < double(best_end) * (1.0 - kSmallerChunkGain)) {
      best = size;
      best_end = end;
    }
  }
  // The filled plan is only considered where the even cut leaves slots idle in a later wave
  // (see below), so a batch the even cut runs in one wave skips its search.
  if (fill_slots && chunks_at(best) > slots) {
    // The filled partition at the least load that places every tile, where it ends clearly
    // earlier in the model than the even cut.
    std::vector<int> unit_tiles, unit_first;
    for (std::size_t s = 0; s < tiles.size(); ++s)
      for (int h = 0; h < heads; ++h) {
        unit_tiles.push_back(tiles[s]);
        unit_first.push_back(first[s]);
      }
    const auto end_of = [&](const std::vector<FilledPiece>& pieces) {
      std::int64_t end = 0;
      for (const FilledPiece& f : pieces) end = std::max(end, f.start + f.tiles + overhead_tiles);
      return end;
    };
    // Between total / slots (plus one overhead) and a load that always fits: every tile in one
    // slot, each a piece of its own.
    std::int64_t lo = (total + slots - 1) / slots + overhead_tiles, hi = total + std::int64_t(overhead_tiles) * (total + 1);
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (fill_slots_at(unit_tiles, unit_first, slots, min_chunk_tiles, overhead_tiles, mid).empty()) lo = mid + 1;
      else hi = mid;
    }
    std::vector<FilledPiece> pieces = fill_slots_at(unit_tiles, unit_first, slots, min_chunk_tiles, overhead_tiles, lo);
    // Taken only where the even cut leaves slots idle in a later wave (the condition above) and
    // the filled plan cuts no unit into more partials: on the H200 the filled plan was slower where the even cut
    // had one wave (a second piece a sequence costs a CTA start and a merge) or fewer
    // partials a unit (their merge), and the model prices neither well; the CTAs still
    // running take the bandwidth an idle slot leaves, so its gain is smaller than modelled.
    std::vector<int> partials(unit_tiles.size(), 0);
    for (const FilledPiece& f : pieces) ++partials[f.unit];
    int even_partials = 0;
    for (int n : tiles) even_partials = std::max(even_partials, count(n, best));
    const bool no_more_partials = std::all_of(partials.begin(), partials.end(), [&](int n) { return n <= even_partials; });
    if (no_more_partials && double(end_of(pieces)) < double(best_end) * (1.0 - kSmallerChunkGain))
      return filled_partition(std::move(pieces), static_cast<int>(tiles.size()), heads);
  }
  DecodeWorkPartition w;
  w.chunk_tiles = best;
  for (std::size_t s = 0; s < tiles.size(); ++s)
    for (int h = 0; h < heads; ++h) {
      const int c = count(tiles[s], best);
      w.partial_offset.push_back(static_cast<int>(w.chunks.size()));
      w.partial_count.push_back(c);
      w.max_partials = std::max(w.max_partials, c);
      for (int k = 0; k < c; ++k)
        w.chunks.push_back({int(s), h, first[s] + chunk_begin(tiles[s], c, k),
                            chunk_begin(tiles[s], c, k + 1) - chunk_begin(tiles[s], c, k), k});
    }
  std::stable_sort(w.chunks.begin(), w.chunks.end(),
                   [](const DecodeWorkChunk& a, const DecodeWorkChunk& b) { return a.tiles > b.tiles; });
  return w;
}

int decode_row_tiles(const DecodeProblem& p, TileSchedule schedule, int max_row_tiles) {
  if (max_row_tiles < 1) throw std::invalid_argument("decode_row_tiles: max_row_tiles must be >= 1");
  // The persistent and shared-tail schedules hand tiles to warps one by one from counters;
  // row tiles need every warp of a CTA on the same tiles, which only the fixed ranges give.
  if (schedule != TileSchedule::split && schedule != TileSchedule::token_balanced) return 1;
  const int needed = (p.group_size() + kDecodeMaxGroup - 1) / kDecodeMaxGroup;
  return needed > 1 ? std::min(needed, max_row_tiles) : 1;
}

int decode_group_chunks(const DecodeProblem& p, int row_tiles) {
  const int rows = kDecodeMaxGroup * row_tiles;
  return (p.group_size() + rows - 1) / rows;
}

int decode_work_pairs(const DecodeProblem& p, int row_tiles) {
  return p.batch * p.kv_heads * decode_group_chunks(p, row_tiles);
}

KernelSupport paged_decode_support() {
  KernelSupport s;
  s.head_dims = {64, 128};
  s.dtypes = {DType::bf16, DType::f16, DType::fp8_e4m3};
  // Powers of two only (page lookups shift and mask). Below 16 keys a tile spans pages and each
  // of its rows is gathered from its own page (one key a page: a radix cache's layout).
  s.page_sizes = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  return s;
}

}  // namespace schedlab::kernels
