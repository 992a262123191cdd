// decode_row_tile_body's variants against the double reference on the H200: the row-tile shapes
// under each body. The checks are the family's (kernels/tests/decode_gpu_checks.hpp: small shapes
// for compute-sanitizer, a launch twice on poisoned output); built into schedlab_gpu_tests_decode.
// Label: gpu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/decode_row_tile_body/policy.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"

namespace schedlab::kernels::decode_test {
namespace x = experiments::decode_row_tile_body;

// The same shapes with the row tiles computed warp by warp (RowTileMma::warp), the body the
// warpgroup one replaced for 16-bit KV on sm_90a and the one fp8 KV and AMD still run.
TEST(DecodeGpuRowTiles, WarpRowsMatchReference) {
  expect_row_tiles_match_reference<x::token_balanced_warp_rows>(true);
}

// Its row-tile variants: a sanitizer test each, and the seed sweep's.
const std::vector<NamedDecodeKernel> kRowTileVariants = {
    named_decode_kernel<x::token_balanced_warp_rows>()};
INSTANTIATE_TEST_SUITE_P(decode_row_tile_body, DecodeGpuRowTileVariant, ::testing::ValuesIn(kRowTileVariants), row_tile_variant_name);
const bool kSwept = register_row_tile_variants(kRowTileVariants);

}  // namespace schedlab::kernels::decode_test
