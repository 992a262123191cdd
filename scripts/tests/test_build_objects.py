"""scripts/nvcc_resource_log.py (the kernel libraries' compiler launcher) and
scripts/build_objects.py (the static report's sm_90a rows read from the build's objects): the
launcher with a stand-in compiler, freshness on files, and with nvcc the report's rows from an
object against its rows from a compile."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import build_objects
import compile_cache
import resource_report as rr

SCRIPTS = Path(__file__).resolve().parent.parent
ROOT = SCRIPTS.parent
LAUNCHER = SCRIPTS / "nvcc_resource_log.py"
TOY = SCRIPTS / "tests" / "fixtures" / "toy_two_stage.cu"

PTXAS_LINES = ("ptxas info    : Compiling entry function '_Z1kv' for 'sm_90a'\n"
               "ptxas info    : Function properties for _Z1kv\n"
               "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
               "ptxas info    : Used 12 registers, used 0 barriers\n")


def stand_in_compiler(folder: Path, exit_status: int = 0) -> Path:
    """A 'compiler' that writes -o and -MF, prints a warning and, when told --resource-usage,
    ptxas's lines, then exits with `exit_status`."""
    tool = folder / "fake_nvcc.py"
    tool.write_text(textwrap.dedent(f"""\
        import sys
        args = sys.argv[1:]
        out, dep = args[args.index("-o") + 1], args[args.index("-MF") + 1]
        open(out, "w").write("object")
        open(dep, "w").write(out + ": " + args[args.index("-c") + 1] + "\\n")
        print("warning: a diagnostic the user must see", file=sys.stderr)
        if "--resource-usage" in args:
            sys.stdout.write({PTXAS_LINES!r})
        sys.exit({exit_status})
        """))
    return tool


def launch(tmp_path: Path, exit_status: int = 0) -> tuple[subprocess.CompletedProcess, Path]:
    source = tmp_path / "k.cu"
    source.write_text("// a kernel\n")
    obj = tmp_path / "k.cu.o"
    cmd = [sys.executable, str(LAUNCHER), sys.executable, str(stand_in_compiler(tmp_path, exit_status)),
           "-MD", "-MT", str(obj), "-MF", f"{obj}.d", "-c", str(source), "-o", str(obj)]
    return subprocess.run(cmd, capture_output=True, text=True), obj


