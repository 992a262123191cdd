// decode_lds_buffers's variants against the double reference on the H200: every configuration and
// its small shapes; bulk copies past 4 GiB, and refusing pages below a tile. The checks are the
// family's (kernels/tests/decode_gpu_checks.hpp: small shapes for compute-sanitizer, a launch twice
// on poisoned output); built into schedlab_gpu_tests_decode. Label: gpu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/decode_lds_buffers/policy.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"

namespace schedlab::kernels::decode_test {
namespace x = experiments::decode_lds_buffers;

using Timed = ::testing::Types<x::single, x::triple_buffer, x::double_3ctas, x::double_bulk>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(decode_lds_buffers, DecodeGpu, Timed);

// Pages placed past 4 GiB of the pool, read by bulk tensor copies (64-bit base, row
// coordinates): 32-bit offsets would wrap and read the wrong page.
TEST(DecodeGpuLargePool, BulkCopiesPagesBeyondFourGiB) {
  const std::vector<int> lens = {300, 4100};
  constexpr int kSparePages = 150000;  // x 32 KiB per page of K: about 4.6 GiB per pool
  const std::uint64_t seed = test_seed();
  DecodeProblem p = make_decode_problem(2, 32, 8, 128, 16, lens, DType::bf16, seed, kSparePages);
  for (std::size_t i = 0; i < p.block_table.size(); ++i) p.block_table[i] = p.num_pages - 1 - static_cast<int>(i);
  const double page_bytes = double(p.kv_heads) * p.page_size * p.head_dim * 2;
  ASSERT_GT((p.num_pages - 1 - double(p.block_table.size())) * page_bytes, 4.0 * (1u << 30));
  const AccuracyReport bulk = run_decode(DecodeKernel::of<x::double_bulk>(), p, 0, seed + 2);
  EXPECT_TRUE(bulk.passed) << "bulk copies: " << bulk.message;
}

// Bulk copies move a box of 16 contiguous rows: pages smaller than a tile are refused at plan time.
TEST(DecodeGpuSmallPages, BulkCopiesRefuseThem) {
  const DecodeProblem p = make_decode_problem(2, 32, 8, 128, 1, {300, 17}, DType::bf16, 1);
  EXPECT_THROW(DecodeCase(p, DecodeKernel::of<x::double_bulk>()), UnsupportedProblem);
}

}  // namespace schedlab::kernels::decode_test
