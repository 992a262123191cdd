"""The index arithmetic of the fp8 O += P V, checked on the CPU (no GPU, no compiler).

Replays, in numpy, what the Hopper family's fp8 path does with bytes and registers
(kernels/hopper_prefill/hopper_prefill.cuh):
  - the bulk copy's 128-byte swizzle of a V tile (16-byte chunk c of row r at c ^ (r % 8));
  - the transpose of V into V^T, lane by lane, in the kernel's order of keys and columns:
    transpose_v_matrix (ldmatrix.trans and stmatrix with PTX's fragment semantics, two byte
    permutes with PRMT semantics), whose V^T rows are the columns of each 16-column chunk evens
    first, and the output stage that restores the column order (M16n8RowsPairedCols::store_o_row);
  - pack_p: which S accumulators go into which byte of which A register;
  - what the 8-bit wgmma reads: A from registers in the PTX m64nNk32 A-fragment layout
    (row 16 warp + lane / 4 + 8 (reg % 2), k 4 (lane % 4) + byte + 16 (reg / 2)), the f32
    accumulator layout for S, and B K-major from the 128-byte-swizzled V^T;
and checks that the product is S V for the 128-, 192- and 224-key tiles, and that the
vt_key_order fault breaks it. A change to one side of the P / V^T key order that the other
side does not follow fails here before it reaches the device. The two copies (kernel and
this file) must be kept in step by hand.
Run: python3 -m pytest -q kernels/hopper_prefill/tests
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

HEAD_DIM, ROW_BYTES, TRANSPOSE_WARPS = 128, 128, 3


def _swizzled(row: int, chunk: int) -> int:
    return chunk ^ (row & 7)


def _prmt(x: int, y: int, selector: int) -> int:
    src = x.to_bytes(4, "little") + y.to_bytes(4, "little")
    return int.from_bytes(bytes(src[(selector >> (4 * n)) & 7] for n in range(4)), "little")


def _copied_tile(v: np.ndarray) -> np.ndarray:
    """V (keys x 128 bytes) as the bulk copy leaves it in shared memory."""
    raw = np.zeros(v.shape[0] * ROW_BYTES, np.uint8)
    for key in range(v.shape[0]):
        for c in range(8):
            at = key * ROW_BYTES + _swizzled(key, c) * 16
            raw[at:at + 16] = v[key, 16 * c:16 * c + 16]
    return raw


def _ldmatrix_trans_x4(buf: np.ndarray, row_at: list[int]) -> list[list[int]]:
    """ldmatrix.sync.aligned.m8n8.x4.trans.b16: lane l gives row l % 8 of matrix l / 8; register m
    of lane (g, t) holds matrix m's 16-bit elements (row 2t, column g) low and (2t + 1, g) high."""
    regs = [[0] * 4 for _ in range(32)]
    for m in range(4):
        for lane in range(32):
            g, t = lane // 4, lane % 4
            lo, hi = row_at[8 * m + 2 * t] + 2 * g, row_at[8 * m + 2 * t + 1] + 2 * g
            regs[lane][m] = int.from_bytes(buf[lo:lo + 2].tobytes() + buf[hi:hi + 2].tobytes(), "little")
    return regs


