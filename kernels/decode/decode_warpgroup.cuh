// The warpgroup row-tile body (sm_90a): a GQA group above 16 in one CTA whose four computing
// warps act as one warpgroup (wgmma), fp8 with a producer warpgroup beside them.
#pragma once
#include "kernels/decode/decode_warp_body.cuh"

namespace schedlab::kernels::decode_detail {

#if SCHEDLAB_GPU_HAS_WGMMA
// The warpgroup row-tile body (RowTileMma::warpgroup, sm_90a): units as decode_row_tiles, but
// the CTA's four warps compute as one warpgroup. Each step is kWarps
// 16-token tiles of the CTA's range, warp w copying the step's tile w into rows 16 w .. of the
// step's stage; past one CTA barrier (every warp's copy landed, the previous step's products
// done) S = Q K^T is one m64n64 wgmma per k16 step (Q and K from shared memory), the online
// softmax takes the step's 64 keys in the warp body's fragment layout (warp w holds rows
// 16 w ..), and O += P V takes P from registers and V from shared memory. Tokens past the
// range's end are zero-filled and masked, so a range need not be a multiple of a step.
// Q, the A operand, is read from shared memory (holding it in registers was measured too,
// experiments/decode_row_tile_body).
template <class G, class Op, int kHeadDim, int kTiles>
__device__ __forceinline__ void group_qk(float (&s)[kTiles][4], const unsigned char* q, const unsigned char* k) {
  auto& d = reinterpret_cast<float (&)[kTiles * 4]>(s);
  const std::uint64_t k0 = gpu::wgmma::descriptor(k, 16, 1024), q0 = gpu::wgmma::descriptor(q, 16, 1024);
  gpu::wgmma::fence();
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {  // a k16 step: 32 bytes of a 128-byte box row
    const int box = kk / 4, in_row = (kk % 4) * 32;
    const std::uint64_t b = gpu::wgmma::advance(k0, box * G::KV::kBoxBytes + in_row);
    gpu::wgmma::mma_ss<kTiles * 8, Op>(d, gpu::wgmma::advance(q0, box * G::Q::kBoxBytes + in_row), b, kk > 0);
  }
  gpu::wgmma::commit();
}
// Raw keys (GroupSmem::kRawKeys): S = (hi + lo) K^T, one e4m3 product per part and k32 step
// (32 bytes of the 128-byte rows of Q's part and of the raw K slot); the softmax divides by the
// row's s. lo's four steps come first, then hi's: an e4m3 wgmma aligns its products and the
// accumulator to their largest exponent and keeps 13 bits below it, truncated (DeepSeek-V3
// report, arXiv:2412.19437, 3.5.2), so lo's products (2^-4 of hi's or less) issued after hi's
// step of the same columns would lose their low bits to the running sum; summed first, among
// themselves, they keep them (on the H200 the worst row error over the seed sweep fell from
// 0.91 to 0.50 of the fp8 gate at MQA, no slower: decode_row_tile_body's tried;
// kernels/decode/tests/raw_keys_numerics.py models both orders). kHighOnly (the fault
// q_high_only): hi's steps alone.
template <class G, int kTiles, bool kHighOnly = false>
__device__ __forceinline__ void group_qk_raw_keys(float (&s)[kTiles][4], const unsigned char* q8, const unsigned char* k) {
  constexpr int kHigh = 0, kLow = 1;  // Q's parts, kQPartBytes apart
  auto& d = reinterpret_cast<float (&)[kTiles * 4]>(s);
  const std::uint64_t k0 = gpu::wgmma::descriptor(k, 16, 1024), q0 = gpu::wgmma::descriptor(q8, 16, 1024);
  auto step = [&](int part, int kk, bool accumulate) {
    gpu::wgmma::mma_ss<kTiles * 8, gpu::wgmma::E4m3>(d, gpu::wgmma::advance(q0, part * G::kQPartBytes + kk * 32),
                                                     gpu::wgmma::advance(k0, kk * 32), accumulate);
  };
  gpu::wgmma::fence();
  if constexpr (kHighOnly) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) step(kHigh, kk, kk > 0);
  } else {
#pragma unroll
    for (int part = kLow; part >= kHigh; --part)
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) step(part, kk, part != kLow || kk > 0);
  }
  gpu::wgmma::commit();
}
// Raw keys: one thread's chunk of a query row (8 bf16 values, chunk `chunk` of 16; the 16 lanes
// of a half-warp hold the row) as e4m3 high and low parts of the row scaled by a power of two s
// that takes its largest magnitude to [128, 256): x s - hi has at most four significant bits,
// so x s = hi + lo exactly wherever x s >= 2^-2 (e4m3's subnormals reach 2^-9), and smaller
// values are within 2^-10 of the row's largest. Written where the 128-byte e4m3 rows of the
// two BoxTiles put them; the row's 1 / s to row_scales.
template <class G>
__device__ __forceinline__ void store_q_split(unsigned char* q8, float* row_scales, const uint4& x, int row, int chunk) {
  const std::uint32_t w[4] = {x.x, x.y, x.z, x.w};
  float f[8], amax = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    amax = fmaxf(amax, fmaxf(fabsf(f[2 * i]), fabsf(f[2 * i + 1])));
  }
