// Forward attention in the FlashAttention-2 style (Dao 2023, arXiv 2307.08691, Algorithm 1)
// on the portability layer. One CTA per (16 * kWarps query rows, query head, sequence);
// each warp owns 16 query rows, keeps their Q fragments, the O accumulator and the online
// softmax state in registers, and walks the K/V tiles that the CTA stages through shared
// memory with async copies: S = Q K^T, online softmax in the log2 domain, O += P V with P
// converted in registers (the C layout of two n8 tiles is the A layout of one k16 step).
// Scheduling knobs come from the Policy (prefill_policy.hpp); the body is shared.
#pragma once
#include <cstdint>
#include <type_traits>

#include "common/gpu/device.hpp"
#include "common/gpu/kernel_traits.hpp"
#include "common/gpu/launch.hpp"
#include "common/gpu/warp_mma.hpp"
#include "kernels/prefill/flash_prefill.hpp"
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::kernels::prefill_detail {

using gpu::kWarpSize;
using gpu::Sched;
inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr int kRowsPerWarp = 16;  // M of the m16n8k16 matrix instruction

struct Params {
  const std::uint16_t* q;
  const std::uint16_t* k;
  const std::uint16_t* v;
  std::uint16_t* o;
  int q_len, kv_len, q_heads, kv_heads;
  bool causal;
  float scale_log2;  // softmax scale * log2(e): scores live in the log2 domain (exp2)
};

// A shared tile of kRows rows of kHeadDim 16-bit values, in 16-byte chunks.
template <SmemLayout kLayout, int kRows, int kHeadDim>
struct SmemTile {
  static constexpr int kChunks = kHeadDim * 2 / 16;  // 16-byte chunks per row
  static constexpr bool kPadded = kLayout == SmemLayout::Padded;
  static constexpr int kRowBytes = kHeadDim * 2 + (kPadded ? 16 : 0);
  static constexpr int kBytes = kRows * kRowBytes;
  static_assert(kPadded || kChunks % 8 == 0, "the XOR swizzle permutes 8 chunks of a row");
  static __device__ __forceinline__ int offset(int row, int chunk) {
    if constexpr (kPadded) return row * kRowBytes + chunk * 16;
    else return row * kRowBytes + (chunk ^ (row % 8)) * 16;
  }
};

template <class Policy, int kHeadDim>
struct Config {
  static constexpr int kThreads = Policy::kWarps * kWarpSize;  // = kThreadsOf<Policy>
  static constexpr int kBlockM = Policy::kWarps * kRowsPerWarp;  // query rows per CTA
  static constexpr int kBlockN = Policy::kBlockN;                // keys per K/V tile
  using QTile = SmemTile<Policy::kLayout, kBlockM, kHeadDim>;
  using KvTile = SmemTile<Policy::kLayout, kBlockN, kHeadDim>;
  static constexpr int kQkSteps = kHeadDim / 16;  // k16 steps of S = Q K^T
  static constexpr int kPvSteps = kBlockN / 16;   // k16 steps of O += P V
  static constexpr int kKeyTiles = kBlockN / 8;   // n8 tiles of S (16 x kBlockN)
  static constexpr int kDimTiles = kHeadDim / 8;  // n8 tiles of O (16 x kHeadDim)
  // Shared storage: the Q tile, then kKvBuffers x (K tile, V tile).
  static constexpr int kSmemBytes = QTile::kBytes + Policy::kKvBuffers * 2 * KvTile::kBytes;
  // With one buffer V(j) arrives after QK(j) starts, so only two buffers can prefetch it.
  static constexpr bool kPrefetchV = Policy::kKvFragments == KvFragments::Separate && Policy::kKvBuffers == 2;
  static_assert(kBlockN % 16 == 0 && kHeadDim % 16 == 0, "tiles are whole k16 steps");
  static_assert(Policy::kKvBuffers == 1 || Policy::kKvBuffers == 2, "one buffer (split K/V waits) or two");
  static_assert(kSmemBytes <= 227 * 1024, "shared storage over the sm_90 per-block limit");
};

template <DType kT>
using Operand = std::conditional_t<kT == DType::bf16, gpu::mma::Bf16, gpu::mma::F16>;

// B-operand fragments of one k16 step: K for kBlockN keys, V for head_dim columns (seed 003).
template <class Cfg, KvFragments kMode>
struct KvRegs;
template <class Cfg>
struct KvRegs<Cfg, KvFragments::Separate> {
  std::uint32_t k_[Cfg::kKeyTiles / 2][4];  // [key pair of n8 tiles][b0,b1 of each]
  std::uint32_t v_[Cfg::kDimTiles / 2][4];  // [column pair of n8 tiles][b0,b1 of each]
  __device__ auto& k() { return k_; }
  __device__ auto& v() { return v_; }
};
template <class Cfg>
struct KvRegs<Cfg, KvFragments::Union> {
  union {
    std::uint32_t k_[Cfg::kKeyTiles / 2][4];
    std::uint32_t v_[Cfg::kDimTiles / 2][4];
  };
  __device__ auto& k() { return k_; }
  __device__ auto& v() { return v_; }
};

// Per-warp online-softmax state of rows g and g + 8 (g = lane / 4) of the warp's 16.
template <class Cfg>
struct RowState {
  float m[2] = {-INFINITY, -INFINITY};  // running max (log2 domain)
  float l[2] = {0.f, 0.f};              // this lane's share of the running sum
  float o[Cfg::kDimTiles][4] = {};      // O accumulator: C fragments of kDimTiles n8 tiles
};

// STAGE produce: async copies of kRows rows (row stride `stride` elements) into a shared
// tile; rows at or past `rows_left` are zero-filled, not read (V's zeros meet P's zeros).
// A thread copies one chunk column of rows row0, row0 + kRowStep, ...: kRowStep is a
// multiple of 8, so the swizzle is the same for all of them and addresses step by constants.
template <class Tile, int kRows, int kThreads>
__device__ __forceinline__ void produce_tile(unsigned char* tile, const std::uint16_t* src, std::int64_t stride,
                                             int rows_left) {
  constexpr int kRowStep = kThreads / Tile::kChunks;
  static_assert(kThreads % Tile::kChunks == 0 && kRowStep % 8 == 0 && kRows % kRowStep == 0,
                "every thread copies the same chunk column of rows kRowStep apart");
  const int row0 = static_cast<int>(threadIdx.x) / Tile::kChunks, chunk = static_cast<int>(threadIdx.x) % Tile::kChunks;
  unsigned char* dst = tile + Tile::offset(row0, chunk);
  const std::uint16_t* from = src + row0 * stride + chunk * 8;
#pragma unroll
  for (int i = 0; i < kRows / kRowStep; ++i) {
    const bool valid = row0 + i * kRowStep < rows_left;
    gpu::async_copy_16(dst + i * kRowStep * Tile::kRowBytes, valid ? from + i * kRowStep * stride : src, valid);
  }
}

// The warp's 16 query rows as A fragments, one per k16 step.
template <class Cfg>
__device__ __forceinline__ void load_q(std::uint32_t (&qa)[Cfg::kQkSteps][4], const unsigned char* q_tile) {
  const int lane = gpu::mma::frag_lane();
  const int row = gpu::warp_id() * kRowsPerWarp + ((lane / 8) % 2) * 8 + lane % 8;  // matrices 1, 3: rows 8-15
#pragma unroll
  for (int kk = 0; kk < Cfg::kQkSteps; ++kk)
    gpu::mma::ldmatrix_x4(qa[kk], q_tile + Cfg::QTile::offset(row, 2 * kk + lane / 16));
}

// One k16 step of V (16 keys x head_dim) as B fragments (transposed load: V is [key][dim]).
template <class Cfg, class Regs>
__device__ __forceinline__ void load_v_step(Regs& regs, const unsigned char* v_tile, int kk) {
  const int lane = gpu::mma::frag_lane();
  const int row = kk * 16 + ((lane / 8) % 2) * 8 + lane % 8;  // matrices 1, 3: keys 8-15
#pragma unroll
  for (int nn = 0; nn < Cfg::kDimTiles / 2; ++nn)
    gpu::mma::ldmatrix_x4_trans(regs.v()[nn], v_tile + Cfg::KvTile::offset(row, 2 * nn + lane / 16));
}

// STAGE 1: QK gemm, S (16 x kBlockN) = Q K^T, one k16 step at a time.
template <class Policy, class Cfg, class Op, class Regs>
__device__ __forceinline__ void compute_qk(float (&s)[Cfg::kKeyTiles][4], const std::uint32_t (&qa)[Cfg::kQkSteps][4],
                                           const unsigned char* k_tile, const unsigned char* v_tile, Regs& regs) {
  const int lane = gpu::mma::frag_lane();
  const int row = (lane / 16) * 8 + lane % 8;  // key; matrices 2, 3: keys 8-15 of the pair
  const int half = (lane / 8) % 2;             // matrices 1, 3: the second 8 dims of the step
#pragma unroll
  for (int n = 0; n < Cfg::kKeyTiles; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) s[n][i] = 0.f;
#pragma unroll
  for (int kk = 0; kk < Cfg::kQkSteps; ++kk) {
    // Seed 003: the first K load fenced between the previous PV and this QK matrix group.
    if (Policy::kKLoad == KLoadSchedule::Pinned && kk == 0) gpu::sched_barrier<Sched::NONE>();
#pragma unroll
    for (int np = 0; np < Cfg::kKeyTiles / 2; ++np)
      gpu::mma::ldmatrix_x4(regs.k()[np], k_tile + Cfg::KvTile::offset(np * 16 + row, 2 * kk + half));
    if (Policy::kKLoad == KLoadSchedule::Pinned && kk == 0) gpu::sched_barrier<Sched::NONE>();
    // Separate registers: V's first step loads before the last QK matrix ops (seed 003).
    if (Cfg::kPrefetchV && kk == Cfg::kQkSteps - 1) load_v_step<Cfg>(regs, v_tile, 0);
#pragma unroll
    for (int np = 0; np < Cfg::kKeyTiles / 2; ++np) {
      gpu::mma::mma_16816<Op>(s[2 * np], qa[kk], {regs.k()[np][0], regs.k()[np][1]});
      gpu::mma::mma_16816<Op>(s[2 * np + 1], qa[kk], {regs.k()[np][2], regs.k()[np][3]});
    }
    if constexpr (Policy::kKLoad == KLoadSchedule::Interleaved) {
      // One shared read, then the two matrix ops it feeds; counts follow the tile shape.
#pragma unroll
      for (int np = 0; np < Cfg::kKeyTiles / 2; ++np) {
        gpu::sched_group_barrier<Sched::DS_READ, 1, 0>();
        gpu::sched_group_barrier<Sched::MFMA, 2, 0>();
      }
    }
  }
}

// STAGE 2: online softmax. Masks (kMask: the tile crosses the causal diagonal or the end
// of the keys), updates the running max and sum, rescales O, and packs P as A fragments.
template <class Cfg, class Op, bool kMask>
__device__ __forceinline__ void online_softmax(float (&s)[Cfg::kKeyTiles][4], RowState<Cfg>& st,
                                               std::uint32_t (&pa)[Cfg::kPvSteps][4], const Params& a, int key0,
                                               int q_row0) {
  const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int n = 0; n < Cfg::kKeyTiles; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (kMask) {
        const int q_row = q_row0 + g + 8 * (i / 2), key = key0 + n * 8 + 2 * t + i % 2;
        const bool visible = key < a.kv_len && (!a.causal || key <= q_row + a.kv_len - a.q_len);
        if (!visible) s[n][i] = -INFINITY;
      }
      tile_max[i / 2] = fmaxf(tile_max[i / 2], s[n][i]);
    }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tile_max[r] = fmaxf(tile_max[r], gpu::shfl_xor(tile_max[r], 1));  // the 4 lanes of a row
    tile_max[r] = fmaxf(tile_max[r], gpu::shfl_xor(tile_max[r], 2));
    const float m_new = fmaxf(st.m[r], tile_max[r] * a.scale_log2);
    // A row with no visible key so far keeps m at -inf; a finite stand-in avoids inf - inf.
    const float m_use = m_new == -INFINITY ? 0.f : m_new;
    const float corr = gpu::mma::fast_exp2(st.m[r] - m_use);
    st.m[r] = m_new;
    st.l[r] *= corr;
#pragma unroll
    for (int n = 0; n < Cfg::kDimTiles; ++n) {
      st.o[n][2 * r] *= corr;
      st.o[n][2 * r + 1] *= corr;
    }
#pragma unroll
    for (int n = 0; n < Cfg::kKeyTiles; ++n) {
      s[n][2 * r] = gpu::mma::fast_exp2(fmaf(s[n][2 * r], a.scale_log2, -m_use));
      s[n][2 * r + 1] = gpu::mma::fast_exp2(fmaf(s[n][2 * r + 1], a.scale_log2, -m_use));
      st.l[r] += s[n][2 * r] + s[n][2 * r + 1];
    }
  }
