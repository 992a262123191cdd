#!/usr/bin/env python3
"""Runs every experiment's benchmark binary (and the SDPA peers where a GPU and torch exist)
into one results tree, as one run, and writes a summary of the sweep.

    python3 scripts/sweep.py --build build/cuda --results results --tier default
    python3 scripts/sweep.py ... --shard 2/8          # this array task's share of the experiments
    python3 scripts/sweep.py ... -- --benchmark_filter=bf16   # extra flags for every binary
    python3 scripts/sweep.py --show results/h200/sweeps/<stamp>-<commit>.json   # a summary as a table

- Binaries: BUILD/kernels/bench_naive and BUILD/experiments/*/bench_*, or BUILD/bench_* where
  BUILD is a flat folder of binaries. Each runs with --schedlab_tier=TIER and
  --schedlab_results_root=RESULTS; every process of the sweep gets the same SCHEDLAB_RUN_ID
  (taken from the environment when set, else made here).
- GPUs: one worker per visible GPU (CUDA_VISIBLE_DEVICES, else `nvidia-smi -L`), each running
  its binaries with CUDA_VISIBLE_DEVICES set to its GPU; experiments are taken longest first
  (durations from the previous sweep summary of the same tier). With one GPU the environment
  is left as it is. With none (nvidia-smi lists none and CUDA_VISIBLE_DEVICES names none) the
  sweep says so and exits 2 having run and written nothing; --gpus with device ids is taken
  at its word (a machine whose driver works without nvidia-smi). The tests stand in for a GPU
  with a fake nvidia-smi on PATH (scripts/tests/fake_bench.py), as they do for the binaries.
- Selection: --only takes a comma list of globs, each matched against the experiment name
  (decode_kv_streaming, naive_attention, peers_decode) and the binary's (bench_decode_*).
  A glob that matches nothing is an error that lists the experiments there are.
- A binary that fails or writes no results file does not stop the sweep; it is counted, and
  the exit status is 1 when anything failed (a binary, or any configuration in a results file);
  2 when nothing could run (a missing file or folder, an unknown selection, no GPU, a bad
  --shard), and then nothing is written; 130 when stopped.
- Summary: RESULTS/<device>/sweeps/<stamp>-<commit>[-shard-K-of-N].json with the tier, the run
  id, wall time per experiment, passed / skipped / failed configurations read from each results
  file (an error message starting with "skipped: " is a skipped case, any other is a failure),
  and which GPU ran what. It is never written over an earlier file.
"""
from __future__ import annotations

import argparse
import fnmatch
import heapq
import importlib.util
import itertools
import json
import os
import queue
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PEERS_SCRIPT = REPO / "analysis" / "peers" / "sdpa_peers.py"
sys.path.insert(0, str(PEERS_SCRIPT.parent))
# The harness's naming, mirrored by the peers script's pure (standard library) part.
from sdpa_peers import device_slug, git_provenance, utc_stamp  # noqa: E402
PEER_FAMILIES = ("decode", "prefill")
TIERS = ("quick", "default", "full")
SKIPPED_PREFIX = "skipped: "  # common/harness/bench.hpp kSkippedPrefix
SCHEMA = "schedlab-sweep/1"
MIN_START_S = 20  # with a time budget, a binary is not started with less than this left
HEARTBEAT_S = 60
# The line each writer prints with the path of its results file: the harness
# (common/harness/bench_main.cpp) and the peers script (analysis/peers/sdpa_peers.py).
WRITTEN_RE = re.compile(r"(?:schedlab: results written to|\] wrote) (\S+\.json)\s*$", re.M)


# ---- what to run ---------------------------------------------------------------------------

@dataclass
class Job:
    name: str                      # the binary (bench_<experiment>), or peers_<family>
    argv: list[str]
    kind: str = "bench"            # bench | peers
    experiment: str = ""           # the results folder it writes: decode_kv_streaming, peers_decode


# Binaries whose experiment is not their name less "bench_" (kernels/naive/bench_naive.cpp's
# bench_main names it).
EXPERIMENT_OF_BINARY = {"bench_naive": "naive_attention"}


