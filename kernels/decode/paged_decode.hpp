// Paged-KV decode attention (one query token per sequence, flash-decoding split-K).
// Host API: the plan (how many splits), the launch for a policy, and what it supports.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/gpu/runtime.hpp"
#include "common/harness/timeline.hpp"
#include "common/problem.hpp"
#include "kernels/decode/decode_layout.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::kernels {

struct DecodeArgs {
  const void* q;
  const void* k_pool;
  const void* v_pool;
  const int* block_table;   // device, [batch, max_pages_per_seq]
  const int* context_lens;  // device, [batch]
  const float* k_scale;     // device, [kv_heads]; fp8 only
  const float* v_scale;
  void* o;
  float* partial_o;    // [batch, q_heads, splits, head_dim] when splits > 1
  float* partial_lse;  // [batch, q_heads, splits], log2 domain
  unsigned long long* probe_slots;  // gpu::kProbeSlots wait-point counters, or null
  int* schedule;  // decode_schedule_ints(p) work counters when plan.ctas > 0: zero when allocated, left zero
  const int* work;  // token-balanced plan: DecodePlan::work.device_words() uploaded, else null
  const DecodeProblem* problem;
  int num_splits;
  harness::CtaSpan* timeline = nullptr;  // per-CTA spans, read only by a -DSCHEDLAB_CTA_TIMELINE=ON build
};

// A token-balanced plan's work list, as the kernels read it from one device buffer
// (device_words: chunks, then unit_partials, then combine_rows).
struct DecodeWorkList {
  struct Chunk {  // one CTA's work: its unit, tile range and partial index among the unit's chunks
    int unit, first_tile, tiles, partial;
    bool operator==(const Chunk&) const = default;
  };
  struct CombineRow {  // a query row the combine kernel merges: sequence x query heads + query head
    int row, partials;
    bool operator==(const CombineRow&) const = default;
  };
  std::vector<Chunk> chunks;  // CTA i computes chunks[i]
  std::vector<int> unit_partials;  // per unit: its chunks (1: whole, no merge)
  std::vector<bool> combine_merged;  // per unit: merged by the combine kernel, else by its last chunk in the decode kernel
  std::vector<CombineRow> combine_rows;  // with a combine row list: the rows a CTA merges each, then those a warp merges
  bool operator==(const DecodeWorkList&) const = default;
  // The device buffer: 4 ints per chunk, then each unit's partial count (negated where the
  // combine kernel merges it), then 2 ints per combine row (its unit's count negated).
  std::vector<int> device_words() const {
    std::vector<int> w;
    w.reserve(4 * chunks.size() + unit_partials.size() + 2 * combine_rows.size());
    for (const Chunk& c : chunks) w.insert(w.end(), {c.unit, c.first_tile, c.tiles, c.partial});
    for (std::size_t u = 0; u < unit_partials.size(); ++u) w.push_back(combine_merged[u] ? -unit_partials[u] : unit_partials[u]);
    for (const CombineRow& r : combine_rows) w.insert(w.end(), {r.row, -r.partials});
    return w;
  }
};

