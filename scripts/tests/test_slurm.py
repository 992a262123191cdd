"""scripts/slurm/sweep.sbatch under a real Slurm: a one-node cluster (munged, slurmctld and slurmd
from Debian's packages, which scripts/setup.sh installs) started in a temporary folder, a job
array of the sweep over the stand-in binaries of tests/fake_bench.py, then merge_results.py.

The node offers two GPUs as generic resources whose device files are stand-ins made here, so
Slurm schedules the script's --gres=gpu:1 as it would on a GPU node and sets each task's
CUDA_VISIBLE_DEVICES, which is the GPU the sweep sees. Without systemd or cgroups: processes are
tracked through /proc (proctrack/linuxproc) and tasks are not bound (task/none). Every daemon
runs in the foreground as a child of this test and is stopped by its pid, even when the test
fails. Where the daemons cannot start (packages missing, not root, no free port, a daemon that
does not come up) the test is skipped, and the reason is printed."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import merge_results
import sweep
from fake_bench import BENCHES, binary_name, fake_build, fake_gpu_env, read, results_files

REPO = Path(__file__).resolve().parents[2]
SBATCH = REPO / "scripts" / "slurm" / "sweep.sbatch"
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "scontrol", "sinfo", "scancel")
PACKAGES = "munge slurmctld slurmd slurm-client"
GPUS = 2            # generic GPUs of the node; each array task takes one (the script's --gres=gpu:1)
START_S = 30        # for each daemon to come up
JOB_S = 120         # for the whole array to finish
FINAL_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL",
                "DEADLINE", "PREEMPTED"}
TASKS = 3  # five experiments over three tasks on two GPUs: the third task waits for a free GPU


class CannotStart(Exception):
    """The cluster cannot run here; the test is skipped with this reason."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@dataclass
