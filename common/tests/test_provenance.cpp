// Provenance helpers: the SHA-256 that names the timed binary, and the run id.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <unistd.h>

#include "common/harness/provenance.hpp"

namespace schedlab {
namespace {

// FIPS 180-4 examples (NIST's "SHA256.pdf" and the one-million-'a' test).
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the 55/56-byte padding boundary and whole blocks (values from Python's hashlib).
TEST(Sha256, PaddingBoundaries) {
  const std::pair<int, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"}};
  for (const auto& [n, hex] : cases) EXPECT_EQ(sha256_hex(std::string(n, 'a')), hex) << n << " bytes";
}

TEST(Sha256, PiecewiseUpdatesEqualOneUpdate) {
  std::string msg;
  for (int i = 0; i < 1000; ++i) msg += static_cast<char>(i * 7 + 3);
  Sha256 s;
  for (std::size_t at = 0, step = 1; at < msg.size(); at += step, step = step % 97 + 13)
    s.update(msg.data() + at, std::min(step, msg.size() - at));
  const auto d = s.digest();
  std::string hex;
  for (auto b : d) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", b);
    hex += buf;
  }
  EXPECT_EQ(hex, sha256_hex(msg));
}

TEST(Sha256, FileHashIsTheHashOfItsBytes) {
  namespace fs = std::filesystem;
  const fs::path p = fs::temp_directory_path() / ("schedlab_sha_" + std::to_string(::getpid()));
  std::string bytes(3 << 20, '\0');  // spans several read chunks
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  std::ofstream(p, std::ios::binary) << bytes;
  EXPECT_EQ(sha256_file_hex(p.string()), sha256_hex(bytes));
  fs::remove(p);
  EXPECT_THROW(sha256_file_hex(p.string()), std::runtime_error);
}

TEST(RunId, FromTheEnvironmentElseStampAndRandomHex) {
  ::setenv("SCHEDLAB_RUN_ID", "sweep-42", 1);
  EXPECT_EQ(run_id(), "sweep-42");
  ::setenv("SCHEDLAB_RUN_ID", "", 1);  // empty counts as unset
  const std::string a = run_id();
  ::unsetenv("SCHEDLAB_RUN_ID");
  const std::string b = run_id();
  const std::regex form("[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}");
  EXPECT_TRUE(std::regex_match(a, form)) << a;
  EXPECT_TRUE(std::regex_match(b, form)) << b;
  EXPECT_NE(a.substr(17), b.substr(17));  // the random part (equal with probability 2^-32)
}

TEST(ProvenanceContext, NamesTheMatrixInstructionOfTheDevicesArchitecture) {
  gpu::DeviceInfo d;
  d.arch = "sm_90";
  EXPECT_EQ(provenance_context(&d).at("matrix_instruction"), "HGMMA/HMMA");
  d.arch = "gfx942:sramecc+:xnack-";
  EXPECT_EQ(provenance_context(&d).at("matrix_instruction"), "v_mfma");
  d.arch = "gfx950";
  EXPECT_EQ(provenance_context(&d).at("matrix_instruction"), "v_mfma");
  d.arch = "sm_80";  // no code for it: no claim
  EXPECT_EQ(provenance_context(&d).count("matrix_instruction"), 0u);
  EXPECT_EQ(provenance_context(nullptr).count("matrix_instruction"), 0u);
}

}  // namespace
}  // namespace schedlab
