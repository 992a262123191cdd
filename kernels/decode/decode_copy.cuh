// Where a tile comes from and how it lands: page lookups, the async (or bulk) copies of a
// K/V tile into a warp's stages, and a warp's pipeline of stages (CopyPipe).
#pragma once
#include "kernels/decode/decode_storage.cuh"

namespace schedlab::kernels::decode_detail {

// kPow2Pages: the page size is a power of two (the host accepts no other, paged_decode.cu), so
// the division is a shift by its bit index. Pages smaller than a tile: each lane's page is that
// of the tile's row lane % 16, which issue_tile gathers from it; fetched ahead as the tile's one
// page is (kPrefetchPageIndex, the warpgroup body's steps), so the lookup's latency is hidden
// the same way. A row past the sequence reads an entry of the sequence's row of the block table
// that no copy uses (clamped to the row).
template <class Policy, bool kPow2Pages = false>
__device__ __forceinline__ int page_of(const Params& a, int seq, int tile) {
  if (a.page_size < kDecodeTileTokens) {
    const int slot = (tile * kDecodeTileTokens + gpu::lane_id() % kDecodeTileTokens) >> (__ffs(a.page_size) - 1);
    return a.block_table[std::int64_t(seq) * a.max_pages_per_seq + min(slot, a.max_pages_per_seq - 1)];
  }
  if constexpr (kPow2Pages)
    return a.block_table[std::int64_t(seq) * a.max_pages_per_seq + ((tile * kDecodeTileTokens) >> (__ffs(a.page_size) - 1))];
  else
    return a.block_table[std::int64_t(seq) * a.max_pages_per_seq + (tile * kDecodeTileTokens) / a.page_size];
}

// Fault injection (Policy::kFault, tests only): whether `tile` is the one a fault of kind
// kFault hits, the middle tile of its (sequence, KV head). Constant false unless the policy
// asks for that fault, so shipped policies compile no trace of it.
template <class Policy, DecodeFault kFault>
__device__ __forceinline__ bool fault_hits(int tile, int first_key, int seq_len) {
  if constexpr (Policy::kFault != kFault) return false;
  else return tile == (first_key / kDecodeTileTokens + (seq_len + kDecodeTileTokens - 1) / kDecodeTileTokens) / 2;
}

// Byte offset of a tile's first token of KV head kvh in the K (and V) pool: its 16 tokens lie
// in one page, contiguous. 64-bit (a pool can pass 4 GiB).
template <class Policy, DType kKv, int kHeadDim, bool kPow2Pages = false>
__device__ __forceinline__ std::int64_t tile_base(const Params& a, int kvh, int tile, int page) {
  const int slot0 = kPow2Pages ? (tile * kDecodeTileTokens) & (a.page_size - 1) : (tile * kDecodeTileTokens) % a.page_size;
  return ((std::int64_t(page) * a.kv_heads + kvh) * a.page_size + slot0) *
         std::int64_t(TileOf<Policy, kKv, kHeadDim>::kRawRowBytes);
}

// Pages smaller than a tile (page sizes 1 to 8; one token a page is the layout of a radix
// cache): the tile's rows lie in 16 / page_size pages. Byte offset of a row's first byte in the
// K (and V) pool, its page `page` (lane `row`'s page_of, passed round the warp).
template <class Policy, DType kKv, int kHeadDim>
__device__ __forceinline__ std::int64_t gathered_row_base(const Params& a, int kvh, int page, int token) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  return ((std::int64_t(page) * a.kv_heads + kvh) * a.page_size + (token & (a.page_size - 1))) *
         std::int64_t(T::kRawRowBytes);
}