// Split-K plan. The heuristic: batch x kv_heads CTAs fill the GPU only when there are at
// least as many as resident CTA slots (SMs x CTAs per SM at the kernel's occupancy); below
// that the context is split so that the CTAs fill the slots in one wave (a partial second
// wave would leave most SMs idle at the end), never leaving a warp fewer than
// kMinTilesPerWarp tiles (each split also costs a partial write and a share of the combine).
//
// With a persistent schedule (TileSchedule::persistent) the grid is `ctas` persistent CTAs, never
// more than the resident slots. Each (sequence, KV head) has a tile counter; a warp joins
// one, takes its tiles one at a time, and when they run out writes its partial and joins
// the unfinished one with the most tiles left. num_splits is then the partial slots per
// query row: the warps that start on a sequence plus kDynamicJoins that may join later.
//
// With a shared tail (TileSchedule::shared_tail) and more than one split, the split CTAs of a
// (sequence, KV head) take its last tiles from a counter.
//
// With a token-balanced schedule (TileSchedule::token_balanced) the grid is one CTA per chunk of
// partition_decode_work; num_splits is then the most partials of any (sequence, KV head) and the
// combine reads each unit's own count.
//
// With row tiles (DecodePolicy::RowTiles::kMaxRowTiles > 1, split and token-balanced schedules, a GQA
// group above 16), a unit is a (sequence, KV head, chunk of 16 x row_tiles query heads) and
// its CTA reads each K/V tile once for all of them; units are counted the same way everywhere
// (decode_group_chunks with the plan's row_tiles).
struct DecodePlan {
  int num_splits = 1;
  int tiles_per_split = 0;
  int row_tiles = 1;         // 16-row tiles of query heads per CTA; above 1 the row-tile body runs
  int ctas = 0;              // persistent CTAs (TileSchedule::persistent); 0: a (split, head, sequence) grid
  bool shared_tail = false;  // split CTAs share each unit's last tiles
  // Token-balanced: what each CTA computes and how each unit's partials are merged. Empty
  // otherwise.
  DecodeWorkList work;
  // Token-balanced: a unit cut into several chunks is merged in the decode kernel by its last
  // chunk to finish (counted on one arrival counter per unit), unless some unit's merge would be
  // too long for one CTA (kMaxInKernelMergeSteps): then the combine kernel merges every cut unit.
  bool kernel_merges = false;   // some unit is merged in the decode kernel
  bool combine_merges = false;  // some unit is merged by the combine kernel
  // With a combine row list (DecodePolicy::Merge::kCombineRowList): how many of
  // work.combine_rows a CTA merges each (the first ones), and how many a warp. Both zero otherwise.
  int combine_cta_rows = 0;
  int combine_warp_rows = 0;
  bool dynamic() const { return ctas > 0; }
  bool balanced() const { return !work.chunks.empty(); }
  // Partials are written whenever a row's keys are cut among CTAs or warps.
  bool needs_partials() const { return dynamic() || num_splits > 1; }
  bool needs_combine() const { return needs_partials() && (!balanced() || combine_merges); }
  bool needs_schedule() const { return dynamic() || shared_tail || (balanced() && kernel_merges); }
};
// The default longest merge a token-balanced unit's last CTA does itself
// (DecodePolicy::Merge::kMaxInKernelMergeSteps).
inline constexpr int kMaxInKernelMergeSteps = DecodePolicy::Merge::kMaxInKernelMergeSteps;
inline constexpr int kMinTilesPerWarp = 4;

// The token-balanced work partition. Units are (sequence, head) pairs numbered sequence-major
// (head fastest); unit `seq * heads + head` covers that sequence's visible tiles. Every unit is
// cut into chunks of whole tiles, as even as its tiles allow. The chunk size is the one among a
// few candidates (the smallest that fits one wave of `slots` resident CTAs; total tiles / slots;
// that over 2, 4, 8 waves) whose chunks, handed longest first to whichever slot frees first,
// end first in a simple model (a chunk costs its tiles plus overhead_tiles); a smaller
// chunk must end clearly earlier to be taken. Never below min_chunk_tiles (a unit shorter than
// that is one chunk). Long sequences get many chunks, short ones one.
// fill_slots (DecodePolicy::Partition::kFillSlots): the filled partition instead, where the even cut runs
// in more than one wave of the slots, the filled plan cuts no unit into more partials than the
// even cut's most, and it ends clearly earlier in the same model: every slot gets about the
// same tiles, a short unit whole and the rest of the slot a piece of a long unit (pieces of one
// unit may differ in size), and the grid runs each slot's pieces one after another (chunks
// then in the order the model starts them, not longest first).
struct DecodeWorkChunk {
  int seq, head, first_tile, tiles, partial;  // partial: its index among its unit's chunks
};
struct DecodeWorkPartition {
  std::vector<DecodeWorkChunk> chunks;  // the order the grid hands them out: longest first, or filled by start
  std::vector<int> partial_count;       // per unit: its chunks, so the partials the combine merges
  std::vector<int> partial_offset;      // per unit: the chunks of the units before it
  int max_partials = 0;
  int chunk_tiles = 0;                  // the chunk size the cut aimed at (most tiles of a chunk)
};
// window > 0: a sequence sees only its last `window` keys (tiles before them are not counted).
// overhead_tiles: a CTA's start and its partial, in tiles' time (DecodePolicy::Partition::kChunkOverheadTiles).
DecodeWorkPartition partition_decode_work(const std::vector<int>& lengths, int heads, int tile_tokens, int slots,
                                          int min_chunk_tiles = 1, int window = 0,
                                          int overhead_tiles = DecodePolicy::Partition::kChunkOverheadTiles,
                                          bool fill_slots = DecodePolicy::Partition::kFillSlots);
inline constexpr int kDynamicJoins = 16;
// What the plan is asked: the device's resident CTA slots for the kernel that runs (SMs x CTAs
// per SM at its occupancy) and the policy's knobs the plan reads. DecodePlanOptions::of gives a
// policy's; the defaults are DecodePolicy's.
struct DecodePlanOptions {
  int cta_slots = 0;
  int warps = DecodePolicy::Warp::kWarps;
  // > 0 forces the (split, head, sequence) grid with that many splits, for any schedule (a
  // persistent one then runs as shared_tail).
  int forced_splits = 0;
  TileSchedule schedule = DecodePolicy::Partition::kTileSchedule;
  int chunk_overhead_tiles = DecodePolicy::Partition::kChunkOverheadTiles;
  bool fill_slots = DecodePolicy::Partition::kFillSlots;
  int max_row_tiles = DecodePolicy::RowTiles::kMaxRowTiles;  // 1: a group above 16 is cut into 16-row CTAs
  int max_merge_rows_per_warp = DecodePolicy::Merge::kMaxInKernelMergeRowsPerWarp;
  int max_merge_steps = DecodePolicy::Merge::kMaxInKernelMergeSteps;
  // > 0 (Merge::kCombineRowList): a token-balanced plan lists the rows its combine kernel merges,
  // those of more partials than this first (Merge::kCombineWarpRowMaxPartials).
  int combine_warp_row_parts = 0;

