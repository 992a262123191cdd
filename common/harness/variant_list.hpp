// An experiment's variants, written once as a list of policies (each with its name, kName): the
// list drives the benchmark's registrations (harness::ExperimentOf) and the kernel
// instantiations of the experiment's library (e.g. kernels::DecodeInstances).
#pragma once

namespace schedlab::harness {

template <class... Policies>
struct VariantList {};

}  // namespace schedlab::harness