#pragma unroll
  for (int m = 1; m < 16; m *= 2) amax = fmaxf(amax, gpu::shfl_xor(amax, m));
  const int e = int((__float_as_uint(amax) >> 23) & 0xff) - 127;  // floor(log2 amax); -127 for 0
  const int se = min(max(7 - e, -126), 126);  // 1 / s stays a normal float (an all-zero row: 2^-126)
  const float scale = __uint_as_float(std::uint32_t(se + 127) << 23), inv = __uint_as_float(std::uint32_t(127 - se) << 23);
  std::uint32_t hi[2], lo[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float y[4], r[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) y[i] = f[4 * h + i] * scale;
    hi[h] = gpu::mma::pack4_e4m3(y[0], y[1], y[2], y[3]);
#pragma unroll
    for (int i = 0; i < 2; ++i) {  // hi back to floats (exact), the residual to e4m3
      const std::uint32_t b = gpu::mma::fp8x2_half_to_f16x2(hi[h], i);
      r[2 * i] = y[2 * i] - __half2float(__ushort_as_half(static_cast<unsigned short>(b & 0xffffu)));
      r[2 * i + 1] = y[2 * i + 1] - __half2float(__ushort_as_half(static_cast<unsigned short>(b >> 16)));
    }
    lo[h] = gpu::mma::pack4_e4m3(r[0], r[1], r[2], r[3]);
  }
  const int at = G::Q8::offset(row, chunk / 2) + (chunk % 2) * 8;
  *reinterpret_cast<uint2*>(q8 + at) = uint2{hi[0], hi[1]};
  *reinterpret_cast<uint2*>(q8 + G::kQPartBytes + at) = uint2{lo[0], lo[1]};
  if (chunk == 0) row_scales[row] = inv;
}
template <class G, class Op, int kHeadDim, int kTiles>
__device__ __forceinline__ void group_pv(Softmax<kHeadDim>& st, const std::uint32_t (&pa)[kTiles / 2][4],
                                         const unsigned char* v) {
  auto& o = reinterpret_cast<float (&)[kHeadDim / 2]>(st.o);
  gpu::wgmma::fence_operands(o);
  gpu::wgmma::fence();
  const std::uint64_t v0 = gpu::wgmma::descriptor(v, G::KV::kBoxBytes, 1024);
#pragma unroll
  for (int kk = 0; kk < kTiles / 2; ++kk)  // 16 keys; V is the transposed (MN-major) operand
    gpu::wgmma::mma_rs<kHeadDim, Op>(o, pa[kk], gpu::wgmma::advance(v0, kk * 16 * 128), true);
  gpu::wgmma::commit();
}

