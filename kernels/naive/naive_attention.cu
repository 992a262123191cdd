#include "kernels/common/block_reduce.hpp"
#include "kernels/common/element.hpp"
#include "kernels/naive/naive_attention.hpp"
#include "common/gpu/launch.hpp"

namespace schedlab::kernels {

namespace {

constexpr int kThreads = 128;
constexpr int kChunk = 512;  // keys whose probabilities are staged in shared memory at once
constexpr int kMaxHeadDim = 256;

struct NaiveParams {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  int q_len, kv_len, q_heads, kv_heads, head_dim, window;
  bool causal;
  float scale;
};

template <DType kT>
__global__ void __launch_bounds__(kThreads) naive_attention_kernel(NaiveParams a) {
  using E = Element<kT>;
  using S = typename E::storage;
  __shared__ float q_s[kMaxHeadDim];
  __shared__ float p_s[kChunk];
  __shared__ float scratch[kThreads / 32];
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int kvh = h / (a.q_heads / a.kv_heads);
  const auto q = static_cast<const S*>(a.q);
  const auto k = static_cast<const S*>(a.k);
  const auto v = static_cast<const S*>(a.v);
  const std::size_t q_row = ((std::size_t(b) * a.q_len + i) * a.q_heads + h) * a.head_dim;
  auto kv_row = [&](int j) { return ((std::size_t(b) * a.kv_len + j) * a.kv_heads + kvh) * a.head_dim; };

  // Visible keys [lo, hi): bottom-right aligned causal mask and optional sliding window.
  const int offset = a.kv_len - a.q_len;
  const int hi = a.causal ? min(a.kv_len, i + offset + 1) : a.kv_len;
  const int lo = a.window > 0 ? max(0, i + offset - a.window + 1) : 0;

  for (int d = threadIdx.x; d < a.head_dim; d += blockDim.x) q_s[d] = E::load(q, q_row + d) * a.scale;
  gpu::block_sync();
  auto score = [&](int j) {
    float s = 0.f;
    for (int d = 0; d < a.head_dim; ++d) s += q_s[d] * E::load(k, kv_row(j) + d);
    return s;
  };

  // pass 1: row max
  float m = -INFINITY;
  for (int j = lo + threadIdx.x; j < hi; j += blockDim.x) m = fmaxf(m, score(j));
  m = block_reduce(m, MaxOp{}, scratch);

  // pass 2: exp-sum and O = P V, a chunk of probabilities at a time
  float l = 0.f, o_d = 0.f;
  const int d = threadIdx.x;
  for (int c = lo; c < hi; c += kChunk) {
    const int n = min(kChunk, hi - c);
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
      p_s[j] = __expf(score(c + j) - m);
      l += p_s[j];
    }
    gpu::block_sync();
    if (d < a.head_dim)
      for (int j = 0; j < n; ++j) o_d += p_s[j] * E::load(v, kv_row(c + j) + d);
    gpu::block_sync();
  }
  l = block_reduce(l, SumOp{}, scratch);
  // A row that sees no key outputs zeros (the reference's convention).
  if (d < a.head_dim) E::store(static_cast<S*>(a.o), q_row + d, l > 0.f ? o_d / l : 0.f);
}

}  // namespace

KernelSupport naive_attention_support() {
  KernelSupport s;
  s.dtypes = {DType::bf16, DType::f16};
  s.ragged = false;  // [batch, len, heads, dim] indexing
  return s;
}

void launch_naive_attention(const PrefillArgs& args, gpu::api::stream_t stream) {
  const PrefillProblem& p = args.problem;
  if (p.head_dim > kThreads) throw UnsupportedProblem("naive attention: head_dim above " + std::to_string(kThreads));
  NaiveParams np{args.q,      args.k,      args.v,     args.o,  p.q_len, p.kv_len, p.q_heads, p.kv_heads,
                 p.head_dim, p.window, p.causal, p.scale()};
  const gpu::LaunchConfig cfg{dim3(p.q_len, p.q_heads, p.batch), dim3(kThreads), 0, stream};
  switch (p.dtype) {
    case DType::bf16: return gpu::launch("naive_attention<bf16>", naive_attention_kernel<DType::bf16>, cfg, np);
    case DType::f16: return gpu::launch("naive_attention<f16>", naive_attention_kernel<DType::f16>, cfg, np);
    default: throw UnsupportedProblem("naive attention reads bf16 or f16");
  }
}

}  // namespace schedlab::kernels
