// The harness Case for paged decode kernels: a KV pool of random values behind a shuffled
// block table, ragged lengths, fp8 scales; the accuracy check gathers the pages of a few
// sampled sequences (a pool can be many GB) into a compact problem for the reference.
#pragma once
#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "common/harness/bench.hpp"
#include "common/problem.hpp"
#include "kernels/common/device_case.hpp"
#include "kernels/decode/paged_decode.hpp"

namespace schedlab::kernels {

using DecodeLaunch = std::function<void(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t)>;

// A kernel as the Case sees it: how to plan it for a problem and how to launch it.
struct DecodeKernel {
  DecodeLaunch launch;
  std::function<DecodePlan(const DecodeProblem&, int forced_splits)> plan;
  template <class Policy>
  static DecodeKernel of() {
    return {launch_paged_decode<Policy>, plan_paged_decode<Policy>};
  }
};

class DecodeCase final : public harness::Case {
 public:
  DecodeCase(const DecodeProblem& p, const DecodeKernel& kernel, int forced_splits = 0)
      : p_(p), launch_(kernel.launch), plan_(kernel.plan(p, forced_splits)) {}

  const DecodePlan& plan() const { return plan_; }

  void prepare(std::uint64_t seed, int sets) override {
    sets_.clear();
    for (int s = 0; s < sets; ++s) {
      Set& set = sets_.emplace_back(Set{DeviceTensor(p_.q_dtype, std::size_t(p_.batch) * p_.q_heads * p_.head_dim),
                                        DeviceTensor(p_.kv_dtype, p_.pool_elems()),
                                        DeviceTensor(p_.kv_dtype, p_.pool_elems())});
      set.q.fill(seed + 3 * s);
      set.k.fill(seed + 3 * s + 1);
      set.v.fill(seed + 3 * s + 2);
    }
    block_table_ = upload(p_.block_table);
    context_lens_ = upload(p_.context_lens);
    if (p_.kv_dtype == DType::fp8_e4m3) {
      k_scale_ = upload(p_.k_scale);
      v_scale_ = upload(p_.v_scale);
    }
    o_ = DeviceTensor(p_.q_dtype, std::size_t(p_.batch) * p_.q_heads * p_.head_dim);
    probe_slots_.allocate();
    const std::size_t slots = std::size_t(p_.batch) * p_.q_heads * plan_.num_splits;
    if (plan_.needs_combine()) {
      partial_o_ = gpu::DeviceBuffer<float>(slots * p_.head_dim);
      partial_lse_ = gpu::DeviceBuffer<float>(slots);
    }
    // The dynamic schedule's counters start at zero; each launch leaves them zero again.
    if (plan_.needs_schedule()) schedule_ = upload(std::vector<int>(decode_schedule_ints(p_), 0));
  }
  void poison_output() override {
    o_.poison();
    if (plan_.needs_combine()) {
      gpu::poison(partial_o_.data(), partial_o_.bytes(), nullptr);
      gpu::poison(partial_lse_.data(), partial_lse_.bytes(), nullptr);
    }
  }
  void launch(int s) override {
    const DecodeArgs args{sets_[s].q.data(),   sets_[s].k.data(), sets_[s].v.data(),  block_table_.data(),
                          context_lens_.data(), k_scale_.data(),  v_scale_.data(),    o_.data(),
                          partial_o_.data(),    partial_lse_.data(), probe_slots_.data(), schedule_.data(),
                          &p_,                  plan_.num_splits};
    launch_(args, plan_, nullptr);
  }
  void synchronize() override { SCHEDLAB_GPU_CHECK(gpu::api::device_synchronize()); }

  AccuracyReport check_accuracy(std::uint64_t seed) override;
  harness::Work work() const override { return {p_.flops(), p_.min_bytes()}; }
  std::map<std::string, double> extra_counters() const override { return probe_slots_.counters(); }
  std::size_t input_set_bytes() const override { return static_cast<std::size_t>(p_.min_bytes()); }
  std::map<std::string, double> axes() const override {
    return {{"batch", double(p_.batch)},         {"q_heads", double(p_.q_heads)},
            {"kv_heads", double(p_.kv_heads)},   {"head_dim", double(p_.head_dim)},
            {"page_size", double(p_.page_size)}, {"context", double(*std::max_element(p_.context_lens.begin(), p_.context_lens.end()))},
            {"window", double(p_.window)},       {"num_splits", double(plan_.num_splits)},
            {"persistent_ctas", double(plan_.ctas)}};
  }