// fp8 KV in the warpgroup body: a warp's landed raw K and V tiles (16 tokens each,
// Tile::raw_offset) to f16 rows row0 .. row0 + 15 of the step's 16-bit K and V operands
// (V KV::kBytes after K), exactly (every e4m3 value is an f16); the scales stay where the warp
// body applies them (k_scale in the softmax scale, v_scale at the end). Every load is issued
// before the first conversion, so the warp waits on one shared-memory round trip, not eight.
// Lane l takes chunk c of row l % 16: the 8 lanes of a 16-byte access phase are 8 rows of one
// chunk, which both swizzles (the raw rows' and the BoxTile's) put in 8 bank groups; 8 chunks
// of one row would land the two BoxTile boxes' even chunks on the same 4 groups. Fp8Rows holds
// the two raw tiles between load() and store() (kParts: K, bit 0, and / or V, bit 1): with raw
// keys the producers convert V alone.
template <int kHeadDim>
struct Fp8Rows {
  using T = Tile<DType::fp8_e4m3, kHeadDim>;
  static_assert(kDecodeTileTokens * T::kRawChunksPerRow % kWarpSize == 0, "whole chunks per lane");
  static constexpr int kIters = kDecodeTileTokens * T::kRawChunksPerRow / kWarpSize;
  uint4 v[2][kIters];  // [K, V][chunk]
  template <int kParts = 3>
  __device__ __forceinline__ void load(const unsigned char* k_raw, const unsigned char* v_raw) {
#pragma unroll
    for (int kv = 0; kv < 2; ++kv)
#pragma unroll
      for (int it = 0; it < kIters; ++it) {
        if (!(kParts >> kv & 1)) continue;
        const int i = gpu::lane_id() + it * kWarpSize;
        v[kv][it] = *reinterpret_cast<const uint4*>((kv ? v_raw : k_raw) + T::raw_offset(i % kDecodeTileTokens, i / kDecodeTileTokens));
      }
  }
  template <class KV, int kParts = 3>
  __device__ __forceinline__ void store(unsigned char* k_dst, unsigned char* v_dst, int row0) const {
    auto f16x2 = [](std::uint32_t w, int half) { return gpu::mma::fp8x2_half_to_f16x2(w, half); };
#pragma unroll
    for (int kv = 0; kv < 2; ++kv)
#pragma unroll
      for (int it = 0; it < kIters; ++it) {
        if (!(kParts >> kv & 1)) continue;
        const int i = gpu::lane_id() + it * kWarpSize, row = i % kDecodeTileTokens, c = i / kDecodeTileTokens;
        const uint4& x = v[kv][it];
        unsigned char* d = kv ? v_dst : k_dst;
        *reinterpret_cast<uint4*>(d + KV::offset(row0 + row, 2 * c)) = uint4{f16x2(x.x, 0), f16x2(x.x, 1), f16x2(x.y, 0), f16x2(x.y, 1)};
        *reinterpret_cast<uint4*>(d + KV::offset(row0 + row, 2 * c + 1)) = uint4{f16x2(x.z, 0), f16x2(x.z, 1), f16x2(x.w, 0), f16x2(x.w, 1)};
      }
  }
};
template <int kHeadDim, class KV>
__device__ __forceinline__ void convert_fp8_rows(unsigned char* dst, const unsigned char* k_raw, const unsigned char* v_raw,
                                                 int row0) {
  Fp8Rows<kHeadDim> rows;
  rows.load(k_raw, v_raw);
  rows.template store<KV>(dst, dst + KV::kBytes, row0);
}
// Q's 64 rows (past the unit's rows: zeros) in shared memory as the operand type (fp8 KV: bf16
// queries to f16, as the warp body does; raw keys: the e4m3 split and the rows' 1 / s,
// store_q_split). Every load is issued before the first store: one round trip for the CTA's Q,
// not one per chunk. The computing warps' threads call it.
template <class G, DType kKv, int kHeadDim>
__device__ __forceinline__ void load_group_q(const Params& a, const WorkUnit& u, unsigned char* smem) {
  constexpr int kChunks = kHeadDim * 2 / 16, kThreads = G::kWarps * kWarpSize;
  constexpr int kPerThread = G::kWarps * kDecodeMaxGroup * kChunks / kThreads;
  unsigned char* q_smem = smem + G::kQ;
  const auto* q = static_cast<const unsigned char*>(a.q);
  uint4 v[kPerThread];
#pragma unroll
  for (int c = 0; c < kPerThread; ++c) {
    const int i = threadIdx.x + c * kThreads, row = i / kChunks, chunk = i % kChunks;
    v[c] = row < u.rows ? *reinterpret_cast<const uint4*>(q + ((std::size_t(u.seq) * a.q_heads + u.head0 + row) * kHeadDim) * 2 + chunk * 16)
                        : uint4{0, 0, 0, 0};
  }
#pragma unroll
  for (int c = 0; c < kPerThread; ++c) {
    const int i = threadIdx.x + c * kThreads;
    if constexpr (G::kRawKeys) {
      store_q_split<G>(q_smem, reinterpret_cast<float*>(smem + G::kRowScales), v[c], i / kChunks, i % kChunks);
      continue;
    }
    if constexpr (G::kFp8) {
      auto f16 = [](std::uint32_t x) {  // bf16 pair to f16 pair
        return gpu::mma::pack2<gpu::mma::F16>(__uint_as_float(x << 16), __uint_as_float(x & 0xffff0000u));
      };
      v[c] = uint4{f16(v[c].x), f16(v[c].y), f16(v[c].z), f16(v[c].w)};
    }
    *reinterpret_cast<uint4*>(q_smem + G::Q::offset(i / kChunks, i % kChunks)) = v[c];
  }
}

