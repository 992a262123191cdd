// LDS per workgroup on the AMD targets: plain constants, no HIP headers, so host code and
// tests can hold them. Sources: AMD Instinct MI300 (CDNA3) ISA reference, 64 KiB of LDS per
// CU and per workgroup; AMD Instinct MI350 (CDNA4) ISA reference, 160 KiB.
#pragma once

namespace schedlab::gpu::amd {

inline constexpr int kLdsPerWorkgroupGfx942 = 64 * 1024;   // MI300X / MI325X
inline constexpr int kLdsPerWorkgroupGfx950 = 160 * 1024;  // MI350X / MI355X
// The largest over the targets this backend builds (gfx942, gfx950): one HIP binary holds
// both, so this bounds a kernel's shared storage at compile time and the device's own limit
// is checked at plan time.
inline constexpr int kMaxSmemPerBlock = kLdsPerWorkgroupGfx950;

}  // namespace schedlab::gpu::amd
