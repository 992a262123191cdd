#include "common/replay_seed.hpp"

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include "common/data.hpp"

namespace schedlab {

std::uint64_t parse_seed(std::string_view text) {
  constexpr int kHex = 16, kDecimal = 10;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string_view digits = hex ? text.substr(2) : text;
  std::uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seed, hex ? kHex : kDecimal);
  // from_chars takes no sign but would stop early on one; only every character a digit counts.
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    throw std::invalid_argument(std::string(kSeedEnv) + "='" + std::string(text) +
                                "' is not a seed: expected 0x followed by 1 to 16 hex digits (as the tests print "
                                "it) or a decimal number below 2^64");
  return seed;
}

std::string format_seed(std::uint64_t seed) {
  char buf[2 + 16 + 1];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, seed);
  return buf;
}

std::uint64_t fresh_seed() {
  std::random_device rd;
  constexpr int kHalfBits = 32;
  const std::uint64_t high = rd(), low = rd();
  return (high << kHalfBits) ^ low;
}

std::uint64_t seed_from(const char* env_value) {
  if (env_value == nullptr || *env_value == '\0') return fresh_seed();
  return parse_seed(env_value);
}

std::uint64_t seed_from_environment() { return seed_from(std::getenv(kSeedEnv)); }

std::uint64_t sweep_seed(std::uint64_t start, std::uint64_t i) {
  return detail::splitmix64_mix(start + (i + 1) * detail::kSplitmixGamma);
}

}  // namespace schedlab
