// The tile schedules and causal orders a policy names, and how the causal walk groups heads
// into sections: host code, so that policies and the host side of a launch read them without
// the device scheduler (tile_scheduler.hpp, which says what each schedule does).
#pragma once
#include <algorithm>

namespace schedlab::kernels::attention {

enum class TileSchedule { OnePerTile, Persistent, Dynamic, OnePerTileGrid };

struct TileCoord {
  int m_block, head, batch;
};

// How the causal walk groups (head, batch) pairs into sections (TileGrid): `section_pairs`
// pairs per section, and the first `larger_sections` sections take one pair more, so that
// every pair is in exactly one section and no section is much smaller than the others.
struct HeadSections {
  int section_pairs = 1, larger_sections = 0;
};
// Causal tile order (policy member): within each head, across every head, or in sections.
enum class CausalOrder { WithinHead, AcrossHeads, Sections };

// The sections of `order` for m_blocks query blocks x `pairs` (head, batch) pairs on sm_count
// SMs. A section's longest tiles start while the previous section's shortest finish; what
// is left after them is the rest of the section, which must cover the SMs for a longest
// tile's time, about m_blocks / 2 tiles a pair: at least 2 sm_count / m_blocks pairs. Where
// the tiles do not fill the SMs once, the order cannot change the balance and stays within
// each head (which spreads the long tiles over the GPU: measured faster at sequence 512).
inline HeadSections head_sections(CausalOrder order, int m_blocks, int pairs, int sm_count) {
  if (order == CausalOrder::WithinHead || pairs <= 1 || m_blocks * pairs <= sm_count) return {1, 0};
  if (order == CausalOrder::AcrossHeads) return {pairs, 0};
  const int wanted = std::min(pairs, (2 * sm_count + m_blocks - 1) / m_blocks);
  const int sections = std::max(1, pairs / wanted);
  return {pairs / sections, pairs % sections};
}

}  // namespace schedlab::kernels::attention
