"""scripts/rocprof_experiment.py against a stand-in rocprofv3 (no AMD GPU, no ROCm here).

The stand-in checks the arguments it is given (the mode's flags, the kernel filter, the
traced iteration, the output folder, the benchmark binary with an anchored filter and
--schedlab_profile_once after `--`), logs them, and writes what rocprofv3 writes in that
mode: the thread-trace decoder's stats CSV (the analysis fixture) a few folders down, or a
counter_collection.csv. The test then loads the stall files the way the analysis does.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "analysis"))
sys.path.insert(0, str(ROOT / "analysis" / "tests"))
import rocprof_experiment as rp  # noqa: E402
import synth  # noqa: E402
from schedlab_analysis.load import load_records  # noqa: E402

SCRIPT = ROOT / "scripts" / "rocprof_experiment.py"
ATT_FIXTURE = ROOT / "analysis" / "tests" / "fixtures" / "stats_ui_output_agent_4242_dispatch_2.csv"
BENCHMARKS = ("prefill_pingpong/ping_pong_8wave/bf16/seq:8192/head_dim:128/causal:0",
              "prefill_pingpong/plain_8wave/bf16/seq:8192/head_dim:128/causal:0")

FAKE = textwrap.dedent('''\
    #!/usr/bin/env python3
    """Stand-in rocprofv3: checks its arguments, logs them, writes fixture output."""
    import json, os, shutil, sys
    from pathlib import Path
    argv = sys.argv[1:]
    with open(os.environ["FAKE_ROCPROF_LOG"], "a") as f:
        f.write(json.dumps(argv) + "\\n")
    cut = argv.index("--")
    opts, app = argv[:cut], argv[cut + 1:]
    def value(flag):
        return opts[opts.index(flag) + 1]
    assert value("--kernel-include-regex") == os.environ["FAKE_ROCPROF_KERNEL"], opts
    assert value("--kernel-iteration-range") == "2", opts
    assert app[0] == os.environ["FAKE_ROCPROF_BINARY"] and "--schedlab_profile_once" in app, app
    assert any(a.startswith("--benchmark_filter=^") and a.endswith("(/manual_time)?$") for a in app), app
    out = Path(value("-d")) / "host" / "1234"
    out.mkdir(parents=True)
    if os.environ.get("FAKE_ROCPROF_FAIL"):
        sys.exit(3)
    if "--att" in opts:
        shutil.copy(os.environ["FAKE_ROCPROF_ATT"], out / "stats_ui_output_agent_4242_dispatch_2.csv")
    else:
        pmc = opts[opts.index("--pmc") + 1:opts.index("--kernel-include-regex")]
        assert pmc == ["SQ_WAVE_CYCLES", "SQ_WAIT_ANY", "SQ_WAIT_INST_ANY", "SQ_ACTIVE_INST_ANY"], pmc
        assert value("-f") == "csv", opts
        values = {"SQ_WAVE_CYCLES": 1000, "SQ_WAIT_ANY": 300, "SQ_WAIT_INST_ANY": 200, "SQ_ACTIVE_INST_ANY": 500}
        rows = ["Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Process_Id,Thread_Id,Grid_Size,Kernel_Id,"
                "Kernel_Name,Workgroup_Size,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,SGPR_Count,"
                "Start_Timestamp,End_Timestamp,Counter_Name,Counter_Value"]
        for name, v in values.items():  # two instances of each counter, summed by the parser
            for half in (v // 2, v - v // 2):
                rows.append(f'7,42,1,0,1234,1234,65536,3,"flash_prefill_kernel<ping_pong_8wave>",'
                            f'512,65536,0,164,0,57,100,200,{name},{half}')
        (out / "1234_counter_collection.csv").write_text("\\n".join(rows) + "\\n")
''')


@pytest.fixture
def run_dir(tmp_path):
    """A results file of two ok benchmarks and one failed, a stand-in binary and rocprofv3."""
    results = tmp_path / "results" / "mi355x" / "prefill_pingpong" / "20261124T100000Z-0123456789.json"
    records = []
    for name in BENCHMARKS:
        variant = name.split("/")[1]
        records += synth.benchmark_records(name, synth.label("prefill", "prefill_pingpong", variant, "plain_8wave",
                                                             "bf16"), [100.0, 101.0, 99.0], {"tflops": 400.0})
    records += synth.benchmark_records("prefill_pingpong/ping_pong_8wave/bf16/seq:512/head_dim:64/causal:1",
                                       "", [1.0], {}, error="accuracy gate failed")
    synth.write_results_file(results, dict(synth.DEVICE_CONTEXT, experiment="prefill_pingpong",
                                           device="AMD Instinct MI355X", arch="gfx950", backend="hip"), records)
    binary = tmp_path / "bench_prefill_pingpong"
    binary.write_text("#!/bin/sh\nexit 0\n")
    fake = tmp_path / "rocprofv3"
    fake.write_text(FAKE)
    for f in (binary, fake):
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, FAKE_ROCPROF_LOG=str(tmp_path / "argv.log"), FAKE_ROCPROF_KERNEL="flash_prefill_kernel",
               FAKE_ROCPROF_BINARY=str(binary), FAKE_ROCPROF_ATT=str(ATT_FIXTURE))
    return results, binary, fake, env


def _run(args, env):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env)


def _stall_files(results: Path) -> list[Path]:
    return sorted(results.parent.glob("stalls-*.json"))


def test_both_modes_write_stall_files_the_analysis_loads(run_dir):
    results, binary, fake, env = run_dir
    proc = _run([binary, "--results-file", results, "--rocprofv3", fake], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = [json.loads(line) for line in Path(env["FAKE_ROCPROF_LOG"]).read_text().splitlines()]
    assert len(calls) == 4  # two ok benchmarks x two modes; the failed one is left out
    assert sum("--att" in c for c in calls) == 2 and sum("--pmc" in c for c in calls) == 2
    files = _stall_files(results)
    assert len(files) == 2
    stalls = load_records(files, "stalls")
    assert set(stalls["benchmark"]) == set(BENCHMARKS)
    assert set(stalls["experiment"]) == {"prefill_pingpong"}
    traced = stalls[stalls["tool"] == "rocprofv3 --att"]
    fwd = traced[traced["kernel"] == "attn_fwd(Params const*)"]
    assert len(fwd) == 2 and fwd["memwait_share"].tolist() == pytest.approx([0.37, 0.37])
    assert fwd["memwait_vmcnt"].tolist() == pytest.approx([0.20, 0.20])
    counted = stalls[stalls["tool"] == "rocprofv3 --pmc"]
    assert len(counted) == 2
    assert counted["wait_any_share"].tolist() == pytest.approx([0.3, 0.3])
    assert counted["wait_inst_any_share"].tolist() == pytest.approx([0.2, 0.2])
    assert counted["sq_wave_cycles"].tolist() == [1000.0, 1000.0]
    assert counted["memwait_share"].isna().all()  # counters never stand in for the trace's share
    contexts = [json.loads(f.read_text())["context"] for f in files]
    assert {c["profiler_kernel_regex"] for c in contexts} == {"flash_prefill_kernel"}
    assert all(c["schedlab_commit"] == synth.DEVICE_CONTEXT["schedlab_commit"] for c in contexts)


def test_one_mode_and_one_benchmark(run_dir):
    results, binary, fake, env = run_dir
    proc = _run([binary, "--results-file", results, "--rocprofv3", fake, "--mode", "counters",
                 "--benchmark", BENCHMARKS[0]], env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = [json.loads(line) for line in Path(env["FAKE_ROCPROF_LOG"]).read_text().splitlines()]
    assert len(calls) == 1 and "--pmc" in calls[0]
    stalls = load_records(_stall_files(results), "stalls")
    assert stalls["benchmark"].tolist() == [BENCHMARKS[0]]


def test_kernel_regex_override(run_dir):
    results, binary, fake, env = run_dir
    env["FAKE_ROCPROF_KERNEL"] = "my_kernel"
    proc = _run([binary, "--results-file", results, "--rocprofv3", fake, "--mode", "att", "--kernel", "my_kernel"],
                env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--benchmark", "prefill_pingpong/nope"], "not a successful benchmark"),
    (["--benchmark", "prefill_pingpong/ping_pong_8wave/bf16/seq:512/head_dim:64/causal:1"], "not a successful"),
    (["--mode", "sampling"], "invalid choice"),
])
def test_bad_arguments_write_nothing(run_dir, args, message):
    results, binary, fake, env = run_dir
    proc = _run([binary, "--results-file", results, "--rocprofv3", fake, *args], env)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not Path(env["FAKE_ROCPROF_LOG"]).exists() and not _stall_files(results)


def test_missing_binary_and_results(run_dir, tmp_path):
    results, binary, fake, env = run_dir
    proc = _run([tmp_path / "no_binary", "--results-file", results, "--rocprofv3", fake], env)
    assert proc.returncode == 2 and "no such binary" in proc.stderr
    proc = _run([binary, "--results-file", tmp_path / "none.json", "--rocprofv3", fake], env)
    assert proc.returncode == 2


def test_unknown_family_needs_a_kernel(run_dir):
    results, binary, fake, env = run_dir
    other = results.parent.parent / "harness_check" / results.name
    other.parent.mkdir()
    shutil.copy(results, other)
    data = json.loads(other.read_text())
    data["context"]["experiment"] = "harness_check"
    other.write_text(json.dumps(data))
    proc = _run([binary, "--results-file", other, "--rocprofv3", fake], env)
    assert proc.returncode == 2 and "give --kernel" in proc.stderr


def test_a_failed_profile_writes_no_stall_file(run_dir):
    results, binary, fake, env = run_dir
    env["FAKE_ROCPROF_FAIL"] = "1"
    proc = _run([binary, "--results-file", results, "--rocprofv3", fake], env)
    assert proc.returncode == 1 and "rocprofv3 exited with 3" in proc.stderr
    assert not _stall_files(results)


def test_counter_csv_without_a_counter_is_an_error(tmp_path):
    bad = tmp_path / "x_counter_collection.csv"
    bad.write_text("Dispatch_Id,Kernel_Name,Counter_Name,Counter_Value\n1,k,SQ_WAVE_CYCLES,10\n")
    with pytest.raises(rp.ProfileError, match="not collected"):
        rp.read_counter_csv(bad)
    bad.write_text("Kernel_Name,Counter_Value\nk,10\n")
    with pytest.raises(rp.ProfileError, match="missing column"):
        rp.read_counter_csv(bad)
