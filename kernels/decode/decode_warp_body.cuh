// The warp bodies: where a warp's tiles come from (static, dynamic), its pipeline over them,
// the split grid's and the work list's CTAs (decode_split), and the row-tile body whose warps
// each compute every tile for their 16 rows (decode_row_tiles).
#pragma once
#include "kernels/decode/decode_cta_merge.cuh"

namespace schedlab::kernels::decode_detail {

// Where a warp's tiles come from. take() returns the next tile to issue (-1: none left);
// peek() returns what the next take() will, so that tile's page id can be fetched ahead.
// Static: warp w of a split takes tiles lo + w, lo + w + kWarps, ...
struct StaticTiles {
  int lo, step, count, i = 0;
  __device__ int peek() const { return i < count ? lo + i * step : -1; }
  __device__ int take() {
    const int t = peek();
    ++i;
    return t;
  }
};

// Dynamic: a unit's first tiles (Policy::Partition::kStaticPercent of them) are split among the warps
// that start on it, interleaved as in a static split; the rest are handed out kChunk at a
// time by a counter every warp on the unit shares. Each grab is issued kChunk - 1 tiles
// before its tiles are needed: under load an atomic's round trip is as long as a tile's copy,
// and grabbing one tile a single tile ahead made every shape 15-35% slower on the H200.
template <int kChunk>
struct DynamicTiles {
  int* counter;
  int lo, n, first_dynamic;  // the unit's tiles are lo .. lo + n - 1; lo + first_dynamic + k is handed out
  int cur, left, step;       // the range being handed out: `left` tiles cur, cur + step, ...
  int pending = 0;           // lane 0: the counter value of the grab in flight
  bool grabbed = false, done = false;
  __device__ void maybe_grab() {
    if (grabbed || done || left > kChunk - 1) return;
    pending = gpu::lane_id() == 0 ? atomicAdd(counter, kChunk) : 0;
    grabbed = true;
  }
  __device__ void refill() {  // the range is spent: the grab in flight is the next one
    const int k = first_dynamic + gpu::shfl(pending, 0);
    grabbed = false;
    cur = lo + k;
    step = 1;
    left = k < n ? min(kChunk, n - k) : 0;
    done = left == 0;
    maybe_grab();
  }
  __device__ void start() {
    maybe_grab();
    if (left == 0) refill();
  }
  __device__ int peek() const { return left > 0 ? cur : -1; }
  __device__ int take() {
    const int t = peek();
    if (t < 0) return t;
    cur += step;
    --left;
    maybe_grab();
    if (left == 0 && !done) refill();
    return t;
  }
};

// STAGE issue, for one warp's own stages: its source's next tile into stage b; returns the
// tile (-1: none left). next_page holds the page id of src.peek(): with kPrefetchPageIndex each
// issue fetches the next one, a tile ahead.
template <class Policy, DType kKv, int kHeadDim, class Source>
__device__ __forceinline__ int issue_next(Source& src, CopyPipe<Policy, kKv, kHeadDim>& pipe, const Params& a, int seq,
                                          int kvh, int first_key, int seq_len, int& next_page, int b) {
  if constexpr (Policy::Warp::kStageHints) gpu::set_priority<1>();
  const int tile = src.take();
  int page = 0;
  if (tile >= 0) {
    page = Policy::Warp::kPrefetchPageIndex ? next_page : page_of<Policy>(a, seq, tile);
    if (Policy::Warp::kPrefetchPageIndex && src.peek() >= 0) next_page = page_of<Policy>(a, seq, src.peek());
  }
  int copied = tile;  // a stale-tile fault copies an earlier tile in its place
  if (fault_hits<Policy, DecodeFault::stale_tile>(tile, first_key, seq_len) && tile >= 2) {
    copied = tile - 2;
    page = page_of<Policy>(a, seq, copied);
  }
  pipe.issue(b, a, kvh, copied, page, seq_len);
  if constexpr (Policy::Warp::kStageHints) gpu::sched_barrier<gpu::Sched::NONE>();
  return tile;
}

// A warp's own tiles of the row-tile body: its source and copy pipe, and the page id ahead.
template <class Policy, DType kKv, int kHeadDim>
struct TileFeed {
  StaticTiles& src;
  CopyPipe<Policy, kKv, kHeadDim>& pipe;
  const Params& a;
  int seq, kvh, first_key, seq_len;
  int next_page;  // the page id of src.peek(), peeled before the first issue
  __device__ int issue(int b) {
    return issue_next<Policy, kKv, kHeadDim>(src, pipe, a, seq, kvh, first_key, seq_len, next_page, b);
  }
};

// STAGE qk_softmax, then STAGE pv, on one landed tile for the warp's 16 query rows.
template <class Policy, DType kKv, int kHeadDim>
__device__ __forceinline__ void compute_tile(Softmax<kHeadDim>& st, const std::uint32_t (&qa)[kHeadDim / 16][4],
                                             const unsigned char* k_tile, const unsigned char* v_tile, int tile,
                                             int first_key, int seq_len, float scale_log2) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  float s[2][4];
  std::uint32_t pa[4];
  // STAGE qk_softmax (priority 0 under stage hints)
  if constexpr (Policy::Warp::kStageHints) gpu::set_priority<0>();
  if constexpr (T::kFp8) qk_scores_fp8<Policy, kHeadDim>(s, qa, k_tile);
  else qk_scores<Policy, kKv, kHeadDim>(s, qa, k_tile);
  online_softmax<Policy, kKv, kHeadDim>(s, st, pa, scale_log2, tile, first_key, seq_len);
  if constexpr (Policy::Warp::kStageHints) {
    gpu::sched_barrier<gpu::Sched::NONE>();
    gpu::set_priority<1>();
  }
  // STAGE pv (priority 1 under stage hints)
  if constexpr (T::kFp8) pv_accumulate_fp8<Policy, kHeadDim>(st, pa, v_tile);
  else pv_accumulate<Policy, kKv, kHeadDim>(st, pa, v_tile);
  if constexpr (Policy::Warp::kStageHints) gpu::sched_barrier<gpu::Sched::NONE>();
}

