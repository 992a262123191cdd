"""The pipe-utilization reader (schedlab_analysis.ncu_pipes) on a raw-page CSV of ncu's form."""
from pathlib import Path

import pytest

from schedlab_analysis import ncu_pipes

METRICS = [m for _, m, _ in ncu_pipes.PIPES]


def _csv(path: Path, values: list[str], drop: str | None = None) -> Path:
    cols = [m for m in METRICS if m != drop]
    vals = [v for m, v in zip(METRICS, values) if m != drop]
    header = '"ID","Kernel Name",' + ",".join(f'"{m}"' for m in cols)
    units = '"","",' + ",".join('"ns"' if m.startswith("gpu__time") else '""' for m in cols)
    row = '"0","hopper_prefill_kernel",' + ",".join(f'"{v}"' for v in vals)
    path.write_text("==PROF== Connected to process\n" + "\n".join([header, units, row]) + "\n")
    return path


VALUES = ["1,326,304", "1,774,407,494.49", "45.29", "46.43", "16.25", "33.48", "1.90", "44.90", "23.31"]


def test_reads_each_unit_in_its_own_scale(tmp_path):
    (tmp_path / "prefill_pingpong").mkdir()
    f = _csv(tmp_path / "prefill_pingpong" / "pipes-20261126T035610Z-94d63b7357-pingpong-fp8_e4m3.csv", VALUES)
    got = ncu_pipes.read_pipes(f)
    assert got["time_us"] == pytest.approx(1326.304)
    assert got["sm_clock_ghz"] == pytest.approx(1.7744, abs=1e-4)
    assert got["tensor_pct"] == pytest.approx(45.29)
    assert got["issue_pct"] == pytest.approx(47.5)  # 1.90 of 4 schedulers
    table = ncu_pipes.pipes_table([f])
    assert table["kernel"].tolist() == ["prefill_pingpong/pingpong fp8_e4m3 (20261126T035610Z)"]
    text = ncu_pipes.markdown(table)
    assert "| prefill_pingpong/pingpong fp8_e4m3 (20261126T035610Z) | 1326 | 1.774 | 45% | 46% |" in text


def test_a_missing_metric_is_an_error_naming_it(tmp_path):
    f = _csv(tmp_path / "pipes-x-y-v-bf16.csv", VALUES, drop="sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active")
    with pytest.raises(ncu_pipes.PipesError, match="pipe_xu"):
        ncu_pipes.read_pipes(f)


def test_a_file_without_a_launch_is_an_error(tmp_path):
    f = tmp_path / "pipes-x-y-v-bf16.csv"
    f.write_text('"ID","Kernel Name","gpu__time_duration.sum"\n"","","ns"\n')
    with pytest.raises(ncu_pipes.PipesError, match="no profiled launch"):
        ncu_pipes.read_pipes(f)


def test_a_shape_in_the_name_is_kept(tmp_path):
    (tmp_path / "prefill_persistent").mkdir()
    f = _csv(tmp_path / "prefill_persistent" / "pipes-20261129T055828Z-8318c89175-persistent-bf16-seq8192-head_dim64-causal0.csv",
             VALUES)
    assert ncu_pipes.pipes_table([f])["kernel"].tolist() == [
        "prefill_persistent/persistent bf16 seq8192 head_dim64 causal0 (20261129T055828Z)"]


def test_the_cli_helps_and_refuses_a_missing_file_without_a_traceback(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        ncu_pipes.main(["--help"])
    assert e.value.code == 0 and "CSV" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        ncu_pipes.main([str(tmp_path / "absent.csv")])
    assert e.value.code == 2 and "no such file" in capsys.readouterr().err
    f = _csv(tmp_path / "pipes-x-y-v-bf16.csv", VALUES, drop="sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active")
    with pytest.raises(SystemExit) as e:
        ncu_pipes.main([str(f)])
    assert e.value.code == 2 and "pipe_xu" in capsys.readouterr().err
