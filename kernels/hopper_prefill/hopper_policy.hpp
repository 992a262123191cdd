// The scheduling knobs of the Hopper prefill family (FlashAttention-3's structure: Shah et
// al. 2024, arXiv 2407.08608, section 3). An experiment variant is this struct with some
// members changed; the kernel body is shared (kernels/hopper_prefill/hopper_prefill.cuh).
#pragma once
#include "kernels/attention/tile_schedule.hpp"

namespace schedlab::kernels {

// The tile shape of one (head dim, causal) instantiation.
struct HopperTile {
  int consumers;      // consumer warpgroups, 64 query rows each
  int block_n;        // keys per K/V tile
  int consumer_regs;  // registers a consumer thread takes with setmaxnreg
  int row_chains;     // independent max / sum chains per row in the softmax
  // P's register buffers in the overlapped loop. 1: P(j) is packed into the buffer PV(j - 1)
  // reads, so only once that GEMM is done, in a run of packs with nothing to hide their
  // latency. 2: P(j) goes to the other buffer among the exponentials of the softmax, while
  // PV(j - 1) runs (the loop unrolled by two so that each buffer is registers, not an indexed
  // array); it costs one more P of registers (a quarter of S's).
  int p_buffers = 1;
};

// A fault injected on purpose, for the GPU tests that show the accuracy gate catches it.
enum class HopperFault {
  none,
  vt_key_order,         // fp8: V^T written in a key order other than the one P holds the keys in
  ragged_longest_lens,  // a ragged batch masked by its longest sequence's lengths, not the tile's own
  split_pieces_unmerged,  // a split tile's last piece writes its own rows, not the merge of every piece's
  narrow_last_short,      // the narrow last key tile 64 keys narrower than its rows see (kNarrowLastTile)
};

struct HopperPrefillPolicy {
  // A producer warpgroup issues every bulk copy and the consumer warpgroups only compute
  // (FA3 3.1). false: no producer; one consumer thread issues the copies between its tiles.
  /* WarpSpecialized = */ static constexpr bool kWarpSpecialized = true;
  // setmaxnreg: the producer gives registers back, the consumers take them (FA3: 24 / 240).
  /* RegisterRealloc = */ static constexpr bool kRegisterRealloc = true;
  /* ProducerRegs = */ static constexpr int kProducerRegs = 24;
  // The consumer warpgroups take turns issuing their matrix ops through named barriers, so
  // one's softmax runs while another's GEMMs do (FA3 3.1, "ping-pong").
  /* PingPong = */ static constexpr bool kPingPong = true;
  // Inside a warpgroup, S(j+1) = Q K(j+1)^T and O += P(j) V(j) are issued before the softmax
  // of tile j+1 (FA3 3.2, Algorithm 2).
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = true;
  /* Schedule = */ static constexpr attention::TileSchedule kSchedule = attention::TileSchedule::OnePerTile;
  // Causal tiles longest first within sections of heads just large enough to balance the
  // SMs (attention::head_sections), rather than within each head (the last head's long tiles
  // then run alone at the end) or across every head (a wave then reads every head's K/V, and
  // L2 stops serving the repeated reads); kernels/hopper_prefill/LOG.md, "Causal tiles in
  // sections of heads".
  /* CausalOrder = */ static constexpr attention::CausalOrder kCausalOrder = attention::CausalOrder::Sections;
  // Dynamic schedule: tile ids a CTA may hold past the one it computes (dynamic_tile_scheduler.hpp).
  /* TileQueueSlots = */ static constexpr int kTileQueueSlots = 2;
  /* Stages = */ static constexpr int kStages = 2;  // K and V stages each in the shared ring
  // K(j) and V(j) in one shared-memory slot, as seed 003's kernel holds its K and V tiles in
  // one union of registers: V(j) is copied into the slot K(j) held once every consumer's
  // S = Q K(j)^T has read it, and K(j + kStages) once V(j)'s readers are done. Half the K/V
  // shared memory, and V(j)'s copy can start only after QK(j). false: K and V in rings of
  // their own, each copy waiting only for its own ring (experiments/prefill_kv_rings).
  /* KvUnion = */ static constexpr bool kKvUnion = false;
  // > 0: keep a stale running max until a row's max grows by more than this (log2 units) and
  // skip O *= corr when no row of the warp moved (FA4's conditional rescaling); P then
  // reaches 2^threshold at most, which bf16 / f16 and the f32 sums hold.
  /* RescaleThreshold = */ static constexpr float kRescaleThreshold = 8.f;
  // With P in one register buffer (HopperTile::p_buffers), where O += P(j-1) V(j-1) is waited
  // for: in the basic block of the softmax's exponentials (each mask branch's), behind the frees
  // of K(j) and Q and followed there by P(j)'s packing, so that ptxas can interleave the packs
  // with the exponentials (the order FlashAttention-4's SM90 loop compiles to), for the tiles
  // whose warpgroup sees at least this many keys (0: every tile); for the others the kernel holds
  // a second key-tile loop that waits after the softmax's branches merge, the packs then a run of
  // their own behind the O rescale's test. ptxas puts the wait after the row maxima and 15 to 40
  // of the exponentials at head dim 128; at 64 before all but a few, unless pv_wait_behind_exp
  // ties it later. On the H200, against the wait after the block (kernels/hopper_prefill/LOG.md,
  // "The PV wait in the exponentials' block", "Head dim 64's PV wait among its exponentials"):
  // under the mask faster at head dim 128 from 4096 keys (2.6% to 3.4%, the serving batch 2.1%)
  // and, tied, at 64 (1.6% to 2.1% from 4096 keys, 1.9% at 512 and 1024); without the mask at
  // 128, tied behind S register 63, 1.2% to 1.9% faster from 4096 keys, no different at 1024 and
  // 2048, 2.4% slower at 512 ("Head dim 128's PV wait, tied later or without the mask"); at 64
  // slower in the loop with the mask's branch (3.6% to 9.6%, tied or not) and faster on its own
  // loop (mask_loops); no different at fp8. Only the overlapped loop (kIntraOverlap) has a PV
  // wait to move. O's rescale stays after the branches merge: in the block behind the wait,
  // every tile (FlashAttention-4's order), it was slower at head dim 128 and no faster at 64
  // (LOG.md, "fp8's O staged").
  // -1: after the softmax at every length: head dim 64 without the mask in the kernel of one CTA
  // a tile (its short kernel: kShortOpenLoops).
  static constexpr int pv_wait_from_keys(int head_dim, bool causal) { return causal ? 0 : head_dim <= 64 ? -1 : 4096; }
  // With the PV wait in the exponentials' block, >= 0: K's free (and so the PV wait behind it,
  // and P's packing behind that) waits for the exponential in S register e of each thread (a
  // test of its bits orders the free), so that ptxas cannot hoist the wait above the
  // exponentials computed before that one. -1: ptxas places the frees and the wait where it
  // will. Register 63, which ptxas computes after about half of them, at head dim 64 (the short
  // causal kernels: kShortCausalPvWaitBehindExp) and at 128 without the mask; at 128 under the
  // mask ptxas's own place stands: tied later (registers 31, 63) it was 1.9% and 2.5% slower at
  // 4096 keys.
  static constexpr int pv_wait_behind_exp(int head_dim, bool causal) { return causal && head_dim > 64 ? -1 : 63; }
  // How a consumer warp writes its rows of O: true, through 2 KiB of shared memory of
  // its own (stmatrix, then 16-byte stores, a warp instruction four whole 128-byte row segments:
  // 8 stores a thread at head dim 128; hopper_output.cuh); false, from its accumulators, a 4-byte
  // store per row and n8 column tile (32 a thread at head dim 128), whose samples sat on the
  // load/store queue's throttle. On the H200 staged was faster wherever a tile has few key tiles
  // (10.5% to 17.3% at head dim 128 from 512 to 1024 keys, 2.0% to 5.5% from 2048 to 8192; 2.6%
  // to 5.7% at head dim 64 up to 2048 keys) and no different from 8192 keys without the mask
  // (kernels/hopper_prefill/LOG.md, "O through shared memory"). fp8's paired columns go back in
  // order in the staging rows (no different at 8192 keys: "fp8's O staged").
  /* StagedOutput = */ static constexpr bool kStagedOutput = true;
  // The one-buffer overlapped loop split in two: the key tiles no row of the warp needs masked,
  // then the rest, each loop with one softmax and no per-tile test of the mask's bound (FA3's and
  // FlashAttention-4's masked and unmasked loops). false: one loop, a branch every key tile.
  static constexpr bool mask_loops(int /*head_dim*/, bool /*causal*/) { return false; }
  // The short kernels without the mask at head dim 64 (ShortSeq) on mask_loops, their PV wait in
  // the exponentials' block behind S register 63 at every length: ptxas then waits after the row
  // maxima and a few exponentials and packs P among the rest, as FlashAttention-4's loop does,
  // where with the branch it kept the packs in a run after the PV wait. On the H200 4.4% to 6.8%
  // faster from 1024 to 8192 keys, no different at 512 and at 16384 (the board's power cap); row
  // max and sum on two chains a row there were 3% slower than one. The kernel of one CTA a tile,
  // which runs the launches past short_keys, keeps the one loop and the wait after the softmax:
  // on the two loops it was 4.0% and 4.4% slower at 24576 and 32768 keys (the length or the
  // kernel, not told apart; kernels/hopper_prefill/LOG.md, "Head dim 64 without the mask on a
  // loop of its own").
  /* ShortOpenLoops = */ static constexpr bool kShortOpenLoops = true;
  // Tile shapes: FA3's (hopper/tile_size.h: 128 x 176 non-causal and 128 x 128 causal at head
  // dim 128, 192 query rows at 64), each confirmed on the H200 by the tuning bench
  // (kernels/hopper_prefill/README.md). 3 consumers fit 160 registers each beside a 24-register
  // producer (with one chain per row: four spill at 160 in the causal kernel); row chains
  // helped only the 128-key tiles of head dim 128.
  static constexpr HopperTile tile(int head_dim, bool causal) {
    if (head_dim <= 64) return {3, 128, 160, 1};
    return causal ? HopperTile{2, 128, 240, 4} : HopperTile{2, 176, 240, 1};
  }
  // Causal 16-bit launches at head dim 128 with at least this many keys take the non-causal
  // key tile (tile(128, false)): its longer tiles spread each tile's fixed cost (barriers,
  // reductions, the hand-over) over more keys, which pays once the masked keys on the diagonal
  // are a small share of a CTA's work. On the H200 the 176-key tile was slower than FA3's
  // causal 128 up to 4096 keys and faster from 8192 (kernels/hopper_prefill/LOG.md); the
  // threshold sits between. 0: FA3's causal tile at every length. fp8 causal launches take
  // fp8_tile(false) from the same length: at sequence 8192 its 192-key tile was faster than the
  // 128-key causal one (the tuning table's fp8_causal_n192 before it became the default there).
  /* LongCausalFromKeys = */ static constexpr int kLongCausalFromKeys = 6144;
  // Each consumer warpgroup computes only the key tiles its own rows see and passes the rest
  // (Consumer::own_tiles): under the causal mask the first one or two consumers of head dim
  // 64's 192-row tile miss its last key tile, and a consumer whose rows are past the sequence's
  // end sees none. false: every consumer computes the tile's key tiles (FA3's loop), as fp8's
  // kernels do whatever the policy says (with a bound per consumer, the long causal fp8 kernel
  // kept a word in local memory inside its main loop).
  /* OwnTiles = */ static constexpr bool kOwnTiles = true;
  // Under the causal mask, query blocks cut from the sequence's end rather than its start: where
  // a sequence is not a whole number of blocks, the block that is not full is then its first,
  // whose rows see the fewest keys, not its last, whose rows see the most (its consumers past
  // the end wait through the longest tile of the sequence). The rows before the first are
  // masked and never written.
  /* CausalBlocksFromEnd = */ static constexpr bool kCausalBlocksFromEnd = false;
  // The short causal kernels cut their query blocks from the end (kCausalBlocksFromEnd). On the
  // H200 that was faster at head dim 64, whose 192-row blocks divide no power of two: 3.6% at
  // 1024 keys, 2.0% at 512, no different at 2048; no different at head dim 128 (its blocks divide
  // the lengths measured), nor on the serving batch. In the kernels of one CTA a tile it was no
  // faster anywhere and 1.6% slower at head dim 64, 16384 keys (kernels/hopper_prefill/LOG.md,
  // "Against cuDNN at 1024 keys").
  /* ShortCausalBlocksFromEnd = */ static constexpr bool kShortCausalBlocksFromEnd = true;
  // 16-bit launches with at most this many keys run ShortSeq<Policy, causal>: persistent CTAs,
  // one per SM, instead of one CTA per tile. A CTA's prologue (barriers, Q and the first copies)
  // and epilogue are paid once, and the next tile's Q and K/V load under this one's last GEMMs
  // and output, which weighs most where a tile has few key tiles. Causal tiles differ in length,
  // so they are drawn from a counter (the dynamic schedule, which balances them); without the
  // mask tiles walk the static order (equal ones need no draw; a ragged batch's walk longest
  // first). On the H200, against one CTA per tile, both with warp-uniform warp indices
  // (kernels/hopper_prefill/LOG.md, "Warp-uniform warp indices", the crossings table): the
  // static walk faster at every length measured without the mask (512 to 16384 keys, both head
  // dims); the draw under the mask faster up to 2048 keys and slower from 4096. 0: the policy's
  // own schedule at every length (experiments that ask about the schedule, or whose baseline
  // cannot run the short kernel).
  static constexpr int short_keys(bool causal) { return causal ? 2048 : 16384; }
  // fp8 launches without the mask with at most this many keys (and short_keys) run the short
  // kernel too, ShortSeq<Policy, false>: persistent CTAs on the static walk, the V transpose in
  // the producer as ever. On the H200, against one CTA per tile, both after the V
  // transpose by halves (kernels/hopper_prefill/LOG.md, "fp8 on persistent CTAs, again"): faster
  // by 12% at 1024 keys, 7% at 2048, 3% at 4096 and 1.6% at 8192; no different at 16384 and
  // 32768. Under the mask the static walk was 12% slower at 8192 keys. 16384: Fp8Meet's short
  // kernel (kFp8MeetKeys) runs up to there, so the default builds no short kernel of its own fp8
  // tile (with_kernel). 0: fp8 on the policy's own schedule at every length.
  /* Fp8ShortKeys = */ static constexpr int kFp8ShortKeys = 16384;
  // P's register buffers (HopperTile::p_buffers) in the short causal kernels' tiles that have
  // the registers for a second (240 a consumer, 128 keys: head dim 128). On the H200 two were
  // faster than one at 2048 keys (1.5% in the tuning bench, 2.8% against the one-buffer build),
  // no different at 512 and 1024, and no different either in the one-CTA-a-tile kernel at 4096
  // (kernels/hopper_prefill/LOG.md, "P in two register buffers"); the loop unrolled by two keeps
  // its wgmma descriptors in uniform registers. Head dim 64 and the 176-key tile have no room
  // for a second P (ptxas then serializes the wgmmas).
  /* ShortCausalPBuffers = */ static constexpr int kShortCausalPBuffers = 2;
  // pv_wait_behind_exp in the short causal kernels at head dim 64 (one P buffer there).
  // On the H200 behind register 0 was 1.9% faster than the default's untied wait at 512 and
  // 1024 keys, behind 63 no different there (LOG.md, "Head dim 64's PV wait among its
  // exponentials").
  /* ShortCausalPvWaitBehindExp = */ static constexpr int kShortCausalPvWaitBehindExp = 0;
  // fp8 e4m3 (head dim 128 only; DESIGN.md "fp8 e4m3"). The producer's warps 1-3 transpose each
  // V tile (ldmatrix.trans and stmatrix, transpose_v_matrix), so the producer keeps 24
  // registers, as in 16-bit, and the consumers take 240 of the launch's 168 per thread
  // ((168 x 384 - 24 x 128) / 256). Keys per tile are whole 32-key steps of the 8-bit wgmma:
  // 192 non-causal, 128 causal. The 192-key tile holds P in two register buffers (an 8-bit P
  // is half a 16-bit one, so the second fits beside S and O where 16-bit's 176-key tile has no
  // room): on the H200 at 8192 keys 4.9% faster without the mask and 4.7% under it than one
  // buffer; 128-key tiles with two, cuDNN's shape of loop, were slower (kernels/hopper_prefill/
  // LOG.md, "fp8 on two P buffers").
  /* ProducerRegsFp8 = */ static constexpr int kProducerRegsFp8 = 24;
  // fp8 on two consumers: they meet at two named barriers a key tile, consumer 1 before its
  // exponentials and consumer 0 after its own, so that their runs of exp2s alternate on the
  // multi-function unit (at fp8 a tile's exp2s take that unit as long as the tensor pipe takes
  // its GEMMs); cuDNN's fp8 forward places its one barrier a pass so. The kernels of Fp8Meet
  // (below) set it.
  /* ExpMeetFp8 = */ static constexpr bool kExpMeetFp8 = false;
  // fp8 launches without the mask of at most this many keys (and kFp8ShortKeys) run
  // ShortSeq<Fp8Meet<Policy>, false>: cuDNN's fp8 loop on persistent CTAs. On the H200, against
  // the short kernel of the default tile, both on the static walk (kernels/hopper_prefill/LOG.md,
  // "cuDNN's fp8 loop"): with P packed among the exponentials (kMeetPackInBlock), faster by 5% at
  // 1024 keys, 7% at 2048, 8% at 4096, 4% at 6144, 5% at 8192 and 8% at 16384 ("P packed among
  // Fp8Meet's exponentials"); before that, no different at 8192 and slower beyond. As the long
  // causal kernel it was 7.6% slower under the mask at 8192. 0: the default tile at every length.
  /* Fp8MeetKeys = */ static constexpr int kFp8MeetKeys = 16384;
  // Independent max and sum chains a row in Fp8Meet's softmax (HopperTile::row_chains). Two: on
  // the H200 2.1% to 2.5% faster than one at 1024 and 2048 keys, no different at 4096 (one
  // chain's FMNMXs waited on each other where cuDNN's loop does not); four, no different
  // (kernels/hopper_prefill/LOG.md, "Fp8Meet's maxima on two chains"). With P packed among the
  // exponentials, one chain 5% slower at 1024 to 16384 keys and four 5% to 7.5% ("Fp8Meet's row
  // chains, with P among the exponentials").
  /* Fp8MeetRowChains = */ static constexpr int kFp8MeetRowChains = 2;
  // Fp8Meet packs P in the exponentials' block, before O's rescale branch, where ptxas interleaves
  // the F2FPs with the MUFUs (cuDNN's loop does so), rather than in one run after the branch,
  // where the MUFUs ran back to back and waited on each other. On the H200 5% to 8% faster at
  // 1024 to 4096 keys (kernels/hopper_prefill/LOG.md, "P packed among Fp8Meet's exponentials").
  /* MeetPackInBlock = */ static constexpr bool kMeetPackInBlock = true;
  // fp8 launches under the mask run Fp8MeetCausal<Policy>: cuDNN's fp8 loop (Fp8Meet, 256-key
  // tiles) on persistent CTAs that draw the causal tiles, longest first, from a counter (the dynamic
  // schedule of the short causal kernels; the copying thread draws, as the producer's other warps
  // transpose V). On the H200, against the ping-pong loop on one CTA a tile (the 128-key causal
  // tile, 192 keys from kLongCausalFromKeys): faster by 16% at 1024 to 2048 keys, 17% at 4096,
  // 7% at 8192, 4% at 16384 and 2.5% on the serving batch (kernels/hopper_prefill/LOG.md, "fp8
  // under the mask: cuDNN's loop, drawn"). Each half alone gained less: Fp8Meet on one CTA a tile
  // 0% to 8.5%, the ping-pong loop drawn 0% to 8.5%. false: the policy's own fp8 causal kernels.
  /* Fp8MeetCausal = */ static constexpr bool kFp8MeetCausal = true;
  // Under the mask a tile's last key tile is computed only as wide as the warpgroup's rows see,
  // in steps of 64 keys (NarrowTile): S from an m64nN GEMM, N exponentials a row, N / 16 PV steps
  // (fp8 N / 32). The keys past the warpgroup's last row's are masked for every row, so their
  // columns add nothing. Fp8Meet's loop: of a 128-row tile's 256-key diagonal tile the two
  // warpgroups see 64 and 128 keys, or 192 and 256; cuDNN's fp8 forward computes it whole. On
  // the H200, against the tile whole (kernels/hopper_prefill/LOG.md, "fp8's last key tile as wide
  // as its rows see"): faster by 2.0% at 8192 keys and 1.6% on the serving batch, by 1.1% and
  // 1.7% at 4096 and 16384 (inside the 1% band's interval), no different at 1024 and 2048 (about
  // 2.3% of the key tiles' work is saved at 8192 keys, less at fewer keys where the tail is
  // more). The 16-bit overlapped loop on one P buffer with 128-key tiles (head dim 64 under the
  // mask, and 128 in the kernel of one CTA a tile below kLongCausalFromKeys): every other
  // warpgroup sees 64 keys of its last tile, which then runs 64 wide (FlashAttention-4 computes
  // it whole). On the H200, against the tile whole (LOG.md, "16-bit's last key tile as wide as its
  // rows see"): at head dim 64 faster by 2.9% at 2048 keys and 2.0% at 4096, by 1.7% and 1.3% at
  // 8192 and 16384 (inside the 1% band's interval); at 128, 4096 keys, no different.
  /* NarrowLastTile = */ static constexpr bool kNarrowLastTile = true;
  // Without the mask on the persistent static walk (the short kernels), equal tiles leave the
  // last wave part-empty (2048 tiles on 132 SMs: 68 in the last, a 3% tail). Where the last
  // wave fills at most this share of the CTAs, its tiles are split by keys among every CTA,
  // the pieces merged by the last to finish (attention/split_tail.hpp, hopper_split.cuh).
  // 0: every tile whole. Only where a CTA's share of the split key tiles holds at least
  // kSplitTailMinShareKeys keys: a piece pays its own Q and first copies and its partial rows.
  // On the H200, against every tile whole (kernels/hopper_prefill/LOG.md, "The last wave split
  // by keys"): 16-bit at head dim 128 faster by 1.3% at 4096 keys, 2.3% at 8192, 3.0% at 16384;
  // at 64 by 2.2% at 4096, and by 2.1% at 2048 with shares of 640 keys (at 128, shares of 528
  // keys at 1024 were 1.3% slower, of one or two key tiles at 512 3.4%); fp8 (Fp8Meet's short
  // kernel, its whole tiles in a body of their own: Config::kSplitWholeApart) by 2.9% at 8192 and
  // 2.5% at 16384 ("fp8's whole tiles in a body of their own").
  /* SplitTailFill = */ static constexpr float kSplitTailFill = 0.9f;
  /* SplitTailMinShareKeys = */ static constexpr int kSplitTailMinShareKeys = 640;
  /* Fault = */ static constexpr HopperFault kFault = HopperFault::none;
  static constexpr HopperTile fp8_tile(bool causal) {
    return causal ? HopperTile{2, 128, 240, 4} : HopperTile{2, 192, 240, 1, 2};
  }
};

// The policy a long causal launch runs (kLongCausalFromKeys): the same policy with its
// non-causal key tile at head dim 128, in 16-bit and in fp8.
template <class Policy>
struct LongCausal : Policy {
  static constexpr HopperTile tile(int head_dim, bool causal) { return Policy::tile(head_dim, head_dim <= 64 && causal); }
  static constexpr HopperTile fp8_tile(bool) { return Policy::fp8_tile(false); }
};
// The policy a short launch runs (short_keys): the same policy on persistent CTAs, drawing
// causal tiles from a counter with two ids held ahead (one was as fast in the tuning bench, but
// with a single id slot compute-sanitizer's racecheck reports the fetcher's write of the slot
// and the readers' read of it as hazards; their hand-over is the slot's full and empty mbarriers
// either way; kernels/hopper_prefill/LOG.md), walking equal ones in the static order. Without
// the mask every consumer computes the tile's key tiles: there only rows past the sequence's end
// are skipped, and on the static walk that was no faster at head dim 64 and 1.7% slower at 128
// (LOG.md, "The short kernels' skip: a warp's wait"). Under the mask, P takes
// kShortCausalPBuffers register buffers where the tile has the registers, and query blocks are
// cut from the sequence's end where kShortCausalBlocksFromEnd says, and a PV wait in the
// exponentials' block is tied where kShortCausalPvWaitBehindExp says. Without the mask at head
// dim 64 the key tiles run on mask_loops where kShortOpenLoops says.
template <class Policy, bool kCausal>
struct ShortSeq : Policy {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    HopperTile t = Policy::tile(head_dim, causal);
    if (kCausal && t.consumer_regs == 240 && t.block_n == 128) t.p_buffers = Policy::kShortCausalPBuffers;
    return t;
  }
  static constexpr int pv_wait_behind_exp(int head_dim, bool causal) {
    return kCausal && head_dim <= 64 ? Policy::kShortCausalPvWaitBehindExp : Policy::pv_wait_behind_exp(head_dim, causal);
  }
  static constexpr bool short_open_loops(int head_dim) { return !kCausal && head_dim <= 64 && Policy::kShortOpenLoops; }
  static constexpr bool mask_loops(int head_dim, bool causal) {
    return short_open_loops(head_dim) || Policy::mask_loops(head_dim, causal);
  }
  static constexpr int pv_wait_from_keys(int head_dim, bool causal) {
    return short_open_loops(head_dim) ? 0 : Policy::pv_wait_from_keys(head_dim, causal);
  }
  /* Schedule = */ static constexpr attention::TileSchedule kSchedule =
      kCausal ? attention::TileSchedule::Dynamic : attention::TileSchedule::Persistent;
  /* TileQueueSlots = */ static constexpr int kTileQueueSlots = 2;
  /* OwnTiles = */ static constexpr bool kOwnTiles = Policy::kOwnTiles && kCausal;
  /* CausalBlocksFromEnd = */ static constexpr bool kCausalBlocksFromEnd =
      kCausal && (Policy::kCausalBlocksFromEnd || Policy::kShortCausalBlocksFromEnd);
};
// The policy an fp8 launch of at most kFp8MeetKeys keys without the mask runs, in its short
// kernel: cuDNN's fp8 loop. 256 keys a tile (S of all of them from one m64n256 GEMM), each
// consumer's GEMMs waited for where they are issued (the serial loop) and issued without
// ping-pong's turns, the two consumers' exponentials alternating (kExpMeetFp8). Without the
// meeting the same loop was 8% slower than the default at 8192 keys; with it no different there.
template <class Policy>
struct Fp8Meet : Policy {
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = false;
  /* PingPong = */ static constexpr bool kPingPong = false;
  /* ExpMeetFp8 = */ static constexpr bool kExpMeetFp8 = true;
  static constexpr HopperTile fp8_tile(bool /*causal*/) { return {2, 256, 240, Policy::kFp8MeetRowChains}; }
};
// The policy an fp8 launch under the mask runs (kFp8MeetCausal): cuDNN's fp8 loop on persistent
// CTAs drawing the tiles from a counter, two ids held ahead, as the short causal kernels do.
template <class Policy>
struct Fp8MeetCausal : Fp8Meet<Policy> {
  /* Schedule = */ static constexpr attention::TileSchedule kSchedule = attention::TileSchedule::Dynamic;
  /* TileQueueSlots = */ static constexpr int kTileQueueSlots = 2;
};
// Whether a policy has short kernels for a mask: a threshold, a producer
// warpgroup (the dynamic schedule's fetcher is its warp 1) and one CTA per tile as the schedule
// they replace (a policy on another schedule keeps it at every length).
template <class Policy, bool kCausal>
inline constexpr bool kHasShortSeq = Policy::short_keys(kCausal) > 0 && Policy::kWarpSpecialized &&
                                     Policy::kSchedule == attention::TileSchedule::OnePerTile;