def experiment_of(binary: Path) -> str:
    """BUILD/experiments/<experiment>/bench_<experiment> -> <experiment>; a binary elsewhere
    (kernels/, a flat folder) -> its name less bench_ (EXPERIMENT_OF_BINARY for the exceptions)."""
    binary = Path(binary)
    if binary.parent.parent.name == "experiments":
        return binary.parent.name
    return EXPERIMENT_OF_BINARY.get(binary.name, binary.name.removeprefix("bench_"))


def discover_benches(build: Path) -> list[Path]:
    """The benchmark binaries of a build folder (CMake layout) or of a flat folder of binaries."""
    build = Path(build)
    if (build / "experiments").is_dir() or (build / "kernels").is_dir():
        found = [build / "kernels" / "bench_naive", *sorted((build / "experiments").glob("*/bench_*"))]
    else:
        found = sorted(build.glob("bench_*"))
    return [p for p in found if p.is_file() and os.access(p, os.X_OK)]


def peer_tier_flags(tier: str, python: str = sys.executable, script: Path = PEERS_SCRIPT) -> list[str]:
    """The peers script's flags for a tier: its own --tier where it has one, else --quick for
    the quick tier (two shapes per family) and its full shape set otherwise."""
    try:
        helptext = subprocess.run([python, str(script), "--help"], capture_output=True, text=True,
                                  timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        helptext = ""
    if "--tier" in helptext:
        return ["--tier", tier]
    return ["--quick"] if tier == "quick" else []


def make_jobs(benches: list[Path], results: Path, tier: str, extra: list[str], peers: bool) -> list[Job]:
    jobs = [Job(b.name, [str(b.resolve()), f"--schedlab_results_root={results}", f"--schedlab_tier={tier}", *extra],
                experiment=experiment_of(b))
            for b in benches]
    if peers:
        flags = peer_tier_flags(tier)
        jobs += [Job(f"peers_{family}", [sys.executable, str(PEERS_SCRIPT), "--results-root", str(results),
                                         "--family", family, *flags], kind="peers", experiment=f"peers_{family}")
                 for family in PEER_FAMILIES]
    return jobs


class SelectionError(ValueError):
    pass


def select_jobs(jobs: list[Job], only: str) -> list[Job]:
    """The jobs --only names: a comma list of globs, each matched against the experiment and the
    binary name. A glob that matches nothing is an error listing what there is (a typo would
    otherwise run a smaller sweep than asked, or none)."""
    globs = [g.strip() for g in only.split(",") if g.strip()]
    if not globs:
        raise SelectionError(f"--only {only!r}: expected experiment names or globs, e.g. decode_kv_streaming")

    def hits(job: Job, glob: str) -> bool:
        return fnmatch.fnmatchcase(job.experiment, glob) or fnmatch.fnmatchcase(job.name, glob)

    unmatched = [g for g in globs if not any(hits(j, g) for j in jobs)]
    if unmatched:
        there = ", ".join(j.experiment + (f" ({j.name})" if j.name != j.experiment else "") for j in jobs)
        raise SelectionError(f"--only: {', '.join(map(repr, unmatched))} matches no experiment; there are "
                             f"{len(jobs)}: {there or 'none'}")
    return [j for j in jobs if any(hits(j, g) for g in globs)]


def torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


# ---- GPUs ----------------------------------------------------------------------------------

@dataclass
class Gpu:
    visible: str | None            # its CUDA_VISIBLE_DEVICES id (None: not known)
    name: str = ""
    uuid: str = ""
    pin: bool = True               # set CUDA_VISIBLE_DEVICES for the worker's binaries


def nvidia_smi_gpus() -> list[dict]:
    """index, uuid, name of each GPU nvidia-smi lists ([] without nvidia-smi or a GPU)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    gpus = []
    for line in out.stdout.splitlines():
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) == 3 and parts[0].isdigit():
            gpus.append({"index": parts[0], "uuid": parts[1], "name": parts[2]})
    return gpus


def detected_gpu_ids(env: dict, smi: list[dict]) -> list[str]:
    """The GPUs a binary started here would see: CUDA_VISIBLE_DEVICES's ids when it is set (empty
    or -1: none), else every GPU nvidia-smi lists."""
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is None:
        return [g["index"] for g in smi]
    ids = [d.strip() for d in cvd.split(",") if d.strip()]
    return [] if ids[:1] == ["-1"] else ids


def visible_gpus(spec: str, env: dict | None = None, smi: list[dict] | None = None) -> list[Gpu]:
    """The workers' GPUs. spec 'auto': CUDA_VISIBLE_DEVICES when set, else every GPU nvidia-smi
    lists; 'none': one worker, environment untouched; else a comma list of device ids (taken as
    given). [] when 'auto' or 'none' finds no GPU: there is nothing to run the binaries on."""
    env = os.environ if env is None else env
    smi = nvidia_smi_gpus() if smi is None else smi
    if spec in ("auto", "none"):
        ids = detected_gpu_ids(env, smi)
        if spec == "none" or not ids:
            return [Gpu(None, pin=False)] if ids else []
    else:
        ids = [d.strip() for d in spec.split(",") if d.strip()]
        if not ids:
            raise ValueError(f"--gpus {spec!r}: expected auto, none or a comma list of device ids")
    by_id = {g["index"]: g for g in smi} | {g["uuid"]: g for g in smi}
    gpus = [Gpu(i, by_id.get(i, {}).get("name", ""), by_id.get(i, {}).get("uuid", "")) for i in ids]
    if len(gpus) == 1 and spec == "auto":
        gpus[0].pin = False  # one GPU: the binaries run in the environment as it is
    return gpus


# ---- durations, order, shards, estimates ---------------------------------------------------

def summary_files(results: Path, device: str | None) -> list[Path]:
    if not device:
        return []
    d = Path(results) / device / "sweeps"
    return sorted(p for p in d.glob("*.json") if not p.name.startswith(".")) if d.is_dir() else []


def previous_durations(results: Path, device: str | None, tier: str) -> dict[str, float]:
    """Each experiment's wall time in the newest earlier sweep summary of this tier that ran it
    successfully (shard summaries included: each names the experiments it ran)."""
    durations: dict[str, float] = {}
    for path in summary_files(results, device):  # oldest first: a newer one wins
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("schema") != SCHEMA or doc.get("tier") != tier:
            continue
        for e in doc.get("experiments", []):
            if e.get("status") == "ok" and isinstance(e.get("wall_s"), (int, float)):
                durations[e["name"]] = float(e["wall_s"])
    return durations


def expected_durations(names: list[str], known: dict[str, float]) -> dict[str, float | None]:
    """Known durations; an experiment the previous sweep did not run gets their mean."""
    fill = sum(known.values()) / len(known) if known else None
    return {n: known.get(n, fill) for n in names}


def longest_first(names: list[str], expected: dict[str, float | None]) -> list[str]:
    return sorted(names, key=lambda n: (-(expected.get(n) or 0.0), n))


def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m:
        raise ValueError(f"--shard {text!r}: expected K/N (K counted from 0, e.g. 0/4)")
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1 or k >= n:
        raise ValueError(f"--shard {text!r}: K must be in 0..N-1 and N at least 1")
    return k, n


def shard_names(names: list[str], expected: dict[str, float | None], index: int, count: int) -> list[str]:
    """Shard `index` of `count` of the experiments: longest first, each to the shard with the least
    expected work so far (ties: the lower shard). Every task computes the same partition from the
    same names and summary; an unknown duration counts as 1 s, so without a summary the
    experiments are dealt out by count."""
    loads = [(0.0, s) for s in range(count)]
    mine = []
    for n in longest_first(names, expected):
        load, s = heapq.heappop(loads)
        if s == index:
            mine.append(n)
        heapq.heappush(loads, (load + (expected.get(n) or 1.0), s))
    return mine


def estimate_left(running: list[tuple[float, float]], queued: list[float], workers: int) -> float:
    """Seconds until the last worker is done: running = (expected, elapsed) per busy worker,
    queued = expected durations in the order they will be taken (each by the first free worker)."""
    free = [max(0.0, e - el) for e, el in running] + [0.0] * max(0, workers - len(running))
    heapq.heapify(free)
    for q in queued:
        heapq.heappush(free, heapq.heappop(free) + q)
    return max(free) if free else 0.0


def fmt_s(s: float) -> str:
    s = int(round(s))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


# ---- results files -------------------------------------------------------------------------

def count_configurations(doc: dict) -> dict[str, int]:
    """Passed / skipped / failed configurations of a Google Benchmark results file: a
    configuration is a run_name; any failed record fails it, else any skipped record skips it."""
    state: dict[str, str] = {}
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    for r in doc.get("benchmarks", []):
        key = r.get("run_name") or r.get("name", "")
        s = "passed"
        if r.get("error_occurred"):
            s = "skipped" if str(r.get("error_message", "")).startswith(SKIPPED_PREFIX) else "failed"
        if rank[s] >= rank[state.get(key, "passed")]:
            state[key] = s
    c = Counter(state.values())
    return {k: c.get(k, 0) for k in ("passed", "skipped", "failed")}


def written_files(log_text: str, cwd: Path) -> list[Path]:
    out = []
    for m in WRITTEN_RE.finditer(log_text):
        p = Path(m.group(1))
        out.append(p if p.is_absolute() else cwd / p)
    return out


# ---- running -------------------------------------------------------------------------------

@dataclass
class Outcome:
    name: str
    kind: str
    worker: int
    gpu: str | None
    gpu_name: str
    status: str = "ok"              # ok | failed | timeout | not_run
    rc: int | None = None
    wall_s: float = 0.0
    results: list[str] = field(default_factory=list)
    passed: int = 0
    skipped: int = 0
    failed: int = 0
    note: str = ""
    log: str = ""
    context: list[dict] = field(default_factory=list)  # the results files' contexts (not written out)


ACTIVE: set[subprocess.Popen] = set()  # running binaries, stopped if the sweep is interrupted
ACTIVE_LOCK = threading.Lock()


def kill_group(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_job(job: Job, worker: int, gpu: Gpu, env: dict, log_dir: Path, results: Path,
            deadline: float | None) -> Outcome:
    out = Outcome(job.name, job.kind, worker, gpu.visible, gpu.name)
    log = log_dir / f"{job.name}.log"
    out.log = str(log)
    timeout = None
    if deadline is not None:
        timeout = deadline - time.monotonic()
        if timeout <= MIN_START_S:
            out.status, out.note = "not_run", "out of time"
            return out
    child_env = dict(env)
    if gpu.pin:
        child_env["CUDA_VISIBLE_DEVICES"] = gpu.visible
    t0 = time.monotonic()
    with open(log, "w", encoding="utf-8") as f:
        proc = subprocess.Popen(job.argv, stdout=f, stderr=subprocess.STDOUT, env=child_env, cwd=REPO,
                                start_new_session=True)  # its own group: a timeout stops all it started
        with ACTIVE_LOCK:
            ACTIVE.add(proc)
        try:
            out.rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            out.rc = proc.returncode
            out.status, out.note = "timeout", f"stopped after {timeout:.0f} s: out of time"
        finally:
            with ACTIVE_LOCK:
                ACTIVE.discard(proc)
    out.wall_s = round(time.monotonic() - t0, 2)
    text = log.read_text(errors="replace")
    for p in written_files(text, REPO):
        try:
            doc = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            out.status, out.note = "failed", f"results file {p} unreadable: {e}"
            continue
        for k, v in count_configurations(doc).items():
            setattr(out, k, getattr(out, k) + v)
        out.context.append(doc.get("context", {}))
        try:
            out.results.append(str(p.resolve().relative_to(Path(results).resolve())))
        except ValueError:
            out.results.append(str(p))
    if out.status == "ok":
        if out.rc != 0:
            out.status = "failed"
            tail = [ln for ln in text.splitlines() if ln.strip()][-3:]
            out.note = f"exit status {out.rc}" + (": " + " | ".join(tail) if tail else "")
        elif not out.results:
            out.status, out.note = "failed", "no results file written"
    return out


class Sweep:
    """Workers (one per GPU) take experiments from one queue, longest first; the main thread
    prints progress with an estimate of the time left."""

    def __init__(self, jobs: list[Job], gpus: list[Gpu], expected: dict[str, float | None], env: dict,
                 log_dir: Path, results: Path, budget_s: float | None, stream=sys.stdout):
        self.jobs = {j.name: j for j in jobs}
        self.order = longest_first([j.name for j in jobs], expected)
        self.gpus, self.expected, self.env = gpus, expected, env
        self.log_dir, self.results, self.stream = log_dir, results, stream
        self.t0 = time.monotonic()
        self.deadline = None if budget_s is None else self.t0 + budget_s
        self.todo: queue.Queue = queue.Queue()
        for n in self.order:
            self.todo.put(n)
        self.events: queue.Queue = queue.Queue()
        self.running: dict[int, tuple[str, float]] = {}
        self.done: list[Outcome] = []

    def worker(self, w: int) -> None:
        while True:
            try:
                name = self.todo.get_nowait()
            except queue.Empty:
                return
            self.events.put(("start", w, name, time.monotonic()))
            try:
                o = run_job(self.jobs[name], w, self.gpus[w], self.env, self.log_dir, self.results, self.deadline)
            except Exception as e:  # a sweep problem (cannot start the binary, ...): reported, not fatal
                o = Outcome(name, self.jobs[name].kind, w, self.gpus[w].visible, self.gpus[w].name,
                            status="failed", note=f"{type(e).__name__}: {e}")
            self.events.put(("done", w, o, time.monotonic()))

    def estimate(self, now: float) -> float | None:
        """None without the previous sweep's durations: progress is then shown by count."""
        exp = self.expected.get
        if all(e is None for e in self.expected.values()):
            return None
        started = {n for n, _ in self.running.values()} | {o.name for o in self.done}
        queued = [exp(n) for n in self.order if n not in started]
        running = [(exp(n), now - t) for n, t in self.running.values()]
        if any(e is None for e in queued) or any(e is None for e, _ in running):
            return None
        return estimate_left(running, queued, len(self.gpus))

    def progress(self, now: float, head: str) -> None:
        left = self.estimate(now)
        n = len(self.order)
        tail = f"elapsed {fmt_s(now - self.t0)}"
        tail += f", about {fmt_s(left)} left" if left is not None else f", {n - len(self.done)} of {n} to go"
        print(f"[{len(self.done)}/{n}] {head} | {tail}", file=self.stream, flush=True)

    def where(self, w: int) -> str:
        g = self.gpus[w]
        return f" on GPU {g.visible}" if g.pin else ""

    def run(self) -> list[Outcome]:
        threads = [threading.Thread(target=self.worker, args=(w,), daemon=True) for w in range(len(self.gpus))]
        for t in threads:
            t.start()
        while len(self.done) < len(self.order):
            try:
                ev = self.events.get(timeout=HEARTBEAT_S)
            except queue.Empty:
                now = time.monotonic()
                busy = ", ".join(f"{n} {fmt_s(now - t)}" for n, t in self.running.values())
                self.progress(now, f"running: {busy}")
                continue
            kind, w, payload, now = ev
            if kind == "start":
                self.running[w] = (payload, now)
                e = self.expected.get(payload)
                self.progress(now, f"{payload}{self.where(w)}: started"
                              + (f" (expected {fmt_s(e)})" if e is not None else ""))
            else:
                self.running.pop(w, None)
                o: Outcome = payload
                self.done.append(o)
                msg = f"{o.name}{self.where(w)}: {o.status} in {o.wall_s:.1f} s"
                if o.results:
                    msg += f" ({o.passed} passed, {o.skipped} skipped, {o.failed} failed)"
                if o.note:
                    msg += f"; {o.note}"
                if o.status != "ok":
                    msg += f"; log: {o.log}"
                self.progress(now, msg)
        for t in threads:
            t.join()
        return sorted(self.done, key=lambda o: self.order.index(o.name))