class Cluster:
    root: Path                     # conf, state, logs, the munge socket
    env: dict                      # SLURM_CONF set: for the daemons and the client commands
    node: str
    daemons: list[tuple[str, subprocess.Popen]] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)

    def run(self, *argv: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(argv, env=kw.pop("env", self.env), capture_output=True, text=True, timeout=30, **kw)

    def start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = open(self.root / f"{name}.out", "w")
        proc = subprocess.Popen(argv, env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)  # not in the way of a Ctrl-C to pytest
        log.close()
        self.daemons.append((name, proc))
        return proc

    def wait_for(self, name: str, ready, what: str) -> None:
        """Until ready() or the daemon exits or START_S pass; CannotStart with its log."""
        proc = dict(self.daemons)[name]
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if ready():
                return
            if proc.poll() is not None:
                break
            time.sleep(0.2)
        state = f"exited with status {proc.returncode}" if proc.poll() is not None else f"not {what} in {START_S} s"
        log = self.root / f"{name}.log"  # its log file; what it printed before it had one
        raise CannotStart(f"{name} {state}; its log:\n{log_tail(log if log.exists() else self.root / f'{name}.out')}")

    def job_tasks(self, job: str) -> dict[int, dict[str, str]]:
        """Array task id -> scontrol's fields of that task (JobState, ExitCode, Reason, ...). The
        tasks still pending share one record, its ArrayTaskId a list of ranges (1-2, 4,6%2)."""
        out = self.run("scontrol", "show", "job", "--oneliner", job)
        tasks = {}
        for line in out.stdout.splitlines():
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            for part in fields.get("ArrayTaskId", "").split("%")[0].split(","):
                first, _, last = part.partition("-")
                if first.isdigit():
                    tasks.update({k: fields for k in range(int(first), int(last or first) + 1)})
        return tasks

    def stop(self) -> None:
        """Cancels what is still queued or running, then stops every daemon by its pid, newest first."""
        for job in self.jobs:
            self.run("scancel", job)
        deadline = time.monotonic() + 10
        while self.jobs and time.monotonic() < deadline and any(
                t["JobState"] not in FINAL_STATES for job in self.jobs for t in self.job_tasks(job).values()):
            time.sleep(0.2)
        for _, proc in reversed(self.daemons):
            for sig, wait_s in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
                if proc.poll() is not None:
                    break
                proc.send_signal(sig)
                try:
                    proc.wait(timeout=wait_s)
                except subprocess.TimeoutExpired:
                    continue


def node_line(env: dict) -> tuple[str, str]:
    """(node name, its hardware as slurm.conf spells it), from `slurmd -C` on this host."""
    out = subprocess.run(["slurmd", "-C"], env=env, capture_output=True, text=True, timeout=30)
    first = out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else ""
    m = re.match(r"NodeName=(\S+)\s+(.*)", first)
    if not m:
        raise CannotStart(f"slurmd -C gave no node line: {out.stdout}{out.stderr}")
    return m.group(1), m.group(2)


def write_config(root: Path, node: str, hardware: str) -> Path:
    for d in ("state", "spool"):
        (root / d).mkdir()
    gpus = []
    for i in range(GPUS):  # device files for the generic GPUs: slurmd wants character devices
        dev = root / f"gpu{i}"
        try:
            os.mknod(dev, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # the numbers of /dev/null
        except OSError as e:
            raise CannotStart(f"cannot make the stand-in GPU device {dev}: {e}") from e
        gpus.append(dev)
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    conf = root / "slurm.conf"
    conf.write_text(f"""\
ClusterName=schedlabtest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge.socket
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
KillWait=5
GresTypes=gpu
NodeName={node} NodeAddr=127.0.0.1 {hardware} Gres=gpu:{GPUS} State=UNKNOWN
PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP
""")
    (root / "gres.conf").write_text(f"NodeName={node} Name=gpu File={root}/gpu[0-{GPUS - 1}]\n")
    return conf


def start_cluster(cluster: Cluster) -> None:
    root = cluster.root
    cluster.start("munged", ["munged", "--foreground", "--force", f"--key-file={root}/munge.key",
                             f"--socket={root}/munge.socket", f"--pid-file={root}/munged.pid",
                             f"--log-file={root}/munged.log", f"--seed-file={root}/munged.seed"])
    cluster.wait_for("munged", lambda: (root / "munge.socket").exists(), "listening")
    cluster.start("slurmctld", ["slurmctld", "-D", "-f", cluster.env["SLURM_CONF"]])
    cluster.wait_for("slurmctld", lambda: "is UP" in cluster.run("scontrol", "ping").stdout, "answering")
    cluster.start("slurmd", ["slurmd", "-D", "-N", cluster.node, "-f", cluster.env["SLURM_CONF"]])
    cluster.wait_for("slurmd", lambda: cluster.run("sinfo", "-h", "-n", cluster.node, "-o", "%T").stdout.strip()
                     == "idle", "idle")


def skip(request, reason: str):
    """pytest -q does not show skip reasons: this one is written to the terminal as well, past
    pytest's capture of the test's output."""
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\n{request.node.nodeid}: skipped: {reason}")
    pytest.skip(reason)


@pytest.fixture
def cluster(request):
    missing = [b for b in (*DAEMONS, *CLIENTS) if shutil.which(b) is None]
    if missing:
        skip(request, f"Slurm or munge is not installed ({', '.join(missing)} missing; apt-get install "
                      f"{PACKAGES}, as scripts/setup.sh does)")
    if os.geteuid() != 0:
        skip(request, "the one-node Slurm runs its daemons as root (SlurmUser=root); this test is not root")
    # Not below pytest's own temporary folder: munged wants every user able to reach its socket's folder.
    root = Path(tempfile.mkdtemp(prefix="schedlab-slurm-"))
    root.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}  # not a job of another Slurm
    env["SLURM_CONF"] = str(root / "slurm.conf")
    c = None
    try:
        node, hardware = node_line(env)
        write_config(root, node, hardware)
        c = Cluster(root, env, node)
        start_cluster(c)
    except CannotStart as e:
        if c is not None:
            c.stop()
        shutil.rmtree(root, ignore_errors=True)
        skip(request, str(e))
    except BaseException:
        if c is not None:
            c.stop()
        shutil.rmtree(root, ignore_errors=True)
        raise
    yield c
    c.stop()
    shutil.rmtree(root, ignore_errors=True)


def wait_for_array(cluster: Cluster, job: str, tasks: int) -> dict[int, dict[str, str]]:
    deadline = time.monotonic() + JOB_S
    while True:
        state = cluster.job_tasks(job)
        if len(state) == tasks and all(t["JobState"] in FINAL_STATES for t in state.values()):
            return state
        if time.monotonic() > deadline:
            summary = {k: (t["JobState"], t.get("Reason")) for k, t in state.items()}
            pytest.fail(f"array {job} not done in {JOB_S} s: {summary}\nslurmctld:\n"
                        f"{log_tail(cluster.root / 'slurmctld.log')}\nslurmd:\n{log_tail(cluster.root / 'slurmd.log')}")
        time.sleep(0.3)


def test_sbatch_array_runs_a_shard_per_task_and_the_merge_gathers_them(cluster, tmp_path):
    build = fake_build(tmp_path, BENCHES)
    shards, logs = tmp_path / "shards", tmp_path / "logs"
    logs.mkdir()
    # The sbatch line a site would write: its own CPUs per task and output folder. The job
    # inherits this environment (sbatch --export=ALL); a failing nvidia-smi stands in for a host
    # without one, so the only GPU a task sees is the one Slurm gives it.
    env = fake_gpu_env(tmp_path, gpus=0) | cluster.env | {
        "SCHEDLAB_BUILD": str(build), "SCHEDLAB_SHARD_ROOT": str(shards), "PYTHON": sys.executable}
    sub = cluster.run("sbatch", "--parsable", f"--array=0-{TASKS - 1}", "--cpus-per-task=1",
                      f"--output={logs}/slurm-%A_%a.out", str(SBATCH), "--tier", "quick", "--peers", "no",
                      env=env, cwd=REPO)
    assert sub.returncode == 0, sub.stderr
    job = sub.stdout.strip().split(";")[0]
    cluster.jobs.append(job)
    tasks = wait_for_array(cluster, job, TASKS)

    outputs = {k: log_tail(logs / f"slurm-{job}_{k}.out", 40) for k in range(TASKS)}
    assert {k: (t["JobState"], t["ExitCode"]) for k, t in tasks.items()} == \
        {k: ("COMPLETED", "0:0") for k in range(TASKS)}, outputs
    trees = [shards / job / f"task-{k}" for k in range(TASKS)]
    names = sorted(map(binary_name, BENCHES))
    for k, tree in enumerate(trees):  # each task ran its shard, as sweep.py --shard K/N deals them
        summary = read(next((tree / "fake-gpu" / "sweeps").glob("*.json")))
        assert summary["shard"] == {"index": k, "count": TASKS}, outputs[k]
        assert sorted(e["name"] for e in summary["experiments"]) == sorted(sweep.shard_names(names, {}, k, TASKS))
        contexts = [read(f)["context"] for f in results_files(tree)]
        assert len(contexts) == len(summary["experiments"]) > 0
        assert {c["run_id"] for c in contexts} == {f"slurm-{job}"}
        # Slurm's GPU for the task (its gres), which the sweep, seeing one GPU, leaves as it is.
        assert {c["cuda_visible_devices"] for c in contexts} <= {str(i) for i in range(GPUS)}, outputs[k]
        assert f"sweep: tier quick, run slurm-{job}" in outputs[k]

    merged = tmp_path / "merged"
    assert merge_results.main(["--out", str(merged), *map(str, trees)]) == 0
    assert sorted(f.parent.name for f in results_files(merged)) == sorted(BENCHES)
    s = read(next((merged / "fake-gpu" / "sweeps").glob("*.json")))
    assert (s["run_id"], s["tier"], s["missing_shards"]) == (f"slurm-{job}", "quick", [])
    assert [sh["index"] for sh in s["shards"]] == list(range(TASKS))
    assert s["totals"] == {"passed": 6, "skipped": 2, "failed": 0, "experiments": 5, "experiments_failed": 0,
                           "experiments_not_run": 0}
    assert sorted(e["name"] for e in s["experiments"]) == names
