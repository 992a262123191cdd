// The harness Case for paged decode kernels: a KV pool of random values behind a shuffled
// block table, ragged lengths, fp8 scales. The accuracy gate covers every sequence: for each
// checked (sequence, KV head) the reference reads only that head's pages, gathered on the
// device (a pool can be many GB), as a one-head problem of its own.
#pragma once
#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "common/harness/bench.hpp"
#include "common/problem.hpp"
#include "kernels/common/device_case.hpp"
#include "kernels/decode/decode_case_memory.hpp"
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
    rows_ = rows_of_every_sequence(p_, kDecodeReferenceKeys, seed);
    block_table_ = upload(p_.block_table);
    context_lens_ = upload(p_.context_lens);
    if (p_.kv_dtype == DType::fp8_e4m3) {
      k_scale_ = upload(p_.k_scale);
      v_scale_ = upload(p_.v_scale);
    }
    o_ = DeviceTensor(p_.q_dtype, std::size_t(p_.batch) * p_.q_heads * p_.head_dim);
    probe_slots_.allocate();
    timeline_.allocate();
    const std::size_t slots = std::size_t(p_.batch) * p_.q_heads * plan_.num_splits;
    if (plan_.needs_partials()) {
      partial_o_ = gpu::DeviceBuffer<float>(slots * p_.head_dim);
      partial_lse_ = gpu::DeviceBuffer<float>(slots);
    }
    // The dynamic schedule's counters (a token-balanced plan's arrival counters) start at zero;
    // each launch leaves them zero again.
    if (plan_.needs_schedule()) schedule_ = upload(std::vector<int>(decode_schedule_ints(p_), 0));
    // The token-balanced work list, planned once with the case (outside the timed launches).
    if (plan_.balanced()) work_ = upload(plan_.work.device_words());
  }
  void poison_output() override {
    timeline_.reset();
    o_.poison();
    if (plan_.needs_partials()) {
      gpu::poison(partial_o_.data(), partial_o_.bytes(), nullptr);
      gpu::poison(partial_lse_.data(), partial_lse_.bytes(), nullptr);
    }
  }
  void launch(int s) override {
    const DecodeArgs args{sets_[s].q.data(),   sets_[s].k.data(), sets_[s].v.data(),  block_table_.data(),
                          context_lens_.data(), k_scale_.data(),  v_scale_.data(),    o_.data(),
                          partial_o_.data(),    partial_lse_.data(), probe_slots_.data(), schedule_.data(),
                          work_.data(),         &p_,                 plan_.num_splits, timeline_.data()};
    launch_(args, plan_, nullptr);
  }
  void synchronize() override { SCHEDLAB_GPU_CHECK(gpu::api::device_synchronize()); }

  std::vector<double> reference(int set) override;
  std::vector<float> output() override {
    return gather_rows(o_.download(), p_.q_dtype, rows_, p_.head_dim, [&](const QueryRow& r) {
      return (std::size_t(r.batch) * p_.q_heads + r.head) * std::size_t(p_.head_dim);
    });
  }
  Tolerance tolerance() const override { return default_tolerance(p_.q_dtype, p_.kv_dtype); }
  std::size_t row_length() const override { return std::size_t(p_.head_dim); }
  std::string input_key() const override {
    KeyHash h;
    h.add(p_.batch).add(p_.q_heads).add(p_.kv_heads).add(p_.head_dim).add(p_.page_size).add(p_.num_pages);
    h.add(p_.max_pages_per_seq).add(p_.q_dtype).add(p_.kv_dtype).add(p_.window).add(p_.softmax_scale);
    h.add(p_.context_lens).add(p_.block_table).add(p_.k_scale).add(p_.v_scale);
    return "decode " + h.hex();
  }
  harness::Work work() const override { return {p_.flops(), p_.min_bytes()}; }
  std::map<std::string, double> extra_counters() const override {
    auto out = probe_slots_.counters();
    out.merge(timeline_.counters());
    return out;
  }
  std::size_t input_set_bytes() const override { return static_cast<std::size_t>(p_.min_bytes()); }
  std::size_t device_bytes(int sets) const override {
    return decode_case_device_bytes(p_, plan_, sets) + ProbeSlots::kBytes + CtaTimelineBuffer::kBytes;
  }
  std::map<std::string, double> axes() const override {
    return {{"batch", double(p_.batch)},         {"q_heads", double(p_.q_heads)},
            {"kv_heads", double(p_.kv_heads)},   {"head_dim", double(p_.head_dim)},
            {"page_size", double(p_.page_size)}, {"context", double(*std::max_element(p_.context_lens.begin(), p_.context_lens.end()))},
            {"window", double(p_.window)},       {"num_splits", double(plan_.num_splits)},
            {"persistent_ctas", double(plan_.ctas)}, {"work_chunks", double(plan_.work.chunks.size())},
            {"row_tiles", double(plan_.row_tiles)}};
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
  gpu::DeviceBuffer<int> block_table_, context_lens_, schedule_, work_;
  gpu::DeviceBuffer<float> k_scale_, v_scale_, partial_o_, partial_lse_;
  ProbeSlots probe_slots_;
  CtaTimelineBuffer timeline_;
  DeviceTensor o_;
  std::vector<QueryRow> rows_;  // the rows the gate compares (every sequence)
};

