// Paged-KV decode attention on the portability layer. One CTA per (split, KV head,
// sequence), or per planned chunk of one (token_balanced); each warp streams its own 16-token
// tiles (one page at page size 16) from the KV pool into shared memory with async copies,
// computes S = Q K^T for the GQA group (padded to the 16 rows of the matrix instruction), an
// online softmax, and O += P V. A group above 16 under a policy with row tiles
// (kMaxRowTiles) is one CTA whose warps each hold 16 of its query rows and share every copied
// tile (decode_row_tiles). Warps combine in shared memory; splits combine in a second, small
// kernel. (Fusing that merge into the last CTA to finish was tried for the split grid: one
// thread per column then walked every split serially, and at batch 1 with 32 splits it cost
// more than the launch it saved.) Token-balanced chunks do merge in the last CTA of each unit,
// a warp per row over the unit's own partials (merge_unit_if_last), unless the plan finds that
// merge too long for one CTA and leaves the unit to the combine kernel (DecodePlan).
// Scheduling knobs come from the Policy (decode_policy.hpp); the body is shared.
// The kernel by role, each file including the one before it:
//   decode_layout.hpp      shared storage as byte layouts (WarpStorage, GroupSmem), read by the host plan too
//   decode_storage.cuh     Params, lane tile layouts, the compiled architecture's storage (Smem), Softmax state
//   decode_copy.cuh        page lookups, a tile's copies, a warp's copy pipeline (CopyPipe)
//   decode_warp_math.cuh   S = Q K^T, online softmax, O += P V on one tile (16-bit and fp8)
//   decode_cta_merge.cuh   the warps' rows merged in a CTA, a unit's partials in its last CTA
//   decode_warp_body.cuh   tile sources, the warp pipelines, decode_split, decode_row_tiles
//   decode_warpgroup.cuh   decode_warpgroup_rows (sm_90a wgmma, fp8 producer warpgroup)
//   decode_persistent.cuh  decode_dynamic (the persistent grid)
//   decode_kernels.cuh     the decode kernel's entry and the combine kernel
//   decode_launch.cuh      launch_for, plan_for, dispatch, DecodeInstances
#pragma once
#include "kernels/decode/decode_launch.cuh"