# ---- provenance and the summary ------------------------------------------------------------

def new_run_id(now: datetime | None = None) -> str:
    """The harness's run id format: <UTC stamp>-<8 hex random>."""
    return f"{utc_stamp(now)}-{secrets.token_hex(4)}"


def sweep_provenance(outcomes: list[Outcome]) -> tuple[str, str]:
    """The commit the binaries were built from (their results files' context), else this checkout's."""
    builds = Counter((c.get("schedlab_commit"), c.get("schedlab_dirty")) for o in outcomes if o.kind == "bench"
                     for c in o.context if c.get("schedlab_commit"))
    if builds:
        return builds.most_common(1)[0][0]
    return git_provenance(REPO)


def results_device(outcomes: list[Outcome], fallback: str | None) -> str:
    slugs = Counter(Path(r).parts[0] for o in outcomes for r in o.results if not Path(r).is_absolute())
    return slugs.most_common(1)[0][0] if slugs else (fallback or "unknown")


def write_summary(results: Path, device: str, stamp: str, commit: str, dirty: str,
                  shard: tuple[int, int] | None, data: dict) -> Path:
    """RESULTS/<device>/sweeps/<stamp>-<commit>[-dirty][-shard-K-of-N][-i].json, linked into place
    from a finished temporary file: never over an existing file, never half written."""
    d = Path(results) / device / "sweeps"
    d.mkdir(parents=True, exist_ok=True)
    stem = f"{stamp}-{commit[:10]}" + ("-dirty" if dirty == "true" else "")
    if shard:
        stem += f"-shard-{shard[0]}-of-{shard[1]}"
    tmp = d / f".{stem}.json.partial"
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    try:
        for i in itertools.count():
            path = d / (stem + (f"-{i}" if i else "") + ".json")
            try:
                os.link(tmp, path)
                return path
            except FileExistsError:
                continue
    finally:
        tmp.unlink()


