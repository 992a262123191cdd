"""scripts/sweep.py, scripts/merge_results.py and scripts/slurm/sweep.sbatch on the CPU, with fake
benchmark binaries and a fake nvidia-smi (tests/fake_bench.py) that behave like the real ones."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import merge_results
import sweep
from fake_bench import (BENCHES, DEVICE, binary_name, fake_build, fake_gpu_env, read, results_files,
                        write_fake_bench)

REPO = Path(__file__).resolve().parents[2]
SWEEP = [sys.executable, str(REPO / "scripts" / "sweep.py")]
SBATCH = REPO / "scripts" / "slurm" / "sweep.sbatch"


def run_sweep(build, results, *args, env=None):
    """The sweep as a user runs it, on one fake GPU unless env says otherwise."""
    return subprocess.run([*SWEEP, "--build", str(build), "--results", str(results), "--peers", "no", *args],
                          capture_output=True, text=True, env=env or fake_gpu_env(Path(build).parent), timeout=120)


def only_summary(results):
    files = sorted((Path(results) / DEVICE / "sweeps").glob("*.json"))
    assert len(files) == 1, files
    return read(files[0])


def test_sweep_runs_every_binary_as_one_run(tmp_path):
    build = fake_build(tmp_path, BENCHES)
    p = run_sweep(build, tmp_path / "results", "--tier", "quick", "--gpus", "none")
    assert p.returncode == 0, p.stdout + p.stderr
    files = results_files(tmp_path / "results")
    assert sorted(f.parent.name for f in files) == sorted(BENCHES)
    contexts = [read(f)["context"] for f in files]
    run_ids = {c["run_id"] for c in contexts}
    assert len(run_ids) == 1 and run_ids != {""}
    assert {c["tier"] for c in contexts} == {"quick"}
    assert all(c["cuda_visible_devices"] is None for c in contexts)  # --gpus none: environment untouched
    s = only_summary(tmp_path / "results")
    assert s["tier"] == "quick" and s["run_id"] == run_ids.pop()
    assert s["totals"] == {"passed": 6, "skipped": 2, "failed": 0, "experiments": 5, "experiments_failed": 0,
                           "experiments_not_run": 0}
    by_name = {e["name"]: e for e in s["experiments"]}
    assert (by_name["bench_decode_a"]["passed"], by_name["bench_decode_a"]["skipped"]) == (2, 1)
    assert by_name["bench_decode_b"]["wall_s"] >= 0.3
    assert by_name["bench_naive"]["results"][0].startswith(f"{DEVICE}/naive_attention/")
    assert s["schedlab_commit"].startswith("feedc0ffee")  # the binaries' build, from their results files
    assert "about" not in p.stdout and "to go" in p.stdout  # no earlier sweep: progress by count


def test_run_id_from_the_environment_is_kept(tmp_path):
    build = fake_build(tmp_path, {"decode_a": {}, "prefill_a": {}})
    env = fake_gpu_env(tmp_path) | {"SCHEDLAB_RUN_ID": "device-call-7"}
    assert run_sweep(build, tmp_path / "r", "--gpus", "none", env=env).returncode == 0
    assert {read(f)["context"]["run_id"] for f in results_files(tmp_path / "r")} == {"device-call-7"}
    assert only_summary(tmp_path / "r")["run_id"] == "device-call-7"


def test_a_failing_binary_is_counted_and_the_sweep_goes_on(tmp_path):
    build = fake_build(tmp_path, BENCHES | {"decode_broken": {"rc": 1, "write": False},
                                             "prefill_bad": {"configs": [("x", "failed"), ("y", "passed")]}})
    p = run_sweep(build, tmp_path / "r", "--gpus", "none")
    assert p.returncode == 1
    s = only_summary(tmp_path / "r")
    by_name = {e["name"]: e for e in s["experiments"]}
    assert by_name["bench_decode_broken"]["status"] == "failed"
    assert "exit status 1" in by_name["bench_decode_broken"]["note"]
    assert "device is on fire" in by_name["bench_decode_broken"]["note"]
    assert (by_name["bench_prefill_bad"]["failed"], by_name["bench_prefill_bad"]["passed"]) == (1, 1)
    assert s["totals"]["experiments_failed"] == 1 and s["totals"]["failed"] == 1
    assert len(results_files(tmp_path / "r")) == len(BENCHES) + 1  # everything else ran
    assert "bench_decode_broken: failed" in p.stdout


def test_a_binary_that_writes_nothing_fails(tmp_path):
    build = tmp_path / "bin"
    write_fake_bench(build / "bench_quiet", "quiet", write=False)  # exit 0, no results file
    p = run_sweep(build, tmp_path / "r", "--gpus", "none")
    assert p.returncode == 1
    e = read(next((tmp_path / "r").rglob("sweeps/*.json")))["experiments"][0]
    assert (e["status"], e["note"]) == ("failed", "no results file written")


def test_one_worker_per_gpu_each_binary_sees_one(tmp_path):
    benches = {f"decode_{i}": {"sleep": 0.4} for i in range(4)}
    build = fake_build(tmp_path, benches)
    env = fake_gpu_env(tmp_path, gpus=0) | {"CUDA_VISIBLE_DEVICES": "3,5"}
    p = run_sweep(build, tmp_path / "r", env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    seen = [read(f)["context"]["cuda_visible_devices"] for f in results_files(tmp_path / "r")]
    assert sorted(set(seen)) == ["3", "5"]
    s = only_summary(tmp_path / "r")
    assert [g["visible_device"] for g in s["gpus"]] == ["3", "5"]
    assert sorted(n for g in s["gpus"] for n in g["ran"]) == sorted(f"bench_{b}" for b in benches)
    assert all(g["ran"] for g in s["gpus"])
    for e in s["experiments"]:  # the summary's GPU is the one the binary ran on
        assert read(tmp_path / "r" / e["results"][0])["context"]["cuda_visible_devices"] == e["gpu"]
    assert s["wall_s"] < 4 * 0.4 + 1.0 and "on GPU 5" in p.stdout


def test_one_gpu_leaves_the_environment_alone():
    gpus = sweep.visible_gpus("auto", env={"CUDA_VISIBLE_DEVICES": "GPU-abc"},
                              smi=[{"index": "0", "uuid": "GPU-abc", "name": "NVIDIA H200"}])
    assert len(gpus) == 1 and not gpus[0].pin and gpus[0].name == "NVIDIA H200"
    gpus = sweep.visible_gpus("auto", env={}, smi=[{"index": str(i), "uuid": f"u{i}", "name": "NVIDIA H200"}
                                                   for i in range(2)])
    assert [(g.visible, g.pin) for g in gpus] == [("0", True), ("1", True)]
    assert sweep.visible_gpus("none", env={}, smi=gpus_listed(1)) == [sweep.Gpu(None, pin=False)]


def gpus_listed(n):
    return [{"index": str(i), "uuid": f"u{i}", "name": "NVIDIA H200"} for i in range(n)]


@pytest.mark.parametrize("gpus, env, smi, found", [
    ("auto", {}, 0, []), ("none", {}, 0, []),
    ("auto", {"CUDA_VISIBLE_DEVICES": ""}, 2, []), ("auto", {"CUDA_VISIBLE_DEVICES": "-1"}, 2, []),
    ("none", {"CUDA_VISIBLE_DEVICES": ""}, 2, []),
    ("auto", {"CUDA_VISIBLE_DEVICES": "0"}, 0, ["0"]),  # Slurm's GPU, no nvidia-smi in the job
    ("0,1", {}, 0, ["0", "1"]),  # named on the command line: taken as given
])
def test_which_gpus_count(gpus, env, smi, found):
    assert [g.visible for g in sweep.visible_gpus(gpus, env=env, smi=gpus_listed(smi))] == found


@pytest.mark.parametrize("args, env", [((), {}), (("--gpus", "none"), {}), ((), {"CUDA_VISIBLE_DEVICES": ""}),
                                        ((), {"CUDA_VISIBLE_DEVICES": "-1"})])
def test_no_gpu_runs_nothing_and_writes_nothing(tmp_path, args, env):
    build = fake_build(tmp_path, BENCHES)
    p = run_sweep(build, tmp_path / "r", *args, env=fake_gpu_env(tmp_path, gpus=0) | env)
    assert p.returncode == 2 and "no GPU found" in p.stderr and "nothing run" in p.stderr, p.stderr
    assert p.stdout == ""
    assert not (tmp_path / "r").exists() and not (build / "sweep-logs").exists()


def test_previous_summary_orders_longest_first_and_estimates(tmp_path):
    build = fake_build(tmp_path, {"decode_a": {}, "decode_b": {}, "prefill_a": {}})
    results = tmp_path / "r"
    prev = {"schema": sweep.SCHEMA, "tier": "default", "experiments": [
        {"name": "bench_decode_a", "status": "ok", "wall_s": 5.0},
        {"name": "bench_prefill_a", "status": "ok", "wall_s": 50.0}]}
    (results / DEVICE / "sweeps").mkdir(parents=True)
    (results / DEVICE / "sweeps" / "20200101T000000Z-old.json").write_text(json.dumps(prev))
    p = run_sweep(build, results, "--gpus", "none", "--device", DEVICE)
    assert p.returncode == 0, p.stderr
    started = [ln.split("] ")[1].split(":")[0] for ln in p.stdout.splitlines() if ": started" in ln]
    # decode_b is unknown: it is expected to take the mean of the known ones (27.5 s)
    assert started == ["bench_prefill_a", "bench_decode_b", "bench_decode_a"]
    assert "about" in p.stdout and "durations from the previous default sweep" in p.stdout
    assert sweep.previous_durations(results, DEVICE, "quick") == {}


def test_estimate_left():
    assert sweep.estimate_left([], [10, 5, 5], 1) == 20
    assert sweep.estimate_left([], [10, 5, 5], 2) == 10
    assert sweep.estimate_left([(10, 4)], [3], 2) == 6
    assert sweep.estimate_left([(10, 12)], [], 1) == 0  # over its expectation: nothing negative


def test_shards_partition_the_experiments():
    names = [f"bench_{i}" for i in range(11)]
    expected = {n: float(i + 1) for i, n in enumerate(names)}
    for count in (1, 2, 3, 4, 11, 13):
        parts = [sweep.shard_names(names, expected, k, count) for k in range(count)]
        assert sorted(sum(parts, [])) == sorted(names)  # every experiment once
        assert parts == [sweep.shard_names(list(reversed(names)), expected, k, count) for k in range(count)]
    loads = [sum(expected[n] for n in sweep.shard_names(names, expected, k, 3)) for k in range(3)]
    assert max(loads) - min(loads) <= max(expected.values())
    by_count = [sweep.shard_names(names, {}, k, 4) for k in range(4)]  # no durations: dealt by count
    assert sorted(len(p) for p in by_count) == [2, 3, 3, 3]


@pytest.mark.parametrize("bad", ["2/2", "1", "a/b", "-1/2", "0/0"])
def test_bad_shard_is_a_clear_error(tmp_path, bad):
    build = fake_build(tmp_path, {"decode_a": {}})
    p = run_sweep(build, tmp_path / "r", "--shard", bad)
    assert p.returncode == 2 and "--shard" in p.stderr
    assert not (tmp_path / "r").exists()


def test_budget_stops_a_long_binary(tmp_path, monkeypatch):
    build = fake_build(tmp_path, {"decode_slow": {"sleep": 30}})
    monkeypatch.setattr(sweep, "MIN_START_S", 0)
    out = sweep.run_job(sweep.make_jobs(sweep.discover_benches(build), tmp_path / "r", "quick", [], False)[0], 0,
                        sweep.Gpu(None, pin=False), fake_gpu_env(tmp_path), tmp_path, tmp_path / "r",
                        deadline=sweep.time.monotonic() + 1)
    assert out.status == "timeout" and out.wall_s < 15 and not results_files(tmp_path / "r")


def array_task(tmp_path, build, task, count, *args, env=None):
    """One array task exactly as Slurm starts it: the batch script, its SLURM_* variables."""
    e = (env or fake_gpu_env(tmp_path)) | {
        "SLURM_SUBMIT_DIR": str(REPO), "SLURM_ARRAY_JOB_ID": "4242", "SLURM_ARRAY_TASK_ID": str(task + 1),
        "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": str(count), "SCHEDLAB_BUILD": str(build),
        "SCHEDLAB_SHARD_ROOT": str(tmp_path / "shards"), "PYTHON": sys.executable}
    return subprocess.run(["bash", str(SBATCH), "--tier", "quick", "--peers", "no", *args], capture_output=True,
                          text=True, env=e, cwd=tmp_path, timeout=120)


def test_slurm_array_then_merge(tmp_path, capsys):
    build = fake_build(tmp_path, BENCHES)
    count = 3
    for k in range(count):
        p = array_task(tmp_path, build, k, count)
        assert p.returncode == 0, p.stdout + p.stderr
    trees = sorted((tmp_path / "shards" / "4242").glob("task-*"))
    assert [t.name for t in trees] == ["task-0", "task-1", "task-2"]
    ran = [sorted(e["name"] for e in only_summary(t)["experiments"]) for t in trees]
    assert sorted(sum(ran, [])) == sorted(map(binary_name, BENCHES))
    assert all(ran)  # 5 experiments over 3 tasks: none idle

    out = tmp_path / "merged"
    assert merge_results.main(["--out", str(out), *map(str, trees)]) == 0
    merged_files = results_files(out)
    assert sorted(f.parent.name for f in merged_files) == sorted(BENCHES)
    assert {read(f)["context"]["run_id"] for f in merged_files} == {"slurm-4242"}
    s = only_summary(out)
    assert s["run_id"] == "slurm-4242" and s["tier"] == "quick" and s["missing_shards"] == []
    assert [sh["index"] for sh in s["shards"]] == [0, 1, 2]
    assert s["totals"]["passed"] == 6 and s["totals"]["skipped"] == 2 and s["totals"]["experiments"] == 5
    assert sorted(e["shard"] for e in s["experiments"]) == sorted(k for k, r in enumerate(ran) for _ in r)
    capsys.readouterr()
    assert sweep.main(["--show", str(next((out / DEVICE / "sweeps").glob("*.json")))]) == 0
    table = capsys.readouterr().out
    assert "tier quick" in table and "bench_decode_a" in table and table.splitlines()[-1].split()[-3:] == ["6", "2", "0"]

    # Merging again changes nothing; a clash with different content copies nothing.
    assert merge_results.main(["--out", str(out), *map(str, trees)]) == 0
    assert len(list((out / DEVICE / "sweeps").glob("*.json"))) == 1
    victim = next(f for f in results_files(trees[0]))
    victim.write_text(victim.read_text().replace('"real_time": 10.0', '"real_time": 11.0'))
    fresh = tmp_path / "fresh"
    (fresh / "extra").mkdir(parents=True)
    clash = fresh / victim.relative_to(trees[0])
    clash.parent.mkdir(parents=True)
    clash.write_text("{}")
    assert merge_results.main(["--out", str(fresh), *map(str, trees)]) == 1
    assert [p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file()] == [clash.relative_to(fresh)]


def test_merge_refuses_two_trees_that_disagree(tmp_path):
    a, b = tmp_path / "a" / DEVICE / "decode_a", tmp_path / "b" / DEVICE / "decode_a"
    for d, t in ((a, "1.0"), (b, "2.0")):
        d.mkdir(parents=True)
        (d / "20260101T000000Z-feedc0ffee.json").write_text(t)
    (b / "20260101T000001Z-feedc0ffee.json").write_text("3.0")
    with pytest.raises(merge_results.MergeError, match="differ"):
        merge_results.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    assert not (tmp_path / "m").exists()
    (b / "20260101T000000Z-feedc0ffee.json").write_text("1.0")  # the same file twice is fine
    copied, _ = merge_results.merge([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    assert len(copied) == 2


def test_merge_needs_every_shard(tmp_path):
    build = fake_build(tmp_path, BENCHES)
    for k in (0, 2):
        assert array_task(tmp_path, build, k, 3).returncode == 0
    trees = sorted((tmp_path / "shards" / "4242").glob("task-*"))
    with pytest.raises(merge_results.MergeError, match=r"shard\(s\) \[1\] of 3 missing"):
        merge_results.merge(trees, tmp_path / "m")
    assert not (tmp_path / "m").exists()
    _, summaries = merge_results.merge(trees, tmp_path / "m", allow_missing=True)
    assert read(summaries[0])["missing_shards"] == [1]


def test_array_task_outside_slurm_is_refused(tmp_path):
    p = subprocess.run(["bash", str(SBATCH)], capture_output=True, text=True, cwd=REPO, env=fake_gpu_env(tmp_path))
    assert p.returncode != 0 and "array task" in p.stderr


def test_count_configurations():
    doc = {"benchmarks": [
        {"name": "a_median", "run_name": "a"}, {"name": "a_mean", "run_name": "a"},
        {"name": "b", "run_name": "b", "error_occurred": True, "error_message": "skipped: smem"},
        {"name": "c", "run_name": "c"}, {"name": "c", "run_name": "c", "error_occurred": True,
                                         "error_message": "rel_l2 3e-2 > 1e-2"},
        {"name": "d", "error_occurred": True, "error_message": "skipped because"}]}
    assert sweep.count_configurations(doc) == {"passed": 1, "skipped": 1, "failed": 2}


def test_stopping_the_sweep_stops_its_binaries(tmp_path):
    build = fake_build(tmp_path, {"decode_slow": {"sleep": 60}})
    proc = subprocess.Popen([*SWEEP, "--build", str(build), "--results", str(tmp_path / "r"), "--peers", "no",
                             "--gpus", "none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=fake_gpu_env(tmp_path))
    for _ in range(100):  # until the binary has started
        if list((build / "sweep-logs").rglob("*.log")):
            break
        sweep.time.sleep(0.1)
    sweep.time.sleep(0.5)
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in err
    binary = str(build / "experiments" / "decode_slow").encode()
    still = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if binary in cmdline.read_bytes():
                still.append(cmdline.parent.name)
        except OSError:
            pass
    assert still == []
    assert not results_files(tmp_path / "r") and not list((tmp_path / "r").rglob("sweeps/*.json"))


def test_only_takes_experiment_names_and_binary_globs(tmp_path):
    build = fake_build(tmp_path, BENCHES)
    jobs = sweep.make_jobs(sweep.discover_benches(build), tmp_path / "r", "quick", [], False)

    def names(only):
        return sorted(j.name for j in sweep.select_jobs(jobs, only))

    assert names("decode_a") == ["bench_decode_a"]
    assert names("naive_attention, prefill_b") == ["bench_naive", "bench_prefill_b"]
    assert names("decode_*") == names("bench_decode_*") == ["bench_decode_a", "bench_decode_b"]
    assert names("bench_naive") == ["bench_naive"]
    p = run_sweep(build, tmp_path / "r", "--only", "decode_b,naive_attention")
    assert p.returncode == 0, p.stderr
    assert sorted(f.parent.name for f in results_files(tmp_path / "r")) == ["decode_b", "naive_attention"]


@pytest.mark.parametrize("only, unmatched", [("nosuch", "'nosuch'"), ("decode_a,nosuch", "'nosuch'"),
                                             ("bench_x*,y", "'bench_x*', 'y'"), (",", "")])
def test_unknown_selection_lists_what_there_is(tmp_path, only, unmatched):
    build = fake_build(tmp_path, BENCHES)
    p = run_sweep(build, tmp_path / "r", "--only", only)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert f"{unmatched} matches no experiment" in p.stderr if unmatched else "expected experiment names" in p.stderr
    if unmatched:
        assert "there are 5: " in p.stderr and "naive_attention (bench_naive)" in p.stderr
        assert "decode_a (bench_decode_a)" in p.stderr
    assert not (tmp_path / "r").exists() and not (build / "sweep-logs").exists()


def test_missing_files_and_folders_are_errors_not_tracebacks(tmp_path, monkeypatch, capsys):
    build = fake_build(tmp_path, {"decode_a": {}})
    (tmp_path / "other.json").write_text('{"schema": "something else"}')
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", fake_gpu_env(tmp_path)["PATH"])
    cases = [
        (["--show", str(tmp_path / "nonexistent.json")], "nonexistent.json: no such file"),
        (["--show", str(tmp_path)], "not a sweep summary"),
        (["--show", str(tmp_path / "other.json")], "not a sweep summary"),
        (["--build", str(tmp_path / "nobuild")], "nobuild not found"),
        (["--build", str(tmp_path / "empty")], "no benchmark binaries in"),
        (["--build", str(build), "--durations-from", str(tmp_path / "gone")], "gone: no such folder"),
    ]
    for args, message in cases:  # in this process: a traceback would fail the test
        assert sweep.main([*args, "--results", str(tmp_path / "r")]) == 2, args
        err = capsys.readouterr().err
        assert message in err, (args, err)
    assert not (tmp_path / "r").exists()
