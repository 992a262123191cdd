// The Hopper prefill family's own GPU tests on the H200 (each Hopper experiment's variants are
// checked by its experiments/<name>/test_gpu.cpp, built into this binary): fp8 faults (V^T keys
// out of P's order; a ragged batch masked by its longest sequence; a split tile's pieces left
// unmerged; the last key tile under the mask narrower than its rows see) that must fail the gate where the family default passes; an output the kernel
// cannot write is refused. Label: gpu.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "common/gpu/runtime.hpp"
#include "kernels/attention/split_tail.hpp"
#include "kernels/tests/hopper_prefill_gpu_checks.hpp"

namespace schedlab::kernels {

// The family's default policy with the fault (none: the control), fp8 e4m3 at head dim 128
// only (split_pieces_unmerged: bf16 or fp8 at 128 without the mask; kernels/tests/hopper_prefill_fault_kernels.cu:
// sm_90a, so not in the shared fault_kernels.hpp).
PrefillLaunch hopper_prefill_fault_launch(HopperFault fault);

namespace hopper_prefill_test {
namespace {

// ---- injected fault -------------------------------------------------------------------------

// On the same inputs the control (a launch of the family default) passes the gate and the fault
// fails it.
void expect_fault_caught(const char* name, const PrefillProblem& p, PrefillLaunch control_launch, HopperFault fault,
                         const char* fault_name, std::uint64_t seed) {
  PrefillCase control(p, std::move(control_launch));
  control.prepare(seed, 1);
  const AccuracyReport ok = run_once(control);
  EXPECT_TRUE(ok.passed) << name << ", no fault: " << ok.message;
  PrefillCase faulty(p, hopper_prefill_fault_launch(fault));
  faulty.prepare(seed, 1);
  const AccuracyReport bad = run_once(faulty);
  EXPECT_FALSE(bad.passed) << name << ", " << fault_name << ": " << bad.message;
  std::printf("%s: no fault %s; %s %s\n", name, ok.message.c_str(), fault_name, bad.message.c_str());
}

// The family default with V^T's keys in plain order while P keeps its own (each 16-key half
// pairs P with the wrong V rows; kernels/tests/hopper_prefill_fault_kernels.cu), causal GQA
// and non-causal, short and long: the family default passes on the same inputs, the fault fails.
TEST(HopperPrefillFaults, Fp8KeyOrderFailsTheGate) {
  std::uint64_t seed = test_seed();
  for (const PrefillTestConfig& cfg :
       {PrefillTestConfig{"fp8_causal_gqa2_300", 1, 4, 2, 300, 300, 128, true, DType::fp8_e4m3},
        PrefillTestConfig{"fp8_8192", 1, 4, 4, 8192, 8192, 128, false, DType::fp8_e4m3}})
    expect_fault_caught(cfg.name, cfg.problem(), hopper_prefill_fault_launch(HopperFault::none),
                        HopperFault::vt_key_order, "vt_key_order", ++seed);
}

// A ragged batch masked by its longest sequence's lengths instead of each tile's own: a
// shorter sequence's rows see the keys after its end (the next sequence's, or zeros past the
// last). Non-causal, where the mask reads the length (a causal sequence, as many keys as
// queries, is masked by its diagonal alone, which the fault leaves as it is). The family
// default passes on the same inputs, the fault fails; one sequence shorter than a key tile.
TEST(HopperPrefillFaults, RaggedLongestLensFailsTheGate) {
  std::uint64_t seed = test_seed();
  for (const std::vector<int>& lengths : {std::vector<int>{300, 1000, 77}, std::vector<int>{2000, 64}}) {
    const PrefillProblem p = make_ragged_prefill(lengths, 4, 2, 128, false, DType::fp8_e4m3);
    const std::string name = "ragged batch of " + std::to_string(p.batch);
    expect_fault_caught(name.c_str(), p, hopper_prefill_fault_launch(HopperFault::none),
                        HopperFault::ragged_longest_lens, "ragged_longest_lens", ++seed);
  }
}

// A split tile's last piece writing its own rows without the other pieces' (without the mask: 32
// tiles of 29 key tiles in bf16, of 20 in fp8's Fp8Meet, on the H200's 132 SMs, so every tile is
// split, into up to 6 pieces): the family default's short kernel passes on the same inputs, the
// fault fails, in bf16 and in fp8 (whose whole tiles and split units run separate bodies).
TEST(HopperPrefillFaults, SplitPiecesUnmergedFailsTheGate) {
  const int sms = gpu::device_info().sm_count;
  const auto splits = [&](int keys_a_tile) {
    const int min_share = (HopperPrefillPolicy::kSplitTailMinShareKeys + keys_a_tile - 1) / keys_a_tile;
    return attention::SplitTail::of(8 * 4, (5000 + keys_a_tile - 1) / keys_a_tile, sms, HopperPrefillPolicy::kSplitTailFill,
                                    min_share)
               .split_tiles > 0;
  };
  ASSERT_TRUE(splits(HopperPrefillPolicy::tile(128, false).block_n)) << "bf16 no longer splits its tiles on this device";
  ASSERT_TRUE(splits(Fp8Meet<HopperPrefillPolicy>::fp8_tile(false).block_n))
      << "fp8 no longer splits its tiles on this device";
  std::uint64_t seed = test_seed() + 3;
  for (const PrefillTestConfig& cfg : {PrefillTestConfig{"bf16_split_5000", 1, 4, 4, 1000, 5000, 128, false, DType::bf16},
                                       PrefillTestConfig{"fp8_split_5000", 1, 4, 4, 1000, 5000, 128, false, DType::fp8_e4m3}})
    expect_fault_caught(cfg.name, cfg.problem(), launch_hopper_prefill<HopperPrefillPolicy>,
                        HopperFault::split_pieces_unmerged, "split_pieces_unmerged", seed++);
}

// The last key tile under the mask one 64-key step narrower than its rows see (the last
// visible keys of the warpgroup's last rows, the diagonal's, left out): the family default
// passes on the same inputs, the fault fails. fp8's 256-key tiles, whose warpgroups see 64,
// 128, 192 and 256 keys of their last tile, and bf16's 128-key tiles at head dim 64 (64 or
// 128; the kernel of one CTA a tile, run here at any length); each on a uniform batch and a
// ragged one with more keys than a tile's rows.
TEST(HopperPrefillFaults, NarrowLastShortFailsTheGate) {
  std::uint64_t seed = test_seed() + 5;
  const std::pair<const char*, PrefillProblem> cases[] = {
      {"fp8_causal_1000", PrefillTestConfig{"", 1, 4, 2, 1000, 1000, 128, true, DType::fp8_e4m3}.problem()},
      {"fp8_causal_ragged", make_ragged_prefill({300, 1000, 77, 520}, 4, 2, 128, true, DType::fp8_e4m3)},
      {"bf16_d64_causal_1000", PrefillTestConfig{"", 1, 4, 2, 1000, 1000, 64, true, DType::bf16}.problem()},
      {"bf16_d64_causal_ragged", make_ragged_prefill({300, 1000, 77, 520}, 4, 2, 64, true, DType::bf16)}};
  for (const auto& [name, p] : cases)
    expect_fault_caught(name, p, launch_hopper_prefill<HopperPrefillPolicy>, HopperFault::narrow_last_short,
                        "narrow_last_short", seed++);
}

// ---- bad input ------------------------------------------------------------------------------

// O leaves in 16-byte stores (kStagedOutput): an output off a 16-byte boundary is refused before
// any launch, and nothing is written to it.
TEST(HopperPrefillInput, AnOutputOffSixteenBytesIsRefused) {
  const PrefillProblem p = PrefillTestConfig{"bf16_256", 1, 2, 2, 256, 256, 128, false, DType::bf16}.problem();
  const std::size_t elems = std::size_t(p.batch) * p.q_heads * p.q_len * p.head_dim;
  gpu::DeviceBuffer<std::uint16_t> q(elems), k(elems), v(elems), o(elems + 8);
  const std::vector<std::uint16_t> poison(elems + 8, 0xffffu);
  o.upload(poison);
  const PrefillArgs args{q.data(), k.data(), v.data(), o.data() + 1, p};
  EXPECT_THROW(launch_hopper_prefill<HopperPrefillPolicy>(args, gpu::api::stream_t{}), UnsupportedProblem);
  SCHEDLAB_GPU_CHECK(gpu::api::device_synchronize());
  EXPECT_EQ(o.download(), poison) << "the refused launch wrote to its output";
}

}  // namespace
}  // namespace hopper_prefill_test
}  // namespace schedlab::kernels