def totals(experiments: list[dict]) -> dict[str, int]:
    t = {k: sum(e.get(k, 0) for e in experiments) for k in ("passed", "skipped", "failed")}
    t["experiments"] = len(experiments)
    t["experiments_failed"] = sum(e.get("status") in ("failed", "timeout") for e in experiments)
    t["experiments_not_run"] = sum(e.get("status") == "not_run" for e in experiments)
    return t


def sweep_failed(summary: dict) -> bool:
    t = summary["totals"]
    return bool(t["failed"] or t["experiments_failed"] or t["experiments_not_run"])


def build_summary(outcomes: list[Outcome], *, tier: str, run_id: str, started: datetime, wall_s: float,
                  gpus: list[Gpu], shard: tuple[int, int] | None, device: str, commit: str, dirty: str,
                  argv: list[str], log_dir: Path) -> dict:
    host = socket.gethostname()
    experiments = []
    for o in outcomes:
        e = {k: getattr(o, k) for k in ("name", "kind", "status", "rc", "wall_s", "passed", "skipped", "failed",
                                         "results", "worker", "gpu", "gpu_name", "note", "log")}
        e["log"] = Path(o.log).name if o.log else ""
        e["host"] = host
        if shard:
            e["shard"] = shard[0]
        experiments.append(e)
    return {
        "schema": SCHEMA, "tier": tier, "run_id": run_id, "device": device,
        "schedlab_commit": commit, "schedlab_dirty": dirty,
        "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"), "wall_s": round(wall_s, 2), "host": host,
        "shard": {"index": shard[0], "count": shard[1]} if shard else None,
        "gpus": [{"worker": w, "visible_device": g.visible, "name": g.name, "uuid": g.uuid,
                  "ran": [o.name for o in outcomes if o.worker == w and o.status != "not_run"]}
                 for w, g in enumerate(gpus)],
        "totals": totals(experiments), "experiments": experiments, "command": argv, "log_dir": str(log_dir),
    }


