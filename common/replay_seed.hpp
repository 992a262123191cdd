// The seed a randomized GPU test or seed sweep draws its inputs from, and how to replay it.
// Every input of a test is a pure function of one 64-bit seed (make_*_problem's tables and
// scales through mt19937_64, the buffers through normal_at): fresh from std::random_device by
// default, so each run checks inputs no earlier run saw; SCHEDLAB_SEED=<seed> in the
// environment fixes it, so a failure seen once can be run again bit for bit.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace schedlab {

inline constexpr const char* kSeedEnv = "SCHEDLAB_SEED";

// "0x" (or "0X") then 1 to 16 hex digits, or decimal digits that fit 64 bits; nothing else
// (no sign, space or suffix). Anything else throws std::invalid_argument naming kSeedEnv, the
// value and the accepted forms.
std::uint64_t parse_seed(std::string_view text);

// The form parse_seed reads back and the replay lines print: "0x" and 16 hex digits.
std::string format_seed(std::uint64_t seed);

// 64 fresh bits from std::random_device (two draws of its 32).
std::uint64_t fresh_seed();

// The seed of a run: env_value (kSeedEnv's value; null or empty: unset) parsed, else fresh.
std::uint64_t seed_from(const char* env_value);
// seed_from(getenv(kSeedEnv)).
std::uint64_t seed_from_environment();

// The i-th seed of a sweep that starts at `start`: splitmix64 over (start, i), so the seeds of a
// sweep are unrelated to each other (consecutive seeds are not: a case reads seed, seed + 1 and
// seed + 2 for Q, K and V) and each can be replayed on its own.
std::uint64_t sweep_seed(std::uint64_t start, std::uint64_t i);

}  // namespace schedlab