// The warp's pipeline over the tiles of its source: kStages tiles in flight in its own
// shared-memory stages, each computed (qk, softmax, pv) once its copies have landed. (The
// compute stages are written out here rather than through compute_tile, which the row-tile
// body uses: with that call nvcc scheduled the fp8 head dim 64 shared-tail kernels
// differently, and this body's machine code is kept as it was.)
template <class Policy, DType kKv, int kHeadDim, class Source>
__device__ __forceinline__ void stream_tiles(Source& src, CopyPipe<Policy, kKv, kHeadDim>& pipe, Softmax<kHeadDim>& st,
                                             const std::uint32_t (&qa)[kHeadDim / 16][4], const Params& a, int seq,
                                             int kvh, int first_key, int seq_len, float scale_log2,
                                             gpu::WaitProbe& probe) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  constexpr int kStagesHere = kStages<Policy, kKv>;
  // The first page id is peeled; with kPrefetchPageIndex each issue then fetches the next one.
  int next_page = src.peek() >= 0 ? page_of<Policy>(a, seq, src.peek()) : 0;
  auto issue = [&](int b) {
    return issue_next<Policy, kKv, kHeadDim>(src, pipe, a, seq, kvh, first_key, seq_len, next_page, b);
  };
  int in_flight[kStagesHere];  // tile of each stage, oldest first (-1: none)
#pragma unroll
  for (int i = 0; i < kStagesHere; ++i) in_flight[i] = issue(i);

  for (int i = 0; in_flight[0] >= 0; ++i) {
    const int b = i % kStagesHere;
    probe.before();
    pipe.wait(b, min(kDecodeTileTokens, seq_len - in_flight[0] * kDecodeTileTokens));
    probe.after(gpu::WaitPoint::AsyncCopy);
    float s[2][4];
    std::uint32_t pa[4];
    // STAGE qk_softmax (priority 0 under stage hints)
    if constexpr (Policy::Warp::kStageHints) gpu::set_priority<0>();
    if constexpr (T::kFp8) qk_scores_fp8<Policy, kHeadDim>(s, qa, pipe.k(b));
    else qk_scores<Policy, kKv, kHeadDim>(s, qa, pipe.k(b));
    online_softmax<Policy, kKv, kHeadDim>(s, st, pa, scale_log2, in_flight[0], first_key, seq_len);
    if constexpr (Policy::Warp::kStageHints) {
      gpu::sched_barrier<gpu::Sched::NONE>();
      gpu::set_priority<1>();
    }
    // STAGE pv (priority 1 under stage hints)
    if constexpr (T::kFp8) pv_accumulate_fp8<Policy, kHeadDim>(st, pa, pipe.v(b));
    else pv_accumulate<Policy, kKv, kHeadDim>(st, pa, pipe.v(b));
    if constexpr (Policy::Warp::kStageHints) gpu::sched_barrier<gpu::Sched::NONE>();
    gpu::warp_sync();  // every lane is done reading this stage before it is refilled
#pragma unroll
    for (int j = 0; j + 1 < kStagesHere; ++j) in_flight[j] = in_flight[j + 1];
    // STAGE issue (priority 1 under stage hints)
    in_flight[kStagesHere - 1] = issue(b);
  }
  pipe.drain();
}