// The converted fp8 steps are a ring between the two warpgroups on named barriers (full: the
// producers wrote and fenced the step; empty: the computing warps' products of it are done);
// Q's barrier, among the computing warps, follows them (DecodeBarrier).
template <class G>
using ConvertedRing = attention::NamedBarrierPipeline<G::kConvertedSteps, DecodeBarrier::kRingFirst, 2 * G::kWarps * kWarpSize>;
template <class G>
inline constexpr bool kRingBarriersDistinct = ConvertedRing<G>::kEmpty + G::kConvertedSteps == DecodeBarrier::kQReady &&
                                              DecodeBarrier::kQReady < DecodeBarrier::kCtaClose;

// The producer warpgroup's loop (fp8). Before step c, kIssuedAhead steps' copies were issued.
// Raw keys: once step c's copies landed and step c - 2 is read (its raw K by S, its converted V
// by P V), its slots take step c + 2's copies; V is converted; K's landed bytes and V's stores
// are fenced for wgmma and handed over together. Else: once the ring has room, this warp's raw
// K and V tiles of step c to f16 rows of its converted step (convert).
template <class Policy, class G, int kHeadDim, int kIssuedAhead, int kChunks, class Refill, class ConvertedV, class Convert>
__device__ __forceinline__ void warpgroup_producer(int steps, int w, unsigned char* smem, Refill& refill,
                                                   ConvertedV& converted_v, Convert& convert, gpu::WaitProbe& probe) {
  using Ring = ConvertedRing<G>;
  gpu::regs_decrease<Policy::RowTiles::kRowTileProducerRegs>();
  for (int c = 0; c < steps; ++c) {
    if constexpr (G::kRawKeys) {
      probe.before();
      gpu::async_wait<kIssuedAhead - 1, 2 * kChunks>();
      gpu::warp_sync();  // the lanes convert each other's bytes
      probe.after(gpu::WaitPoint::AsyncCopy);
    }
    probe.before();
    Ring::producer_acquire(c);
    probe.after(gpu::WaitPoint::BlockBarrier);
    if constexpr (G::kRawKeys) {
      refill(c + kIssuedAhead);
      Fp8Rows<kHeadDim> rows_v;
      rows_v.template load<2>(nullptr, smem + G::raw_offset(c, 1, w));
      rows_v.template store<typename G::KV, 2>(nullptr, converted_v(c), w * kDecodeTileTokens);
      gpu::fence_proxy_async_smem();
    } else {
      convert(c);
    }
    Ring::producer_commit(c);
  }
}