#pragma unroll
  for (int kk = 0; kk < Cfg::kPvSteps; ++kk) {
    pa[kk][0] = gpu::mma::pack2<Op>(s[2 * kk][0], s[2 * kk][1]);
    pa[kk][1] = gpu::mma::pack2<Op>(s[2 * kk][2], s[2 * kk][3]);
    pa[kk][2] = gpu::mma::pack2<Op>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    pa[kk][3] = gpu::mma::pack2<Op>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
  }
}

// STAGE 3: PV gemm, O (16 x head_dim) += P (16 x kBlockN) V (kBlockN x head_dim).
template <class Cfg, class Op, class Regs>
__device__ __forceinline__ void compute_pv(RowState<Cfg>& st, const std::uint32_t (&pa)[Cfg::kPvSteps][4],
                                           const unsigned char* v_tile, Regs& regs) {
#pragma unroll
  for (int kk = 0; kk < Cfg::kPvSteps; ++kk) {
    if (!(Cfg::kPrefetchV && kk == 0)) load_v_step<Cfg>(regs, v_tile, kk);
#pragma unroll
    for (int nn = 0; nn < Cfg::kDimTiles / 2; ++nn) {
      gpu::mma::mma_16816<Op>(st.o[2 * nn], pa[kk], {regs.v()[nn][0], regs.v()[nn][1]});
      gpu::mma::mma_16816<Op>(st.o[2 * nn + 1], pa[kk], {regs.v()[nn][2], regs.v()[nn][3]});
    }
  }
}