  // Policy's options for KV type kv, on cta_slots slots.
  template <class Policy>
  static DecodePlanOptions of(DType kv, int cta_slots, int forced_splits = 0) {
    const bool fp8 = kv == DType::fp8_e4m3;
    return {.cta_slots = cta_slots,
            .warps = fp8 ? Policy::Warp::kWarpsFp8 : Policy::Warp::kWarps,
            .forced_splits = forced_splits,
            .schedule = Policy::Partition::kTileSchedule,
            .chunk_overhead_tiles = fp8 ? Policy::Partition::kChunkOverheadTilesFp8 : Policy::Partition::kChunkOverheadTiles,
            .fill_slots = Policy::Partition::kFillSlots,
            .max_row_tiles = Policy::RowTiles::kMaxRowTiles,
            .max_merge_rows_per_warp = Policy::Merge::kMaxInKernelMergeRowsPerWarp,
            .max_merge_steps = Policy::Merge::kMaxInKernelMergeSteps,
            .combine_warp_row_parts = Policy::Merge::kCombineRowList ? Policy::Merge::kCombineWarpRowMaxPartials : 0};
  }
};
DecodePlan plan_decode(const DecodeProblem& p, const DecodePlanOptions& o);

// The 16-row tiles of query heads one CTA covers: more than one only for a group above 16
// under a split or token-balanced schedule whose policy allows it (at most max_row_tiles).
int decode_row_tiles(const DecodeProblem& p, TileSchedule schedule, int max_row_tiles);

// Work units: (sequence, KV head, chunk of at most 16 x row_tiles query heads).
int decode_work_pairs(const DecodeProblem& p, int row_tiles = 1);
// Its counters: next tile and joined warps per unit, the published join count per unit, the
// count of warps that have left, and a flag set once no unit has tiles left.
inline int decode_schedule_ints(const DecodeProblem& p) { return 3 * decode_work_pairs(p) + 2; }

// Throws UnsupportedProblem (a skipped case) when Policy's shared storage at p's head dim and
// KV dtype does not fit `arch`, or a device limit below it (smem_limit > 0): its warps' stages,
// and for a group above 16 under a row-tile policy that body's storage too. Host code, checked
// by the plan before anything is launched; the bytes are decode_smem_bytes's.
template <class Policy>
void require_decode_fits(const DecodeProblem& p, gpu::GpuArch arch, int smem_limit = 0) {
  const int arch_limit = gpu::smem_per_block(arch);
  const int limit = smem_limit > 0 && smem_limit < arch_limit ? smem_limit : arch_limit;
  auto check = [&](bool group_body, const char* what) {
    const int bytes = decode_smem_bytes<Policy>(p.head_dim, p.kv_dtype, arch, group_body);
    if (bytes > limit)
      throw UnsupportedProblem(std::string("paged decode: this policy's ") + what + " needs " + std::to_string(bytes) +
                               " bytes of shared memory per CTA at head_dim " + std::to_string(p.head_dim) + ", " +
                               std::string(dtype_name(p.kv_dtype)) + " KV; " + std::string(gpu::arch_name(arch)) +
                               " allows " + std::to_string(limit) + " (" + std::to_string(limit / 1024) + " KiB)");
  };
  check(false, "K/V stages");
  if (Policy::RowTiles::kMaxRowTiles > 1 && decode_row_tiles(p, Policy::Partition::kTileSchedule, Policy::RowTiles::kMaxRowTiles) > 1)
    check(true, "row-tile body");
}

// The plan for Policy on the current device (its occupancy read from the runtime).
template <class Policy>
DecodePlan plan_paged_decode(const DecodeProblem& p, int forced_splits = 0);

KernelSupport paged_decode_support();

// CTAs per KV head: a GQA group larger than 16 x row_tiles rows is split.
int decode_group_chunks(const DecodeProblem& p, int row_tiles = 1);

// Launches for Policy (declared here, instantiated per experiment in its .cu file).
template <class Policy>
void launch_paged_decode(const DecodeArgs& args, const DecodePlan& plan, gpu::api::stream_t stream);

}  // namespace schedlab::kernels