// The row-tile body's pipeline. Warp w holds query rows 16 (w % kRowTiles) .. + 15 and computes
// every tile of the CTA's range for them; the warps of one column (w / kRowTiles) take the
// range's tiles in steps of kColumns. The copies are the split grid's: warp w copies tiles
// lo + w, lo + w + kWarps, ... into its own stages (`feed`), so the CTA keeps the same bytes in
// flight, each tile is read from memory once, and range tile t sits in warp t % kWarps's stage
// (t / kWarps) % kStages. One CTA barrier a step: past it, the step's tiles have landed (their
// owners waited before it) and every warp is done with the previous step's tiles, whose stages
// their owners then refill. A warp owns a tile every kRowTiles >= 2 steps, so its refill is
// committed before its next wait, which therefore allows kStages - 1 groups in flight as the
// split grid's does.
template <class Policy, DType kKv, int kHeadDim>
__device__ __forceinline__ void stream_shared_tiles(TileFeed<Policy, kKv, kHeadDim>& feed,
                                                    const unsigned char* smem, Softmax<kHeadDim>& st,
                                                    const std::uint32_t (&qa)[kHeadDim / 16][4], int lo, int n,
                                                    bool has_rows, float scale_log2, gpu::WaitProbe& probe) {
  using Pipe = CopyPipe<Policy, kKv, kHeadDim>;
  using T = TileOf<Policy, kKv, kHeadDim>;
  constexpr int kWarps = kWarpsOf<Policy, kKv>, kRowTiles = Policy::RowTiles::kMaxRowTiles, kColumns = kWarps / kRowTiles;
  constexpr int kStagesHere = kStages<Policy, kKv>;
  static_assert(kRowTiles >= 2 && kWarps % kRowTiles == 0, "row tiles split a CTA's warps evenly, two or more a column");
  const int column = gpu::warp_id() / kRowTiles;
  int in_flight[kStagesHere];  // this warp's own tiles, oldest first (-1: none)
#pragma unroll
  for (int i = 0; i < kStagesHere; ++i) in_flight[i] = feed.issue(i);
  int owned = 0, refill = -1;  // own tiles consumed; the stage the last step emptied (-1: none)
  for (int t0 = 0; t0 < n; t0 += kColumns) {
    const bool mine = in_flight[0] >= 0 && in_flight[0] - lo < t0 + kColumns;
    if (mine) {
      probe.before();
      feed.pipe.wait(owned % kStagesHere, min(kDecodeTileTokens, feed.seq_len - in_flight[0] * kDecodeTileTokens));
      probe.after(gpu::WaitPoint::AsyncCopy);
    }
    probe.before();
    gpu::block_sync_shared();  // the step's tiles are visible; the last step's stages are free
    probe.after(gpu::WaitPoint::BlockBarrier);
    // STAGE issue (priority 1 under stage hints)
    if (refill >= 0) in_flight[kStagesHere - 1] = feed.issue(refill);
    refill = -1;
    if (mine) {
      refill = owned++ % kStagesHere;
#pragma unroll
      for (int j = 0; j + 1 < kStagesHere; ++j) in_flight[j] = in_flight[j + 1];
      in_flight[kStagesHere - 1] = -1;  // refilled after the next barrier
    }
    const int t = t0 + column;
    if (t < n && has_rows) {
      const unsigned char* k_tile = Pipe::k_of(smem, t % kWarps, (t / kWarps) % kStagesHere);
      compute_tile<Policy, kKv, kHeadDim>(st, qa, k_tile, k_tile + T::kStageBytes, lo + t, feed.first_key,
                                          feed.seq_len, scale_log2);
    }
  }
  feed.pipe.drain();
}