// STAGE 4: O / l to the output rows (rows past q_len are padding and not written; a row
// that sees no key is written as zeros, as the reference does).
template <class Cfg, class Op>
__device__ __forceinline__ void write_o(RowState<Cfg>& st, const Params& a, std::uint16_t* o_rows, int rows_left) {
  const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
  const std::int64_t stride = std::int64_t(a.q_heads) * Cfg::kDimTiles * 8;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = st.l[r];
    l += gpu::shfl_xor(l, 1);
    l += gpu::shfl_xor(l, 2);
    const float inv = l > 0.f ? 1.f / l : 0.f;
    const int row = gpu::warp_id() * kRowsPerWarp + g + 8 * r;
    if (row >= rows_left) continue;
#pragma unroll
    for (int n = 0; n < Cfg::kDimTiles; ++n)
      *reinterpret_cast<std::uint32_t*>(o_rows + row * stride + n * 8 + 2 * t) =
          gpu::mma::pack2<Op>(st.o[n][2 * r] * inv, st.o[n][2 * r + 1] * inv);
  }
}

// Threads of a CTA, named without a comma: HIP's __launch_bounds__ is a macro.
template <class Policy>
inline constexpr int kThreadsOf = Policy::kWarps * kWarpSize;

template <class Policy, DType kT, int kHeadDim, class Dyn>
__global__ void __launch_bounds__(kThreadsOf<Policy>, 1) flash_prefill_kernel(Params a) {
  using Cfg = Config<Policy, kHeadDim>;
  using Op = Operand<kT>;
  static_assert(Dyn::kBytes == Cfg::kSmemBytes, "launch and kernel disagree on shared memory");
  extern __shared__ __align__(128) unsigned char smem[];
  const int m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);  // longest causal rows first
  const int head = blockIdx.y, batch = blockIdx.z, kv_head = head / (a.q_heads / a.kv_heads);
  const int q_row0 = m_block * Cfg::kBlockM, offset = a.kv_len - a.q_len;  // bottom-right causal alignment
  const int last_row = min(q_row0 + Cfg::kBlockM, a.q_len) - 1;
  const int key_end = a.causal ? min(a.kv_len, last_row + offset + 1) : a.kv_len;
  const int n_tiles = key_end > 0 ? (key_end + Cfg::kBlockN - 1) / Cfg::kBlockN : 0;
  // Keys below this are visible to every row of the CTA: tiles under it skip the mask.
  const int unmasked_end = a.causal ? min(a.kv_len, q_row0 + offset + 1) : a.kv_len;

  const std::int64_t q_stride = std::int64_t(a.q_heads) * kHeadDim, kv_stride = std::int64_t(a.kv_heads) * kHeadDim;
  const std::int64_t q_off = (std::int64_t(batch) * a.q_len + q_row0) * q_stride + std::int64_t(head) * kHeadDim;
  const std::uint16_t* k_rows = a.k + std::int64_t(batch) * a.kv_len * kv_stride + std::int64_t(kv_head) * kHeadDim;
  const std::uint16_t* v_rows = a.v + (k_rows - a.k);
  unsigned char* q_tile = smem;
  auto k_tile = [&](int b) { return smem + Cfg::QTile::kBytes + b * 2 * Cfg::KvTile::kBytes; };
  auto v_tile = [&](int b) { return k_tile(b) + Cfg::KvTile::kBytes; };
  auto produce_k = [&](int j) {
    produce_tile<typename Cfg::KvTile, Cfg::kBlockN, Cfg::kThreads>(
        k_tile(j % Policy::kKvBuffers), k_rows + j * Cfg::kBlockN * kv_stride, kv_stride, a.kv_len - j * Cfg::kBlockN);
  };
  auto produce_v = [&](int j) {
    produce_tile<typename Cfg::KvTile, Cfg::kBlockN, Cfg::kThreads>(
        v_tile(j % Policy::kKvBuffers), v_rows + j * Cfg::kBlockN * kv_stride, kv_stride, a.kv_len - j * Cfg::kBlockN);
  };

  // Prologue: Q, then the first K and V tiles in flight (groups: Q, K0+V0 | Q, K0, V0).
  produce_tile<typename Cfg::QTile, Cfg::kBlockM, Cfg::kThreads>(q_tile, a.q + q_off, q_stride, a.q_len - q_row0);
  gpu::async_commit();
  if (n_tiles > 0) produce_k(0);
  if constexpr (Policy::kKvBuffers == 1) gpu::async_commit();
  if (n_tiles > 0) produce_v(0);
  gpu::async_commit();
  gpu::async_wait<Policy::kKvBuffers == 1 ? 2 : 1>();  // Q has landed
  gpu::block_sync();                                   // ... for every thread's copies
  std::uint32_t qa[Cfg::kQkSteps][4];
  load_q<Cfg>(qa, q_tile);

  RowState<Cfg> st;
  KvRegs<Cfg, Policy::kKvFragments> regs;
  const int warp_row0 = q_row0 + gpu::warp_id() * kRowsPerWarp;
  for (int j = 0; j < n_tiles; ++j) {
    const int b = j % Policy::kKvBuffers;
    if constexpr (Policy::kKvBuffers == 2) {
      gpu::async_wait<0>();  // tile j has landed
      gpu::block_sync();     // ... for all threads, and every warp is done with tile j - 1's buffer
      if (j + 1 < n_tiles) {
        produce_k(j + 1);
        produce_v(j + 1);
      }
      gpu::async_commit();
    } else {
      gpu::async_wait<1>();  // K(j) has landed; V(j) may be in flight
      gpu::block_sync();
    }
    float s[Cfg::kKeyTiles][4];
    compute_qk<Policy, Cfg, Op>(s, qa, k_tile(b), v_tile(b), regs);
    if constexpr (Policy::kKvBuffers == 1) {
      gpu::block_sync();  // every warp is done reading K(j)
      if (j + 1 < n_tiles) produce_k(j + 1);
      gpu::async_commit();
    }
    std::uint32_t pa[Cfg::kPvSteps][4];
    if ((j + 1) * Cfg::kBlockN > unmasked_end)
      online_softmax<Cfg, Op, true>(s, st, pa, a, j * Cfg::kBlockN, warp_row0);
    else
      online_softmax<Cfg, Op, false>(s, st, pa, a, j * Cfg::kBlockN, warp_row0);
    if constexpr (Policy::kKvBuffers == 1) {
      gpu::async_wait<1>();  // V(j) has landed; K(j + 1) may be in flight
      gpu::block_sync();
    }
    compute_pv<Cfg, Op>(st, pa, v_tile(b), regs);
    if constexpr (Policy::kKvBuffers == 1) {
      gpu::block_sync();  // every warp is done reading V(j)
      if (j + 1 < n_tiles) produce_v(j + 1);
      gpu::async_commit();
    }
  }
  gpu::async_wait<0>();  // nothing left in flight at exit
  write_o<Cfg, Op>(st, a, a.o + q_off, a.q_len - q_row0);
}