// Whether fp8 launches without the mask take a policy's short kernel (kFp8ShortKeys).
template <class Policy>
inline constexpr bool kHasShortSeqFp8 = kHasShortSeq<Policy, false> && Policy::kFp8ShortKeys > 0;
template <class Policy>
inline constexpr int kFp8ShortKeysOf =
    Policy::short_keys(false) < Policy::kFp8ShortKeys ? Policy::short_keys(false) : Policy::kFp8ShortKeys;
// Whether fp8 launches without the mask take Fp8Meet's short kernel (kFp8MeetKeys), and up to
// how many keys.
template <class Policy>
inline constexpr bool kHasFp8Meet = kHasShortSeqFp8<Policy> && Policy::kFp8MeetKeys > 0;
template <class Policy>
inline constexpr int kFp8MeetKeysOf =
    kFp8ShortKeysOf<Policy> < Policy::kFp8MeetKeys ? kFp8ShortKeysOf<Policy> : Policy::kFp8MeetKeys;
// Whether fp8 launches under the mask take Fp8MeetCausal: on the policies with persistent causal
// kernels (a policy on another schedule keeps its own at every length).
template <class Policy>
inline constexpr bool kHasFp8MeetCausal = kHasShortSeq<Policy, true> && Policy::kFp8MeetCausal;
// Whether a policy has a long causal kernel: a threshold, and a non-causal tile that differs
// (16-bit at head dim 128; fp8).
template <class Policy>
inline constexpr bool kHasLongCausal =
    Policy::kLongCausalFromKeys > 0 && Policy::tile(128, false).block_n != Policy::tile(128, true).block_n;
template <class Policy>
inline constexpr bool kHasLongCausalFp8 =
    Policy::kLongCausalFromKeys > 0 && Policy::fp8_tile(false).block_n != Policy::fp8_tile(true).block_n;

// Whether a policy can run fp8 e4m3: the transpose of V needs the producer warpgroup.
template <class Policy>
inline constexpr bool kHopperFp8Capable = Policy::kWarpSpecialized;

}  // namespace schedlab::kernels
