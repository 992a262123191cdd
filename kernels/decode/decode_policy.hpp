// The scheduling knobs of the paged decode kernel. An experiment variant is one of these
// with some members changed; the kernel body is shared (kernels/decode/paged_decode.cuh).
#pragma once

namespace schedlab::kernels {

struct DecodePolicy {
  /* Warps = */ static constexpr int kWarps = 4;            // each streams its own 16-token tiles
  /* KvBuffers = */ static constexpr int kKvBuffers = 3;     // shared K/V tiles per warp; 1 = seed 000's choice
  /* PrefetchPageIndex = */ static constexpr bool kPrefetchPageIndex = true;  // next page id one tile ahead (seed 000)
  /* StageHints = */ static constexpr bool kStageHints = false;  // issue(1) / qk_softmax(0) / pv(1) priorities (seed 000)
  /* StreamKv = */ static constexpr bool kStreamKv = true;   // K fragments streamed into the dot, V on demand (seed 002)
};

// Tokens per warp tile: one page at page size 16, so a tile never spans two pages.
inline constexpr int kDecodeTileTokens = 16;
// Rows of the matrix instruction: a GQA group (query heads sharing a KV head) is padded to it.
inline constexpr int kDecodeMaxGroup = 16;

}  // namespace schedlab::kernels