// What a CTA works on: one (sequence, KV head, chunk of at most unit_rows query heads): 16, or
// 16 x row_tiles in the row-tile body.
struct WorkUnit {
  int seq, kvh, head0, rows, seq_len, first_key, tile_lo, tile_hi;
  __device__ WorkUnit(const Params& a, int seq_, int kvh_, int chunk, int unit_rows = kDecodeMaxGroup)
      : seq(seq_), kvh(kvh_) {
    const int group = a.q_heads / a.kv_heads;
    head0 = kvh * group + chunk * unit_rows;
    rows = min(unit_rows, group - chunk * unit_rows);
    seq_len = a.context_lens[seq];
    first_key = a.window > 0 ? max(0, seq_len - a.window) : 0;
    tile_lo = first_key / kDecodeTileTokens;
    tile_hi = (seq_len + kDecodeTileTokens - 1) / kDecodeTileTokens;
  }
  // Units are numbered (sequence, KV head, chunk), chunk fastest.
  __device__ static WorkUnit of(const Params& a, int unit) {
    const int chunks = (a.q_heads / a.kv_heads + kDecodeMaxGroup - 1) / kDecodeMaxGroup;
    return WorkUnit(a, unit / (a.kv_heads * chunks), (unit / chunks) % a.kv_heads, unit % chunks);
  }
};

// The (split, KV head x chunk, sequence) grid: CTA `split` covers tiles_per_split tiles of its
// unit, its warps interleaved over them; the warps then merge in shared memory. With a shared
// tail (a.schedule set) the unit's first kStaticPercent tiles are interleaved over all its
// splits' warps and the rest come from the unit's counter, kChunk at a time.
//
// A token-balanced plan (a.work set) gives each CTA its unit, tile range and partial index from
// the work list instead: grid (chunks), one entry per CTA.
struct CtaWork {
  int seq, y, split, first_tile, tiles;  // y: KV head x chunk; first_tile < 0: the split's share
  // The tiles [lo, hi) of unit u this CTA covers.
  __device__ int2 range(const Params& a, const WorkUnit& u) const {
    const int lo = first_tile >= 0 ? first_tile : u.tile_lo + split * a.tiles_per_split;
    return {lo, first_tile >= 0 ? lo + tiles : min(u.tile_hi, lo + a.tiles_per_split)};
  }
};
// Warp w of `warps` takes tiles lo + w, lo + w + warps, ... of [lo, hi).
__device__ __forceinline__ StaticTiles interleaved_tiles(int2 range, int w, int warps) {
  const int n = range.y - range.x - w;
  return StaticTiles{range.x + w, warps, n > 0 ? (n + warps - 1) / warps : 0};
}
template <class Policy>
__device__ __forceinline__ CtaWork cta_work(const Params& a, int units_per_seq) {
  if constexpr (Policy::Partition::kTileSchedule == TileSchedule::token_balanced) {
    if (a.work) {
      const int4 c = reinterpret_cast<const int4*>(a.work)[blockIdx.x];
      return {c.x / units_per_seq, c.x % units_per_seq, c.w, c.y, c.z};
    }
  }
  return {int(blockIdx.z), int(blockIdx.y), int(blockIdx.x), -1, 0};
}

// The end of a unit's CTA, every body alike: the dependent combine may be scheduled, the warps
// merge their rows in shared memory (combine_warps) and write the output, whole when the unit
// is one chunk, else a partial, which a token-balanced plan that merges in the kernel merges in
// the unit's last chunk to finish.
template <class Policy, DType kKv, int kHeadDim, int kRowTiles = 1, class Columns = Tile<kKv, kHeadDim>,
          class Sync = CtaSync<0>>
__device__ __forceinline__ void finish_unit(Softmax<kHeadDim>& st, unsigned char* smem, const Params& a, const CtaWork& cw,
                                            const WorkUnit& u, int chunks, gpu::WaitProbe& probe, int* word = nullptr) {
  gpu::allow_dependent_launch();  // the split combine may be scheduled once every CTA is here
  probe.before();
  Sync::sync();  // the K/V stages become the warps' combine space
  probe.after(gpu::WaitPoint::BlockBarrier);
  const int unit = cw.seq * a.kv_heads * chunks + cw.y;
  const int parts = unit_parts<Policy>(a, unit);
  combine_warps<Policy, kKv, kHeadDim, kRowTiles, Columns, Sync>(st, reinterpret_cast<float*>(smem), a, u.seq, u.kvh,
                                                                 cw.split, u.head0, u.rows, parts == 1);
  if constexpr (Policy::Partition::kTileSchedule == TileSchedule::token_balanced)
    if (a.unit_partials && a.schedule && parts > 1)
      merge_unit_if_last<Policy, kKv, kHeadDim, Sync>(a, unit, u.seq, u.head0, u.rows, parts, word);
}