// STAGE issue: async copies of the K and V tile into this warp's buffer (16-bit KV: at rows
// row0 .. row0 + 15 of the layout Dst, which the warpgroup body's steps use). Offsets are
// 64-bit (a pool can pass 4 GiB); tokens past seq_len are zero-filled, not read. A page holds
// the whole tile (page_size >= 16) unless the page size is smaller, when each row is gathered
// from its own page (`page` is then this lane's page_of: row lane % 16's page). The page size
// picks one of two copies of the chunk loop, once a tile: chosen per chunk inside one loop,
// the gathered address (a shuffle and 64-bit products a chunk) was computed beside the
// contiguous one, and fp8 at page 16, whose warps wait on issue latency, ran 4-7% slower
// (kernels/decode/LOG.md, "The page-size branch out of the copy loop").
// AMD keeps the one loop, the choice made per chunk: with two copies of the loop clang gave
// decode_tile_schedule's persistent fp8 kernel 8 bytes of scratch on gfx942.
// kParts: which of the tile's K (1) and V (2) this issue copies.
#if defined(__HIP_PLATFORM_AMD__)
inline constexpr bool kCopyLoopPerPageKind = false;
#else
inline constexpr bool kCopyLoopPerPageKind = true;
#endif
template <class Policy, DType kKv, int kHeadDim, class Dst = TileOf<Policy, kKv, kHeadDim>, bool kPow2Pages = false,
          int kParts = 3>
__device__ __forceinline__ void issue_tile(const Params& a, unsigned char* k_buf, unsigned char* v_buf, int kvh,
                                           int tile, int page, int seq_len, int row0 = 0) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  constexpr int kChunksPerRow = T::kRawRowBytes / 16;
  // src_of(chunk, row, col, token): the chunk's byte offset in the K (and V) pool.
  auto copy_chunks = [&](auto src_of) {
#pragma unroll
    for (int j = 0; j < T::kRawChunksPerLane; ++j) {
      const int chunk = gpu::lane_id() + j * kWarpSize;
      const int row = chunk / kChunksPerRow, col = chunk % kChunksPerRow;
      const int token = tile * kDecodeTileTokens + row;
      const bool valid = token < seq_len;
      const std::int64_t src = src_of(chunk, row, col, token);
      const int dst = T::kFp8 ? T::raw_offset(row, col) : Dst::offset(row0 + row, col);
      if constexpr ((kParts & 1) != 0) gpu::async_copy_16(k_buf + dst, a.k_pool + src, valid);
      if constexpr ((kParts & 2) != 0) gpu::async_copy_16(v_buf + dst, a.v_pool + src, valid);
    }
  };
  const bool gather = a.page_size < kDecodeTileTokens;
  auto gathered = [&](int row, int col, int token) {
    return gathered_row_base<Policy, kKv, kHeadDim>(a, kvh, gpu::shfl(page, row), token) + col * 16;
  };
  if constexpr (kCopyLoopPerPageKind) {
    if (gather) {
      copy_chunks([&](int, int row, int col, int token) { return gathered(row, col, token); });
    } else {
      const std::int64_t base = tile_base<Policy, kKv, kHeadDim, kPow2Pages>(a, kvh, tile, page);
      copy_chunks([&](int chunk, int, int, int) { return base + chunk * 16; });
    }
  } else {
    const std::int64_t base = gather ? 0 : tile_base<Policy, kKv, kHeadDim, kPow2Pages>(a, kvh, tile, page);
    copy_chunks([&](int chunk, int row, int col, int token) { return gather ? gathered(row, col, token) : base + chunk * 16; });
  }
}

// STAGE issue with bulk tensor copies (lane 0 alone): the K and V tile, 64 columns per box,
// counted on the stage's mbarrier `bar` (its arrival has announced 2 T::kRawBytes). Rows past
// the sequence end come along (a box is 16 rows) and are dealt with in CopyPipe::wait.
template <class Policy, DType kKv, int kHeadDim>
__device__ __forceinline__ void issue_tile_bulk(const Params& a, unsigned char* k_buf, unsigned char* v_buf,
                                                std::uint64_t* bar, int kvh, int tile, int page) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  const int row = (page * a.kv_heads + kvh) * a.page_size + (tile * kDecodeTileTokens) % a.page_size;
