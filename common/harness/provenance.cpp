#include "common/harness/provenance.hpp"

#include "common/gpu/arch.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

namespace schedlab {

namespace {
std::string version_string(int v) {
  // CUDA and HIP encode versions as major*1000 + minor*10 (HIP adds a patch field).
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10) + " (" + std::to_string(v) + ")";
}
}  // namespace

std::map<std::string, std::string> provenance_context(const gpu::DeviceInfo* device) {
  const BuildInfo& b = build_info();
  std::map<std::string, std::string> ctx{
      {"schedlab_commit", b.commit},   {"schedlab_dirty", b.dirty},       {"backend", b.backend},
      {"build_archs", b.archs},        {"compiler_flags", b.flags},       {"compiler", b.compiler},
      {"build_type", b.build_type},
  };
  if (device) {
    ctx["device"] = device->name;
    ctx["arch"] = device->arch;
    // The matrix instructions the kernels use there (wgmma / mma.sync on sm_90a, v_mfma on AMD).
    if (const std::optional<gpu::GpuArch> arch = gpu::arch_of_device(device->arch))
      ctx["matrix_instruction"] = std::string(gpu::matrix_instruction(*arch));
    ctx["sm_count"] = std::to_string(device->sm_count);
    ctx["l2_bytes"] = std::to_string(device->l2_bytes);
    ctx["sm_clock_mhz"] = std::to_string(device->sm_clock_khz / 1000);
    ctx["mem_clock_mhz"] = std::to_string(device->mem_clock_khz / 1000);
    ctx["mem_bus_bits"] = std::to_string(device->mem_bus_bits);
    ctx["driver_version"] = version_string(device->driver_version);
    ctx["toolkit_version"] = version_string(device->runtime_version);
  } else {
    ctx["device"] = "none (CPU)";
  }
  return ctx;
}

std::string utc_stamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string run_id() {
  if (const char* env = std::getenv("SCHEDLAB_RUN_ID"); env && *env) return env;
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(rd()));
  return utc_stamp() + "-" + suffix;
}

namespace {

// FIPS 180-4, section 4.2.2: the first 32 bits of the fractional parts of the cube roots
// of the first 64 primes.
constexpr std::array<std::uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

std::string to_hex(const std::array<std::uint8_t, 32>& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : digest) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

}  // namespace

// Section 5.3.3: the initial hash value (square roots of the first 8 primes).
Sha256::Sha256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

// Section 6.2.2: message schedule, then 64 rounds.
void Sha256::compress(const std::uint8_t* block) {
  std::array<std::uint32_t, 64> w;
  for (int t = 0; t < 16; ++t)
    w[t] = std::uint32_t(block[4 * t]) << 24 | std::uint32_t(block[4 * t + 1]) << 16 |
           std::uint32_t(block[4 * t + 2]) << 8 | std::uint32_t(block[4 * t + 3]);
  for (int t = 16; t < 64; ++t) {
    const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = h_;
  for (int t = 0; t < 64; ++t) {
    const std::uint32_t big_s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const std::uint32_t ch = (e & f) ^ (~e & g);
    const std::uint32_t t1 = h + big_s1 + ch + kRoundConstants[t] + w[t];
    const std::uint32_t big_s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const std::uint32_t t2 = big_s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const std::array<std::uint32_t, 8> add{a, b, c, d, e, f, g, h};
  for (int i = 0; i < 8; ++i) h_[i] += add[i];
}

void Sha256::update(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  total_bytes_ += bytes;
  while (bytes > 0) {
    const std::size_t take = std::min(bytes, block_.size() - fill_);
    std::memcpy(block_.data() + fill_, p, take);
    fill_ += take;
    p += take;
    bytes -= take;
    if (fill_ == block_.size()) {
      compress(block_.data());
      fill_ = 0;
    }
  }
}

// Section 5.1.1: a 1 bit, zeros to 56 mod 64 bytes, then the message length in bits.
std::array<std::uint8_t, 32> Sha256::digest() {
  const std::uint64_t bits = total_bytes_ * 8;
  const std::uint8_t one = 0x80, zero = 0;
  update(&one, 1);
  while (fill_ != 56) update(&zero, 1);
  std::uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  update(length, 8);
  std::array<std::uint8_t, 32> out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(h_[i] >> (24 - 8 * j));
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 s;
  s.update(bytes.data(), bytes.size());
  return to_hex(s.digest());
}

std::string sha256_file_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + " to hash it");
  Sha256 s;
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    s.update(buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw std::runtime_error("error reading " + path + " to hash it");
  return to_hex(s.digest());
}

void add_benchmark_context(const std::map<std::string, std::string>& context) {
  for (const auto& [k, v] : context) benchmark::AddCustomContext(k, v);
}

}  // namespace schedlab
