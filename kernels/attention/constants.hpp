// Constants the attention families share.
#pragma once

namespace schedlab::kernels::attention {

// log2(e): scores are kept in the log2 domain, the softmax scale times this folded into one FFMA
// before exp2.
inline constexpr float kLog2e = 1.4426950408889634f;

}  // namespace schedlab::kernels::attention