// The computing warpgroup's loop (fp8): once Q is in, step j converted and landed, S = Q K^T
// (raw keys: on the landed e4m3 K slot), then its products; the step's ring slot is released.
template <class Policy, class G, DType kKv, int kHeadDim, int kTiles, class Sm, class Step, class Products>
__device__ __forceinline__ void warpgroup_consumer(int steps, int w, unsigned char* smem, float (&s)[kTiles][4], Sm& sm_scale,
                                                   float scale_log2, Step& converted_step, Products& products,
                                                   gpu::WaitProbe& probe) {
  using Ring = ConvertedRing<G>;
  const unsigned char* q_smem = smem + G::kQ;
  gpu::regs_increase<Policy::RowTiles::kRowTileConsumerRegs>();
  gpu::fence_proxy_async_smem();  // Q, written by these warps, before wgmma reads it
  gpu::named_barrier_sync(DecodeBarrier::kQReady, G::kWarps * kWarpSize);
  if constexpr (G::kRawKeys) {  // this lane's rows 16 w + g and + 8 (g = lane / 4)
    const float* inv = reinterpret_cast<const float*>(smem + G::kRowScales) + kDecodeMaxGroup * w + gpu::lane_id() / 4;
    sm_scale = RowScales{{scale_log2 * inv[0], scale_log2 * inv[8]}};
  }
  for (int j = 0; j < steps; ++j) {
    probe.before();
    Ring::consumer_wait(j);
    probe.after(gpu::WaitPoint::BlockBarrier);
    if constexpr (G::kRawKeys)
      group_qk_raw_keys<G, kTiles, Policy::kFault == DecodeFault::q_high_only>(
          s, q_smem, smem + G::raw_offset(j, 0, 0));
    else
      group_qk<G, Operand<kKv>, kHeadDim, kTiles>(s, q_smem, converted_step(j));
    products(j);
    Ring::consumer_release(j, steps);
  }
}

// The 16-bit loop: every warp copies its tile of each step into the step's stage; once every
// copy of step j landed and step j - 1's products are done (one CTA barrier), S = Q K^T, the
// copies of step j + kStages - 1 into step j - 1's stage while S is computed, then the products.
template <class Policy, class G, DType kKv, int kHeadDim, int kTiles, class Refill, class Products>
__device__ __forceinline__ void warpgroup_16bit_loop(int steps, unsigned char* smem, float (&s)[kTiles][4], Refill& refill,
                                                     Products& products, gpu::WaitProbe& probe) {
  for (int j = 0; j < steps; ++j) {
    probe.before();
    gpu::async_wait<G::kStages - 2, 2 * TileOf<Policy, kKv, kHeadDim>::kRawChunksPerLane>();  // own tile of step j
    gpu::fence_proxy_async_smem();  // this thread's shared writes, before wgmma (the async proxy) reads them
    probe.after(gpu::WaitPoint::AsyncCopy);
    probe.before();
    gpu::block_sync_shared();  // step j has landed; every product of step j - 1 is done
    probe.after(gpu::WaitPoint::BlockBarrier);
    group_qk<G, Operand<kKv>, kHeadDim, kTiles>(s, smem + G::kQ, smem + G::k_offset(j % G::kStages));
    refill(j + G::kStages - 1);
    products(j);
  }
}