# ---- command line --------------------------------------------------------------------------

def summary_table(doc: dict) -> str:
    """A summary as a table: what ran where, how long, with what outcome."""
    rows = [f"sweep {doc['run_id']}: tier {doc['tier']}, {doc['device']}, commit {doc['schedlab_commit'][:10]}, "
            f"{len(doc.get('gpus', []))} GPU(s), {fmt_s(doc['wall_s'])} in all",
            f"{'experiment':<34} {'GPU':>5} {'wall':>8} {'passed':>7} {'skipped':>8} {'failed':>7}  status"]
    for e in sorted(doc["experiments"], key=lambda e: -e.get("wall_s", 0)):
        where = "-" if e.get("gpu") is None else str(e["gpu"])
        if e.get("shard") is not None:
            where = f"{e['shard']}:{where}"
        rows.append(f"{e['name']:<34} {where:>5} {e['wall_s']:>7.1f}s {e['passed']:>7} {e['skipped']:>8} "
                    f"{e['failed']:>7}  {e['status']}" + (f" ({e['note']})" if e.get("note") else ""))
    t = doc["totals"]
    rows.append(f"{'total':<34} {'':>5} {doc['wall_s']:>7.1f}s {t['passed']:>7} {t['skipped']:>8} {t['failed']:>7}")
    return "\n".join(rows)


