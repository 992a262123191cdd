// The GPU tests' seed helper (kernels/tests/test_seed.hpp) without a GPU: one seed a test,
// SCHEDLAB_SEED replays it, the next test draws its own, and the seed is recorded in the XML.
#include "kernels/tests/test_seed.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace schedlab::kernels {
namespace {

// Sets SCHEDLAB_SEED for one test.
class WithSeedEnv {
 public:
  explicit WithSeedEnv(const char* value) { setenv(kSeedEnv, value, 1); }
  ~WithSeedEnv() { unsetenv(kSeedEnv); }
};

TEST(TestSeed, OneSeedForTheWholeTest) {
  const std::uint64_t first = test_seed();
  EXPECT_EQ(test_seed(), first);
}

TEST(TestSeed, TheEnvironmentReplaysASeed) {
  WithSeedEnv env("0x000000000000002a");
  EXPECT_EQ(test_seed(), 42u);
}

// Runs after the test above (gtest keeps the order of a file's tests unless shuffled): a seed
// kept from it would be 42.
TEST(TestSeed, EachTestDrawsItsOwn) {
  WithSeedEnv env("43");
  EXPECT_EQ(test_seed(), 43u);
}

TEST(TestSeed, IsRecordedAsTheTestsProperty) {
  WithSeedEnv env("0x7");
  test_seed();
  const ::testing::TestResult* result = ::testing::UnitTest::GetInstance()->current_test_info()->result();
  ASSERT_EQ(result->test_property_count(), 1);
  EXPECT_STREQ(result->GetTestProperty(0).key(), "seed");
  EXPECT_STREQ(result->GetTestProperty(0).value(), "0x0000000000000007");
}

TEST(TestSeed, ABadValueIsAnErrorThatNamesIt) {
  WithSeedEnv env("0xnope");
  try {
    test_seed();
    FAIL() << "a bad SCHEDLAB_SEED was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SCHEDLAB_SEED='0xnope' is not a seed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace schedlab::kernels