def _stmatrix_x4(buf: np.ndarray, row_at: list[int], regs: list[list[int]]) -> None:
    """stmatrix.sync.aligned.m8n8.x4.b16: register m of lane (g, t) is row g of matrix m,
    elements 2t and 2t + 1 (bytes 4t..4t+3 of the 16-byte row lane 8m + g addresses)."""
    for m in range(4):
        for lane in range(32):
            at = row_at[8 * m + lane // 4] + 4 * (lane % 4)
            buf[at:at + 4] = np.frombuffer(regs[lane][m].to_bytes(4, "little"), np.uint8)


def _transpose_v_matrix(raw: np.ndarray, block_n: int, key_order_fault: bool) -> np.ndarray:
    vt = np.zeros(-(-block_n // ROW_BYTES) * HEAD_DIM * ROW_BYTES, np.uint8)
    even, odd = (0x6240, 0x7351) if key_order_fault else (0x6420, 0x7531)
    chunk_pairs = HEAD_DIM // 32
    # As transpose_v_matrix walks it: a warp takes every TRANSPOSE_WARPS-th 16-key half h and the
    # half's units u in a row; a lane's read is its half's address with u XORed into bits 5 and 6
    # (the swizzled chunk (2u + m / 2) ^ r), its write its half's plus u 32-row blocks.
    halves = [(warp, h) for warp in range(TRANSPOSE_WARPS) for h in range(warp, block_n // 16, TRANSPOSE_WARPS)]
    for (warp, h), u in itertools.product(halves, range(chunk_pairs)):
        load_at, store_at = [], []
        for lane in range(32):
            m, r = lane >> 3, lane & 7
            row_in_16 = 8 * (m & 1) + r
            read = (16 * h + row_in_16) * ROW_BYTES + (((m >> 1) ^ r) << 4)
            write = h // 8 * HEAD_DIM * ROW_BYTES + (16 * (m >> 1) + row_in_16) * ROW_BYTES + (((h % 8) ^ r) << 4)
            load_at.append(read ^ (u << 5))
            store_at.append(write + u * 32 * ROW_BYTES)
        x = _ldmatrix_trans_x4(raw, load_at)
        y = [[_prmt(x[l][0], x[l][1], even), _prmt(x[l][0], x[l][1], odd),
              _prmt(x[l][2], x[l][3], even), _prmt(x[l][2], x[l][3], odd)] for l in range(32)]
        _stmatrix_x4(vt, store_at, y)
    return vt


def _paired_cols_to_order(o: np.ndarray) -> np.ndarray:
    """The output stage of the matrix transpose (M16n8RowsPairedCols::store_o_row): lane t's
    accumulators of C tiles 2c, 2c + 1 (columns 16c + 2t, 2t + 1 and 16c + 8 + 2t, 9 + 2t of O as
    V^T's rows order them) go to columns 16c + 4t .. 16c + 4t + 3."""
    out = np.empty_like(o)
    for c in range(HEAD_DIM // 16):
        for t in range(4):
            src = [16 * c + 2 * t, 16 * c + 8 + 2 * t, 16 * c + 2 * t + 1, 16 * c + 9 + 2 * t]
            out[:, 16 * c + 4 * t:16 * c + 4 * t + 4] = o[:, src]
    return out


TRANSPOSES = {
    "matrix": (_transpose_v_matrix, _paired_cols_to_order),
}


def _pv_as_wgmma_reads_it(s: np.ndarray, vt: np.ndarray, block_n: int) -> np.ndarray:
    """One warp's 16 rows of O = P V^T^T: P packed from S's accumulators as pack_p does."""
    o = np.zeros((16, HEAD_DIM))
    cols = np.arange(HEAD_DIM)
    for kk in range(block_n // 32):
        base, step = kk // 4 * HEAD_DIM * ROW_BYTES, kk % 4 * 32
        for lane in range(32):
            def acc(e: int) -> float:  # f32 accumulator e: row slot (e >> 1) & 1, column 8 (e >> 2) + 2 (lane % 4) + e % 2
                return s[lane // 4 + 8 * ((e >> 1) & 1), 8 * (e >> 2) + 2 * (lane & 3) + (e & 1)]
            for reg in range(4):
                e0 = 16 * kk + 8 * (reg >> 1) + 2 * (reg & 1)
                p = [acc(e) for e in (e0, e0 + 1, e0 + 4, e0 + 5)]
                row = lane // 4 + 8 * (reg & 1)
                for byte in range(4):
                    k = step + 4 * (lane % 4) + byte + 16 * (reg >> 1)
                    b = vt[base + cols * ROW_BYTES + np.array([_swizzled(c, k // 16) for c in cols]) * 16 + k % 16]
                    o[row] += p[byte] * b
    return o


@pytest.mark.parametrize("transpose", sorted(TRANSPOSES))
@pytest.mark.parametrize("block_n", [128, 192, 224])
def test_p_and_transposed_v_agree_on_the_key_order(transpose, block_n):
    rng = np.random.default_rng(block_n)
    v = rng.integers(0, 256, size=(block_n, HEAD_DIM), dtype=np.uint8)
    s = rng.random((16, block_n))
    to_vt, to_order = TRANSPOSES[transpose]
    vt = to_vt(_copied_tile(v), block_n, False)
    np.testing.assert_allclose(to_order(_pv_as_wgmma_reads_it(s, vt, block_n)), s @ v.astype(float), rtol=1e-12)


@pytest.mark.parametrize("transpose", sorted(TRANSPOSES))
def test_the_key_order_fault_breaks_the_product(transpose):
    rng = np.random.default_rng(1)
    v = rng.integers(0, 256, size=(128, HEAD_DIM), dtype=np.uint8)
    s = rng.random((16, 128))
    s -= s.mean(axis=1, keepdims=True)  # zero-mean weights: a key permutation cannot hide behind V's mean
    to_vt, to_order = TRANSPOSES[transpose]
    ref = s @ v.astype(float)
    got = to_order(_pv_as_wgmma_reads_it(s, to_vt(_copied_tile(v), 128, True), 128))
    assert np.linalg.norm(got - ref) > 0.5 * np.linalg.norm(ref)


def test_the_matrix_transpose_without_the_output_order_is_wrong():
    """The output stage's column order is needed: V^T's rows are permuted within each chunk."""
    rng = np.random.default_rng(2)
    v = rng.integers(0, 256, size=(128, HEAD_DIM), dtype=np.uint8)
    s = rng.random((16, 128))
    s -= s.mean(axis=1, keepdims=True)  # zero-mean weights: O's columns are not all near one mean
    ref = s @ v.astype(float)
    got = _pv_as_wgmma_reads_it(s, _transpose_v_matrix(_copied_tile(v), 128, False), 128)
    assert np.linalg.norm(got - ref) > 0.1 * np.linalg.norm(ref)
