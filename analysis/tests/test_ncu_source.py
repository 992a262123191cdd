"""The source-page reader (schedlab_analysis.ncu_source): an excerpt of a real export, hand-written
files for nesting and errors, and the whole real export in results/."""
import gzip
import shutil
from pathlib import Path

import pytest

from schedlab_analysis import ncu_source

REPO = Path(__file__).resolve().parents[2]
EXCERPT = Path(__file__).parent / "fixtures" / "ncu_source" / "decode_token_balanced_fp8_excerpt.csv"
REAL = (REPO / "results" / "h200" / "decode_work_partition"
        / "sass-stalls-20261126T120714Z-759e6b9bc9-token_balanced-fp8_e4m3.csv.gz")


def _write(path: Path, rows: list[tuple[int, str, str, str, str, str]], base: int = 0x7F0000001000) -> Path:
    """A source-page CSV: (offset, SASS, samples, executed, stall_wait, stall_barrier) per row."""
    columns = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
               "# Samples", "Instructions Executed", "stall_barrier", "stall_wait", "stall_barrier (Not Issued)",
               "stall_wait (Not Issued)"]
    head = ['"Kernel Name","void toy_kernel(int)",', ",".join(f'"{c}"' for c in columns)]
    lines = [",".join(f'"{v}"' for v in (f"0x{base + off:x}", f"      {sass}", s, "0", s, e, b, w, "0", "0"))
             for off, sass, s, e, w, b in rows]
    path.write_text("\n".join(head + lines) + "\n")
    return path


def test_excerpt_parses_into_instructions():
    df = ncu_source.read_source_csv(EXCERPT)
    assert df.attrs["kernel"].startswith("void schedlab::kernels::decode_detail::paged_decode_kernel<")
    assert len(df) == 32
    assert df["offset"].iloc[0] == 0
    assert df["offset"].iloc[15] == 0xF0  # 0x...2850 - 0x...2760
    assert df["offset"].iloc[16] == 0x4F0  # the second piece: 0x...2c50
    assert df["samples"].sum() == 483
    assert df["not_issued"].sum() == 281
    assert df["executed"].sum() == 2_201_520  # "23,020", "131,072": thousands separators
    bra = df[df["offset"] == 0x80].iloc[0]
    assert bra["sass"] == "@!P0  BRA 0x7f63ab7a27b0"
    assert (bra["opcode"], bra["op"]) == ("BRA", "BRA")
    assert bra["executed"] == 23_020
    hgmma = df[df["offset"] == 0x560].iloc[0]
    assert (hgmma["opcode"], hgmma["op"]) == ("HGMMA.64x64x16.F32", "HGMMA")
    lds = df[df["offset"] == 0x90].iloc[0]  # @!PT  LDS RZ, [RZ]
    assert (lds["opcode"], lds["op"]) == ("LDS", "LDS")
    # one column per stall_ reason, (Not Issued) left out; stall_sleep keeps its own name
    assert {"barrier", "short_sb", "wait", "long_sb", "sleep", "selected"} <= set(df.columns)
    assert not any("Not Issued" in c for c in df.columns)
    assert hgmma["barrier"] == 173
    assert hgmma["unlisted"] == 21  # 199 samples, 178 in stall_ columns
    assert df["unlisted"].sum() == 21


