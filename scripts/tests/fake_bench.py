"""Fake benchmark binaries for the sweep tests: small Python scripts with the command line and
output of the real ones (common/harness/bench_main.cpp): they take --schedlab_results_root and
--schedlab_tier, write a Google Benchmark JSON results file under
<root>/fake-gpu/<experiment>/<stamp>-<commit>.json and print "schedlab: results written to ...".
Their context records what the sweep gave them (run id, tier, CUDA_VISIBLE_DEVICES, argv).
A fake nvidia-smi on PATH stands in for the GPUs (the sweep runs nothing without one)."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

DEVICE = "fake-gpu"
GPU_NAME = "Fake GPU"  # nvidia-smi's name, of which DEVICE is the slug
COMMIT = "feedc0ffee0123456789"

SCRIPT = r'''#!/usr/bin/env python3
import json, os, sys, time
from datetime import datetime, timezone
SPEC = json.loads(%r)
flags = dict(a.split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
root = flags.get("--schedlab_results_root", "results")
time.sleep(SPEC["sleep"])
if not SPEC["write"]:
    if SPEC["rc"]:
        print("fake failure: the device is on fire", file=sys.stderr)
    sys.exit(SPEC["rc"])
records = []
for name, status in SPEC["configs"]:
    full = SPEC["experiment"] + "/" + name + "/manual_time"
    if status == "passed":
        for agg in ("median", "mean"):
            records.append({"name": full + "_" + agg, "run_name": full, "run_type": "aggregate",
                            "aggregate_name": agg, "real_time": 10.0, "time_unit": "us"})
    else:
        msg = ("skipped: not supported here" if status == "skipped" else "accuracy gate failed")
        records.append({"name": full, "run_name": full, "run_type": "iteration", "error_occurred": True,
                        "error_message": msg})
ctx = {"experiment": SPEC["experiment"], "run_id": os.environ.get("SCHEDLAB_RUN_ID", ""),
       "tier": flags.get("--schedlab_tier", "default"),
       "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"), "argv": sys.argv[1:],
       "schedlab_commit": SPEC["commit"], "schedlab_dirty": "false"}
d = os.path.join(root, SPEC["device"], SPEC["experiment"])
os.makedirs(d, exist_ok=True)
stem = datetime.now(timezone.utc).strftime("%%Y%%m%%dT%%H%%M%%SZ") + "-" + SPEC["commit"][:10]
path, i = os.path.join(d, stem + ".json"), 1
while os.path.exists(path):
    path, i = os.path.join(d, stem + "-%%d.json" %% i), i + 1
with open(path, "w") as f:
    json.dump({"context": ctx, "benchmarks": records}, f, indent=1)
print("schedlab: results written to " + path)
sys.exit(SPEC["rc"])
'''


def write_fake_bench(path: Path, experiment: str, configs=(("a", "passed"),), sleep: float = 0.0,
                     rc: int = 0, write: bool = True) -> Path:
    spec = {"experiment": experiment, "configs": [list(c) for c in configs], "sleep": sleep, "rc": rc,
            "write": write, "device": DEVICE, "commit": COMMIT}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SCRIPT % json.dumps(spec))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# Five experiments of both families: 6 passed and 2 skipped configurations in all.
BENCHES = {
    "naive_attention": {},
    "decode_a": {"configs": [("x", "passed"), ("y", "skipped"), ("z", "passed")]},
    "decode_b": {"configs": [("x", "passed")], "sleep": 0.3},
    "prefill_a": {"configs": [("x", "passed"), ("y", "passed")]},
    "prefill_b": {"configs": [("x", "skipped")]},
}


def binary_name(experiment: str) -> str:
    return "bench_naive" if experiment == "naive_attention" else f"bench_{experiment}"


def fake_build(root: Path, benches: dict[str, dict]) -> Path:
    """A CMake-layout build folder: 'naive_attention' -> kernels/bench_naive, any other
    experiment -> experiments/<experiment>/bench_<experiment>."""
    build = root / "build"
    (build / "kernels").mkdir(parents=True, exist_ok=True)
    for experiment, kw in benches.items():
        path = (build / "kernels" if experiment == "naive_attention" else build / "experiments" / experiment)
        write_fake_bench(path / binary_name(experiment), experiment, **kw)
    return build


def results_files(root: Path) -> list[Path]:
    return sorted(p for p in Path(root).rglob("*.json") if "sweeps" not in p.parts)


def read(path: Path) -> dict:
    return json.loads(Path(path).read_text())


# Answers the one query scripts/sweep.py makes (--query-gpu=index,uuid,name --format=csv,noheader),
# or fails as nvidia-smi does without a driver.
NVIDIA_SMI_LISTING = "#!/bin/sh\nprintf '%s'\n"
NVIDIA_SMI_NO_DRIVER = ("#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                        "driver.\"\nexit 9\n")


def fake_gpu_env(root: Path, gpus: int = 1) -> dict:
    """The environment less CUDA_VISIBLE_DEVICES and SCHEDLAB_RUN_ID, with a fake nvidia-smi first
    on PATH that lists `gpus` GPUs named GPU_NAME (0: it fails as it does without a driver)."""
    bin_dir = Path(root) / f"fake-nvidia-smi-{gpus}"
    bin_dir.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{i}, GPU-fake-{i}, {GPU_NAME}\\n" for i in range(gpus))
    smi = bin_dir / "nvidia-smi"
    smi.write_text(NVIDIA_SMI_LISTING % lines if gpus else NVIDIA_SMI_NO_DRIVER)
    smi.chmod(0o755)
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("SCHEDLAB_RUN_ID", None)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env