// The reference of each checked (sequence, KV head) from its own pages: a problem of one
// sequence and one KV head whose pool is those pages in order, solved on every core.
inline std::vector<double> DecodeCase::reference(int set) {
  struct Unit {
    int seq, kvh;
    std::size_t first_row, rows, first_page, pages;
  };
  std::vector<Unit> units;
  std::vector<std::int64_t> offsets;  // bytes of each gathered page of one KV head
  const std::int64_t elem_bytes = dtype_bytes(p_.kv_dtype);
  const std::size_t page_bytes = std::size_t(p_.page_size) * p_.head_dim * elem_bytes;
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const int seq = rows_[i].batch, kvh = rows_[i].head / p_.group_size();
    if (!units.empty() && units.back().seq == seq && units.back().kvh == kvh) {
      ++units.back().rows;
      continue;
    }
    const std::size_t pages = std::size_t(p_.context_lens[seq] + p_.page_size - 1) / p_.page_size;
    units.push_back({seq, kvh, i, 1, offsets.size(), pages});
    for (std::size_t j = 0; j < pages; ++j)
      offsets.push_back(p_.pool_offset(p_.block_table[std::size_t(seq) * p_.max_pages_per_seq + j], kvh, 0) * elem_bytes);
  }
  const auto k_pages = gpu::gather_chunks(sets_[set].k.data(), offsets, page_bytes);
  const auto v_pages = gpu::gather_chunks(sets_[set].v.data(), offsets, page_bytes);
  const auto q_all = sets_[set].q.download();
  const std::size_t q_row_bytes = std::size_t(p_.head_dim) * dtype_bytes(p_.q_dtype);
  std::vector<double> ref(rows_.size() * p_.head_dim);
  parallel_for(units.size(), [&](std::size_t u) {
    const Unit& unit = units[u];
    DecodeProblem one = p_;
    one.batch = 1;
    one.kv_heads = 1;
    one.q_heads = p_.group_size();
    one.num_pages = one.max_pages_per_seq = static_cast<int>(unit.pages);
    one.context_lens = {p_.context_lens[unit.seq]};
    one.block_table.resize(unit.pages);
    for (std::size_t j = 0; j < unit.pages; ++j) one.block_table[j] = static_cast<int>(j);
    if (p_.kv_dtype == DType::fp8_e4m3) {
      one.k_scale = {p_.k_scale[unit.kvh]};
      one.v_scale = {p_.v_scale[unit.kvh]};
    }
    const int head0 = unit.kvh * p_.group_size();
    std::vector<QueryRow> rows;
    for (std::size_t r = 0; r < unit.rows; ++r) rows.push_back({0, rows_[unit.first_row + r].head - head0, 0});
    const unsigned char* q = q_all.data() + (std::size_t(unit.seq) * p_.q_heads + head0) * q_row_bytes;
    const auto part = decode_reference(one, q, k_pages.data() + unit.first_page * page_bytes,
                                       v_pages.data() + unit.first_page * page_bytes, rows);
    std::copy(part.begin(), part.end(), ref.begin() + std::ptrdiff_t(unit.first_row * p_.head_dim));
  });
  return ref;
}

}  // namespace schedlab::kernels