#pragma unroll
  for (int box = 0; box < kHeadDim / T::kBoxCols; ++box) {
    gpu::bulk_tensor_copy_2d(k_buf + box * T::kBoxBytes, &a.k_map, box * T::kBoxCols, row, bar);
    gpu::bulk_tensor_copy_2d(v_buf + box * T::kBoxBytes, &a.v_map, box * T::kBoxCols, row, bar);
  }
}

// A warp's K/V stages and how they are filled: per-lane async copies in commit groups, or bulk
// copies on the warp's own ring of full barriers (attention::FullPipeline: the warp reads a
// stage before it refills it, so no empty barrier is needed). Stages are filled and waited
// for in ring order, so `b` of issue() and wait() is the ring state's index.
template <class Policy, DType kKv, int kHeadDim>
struct CopyPipe {
  using T = TileOf<Policy, kKv, kHeadDim>;
  using S = Smem<Policy, kKv, kHeadDim>;
  static constexpr int kStagesHere = kStages<Policy, kKv>;
  using Ring = attention::FullPipeline<kStagesHere>;
  unsigned char* base;
  Ring* ring = nullptr;
  attention::PipelineState<kStagesHere> issued, landed;  // bulk: the stage a copy fills, a wait finds full
  __device__ CopyPipe(unsigned char* smem, int warp) : base(smem + warp * S::kPerWarp) {
    if constexpr (kBulk<Policy, kKv>) {
      ring = reinterpret_cast<Ring*>(smem + S::kBarriers) + warp;
      if (gpu::lane_id() == 0) {
        ring->init_full(1);
        gpu::mbarrier_init_fence();
      }
      gpu::warp_sync();
    }
  }
  __device__ unsigned char* k(int b) const { return base + b * 2 * T::kStageBytes; }
  __device__ unsigned char* v(int b) const { return base + b * 2 * T::kStageBytes + T::kStageBytes; }
  // The K tile of another warp's stage b (its V tile follows): the row-tile body reads them all.
  static __device__ const unsigned char* k_of(const unsigned char* smem, int warp, int b) {
    return smem + warp * S::kPerWarp + b * 2 * T::kStageBytes;
  }
  // tile < 0: nothing to copy (a per-lane pipe still commits an empty group, which keeps its
  // wait counts uniform; a bulk one passes the stage by).
  __device__ void issue(int b, const Params& a, int kvh, int tile, int page, int seq_len) {
    if constexpr (kBulk<Policy, kKv>) {
      if (tile >= 0 && gpu::lane_id() == 0)
        issue_tile_bulk<Policy, kKv, kHeadDim>(a, k(b), v(b), ring->producer_expect(issued, 2 * T::kRawBytes), kvh,
                                               tile, page);
      ++issued;
    } else {
      if (tile >= 0) issue_tile<Policy, kKv, kHeadDim>(a, k(b), v(b), kvh, tile, page, seq_len);
      gpu::async_commit();
    }
  }
  // Stage b (the oldest in flight) has landed and every lane may read it. A bulk copy brings
  // whole 16-row boxes: V rows past the sequence end (rows >= valid_rows) are zeroed, since P
  // is 0 there but 0 x a stale NaN is not (K rows there are masked to -inf whatever they hold).
  __device__ void wait(int b, int valid_rows) {
    if constexpr (kBulk<Policy, kKv>) {
      ring->consumer_wait(landed);
      ++landed;
      if (valid_rows < kDecodeTileTokens) {
        constexpr int kChunks = T::kRowBytes / 16;
        for (int i = gpu::lane_id(); i < (kDecodeTileTokens - valid_rows) * kChunks; i += kWarpSize)
          *reinterpret_cast<uint4*>(v(b) + T::offset(valid_rows + i / kChunks, i % kChunks)) = uint4{0, 0, 0, 0};
        gpu::fence_proxy_async_smem();  // before a later bulk copy lands in the same bytes
      }
    } else {
      gpu::async_wait<kStagesHere - 1, 2 * T::kRawChunksPerLane>();
    }
    gpu::warp_sync();
  }
  __device__ void drain() {
    if constexpr (!kBulk<Policy, kKv>) gpu::async_wait<0>();
  }
};

}  // namespace schedlab::kernels::decode_detail