// The warpgroup row-tile body: one unit's range of steps (see group_qk above), the copies issued
// ahead, then the loop of its schedule (16-bit, or the fp8 producer and computing warpgroups),
// then the unit's close.
template <class Policy, DType kKv, int kHeadDim>
__device__ void decode_warpgroup_rows(const Params& a, unsigned char* smem, gpu::WaitProbe& probe) {
  using G = GroupSmem<Policy, kKv, kHeadDim>;
  constexpr int kWarps = G::kWarps, kStagesHere = G::kStages, kTiles = G::kTokens / 8;
  constexpr bool kFp8 = G::kFp8;
  // kProducers (fp8): warps kWarps .. 2 kWarps - 1 copy and convert (warp kWarps + w the tiles
  // warp w would), warps 0 .. kWarps - 1 compute.
  constexpr bool kProducers = G::kProducers;
  const int unit_rows = kDecodeMaxGroup * a.row_tiles;
  const int chunks = (a.q_heads / a.kv_heads + unit_rows - 1) / unit_rows;
  const CtaWork cw = cta_work<Policy>(a, a.kv_heads * chunks);
  const int w = gpu::warp_id() % kWarps;
  const bool producer = kProducers && gpu::warp_id() >= kWarps;
  const WorkUnit u(a, cw.seq, cw.y / chunks, cw.y % chunks, unit_rows);
  const float scale_log2 = a.scale_log2 * (a.k_scale ? a.k_scale[u.kvh] : 1.f);
  const int2 range = cw.range(a, u);
  const int steps = (range.y - range.x + kWarps - 1) / kWarps;
  const int key_end = min(u.seq_len, range.y * kDecodeTileTokens);
  // Warp w's tile of step j is range tile j kWarps + w; its page id is fetched a step ahead.
  // Page sizes are powers of two here (the lean step's shift and mask).
  auto own = [&](int j) { return range.x + j * kWarps + w; };
  auto page_at = [&](int j) { return own(j) < range.y ? page_of<Policy, true>(a, u.seq, own(j)) : 0; };
  // One commit group per step, empty past the last: 16-bit K and V into stage j, fp8 into their
  // ring slots (a step's K and V land and free together). A stale-tile fault copies the tile
  // two before in a tile's place.
  auto issue = [&](int j, int page) {
    if (j < steps) {
      int tile = own(j);
      const int valid_to = tile < range.y ? u.seq_len : 0;  // 0: zero-fill the whole tile
      if (tile < range.y && fault_hits<Policy, DecodeFault::stale_tile>(tile, u.first_key, u.seq_len) && tile >= 2) {
        tile -= 2;
        page = page_of<Policy, true>(a, u.seq, tile);
      }
      unsigned char* k = kFp8 ? smem + G::raw_offset(j, 0, w) : smem + G::k_offset(j % kStagesHere);
      unsigned char* v = kFp8 ? smem + G::raw_offset(j, 1, w) : k + G::kVOffset;
      issue_tile<Policy, kKv, kHeadDim, typename G::KV, true>(a, k, v, u.kvh, tile, page, valid_to, w * kDecodeTileTokens);
    }
    gpu::async_commit();
  };
  // The first steps' page ids are fetched together and their copies issued before Q is loaded,
  // so a short range does not wait for block-table and Q round trips one after another before
  // its first copy; later page ids are fetched a step ahead of their copies (refill).
  // fp8 refills a step's raw slots once its tiles are converted (raw keys: once its S and P V
  // are done, two steps later); a 16-bit stage is refilled once the step before it is read.
  constexpr int kIssuedAhead = G::kRawKeys ? G::kRawSlots / 2 - 2
                               : kFp8      ? (G::kRawSlots + 1) / 2
                                           : kStagesHere - 1;  // steps with a copy issued
  int next_page = 0;
  if (!kProducers || producer) {
    int pages[kIssuedAhead];
#pragma unroll
    for (int j = 0; j < kIssuedAhead; ++j) pages[j] = page_at(j);
#pragma unroll
    for (int j = 0; j < kIssuedAhead; ++j) issue(j, pages[j]);
    next_page = page_at(kIssuedAhead);
  }
  auto refill = [&](int j) {  // step j's copies, then step j + 1's page id
    issue(j, next_page);
    next_page = page_at(j + 1);
  };
  if (!producer) load_group_q<G, kKv, kHeadDim>(a, u, smem);
  Softmax<kHeadDim> st;
  float s[kTiles][4];
  std::uint32_t pa[kTiles / 2][4];
  // Raw keys: S is in units of each row's 1 / s, taken into the row's softmax scale once Q is in.
  std::conditional_t<G::kRawKeys, RowScales, float> sm_scale{};
  if constexpr (!G::kRawKeys) sm_scale = scale_log2;
  // Step c's converted K and V (fp8: 16-bit BoxTiles, V at KV::kBytes; V alone with raw keys);
  // 16-bit: stage c's K, V at kVOffset.
  auto converted_step = [&](int c) { return smem + G::kConverted + (c % G::kConvertedSteps) * G::kConvertedStepBytes; };
  auto v_of = [&](int c) -> unsigned char* {
    if constexpr (kFp8) return converted_step(c) + (G::kRawKeys ? 0 : G::KV::kBytes);
    else return smem + G::k_offset(c % kStagesHere) + G::kVOffset;
  };
  auto products = [&](int j) {  // S of step j issued: the softmax (masked only where a key can be hidden), O += P V
    gpu::wgmma::wait<0>();
    gpu::wgmma::fence_operands(reinterpret_cast<float (&)[kTiles * 4]>(s));
    const int key0 = (range.x + j * kWarps) * kDecodeTileTokens;  // the step's first key
    const bool whole = Policy::kFault != DecodeFault::drop_tile && key0 >= u.first_key && key0 + G::kTokens <= key_end;
    if (whole)
      softmax_keys<Policy, kKv, kHeadDim, kTiles, false, true>(s, st, pa, sm_scale, key0, u.first_key, key_end, u.seq_len);
    else
      softmax_keys<Policy, kKv, kHeadDim, kTiles, true, true>(s, st, pa, sm_scale, key0, u.first_key, key_end, u.seq_len);
    group_pv<G, Operand<kKv>, kHeadDim, kTiles>(st, pa, v_of(j));
    gpu::wgmma::wait<0>();
    gpu::wgmma::fence_operands(reinterpret_cast<float (&)[kHeadDim / 2]>(st.o));
  };
  if constexpr (kFp8) {
    static_assert(kRingBarriersDistinct<G>, "the ring's barriers, Q's and the closing steps' are distinct");
    constexpr int kChunks = TileOf<Policy, kKv, kHeadDim>::kRawChunksPerLane;
    // This warp's raw tiles of step c to f16 rows of converted step c once they landed; their
    // two raw slots are then refilled with step c + kRawSlots / 2's copies (its lanes read each
    // other's bytes: warp barriers on both sides), and the writes fenced for wgmma (the async
    // proxy). Before step c, kRawSlots / 2 groups were issued: those after c's may be in flight.
    auto convert = [&](int c) {
      probe.before();
      gpu::async_wait<G::kRawSlots / 2 - 1, 2 * kChunks>();
      gpu::warp_sync();
      probe.after(gpu::WaitPoint::AsyncCopy);
      convert_fp8_rows<kHeadDim, typename G::KV>(converted_step(c), smem + G::raw_offset(c, 0, w),
                                                 smem + G::raw_offset(c, 1, w), w * kDecodeTileTokens);
      gpu::warp_sync();
      refill(c + G::kRawSlots / 2);
      gpu::fence_proxy_async_smem();
    };
    if (producer)
      warpgroup_producer<Policy, G, kHeadDim, kIssuedAhead, kChunks>(steps, w, smem, refill, v_of, convert, probe);
    else
      warpgroup_consumer<Policy, G, kKv, kHeadDim>(steps, w, smem, s, sm_scale, scale_log2, converted_step, products, probe);
  } else {
    warpgroup_16bit_loop<Policy, G, kKv, kHeadDim>(steps, smem, s, refill, products, probe);
  }
  gpu::async_wait<0>();
  // Producer warps leave here: the computing warps close the unit among themselves.
  if (producer) return;
  using Sync = CtaSync<kProducers ? kWarps * kWarpSize : 0>;
  finish_unit<Policy, kKv, kHeadDim, kWarps, Tile<DType::f16, kHeadDim>, Sync>(
      st, smem, a, cw, u, chunks, probe, reinterpret_cast<int*>(smem + G::kQ));  // Q's bytes are spent
}
#endif  // SCHEDLAB_GPU_HAS_WGMMA

}  // namespace schedlab::kernels::decode_detail