template <class Policy, DType kKv, int kHeadDim>
__device__ void decode_split(const Params& a, unsigned char* smem, gpu::WaitProbe& probe) {
  const int chunks = (a.q_heads / a.kv_heads + kDecodeMaxGroup - 1) / kDecodeMaxGroup;
  const CtaWork cw = cta_work<Policy>(a, a.kv_heads * chunks);
  const int split = cw.split, w = gpu::warp_id();
  const WorkUnit u(a, cw.seq, cw.y / chunks, cw.y % chunks);
  std::uint32_t qa[kHeadDim / 16][4];
  load_q<kKv, kHeadDim>(qa, a, u.seq, u.head0, u.rows);
  const float scale_log2 = a.scale_log2 * (a.k_scale ? a.k_scale[u.kvh] : 1.f);
  Softmax<kHeadDim> st;
  CopyPipe<Policy, kKv, kHeadDim> pipe(smem, w);
  auto run = [&](auto& src) {
    stream_tiles<Policy, kKv, kHeadDim>(src, pipe, st, qa, a, u.seq, u.kvh, u.first_key, u.seq_len, scale_log2, probe);
  };
  bool shared = false;  // a shared tail (a token-balanced plan's counters are its arrivals)
  if constexpr (Policy::Partition::kTileSchedule != TileSchedule::split) shared = a.schedule != nullptr && a.work == nullptr;
  if (shared) {
    const int n = u.tile_hi - u.tile_lo, warps = a.num_splits * kWarpsOf<Policy, kKv>;
    const int share = n * Policy::Partition::kStaticPercent / 100 / warps;
    DynamicTiles<2 * kStages<Policy, kKv>> src{a.schedule + blockIdx.z * gridDim.y + blockIdx.y, u.tile_lo, n,
                                                share * warps, u.tile_lo + split * kWarpsOf<Policy, kKv> + w, share, warps};
    src.start();
    run(src);
  } else {
    StaticTiles src = interleaved_tiles(cw.range(a, u), w, kWarpsOf<Policy, kKv>);
    run(src);
  }
  finish_unit<Policy, kKv, kHeadDim>(st, smem, a, cw, u, chunks, probe);
}

// A group above 16 in one CTA (Policy::RowTiles::kMaxRowTiles): the split grid's or the work list's CTAs
// over units of 16 x row_tiles query heads; warp w holds row tile w % kMaxRowTiles (no rows: it
// only copies) and computes every tile of the range for it (stream_shared_tiles); the warps
// holding the same rows then merge in shared memory.
template <class Policy, DType kKv, int kHeadDim>
__device__ void decode_row_tiles(const Params& a, unsigned char* smem, gpu::WaitProbe& probe) {
  const int unit_rows = kDecodeMaxGroup * a.row_tiles;
  const int chunks = (a.q_heads / a.kv_heads + unit_rows - 1) / unit_rows;
  const CtaWork cw = cta_work<Policy>(a, a.kv_heads * chunks);
  const int w = gpu::warp_id(), row0 = kDecodeMaxGroup * (w % Policy::RowTiles::kMaxRowTiles);
  const WorkUnit u(a, cw.seq, cw.y / chunks, cw.y % chunks, unit_rows);
  const int rows = max(0, min(kDecodeMaxGroup, u.rows - row0));  // this warp's query rows
  std::uint32_t qa[kHeadDim / 16][4];
  load_q<kKv, kHeadDim>(qa, a, u.seq, u.head0 + row0, rows);
  const float scale_log2 = a.scale_log2 * (a.k_scale ? a.k_scale[u.kvh] : 1.f);
  Softmax<kHeadDim> st;
  CopyPipe<Policy, kKv, kHeadDim> pipe(smem, w);
  const int2 range = cw.range(a, u);
  StaticTiles own = interleaved_tiles(range, w, kWarpsOf<Policy, kKv>);
  TileFeed<Policy, kKv, kHeadDim> feed{own, pipe, a, u.seq, u.kvh, u.first_key, u.seq_len,
                                       own.peek() >= 0 ? page_of<Policy>(a, u.seq, own.peek()) : 0};
  stream_shared_tiles<Policy, kKv, kHeadDim>(feed, smem, st, qa, range.x, range.y - range.x, rows > 0, scale_log2, probe);
  finish_unit<Policy, kKv, kHeadDim, Policy::RowTiles::kMaxRowTiles>(st, smem, a, cw, u, chunks, probe);
}

}  // namespace schedlab::kernels::decode_detail
