// The scheduling knobs of the paged decode kernel. An experiment variant is one of these
// with some members changed; the kernel body is shared (kernels/decode/paged_decode.cuh).
#pragma once

namespace schedlab::kernels {

struct DecodePolicy {
  /* Warps = */ static constexpr int kWarps = 4;            // each streams its own 16-token tiles
  /* KvBuffers = */ static constexpr int kKvBuffers = 2;     // shared K/V tiles per warp; 1 = seed 000's choice
  /* PrefetchPageIndex = */ static constexpr bool kPrefetchPageIndex = true;  // next page id one tile ahead (seed 000)
  /* StageHints = */ static constexpr bool kStageHints = false;  // issue(1) / qk_softmax(0) / pv(1) priorities (seed 000)
  /* StreamKv = */ static constexpr bool kStreamKv = true;   // K fragments streamed into the dot, V on demand (seed 002)
  // CTAs per SM asked of the compiler (__launch_bounds__), which caps registers. Measured on
  // the H200 (kernels/decode/README.md): fp8, which waits on latency rather than on memory,
  // gains from 3 CTAs (12 warps) per SM (151 -> 139 us at batch 16, 16k); 16-bit KV is
  // memory-bound and prefers 2, with fewer, longer splits (batch 1, 64k: 79 -> 76.5 us).
  /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 2;
  /* MinCtasPerSmFp8 = */ static constexpr int kMinCtasPerSmFp8 = 3;
};

// Tokens per warp tile: one page at page size 16, so a tile never spans two pages.
inline constexpr int kDecodeTileTokens = 16;
// Rows of the matrix instruction: a GQA group (query heads sharing a KV head) is padded to it.
inline constexpr int kDecodeMaxGroup = 16;

}  // namespace schedlab::kernels
