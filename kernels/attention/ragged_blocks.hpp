// The query blocks of a ragged prefill batch (sequences of different lengths packed one after
// another, PrefillProblem::lengths) as one list a tile walk indexes: a kernel's TileGrid then
// has one "query block" per entry and a batch of 1, and a tile looks its entry up to find its
// sequence, that sequence's rows in the packed tensors, and its block within the sequence.
//
// The entries are sorted by the key tiles their block reads, fewest first (stable: sequence
// order, then block order, among equals), so that TileGrid's longest-first walk (the last
// query block first) starts every (head) section with the heaviest blocks of the whole batch:
// the longest-processing-time order across sequences that a uniform causal batch gets from its
// block index alone.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace schedlab::kernels::attention {

// A sequence has as many keys as queries (PrefillProblem::lengths): its start and length
// serve Q, K, V and O alike. Two 16-byte halves, where the sequence lies and which block of it:
// a tile loads each half on its own (with the four members in one half, ptxas spilled the
// long causal 16-bit kernel's consumers inside their main loop).
struct alignas(16) RaggedBlock {
  int start, len, unused0, unused1;  // the sequence's first row in the packed tensors, its length
  int m_block, seq, key_tiles, unused2;  // the block in the sequence, the sequence, the key tiles it reads (the sort key)
};

// Every query block of `block_m` rows of sequences with these lengths, with the key tiles of
// `block_n` keys each reads under the mask (causal: bottom-right aligned, with equal lengths
// the diagonal).
inline std::vector<RaggedBlock> ragged_blocks(const std::vector<int>& lengths, int block_m, int block_n, bool causal) {
  if (block_m <= 0 || block_n <= 0) throw std::invalid_argument("ragged_blocks: block sizes must be positive");
  std::vector<RaggedBlock> blocks;
  std::int64_t start = 0;
  for (std::size_t seq = 0; seq < lengths.size(); ++seq) {
    const int len = lengths[seq];
    if (len <= 0) throw std::invalid_argument("ragged_blocks: sequence " + std::to_string(seq) + " is empty");
    if (start + len > INT32_MAX) throw std::invalid_argument("ragged_blocks: more than 2^31 - 1 tokens");
    for (int m = 0; m * block_m < len; ++m) {
      const int key_end = causal ? std::min(len, (m + 1) * block_m) : len;
      blocks.push_back({int(start), len, 0, 0, m, int(seq), (key_end + block_n - 1) / block_n, 0});
    }
    start += len;
  }
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const RaggedBlock& a, const RaggedBlock& b) { return a.key_tiles < b.key_tiles; });
  return blocks;
}

}  // namespace schedlab::kernels::attention
