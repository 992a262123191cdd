from pathlib import Path

import pytest

from schedlab_analysis import att

FIXTURE = Path(__file__).parent / "fixtures" / "stats_ui_output_agent_4242_dispatch_2.csv"


@pytest.mark.parametrize("instruction, counters, bucket", [
    ("s_waitcnt vmcnt(0)", {"vmcnt": 0}, "vmcnt"),
    ("s_waitcnt lgkmcnt(0)", {"lgkmcnt": 0}, "lgkmcnt"),
    ("s_waitcnt vmcnt(2) lgkmcnt(0)", {"vmcnt": 2, "lgkmcnt": 0}, "vmcnt+lgkmcnt"),
    ("s_waitcnt vmcnt(0) & lgkmcnt(0)", {"vmcnt": 0, "lgkmcnt": 0}, "vmcnt+lgkmcnt"),
    ("s_waitcnt vmcnt(1) expcnt(0)", {"vmcnt": 1, "expcnt": 0}, "vmcnt"),
    ("s_waitcnt expcnt(0)", {"expcnt": 0}, "other"),
    ("s_waitcnt 0", {"vmcnt": 0, "expcnt": 0, "lgkmcnt": 0}, "vmcnt+lgkmcnt"),
    ("s_waitcnt 0x3f70", {"vmcnt": 0}, "vmcnt"),         # gfx9: expcnt and lgkmcnt fields at max
    ("s_waitcnt 0xc07f", {"lgkmcnt": 0}, "lgkmcnt"),     # vmcnt 63 and expcnt 7: not waited on
    ("s_waitcnt_vscnt null, 0x0", {"vscnt": 0}, "other"),
    ("s_waitcnt_lgkmcnt null, 0x1", {"lgkmcnt": 1}, "lgkmcnt"),
])
def test_parse_waitcnt_and_bucket(instruction, counters, bucket):
    assert att.parse_waitcnt(instruction) == counters
    assert att.wait_bucket(counters) == bucket


@pytest.mark.parametrize("instruction", ["v_mfma_f32_32x32x16_bf16 a[0:15], v[8:11], v[0:3], a[0:15]",
                                         "s_barrier", "s_wait_idle", "ds_read_b128 v[8:11], v12"])
def test_other_instructions_are_not_waits(instruction):
    assert att.parse_waitcnt(instruction) is None


def test_fixture_memwait_split_per_kernel():
    stats = att.read_att_stats(FIXTURE)
    assert len(stats) == 12  # label rows dropped
    table = att.memwait_breakdown(stats).set_index("kernel")
    fwd = table.loc["attn_fwd(Params const*)"]
    assert fwd["total_latency"] == 1000 and fwd["memwait_share"] == pytest.approx(0.37)
    assert (fwd["memwait_vmcnt"], fwd["memwait_lgkmcnt"], fwd["memwait_vmcnt+lgkmcnt"], fwd["memwait_other"]) == \
        pytest.approx((0.20, 0.05, 0.10, 0.02))
    combine = table.loc["combine(Params const*)"]
    assert combine["memwait_share"] == pytest.approx(0.4) and combine["memwait_vmcnt+lgkmcnt"] == pytest.approx(0.4)
    only = att.memwait_breakdown(stats, kernel="attn_fwd")
    assert list(only["kernel"]) == ["attn_fwd(Params const*)"]


def test_header_spelling_variant_and_missing_columns(tmp_path):
    ok = tmp_path / "stats_a.csv"
    ok.write_text("Codeobj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\n"
                  '1,0,"s_waitcnt vmcnt(0)",1,30,30,0,""\n1,4,"v_add_f32 v0, v1, v2",1,70,0,0,""\n')
    table = att.memwait_breakdown(att.read_att_stats(ok))
    assert table["memwait_share"].iloc[0] == pytest.approx(0.3) and table["kernel"].iloc[0] == ""
    bad = tmp_path / "stats_b.csv"
    bad.write_text("Instruction,Latency\ns_nop 0,1\n")
    with pytest.raises(att.AttCsvError, match="stats_b.csv: missing column"):
        att.read_att_stats(bad)


def test_rocprof_command():
    cmd = att.rocprof_command("build/bench_prefill", "^prefill/x$", "att_out", "attn_fwd")
    assert cmd[:2] == ["rocprofv3", "--att"]
    joined = " ".join(cmd)
    assert "--kernel-include-regex attn_fwd" in joined and "--kernel-iteration-range 2" in joined
    assert "-d att_out" in joined
    assert cmd[cmd.index("--") + 1:] == ["build/bench_prefill", "--benchmark_filter=^prefill/x$",
                                         "--schedlab_profile_once"]