template <class Policy, DType kT, int kHeadDim>
void launch_for(const PrefillArgs& args, gpu::api::stream_t stream) {
  using Cfg = Config<Policy, kHeadDim>;
  const PrefillProblem& p = args.problem;
  Params a{static_cast<const std::uint16_t*>(args.q), static_cast<const std::uint16_t*>(args.k),
           static_cast<const std::uint16_t*>(args.v), static_cast<std::uint16_t*>(args.o),
           p.q_len, p.kv_len, p.q_heads, p.kv_heads, p.causal, p.scale() * kLog2e};
  auto kernel = flash_prefill_kernel<Policy, kT, kHeadDim, gpu::DynamicSmem<Cfg::kSmemBytes>>;
  static const bool smem_raised = (gpu::set_max_dynamic_smem(kernel, Cfg::kSmemBytes), true);  // once per kernel
  (void)smem_raised;
  const int m_blocks = (p.q_len + Cfg::kBlockM - 1) / Cfg::kBlockM;
  gpu::launch("flash_prefill", kernel,
              gpu::LaunchConfig{dim3(m_blocks, p.q_heads, p.batch), dim3(Cfg::kThreads), Cfg::kSmemBytes, stream}, a);
}

}  // namespace schedlab::kernels::prefill_detail

namespace schedlab::kernels {

template <class Policy>
void launch_flash_prefill(const PrefillArgs& args, gpu::api::stream_t stream) {
  using namespace prefill_detail;
  const PrefillProblem& p = args.problem;
  require_support(p, flash_prefill_support());
  auto by_dim = [&]<DType kT>() {
    if (p.head_dim == 64) launch_for<Policy, kT, 64>(args, stream);
    else launch_for<Policy, kT, 128>(args, stream);
  };
  if (p.dtype == DType::bf16) by_dim.template operator()<DType::bf16>();
  else by_dim.template operator()<DType::f16>();
}

}  // namespace schedlab::kernels