def test_gzipped_and_plain_read_the_same(tmp_path):
    gz = tmp_path / "excerpt.csv.gz"
    with EXCERPT.open("rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    plain, packed = ncu_source.read_source_csv(EXCERPT), ncu_source.read_source_csv(gz)
    assert plain.equals(packed)
    assert packed.attrs["kernel"] == plain.attrs["kernel"]


def test_loop_of_the_excerpt():
    table = ncu_source.loops(ncu_source.read_source_csv(EXCERPT))
    assert len(table) == 1
    loop = table.iloc[0]
    assert (loop["start"], loop["end"]) == (0x50, 0x80)  # WARPSYNC.ALL .. @!P0 BRA
    assert loop["instructions"] == 4
    assert loop["passes"] == 23_020
    assert loop["inst_per_pass"] == pytest.approx(4.0)
    assert loop["depth"] == 0
    assert loop["samples"] == 126
    assert loop["share_pct"] == pytest.approx(100 * 126 / 483)
    assert (loop["reason1"], loop["reason2"], loop["reason3"]) == ("wait", "short_sb", "selected")
    assert loop["reason1_pct"] == pytest.approx(100 * 63 / 483)
    assert loop["reason2_pct"] == pytest.approx(100 * 32 / 483)


def test_summary_orders_by_samples():
    top = ncu_source.summary(ncu_source.read_source_csv(EXCERPT), top=4)
    assert top["offset"].tolist() == ["0x560", "0x80", "0x60", "0x70"]  # 199, 44, 34, 34 (ties by offset)
    assert top["samples"].tolist() == [199, 44, 34, 34]
    assert top["sass"].iloc[1] == "@!P0 BRA 0x7f63ab7a27b0"
    first = top.iloc[0]
    assert first["share_pct"] == pytest.approx(100 * 199 / 483)
    assert first["executed"] == 131_072
    assert (first["reason1"], first["reason2"]) == ("barrier", "unlisted")
    assert first["reason1_pct"] == pytest.approx(100 * 173 / 483)
    assert first["reason2_pct"] == pytest.approx(100 * 21 / 483)


def test_nested_loops_each_reported(tmp_path):
    rows = [
        (0x00, "MOV R1, RZ", "0", "1", "0", "0"),
        (0x10, "IADD3 R1, R1, 0x1, RZ", "2", "4", "2", "0"),            # outer start
        (0x20, "LDS R2, [R1]", "1,200", "40", "1,000", "200"),          # inner start
        (0x30, "@P1 BRA P2, 0x7f0000001020", "100", "40", "100", "0"),   # inner end
        (0x40, "BAR.SYNC.DEFER_BLOCKING 0x0", "500", "4", "0", "500"),
        (0x50, "@!P0 BRA 0x7f0000001010", "8", "4", "8", "0"),          # outer end
        (0x60, "@P3 BRA 0x7f0000001080", "0", "1", "0", "0"),           # forward: no loop
        (0x70, "EXIT", "0", "1", "0", "0"),
        (0x80, "BRA 0x7f0000001080", "0", "0", "0", "0"),               # to itself: no loop
    ]
    df = ncu_source.read_source_csv(_write(tmp_path / "nested.csv", rows))
    assert df["samples"].sum() == 1810
    assert df.attrs["reasons"] == ["barrier", "wait", "unlisted"]
    table = ncu_source.loops(df)
    assert list(zip(table["start"], table["end"], table["depth"])) == [(0x10, 0x50, 0), (0x20, 0x30, 1)]
    outer, inner = table.iloc[0], table.iloc[1]
    assert outer["passes"] == 4 and inner["passes"] == 40
    assert outer["inst_per_pass"] == pytest.approx((4 + 40 + 40 + 4 + 4) / 4)
    assert inner["inst_per_pass"] == pytest.approx(2.0)
    assert outer["share_pct"] == pytest.approx(100 * 1810 / 1810)
    assert inner["share_pct"] == pytest.approx(100 * 1300 / 1810)
    assert (inner["reason1"], inner["reason2"]) == ("wait", "barrier")
    assert inner["reason1_pct"] == pytest.approx(100 * 1100 / 1810)


def test_two_branches_to_one_target_are_two_regions_enclosing_first(tmp_path):
    rows = [
        (0x00, "LDS R2, [R1]", "10", "8", "10", "0"),
        (0x10, "@P1 BRA 0x7f0000001000", "0", "6", "0", "0"),  # back to 0x00 (a continue)
        (0x20, "FADD R3, R3, R2", "5", "2", "5", "0"),
        (0x30, "@P0 BRA 0x7f0000001000", "0", "2", "0", "0"),  # back to 0x00: the loop's end
    ]
    table = ncu_source.loops(ncu_source.read_source_csv(_write(tmp_path / "continue.csv", rows)))
    assert list(zip(table["start"], table["end"], table["depth"])) == [(0x00, 0x30, 0), (0x00, 0x10, 1)]
    assert table["passes"].tolist() == [2, 6]


@pytest.mark.parametrize("text", [
    "==ERROR== The file could not be opened\n",
    '"Kernel Name","k",\n"Address","Source","Instructions Executed"\n"0x10","NOP","1"\n',
    '"Kernel Name","k",\n',
])
def test_a_file_without_the_source_columns_is_an_error_naming_it(tmp_path, text):
    f = tmp_path / "sass-stalls-broken.csv"
    f.write_text(text)
    with pytest.raises(ValueError, match="sass-stalls-broken.csv"):
        ncu_source.read_source_csv(f)


def test_a_header_without_rows_is_an_error(tmp_path):
    f = _write(tmp_path / "empty.csv", [])
    with pytest.raises(ValueError, match="no instruction rows"):
        ncu_source.read_source_csv(f)


def test_real_export_finds_the_kernel_loops():
    df = ncu_source.read_source_csv(REAL)
    assert len(df) == 3064 and df["offset"].iloc[-1] == 0xBF70
    assert df["samples"].sum() == 21_731
    table = ncu_source.loops(df)
    assert len(table) >= 2
    with_hgmma = [(r.start, r.end) for r in table.itertuples()
                  if (df[(df["offset"] >= r.start) & (df["offset"] <= r.end)]["op"] == "HGMMA").any()]
    assert with_hgmma == [(0x2B60, 0x5680)]
    mma = table[table["start"] == 0x2B60].iloc[0]
    assert mma["passes"] == 131_072
    assert mma["share_pct"] == pytest.approx(40.6, abs=0.05)
    top = ncu_source.summary(df, top=1).iloc[0]
    assert (top["offset"], top["sass"], top["reason1"]) == ("0x73c0", "DEPBAR.LE SB0, 0x1", "barrier")


def test_cli_prints_the_tables(capsys):
    assert ncu_source.main([str(REAL), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "kernel: void schedlab::kernels::decode_detail::paged_decode_kernel<" in out
    assert "samples: 21,731" in out
    assert "| 0x2b60 | 0x5680 | 691 | 131,072 |" in out
    assert "Top 3 instructions by samples:" in out
    assert "| 0x73c0 | DEPBAR.LE SB0, 0x1 |" in out


def _consumer_loop(tmp_path: Path) -> Path:
    """A toy consumer loop: waits and issue (0x10-0x20), the QK wait (0x30), the max (0x40),
    two exponentials around an add (0x50-0x70), the masked path's branch (0x80), its
    exponential (0x90, not counted), and the back branch (0xa0)."""
    base = 0x7F0000001000
    return _write(tmp_path / "loop.csv", [
        (0x00, "MOV R1, R2", "1", "1", "0", "0"),
        (0x10, "BAR.SYNC.DEFER_BLOCKING R5, 0x100", "10", "8", "0", "10"),
        (0x20, "QGMMA.64x192x32.F32.E4M3.E4M3 R24, gdesc[UR16], R24", "10", "8", "10", "0"),
        (0x30, "WARPGROUP.DEPBAR.LE gsb0, 0x1", "20", "8", "0", "20"),
        (0x40, "FMNMX R11, R24, R12, !PT", "10", "8", "10", "0"),
        (0x50, "MUFU.EX2 R24, R24", "15", "8", "15", "0"),
        (0x60, "FADD R216, RZ, R24", "5", "8", "5", "0"),
        (0x70, "MUFU.EX2 R25, R25", "15", "8", "15", "0"),
        (0x80, f"@P0 BRA 0x{base + 0x90:x}", "5", "8", "5", "0"),
        (0x90, "MUFU.EX2 R26, R26", "5", "8", "5", "0"),
        (0xa0, f"@!P1 BRA 0x{base + 0x10:x}", "5", "8", "5", "0"),
        (0xb0, "EXIT", "0", "1", "0", "0"),
    ], base=base)


def test_softmax_phases_cut_the_consumer_loop(tmp_path):
    phases = ncu_source.softmax_phases(ncu_source.read_source_csv(_consumer_loop(tmp_path)))
    share = dict(zip(phases["phase"], phases["share_pct"]))
    # The loop's 100 samples: 20 before the wait, 20 at it, 10 in the max, 35 in the
    # exponentials (two MUFUs and the add between them), 15 after (the branch, the masked
    # path's MUFU, the back branch).
    assert share == pytest.approx({"waits and issue": 20.0, "QK wait": 20.0, "to the exponentials": 10.0,
                                   "exponentials": 35.0, "after the exponentials": 15.0})
    assert phases.attrs["exp2s"] == 2
    assert phases.attrs["loop_share_pct"] == pytest.approx(100.0 * 100 / 101)
    qk = phases[phases["phase"] == "QK wait"].iloc[0]
    assert (qk["reason1"], qk["reason1_pct"]) == ("barrier", 20.0)


def test_softmax_phases_need_the_qk_wait(tmp_path):
    path = _write(tmp_path / "plain.csv", [(0x00, "MUFU.EX2 R1, R1", "1", "1", "1", "0"), (0x10, "EXIT", "0", "1", "0", "0")])
    with pytest.raises(ncu_source.SourceCsvError, match="DEPBAR"):
        ncu_source.softmax_phases(ncu_source.read_source_csv(path))
