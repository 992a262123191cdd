"""scripts/device_ncu_source.sh without a device: every benchmark its filter selects gets a file
of its own, named by variant, dtype and shape, with no character the device tool refuses; and
device_ncu_peer.sh names a peer's profiles the same way and takes them with the same options."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

NAMES = [
    "decode_work_partition/token_balanced/fp8_e4m3/batch:31/lengths:16x128+8x512+1x32768/page:16/iterations:1/manual_time",
    "decode_work_partition/token_balanced/fp8_e4m3/batch:31/context:2048/page:16/iterations:1/manual_time",
]

FAKE_BENCH = """#!/usr/bin/env bash
echo "$*" >> "$BENCH_ARGS"
for a in "$@"; do [ "$a" = --benchmark_list_tests ] && printf '%s\\n' {names}; done
"""

# ncu: with -o writes <name>.ncu-rep, with -i prints a CSV naming the report it read, with
# --log-file writes that file; each call's arguments go to $NCU_ARGS, one line a call.
FAKE_NCU = """#!/usr/bin/env bash
echo "$*" >> "$NCU_ARGS"
out= imp= log=
while [ $# -gt 0 ]; do
  case $1 in -o) out=$2; shift ;; -i) imp=$2; shift ;; --log-file) log=$2; shift ;; esac
  shift
done
[ -n "$out" ] && echo rep > "$out.ncu-rep"
[ -n "$imp" ] && echo "\\"Kernel Name\\",\\"$imp\\","
[ -n "$log" ] && echo pipes > "$log"
exit 0
"""

def _checkout(tmp_path, script):
    """A repo holding `script` and the files it sources, a carried provenance, and a bin folder
    with the fake ncu (returned: the repo and the bin folder, to go first on PATH)."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    for name in (script, "bench_names.sh", "ncu_options.sh"):
        shutil.copy(REPO / "scripts" / name, root / "scripts" / name)
    (root / ".carry").mkdir()
    (root / ".carry" / "provenance").write_text("0123456789abcdef0123 false\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "ncu").write_text(FAKE_NCU)
    (bindir / "ncu").chmod(0o755)
    return root, bindir


def test_each_shape_gets_its_own_file(tmp_path):
    root, bindir = _checkout(tmp_path, "device_ncu_source.sh")
    bench = bindir / "bench"
    bench.write_text(FAKE_BENCH.format(names=" ".join(f"'{n}'" for n in NAMES)))
    bench.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", NCU_ARGS=str(tmp_path / "ncu_args"),
               BENCH_ARGS=str(tmp_path / "bench_args"), TIER="full")
    r = subprocess.run(["bash", "scripts/device_ncu_source.sh", str(bench), "token_balanced", str(out)], cwd=root,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    # The listing and each profiled run pick from the tier TIER names (a shape of the full tier only).
    assert (tmp_path / "bench_args").read_text().startswith("--schedlab_tier=full --benchmark_list_tests")
    runs = (tmp_path / "ncu_args").read_text().splitlines()
    assert len(runs) == 4 and sum(f"{bench} --schedlab_tier=full --schedlab_profile_once" in c for c in runs) == 2, runs
    files = sorted(p.name for p in (out / "decode_work_partition").glob("*.csv"))
    assert len(files) == 2, files
    assert all(re.fullmatch(r"sass-stalls-\d{8}T\d{6}Z-0123456789-token_balanced-fp8_e4m3-[A-Za-z0-9_.=-]+\.csv", f)
               for f in files), files
    assert any(f.endswith("-batch31-lengths16x128_8x512_1x32768-page16.csv") for f in files), files
    assert any(f.endswith("-batch31-context2048-page16.csv") for f in files), files


@pytest.mark.parametrize("peer, site_var, marker, script, name", [
    ("fa4", "FA4_SITE", ".fa4_complete", "fa4_peers.py", "prefill_pingpong/pingpong/bf16/seq:8192/head_dim:64/causal:0"),
    ("cudnn", "CUDNN_SITE", ".cudnn_complete", "cudnn_prefill_peers.py",
     "prefill_pingpong/pingpong/fp8_e4m3/seq:8192/head_dim:128/causal:0"),
])
def test_peer_profiles_are_named_like_ours_and_taken_with_our_options(tmp_path, peer, site_var, marker, script, name):
    root, bindir = _checkout(tmp_path, "device_ncu_peer.sh")
    site = tmp_path / "site"
    site.mkdir()
    out, args = tmp_path / "out", tmp_path / "ncu_args"
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", PEER=peer, NCU_ARGS=str(args), **{site_var: str(site)})
    cmd = ["bash", "scripts/device_ncu_peer.sh", str(out), name]
    r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not staged" in r.stderr  # no marker yet
    (site / marker).write_text("staged\n")
    r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    dtype = name.split("/")[2]
    shape = "-".join(part.replace(":", "") for part in name.split("/")[3:])
    files = sorted(p.name for p in (out / "peers_prefill").glob("*.csv"))
    assert [re.sub(r"\d{8}T\d{6}Z", "STAMP", f) for f in files] == [
        f"pipes-STAMP-0123456789-{peer}-{dtype}-{shape}.csv", f"sass-stalls-STAMP-0123456789-{peer}-{dtype}-{shape}.csv"]
    calls = args.read_text().splitlines()
    source, pipes = [c for c in calls if " -o " in c], [c for c in calls if "--log-file" in c]
    assert len(source) == 1 and "--section SourceCounters" in source[0] and "--profile-from-start off" in source[0]
    assert len(pipes) == 1 and "--section SpeedOfLight" in pipes[0] and "--profile-from-start off" in pipes[0]
    assert all("--clock-control none" in c for c in source + pipes)
    assert all(f"analysis/peers/{script} " in c and c.endswith(f"--profile {name}") for c in source + pipes)


@pytest.mark.parametrize("peer", ["sdpa_cudnn", "sdpa_flash"])
def test_sdpa_profiles_need_no_staging_and_name_their_backend(tmp_path, peer):
    root, bindir = _checkout(tmp_path, "device_ncu_peer.sh")
    out, args = tmp_path / "out", tmp_path / "ncu_args"
    name = "prefill_pingpong/pingpong/bf16/seq:1024/head_dim:128/causal:1"
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", PEER=peer, NCU_ARGS=str(args))
    r = subprocess.run(["bash", "scripts/device_ncu_peer.sh", str(out), name], cwd=root, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    files = sorted(re.sub(r"\d{8}T\d{6}Z", "STAMP", p.name) for p in (out / "peers_prefill").glob("*.csv"))
    assert files == [f"pipes-STAMP-0123456789-{peer}-bf16-seq1024-head_dim128-causal1.csv",
                     f"sass-stalls-STAMP-0123456789-{peer}-bf16-seq1024-head_dim128-causal1.csv"]
    calls = args.read_text().splitlines()
    assert len(calls) == 3 and all("--clock-control none" in c for c in calls if "-i " not in c)
    assert all(c.endswith(f"analysis/peers/sdpa_peers.py --warmup 3 --backend {peer} --profile {name}")
               for c in calls if "-i " not in c)


def test_an_unknown_peer_is_refused(tmp_path):
    root, bindir = _checkout(tmp_path, "device_ncu_peer.sh")
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", PEER="nope", NCU_ARGS=str(tmp_path / "a"))
    r = subprocess.run(["bash", "scripts/device_ncu_peer.sh", str(tmp_path / "out"), "x"], cwd=root, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not a peer" in r.stderr and not (tmp_path / "a").exists()
