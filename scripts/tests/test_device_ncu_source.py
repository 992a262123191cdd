"""scripts/device_ncu_source.sh without a device: every benchmark its filter selects gets a file
of its own, named by variant, dtype and shape, with no character the device tool refuses."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

NAMES = [
    "decode_work_partition/token_balanced/fp8_e4m3/batch:31/lengths:16x128+8x512+1x32768/page:16/iterations:1/manual_time",
    "decode_work_partition/token_balanced/fp8_e4m3/batch:31/context:2048/page:16/iterations:1/manual_time",
]

FAKE_BENCH = """#!/usr/bin/env bash
if [ "$1" = --benchmark_list_tests ]; then printf '%s\\n' {names}; fi
"""

# ncu: with -o writes <name>.ncu-rep; with -i prints a CSV naming the report it read.
FAKE_NCU = """#!/usr/bin/env bash
out= imp=
while [ $# -gt 0 ]; do
  case $1 in -o) out=$2; shift ;; -i) imp=$2; shift ;; esac
  shift
done
[ -n "$out" ] && echo rep > "$out.ncu-rep"
[ -n "$imp" ] && echo "\\"Kernel Name\\",\\"$imp\\","
exit 0
"""


def test_each_shape_gets_its_own_file(tmp_path):
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    for name in ("device_ncu_source.sh", "bench_names.sh"):
        shutil.copy(REPO / "scripts" / name, root / "scripts" / name)
    (root / ".carry").mkdir()
    (root / ".carry" / "provenance").write_text("0123456789abcdef0123 false\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    bench = bindir / "bench"
    bench.write_text(FAKE_BENCH.format(names=" ".join(f"'{n}'" for n in NAMES)))
    ncu = bindir / "ncu"
    ncu.write_text(FAKE_NCU)
    for f in (bench, ncu):
        f.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    r = subprocess.run(["bash", "scripts/device_ncu_source.sh", str(bench), "token_balanced", str(out)], cwd=root,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    files = sorted(p.name for p in (out / "decode_work_partition").glob("*.csv"))
    assert len(files) == 2, files
    assert all(re.fullmatch(r"sass-stalls-\d{8}T\d{6}Z-0123456789-token_balanced-fp8_e4m3-[A-Za-z0-9_.=-]+\.csv", f)
               for f in files), files
    assert any(f.endswith("-batch31-lengths16x128_8x512_1x32768-page16.csv") for f in files), files
    assert any(f.endswith("-batch31-context2048-page16.csv") for f in files), files
