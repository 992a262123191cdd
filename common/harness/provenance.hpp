// Provenance every results file carries: how the binary was built (baked in at build
// time by cmake/write_provenance.cmake) and what it ran on.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/gpu/device_info.hpp"

namespace schedlab {

struct BuildInfo {
  std::string commit, dirty, backend, archs, flags, compiler, build_type;
};
const BuildInfo& build_info();

// Key/value context for a results file: build info, the device, and how hints behave.
std::map<std::string, std::string> provenance_context(const gpu::DeviceInfo* device);

// Now, as the results' file names spell it: "20261121T055123Z".
std::string utc_stamp();

// The run a results file belongs to, so that an analysis compares a variant only with a
// baseline timed in the same run: $SCHEDLAB_RUN_ID when set and not empty (a sweep sets one
// for all its binaries), else a new "<UTC stamp>-<8 random hex digits>".
std::string run_id();

// SHA-256 (FIPS 180-4), streamed: the hash of the benchmark binary ties a result to the
// exact machine code it timed.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t bytes);
  std::array<std::uint8_t, 32> digest();  // finishes; the object is spent afterwards

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> block_{};
  std::size_t fill_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view bytes);
// Hash of a file's contents in lower-case hex; throws std::runtime_error if it cannot be read.
std::string sha256_file_hex(const std::string& path);

// Adds every entry to Google Benchmark's context (AddCustomContext).
void add_benchmark_context(const std::map<std::string, std::string>& context);

}  // namespace schedlab