 private:
  template <class T>
  static gpu::DeviceBuffer<T> upload(const std::vector<T>& host) {
    gpu::DeviceBuffer<T> d(host.size());
    d.upload(host);
    return d;
  }
  struct Set {
    DeviceTensor q, k, v;
  };
  DecodeProblem p_;
  DecodeLaunch launch_;
  DecodePlan plan_;
  std::vector<Set> sets_;
  gpu::DeviceBuffer<int> block_table_, context_lens_, schedule_;
  gpu::DeviceBuffer<float> k_scale_, v_scale_, partial_o_, partial_lse_;
  ProbeSlots probe_slots_;
  DeviceTensor o_;
};

// Sequences whose rows the accuracy check compares: the first, the last and one at random
// (all of them for small batches); every query head of each.
inline constexpr int kAccuracySequences = 3;

inline AccuracyReport DecodeCase::check_accuracy(std::uint64_t seed) {
  std::vector<int> seqs;
  if (p_.batch <= kAccuracySequences) {
    for (int b = 0; b < p_.batch; ++b) seqs.push_back(b);
  } else {
    std::mt19937_64 gen(seed);
    seqs = {0, p_.batch - 1, 1 + static_cast<int>(gen() % (p_.batch - 2))};
  }
  // A compact problem holding only the sampled sequences' pages, in their original order.
  DecodeProblem c = p_;
  c.batch = static_cast<int>(seqs.size());
  c.context_lens.clear();
  c.block_table.clear();
  const std::size_t page_elems = std::size_t(p_.kv_heads) * p_.page_size * p_.head_dim;
  const std::size_t page_bytes = page_elems * dtype_bytes(p_.kv_dtype);
  std::vector<unsigned char> k_host, v_host;
  c.num_pages = 0;
  for (int b : seqs) {
    c.context_lens.push_back(p_.context_lens[b]);
    for (int j = 0; j < p_.max_pages_per_seq; ++j) {
      const int needed = (p_.context_lens[b] + p_.page_size - 1) / p_.page_size;
      if (j >= needed) {
        c.block_table.push_back(0);
        continue;
      }
      const std::size_t page = p_.block_table[std::size_t(b) * p_.max_pages_per_seq + j];
      k_host.resize(k_host.size() + page_bytes);
      v_host.resize(v_host.size() + page_bytes);
      SCHEDLAB_GPU_CHECK(gpu::api::memcpy_d2h(k_host.data() + std::size_t(c.num_pages) * page_bytes,
                                              static_cast<unsigned char*>(sets_[0].k.data()) + page * page_bytes, page_bytes));
      SCHEDLAB_GPU_CHECK(gpu::api::memcpy_d2h(v_host.data() + std::size_t(c.num_pages) * page_bytes,
                                              static_cast<unsigned char*>(sets_[0].v.data()) + page * page_bytes, page_bytes));
      c.block_table.push_back(c.num_pages++);
    }
  }
  c.num_pages = std::max(c.num_pages, 1);
  const auto q_all = sets_[0].q.download();
  const std::size_t q_row_bytes = std::size_t(p_.q_heads) * p_.head_dim * dtype_bytes(p_.q_dtype);
  std::vector<unsigned char> q_host;
  for (int b : seqs) q_host.insert(q_host.end(), q_all.begin() + b * q_row_bytes, q_all.begin() + (b + 1) * q_row_bytes);

  const auto rows = all_rows(c);
  const auto ref = decode_reference(c, q_host.data(), k_host.data(), v_host.data(), rows);
  const auto out = gather_rows(o_.download(), p_.q_dtype, rows, p_.head_dim, [&](const QueryRow& r) {
    return (std::size_t(seqs[r.batch]) * p_.q_heads + r.head) * std::size_t(p_.head_dim);
  });
  return compare(out, ref, default_tolerance(p_.q_dtype, p_.kv_dtype), std::size_t(p_.head_dim));
}

}  // namespace schedlab::kernels