def test_launcher_keeps_ptxas_lines_and_inputs_and_passes_the_rest_through(tmp_path):
    proc, obj = launch(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Path(f"{obj}.ptxas.log").read_text() == PTXAS_LINES
    assert "warning: a diagnostic the user must see" in proc.stderr and "ptxas info" not in proc.stderr
    assert build_objects.read_dependency_inputs(obj) == [tmp_path / "k.cu"]
    assert build_objects.staleness(obj) is None


def test_launcher_keeps_nothing_of_a_failed_compile(tmp_path):
    launch(tmp_path)  # a successful compile first: its files must not outlive the failed one
    proc, obj = launch(tmp_path, exit_status=3)
    assert proc.returncode == 3 and "a diagnostic the user must see" in proc.stderr
    assert not Path(f"{obj}.ptxas.log").exists() and not Path(f"{obj}.deps").exists()
    assert "was not written by the object's compile" in build_objects.staleness(obj)


def test_launcher_runs_a_command_without_an_object_unchanged(tmp_path):
    proc = subprocess.run([sys.executable, str(LAUNCHER), sys.executable, "-c", "print('as it is')"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "as it is\n"


def test_an_input_changed_after_the_build_makes_the_object_stale(tmp_path):
    _, obj = launch(tmp_path)
    later = os.stat(obj).st_mtime_ns + 10**9
    os.utime(tmp_path / "k.cu", ns=(later, later))
    assert build_objects.staleness(obj) == f"{tmp_path / 'k.cu'} changed after k.cu.o was built"
    os.utime(tmp_path / "k.cu", ns=(later - 2 * 10**9,) * 2)
    assert build_objects.staleness(obj) is None
    os.utime(obj, ns=(later, later))  # rebuilt without the launcher: its log is older
    assert "k.cu.o.ptxas.log was not written by the object's compile" in build_objects.staleness(obj)
    assert "is not built" in build_objects.staleness(tmp_path / "missing.cu.o")


def test_mapping_takes_the_object_named_after_the_source(tmp_path):
    mapping = tmp_path / build_objects.MAPPING_NAME
    mapping.write_text(f"{tmp_path}/a/kernels.cu|{tmp_path}/lib.dir/./other.cu.o;{tmp_path}/lib.dir/./kernels.cu.o\n"
                       f"{tmp_path}/b/kernels.cu|{tmp_path}/lib.dir/other.cu.o\n"
                       "not a line of the map\n")
    assert build_objects.read_mapping(mapping) == {
        (tmp_path / "a" / "kernels.cu").resolve(): Path(f"{tmp_path}/lib.dir/./kernels.cu.o")}


def stand_in_cuobjdump(folder: Path) -> Path:
    """A 'cuobjdump' for -ptx, -xelf all (the object's bytes as one cubin) and -sass (a listing
    of the cubin's bytes), which counts its -sass runs in sass_runs.txt."""
    tool = folder / "fake_cuobjdump"
    tool.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        from pathlib import Path
        flag, path = sys.argv[1], sys.argv[-1]
        if flag == "-ptx":
            print("// ptx")
        elif flag == "-xelf":
            Path("k.sm_90a.cubin").write_bytes(Path(path).read_bytes())
        elif flag == "-sass":
            runs = Path({str(folder / "sass_runs.txt")!r})
            runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
            print("SASS of", Path(path).read_text())
        """))
    tool.chmod(0o755)
    return tool


def test_a_cubins_listing_is_dumped_once_and_again_when_its_bytes_change(tmp_path):
    tool, obj = stand_in_cuobjdump(tmp_path), tmp_path / "k.cu.o"
    cache = compile_cache.CompileCache(tmp_path / "cache")
    listings = []
    for text in ("code A", "code A", "code B"):
        obj.write_text(text)
        sass = tmp_path / f"k{len(listings)}.sass"
        runs = build_objects.extract(obj, str(tool), tmp_path / "k.ptx", tmp_path / "k.cubin", sass, cache=cache,
                                     nvdisasm=str(tool))
        assert all(proc.returncode == 0 for _, proc in runs)
        listings.append(sass.read_text())
    assert listings == ["SASS of code A\n", "SASS of code A\n", "SASS of code B\n"]
    assert (tmp_path / "sass_runs.txt").read_text() == "xx"  # the second object's listing came from the cache
    build_objects.extract(obj, str(tool), tmp_path / "k.ptx", tmp_path / "k.cubin", tmp_path / "k.sass")
    assert (tmp_path / "sass_runs.txt").read_text() == "xxx"  # no cache: dumped


HAVE_SASS = rr.find_cuda_tool("nvcc") is not None and rr.find_cuda_tool("cuobjdump") is not None


@pytest.mark.skipif(not HAVE_SASS, reason="nvcc and cuobjdump are not installed")
def test_report_rows_from_a_built_object_are_those_of_a_compile(tmp_path):
    source = tmp_path / "toy_two_stage.cu"
    shutil.copyfile(TOY, source)
    obj = tmp_path / "lib.dir" / "toy_two_stage.cu.o"
    obj.parent.mkdir()
    nvcc = rr.find_cuda_tool("nvcc")
    build = subprocess.run([sys.executable, str(LAUNCHER), nvcc, "-O3", "-DNDEBUG", "-std=c++20", "-lineinfo",
                            "--expt-relaxed-constexpr", "--generate-code=arch=compute_90a,code=[compute_90a,sm_90a]",
                            f"-I{ROOT}", "-MD", "-MT", str(obj), "-MF", f"{obj}.d", "-x", "cu", "-c", str(source),
                            "-o", str(obj)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    mapping = tmp_path / build_objects.MAPPING_NAME
    mapping.write_text(f"{source}|{obj}\n")

    def report(out: str, *extra: str) -> tuple[subprocess.CompletedProcess, list]:
        proc = subprocess.run([sys.executable, str(SCRIPTS / "resource_report.py"), "--no-compile-cache",
                               "--root", str(ROOT), "--out", str(tmp_path / out), "--targets", "sm_90a",
                               "--require", "sm_90a", "--require-sass", *extra, f"toy_report|{source}"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc, json.loads((tmp_path / out / "resources.json").read_text())

    from_object, rows = report("from_object", "--build-objects", str(mapping))
    assert "read from the build's object" in from_object.stdout
    compiled, compiled_rows = report("compiled", "--build-objects", "none")
    assert "read from the build's object" not in compiled.stdout
    assert rows == compiled_rows and len(rows) == 3
    sass = Path("isa") / "_external" / "toy_two_stage.sm_90a.sass"
    assert (tmp_path / "from_object" / sass).read_text() == (tmp_path / "compiled" / sass).read_text()
    provenance = json.loads((tmp_path / "from_object" / "provenance.json").read_text())
    assert provenance["read_from_build_objects"] == [f"{source} sm_90a"]

    later = os.stat(obj).st_mtime_ns + 10**9
    os.utime(source, ns=(later, later))  # an edit after the build: the report compiles
    stale, stale_rows = report("stale", "--build-objects", str(mapping))
    assert "read from the build's object" not in stale.stdout and stale_rows == compiled_rows
    log = (tmp_path / "stale" / "isa" / "_external" / "toy_two_stage.sm_90a.log").read_text()
    assert "the build's object is not used" in log and "changed after toy_two_stage.cu.o was built" in log