def interrupted(signum, frame):
    raise KeyboardInterrupt


def parse_args(argv: list[str]) -> argparse.Namespace:
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=REPO / "build" / "cuda",
                    help="build folder (CMake layout) or a flat folder of bench_* binaries")
    ap.add_argument("--results", type=Path, default=REPO / "results", help="results root")
    ap.add_argument("--durations-from", type=Path,
                    help="results root whose sweep summaries give the expected durations (default: --results)")
    ap.add_argument("--tier", choices=TIERS, default="default")
    ap.add_argument("--gpus", default="auto", help="auto (default), none, or a comma list of device ids")
    ap.add_argument("--shard", help="K/N: run shard K (from 0) of N of the experiments")
    ap.add_argument("--only", metavar="NAMES",
                    help="run only these experiments: a comma list of experiment names or globs, matched "
                         "against the experiment (decode_kv_streaming, 'decode_*') and the binary (bench_decode_*)")
    ap.add_argument("--peers", choices=("auto", "yes", "no"), default="auto",
                    help="SDPA peers: auto = where a GPU and torch exist")
    ap.add_argument("--budget-s", type=float, help="stop starting binaries and stop running ones after this")
    ap.add_argument("--device", help="device slug of the previous summaries (default: from nvidia-smi)")
    ap.add_argument("--log-dir", type=Path, help="default: BUILD/sweep-logs/RUN_ID")
    ap.add_argument("--show", type=Path, metavar="SUMMARY", help="print a sweep summary as a table and exit")
    args = ap.parse_args(argv)
    args.extra = extra
    return args


