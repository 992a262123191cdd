// Candidates of the Hopper prefill family's tile shape, schedule and softmax, timed side by side
// by bench_hopper_prefill_tuning (kernels/hopper_prefill/README.md has the table). Each is the
// family's default policy with the members its name says changed. Those whose verdict was no
// difference or slower on every shape left the bench; their lines stay in the frozen tuning
// table of kernels/hopper_prefill/LOG.md.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::hopper_prefill_tuning {

using Base = kernels::HopperPrefillPolicy;
using defaults = Base;  // the family default: its kernels are the family's (hopper_prefill.cu)
// Fp8Meet's P packed after O's rescale branch, at the lengths it runs now and as the previous
// default (up to 4096 keys; the default tile's short kernel to 8192).
struct fp8_pack_after : Base {
  /* MeetPackInBlock = */ static constexpr bool kMeetPackInBlock = false;
};
struct fp8_previous : fp8_pack_after {
  /* Fp8ShortKeys = */ static constexpr int kFp8ShortKeys = 8192;
  /* Fp8MeetKeys = */ static constexpr int kFp8MeetKeys = 4096;
};
// Fp8Meet's loop under the mask too (the long causal kernel, LongCausal<Fp8Meet<Base>>, and the
// ragged batches).
using fp8_meet_all = kernels::Fp8Meet<Base>;

}  // namespace schedlab::experiments::hopper_prefill_tuning