def show(path: Path) -> int:
    try:
        doc = json.loads(path.read_text())
        print(summary_table(doc))
    except FileNotFoundError:
        print(f"sweep: --show {path}: no such file", file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        print(f"sweep: --show {path}: not a sweep summary ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    return 0


def fail(message: str) -> int:
    print(f"sweep: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.show:
        return show(args.show)
    try:
        shard = parse_shard(args.shard) if args.shard else None
        smi = nvidia_smi_gpus()
        gpus = visible_gpus(args.gpus, smi=smi)
    except ValueError as e:
        return fail(str(e))
    if not args.build.is_dir():
        return fail(f"build folder {args.build} not found (build first: cmake --preset cuda && "
                    f"cmake --build build/cuda -j)")
    if args.durations_from and not args.durations_from.is_dir():
        return fail(f"--durations-from {args.durations_from}: no such folder")
    benches = discover_benches(args.build)
    if not benches:
        return fail(f"no benchmark binaries in {args.build} (BUILD/experiments/*/bench_*, BUILD/kernels/bench_naive "
                    "or BUILD/bench_*)")
    peers = args.peers == "yes" or (args.peers == "auto" and bool(gpus) and torch_available()
                                    and PEERS_SCRIPT.is_file())
    results = args.results.resolve()
    jobs = make_jobs(benches, results, args.tier, args.extra, peers)
    if args.only:
        try:
            jobs = select_jobs(jobs, args.only)
        except SelectionError as e:
            return fail(str(e))
    if not gpus:  # after the arguments' errors: those are worth fixing first
        return fail("no GPU found: nvidia-smi lists none and CUDA_VISIBLE_DEVICES names none; nothing run, "
                    "nothing written (run on a machine with a GPU, or name its devices with --gpus 0,1)")

    lookup_device = args.device or (device_slug(gpus[0].name) if gpus[0].name else None)
    known = previous_durations(args.durations_from or results, lookup_device, args.tier)
    expected = expected_durations([j.name for j in jobs], known)
    if shard:
        mine = set(shard_names([j.name for j in jobs], expected, *shard))
        jobs = [j for j in jobs if j.name in mine]

    run_id = os.environ.get("SCHEDLAB_RUN_ID") or new_run_id()
    env = dict(os.environ, SCHEDLAB_RUN_ID=run_id)
    log_dir = (args.log_dir or (args.build / "sweep-logs" / run_id)).resolve()
    if shard:
        log_dir = log_dir / f"shard-{shard[0]}-of-{shard[1]}"
    log_dir.mkdir(parents=True, exist_ok=True)
    started = datetime.now(timezone.utc)
    where = ", ".join(f"GPU {g.visible}" + (f" ({g.name})" if g.name else "") for g in gpus if g.visible) \
        or (gpus[0].name or "the GPUs of the environment as it is")
    print(f"sweep: tier {args.tier}, run {run_id}, {len(jobs)} experiments"
          + (f" (shard {shard[0]} of {shard[1]})" if shard else "") + f"; {where}; "
          + (f"durations from the previous {args.tier} sweep" if known else "no previous sweep of this tier: "
             "progress by count") + f"; logs in {log_dir}", flush=True)
    if not jobs:
        print("sweep: this shard has no experiments", flush=True)
    t0 = time.monotonic()
    signal.signal(signal.SIGTERM, interrupted)  # scancel, timeout: stop the binaries too
    try:
        outcomes = Sweep(jobs, gpus, expected, env, log_dir, results, args.budget_s).run() if jobs else []
    except KeyboardInterrupt:
        with ACTIVE_LOCK:
            running = list(ACTIVE)
        for proc in running:
            kill_group(proc)
        print("sweep: interrupted; running binaries stopped; no summary written", file=sys.stderr)
        return 130
    wall = time.monotonic() - t0
    commit, dirty = sweep_provenance(outcomes)
    device = results_device(outcomes, lookup_device)
    summary = build_summary(outcomes, tier=args.tier, run_id=run_id, started=started, wall_s=wall, gpus=gpus,
                            shard=shard, device=device, commit=commit, dirty=dirty,
                            argv=[Path(sys.argv[0]).name, *argv], log_dir=log_dir)
    path = write_summary(results, device, utc_stamp(started), commit, dirty, shard, summary)
    print(summary_table(summary), flush=True)
    t = summary["totals"]
    print(f"sweep: done in {fmt_s(wall)}: {t['passed']} passed, {t['skipped']} skipped, {t['failed']} failed "
          f"configurations; {t['experiments_failed']} experiments failed, {t['experiments_not_run']} not run; "
          f"summary {path}", flush=True)
    for e in summary["experiments"]:
        if e["status"] != "ok" or e["failed"]:
            print(f"  {e['name']}: {e['status']}, {e['failed']} failed configurations"
                  + (f"; {e['note']}" if e["note"] else "") + f" (log {log_dir / e['log']})", flush=True)
    return 1 if sweep_failed(summary) else 0


if __name__ == "__main__":
    sys.exit(main())
