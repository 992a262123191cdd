"""ingest_device_results: an archive ingested again is not an error, a changed file is."""
import gzip
import json
import tarfile
from pathlib import Path

import pytest

import ingest_device_results as ingest


def _archive(tmp_path: Path, name: str, real_time: float) -> Path:
    stage = tmp_path / f"stage_{name}"
    f = stage / "results" / "h200" / "toy_experiment" / "20260101T000000Z-abcdef1234.json"
    f.parent.mkdir(parents=True)
    f.write_text(json.dumps({"context": {"schedlab_commit": "abcdef1234"},
                             "benchmarks": [{"run_name": "toy/a", "aggregate_name": "median", "real_time": real_time}]}))
    tgz = tmp_path / f"{name}.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(stage, arcname=".")
    return tgz


def test_same_archive_twice_is_fine(tmp_path):
    results = tmp_path / "results"
    tgz = _archive(tmp_path, "a", 1.0)
    assert ingest.main([str(tgz), "--results", str(results)]) == 0
    assert ingest.main([str(tgz), "--results", str(results)]) == 0
    stored = list((results / "h200" / "toy_experiment").glob("*"))
    assert [p.name for p in stored] == ["20260101T000000Z-abcdef1234.json.gz"]  # stored compressed


def test_a_changed_file_is_never_written_over(tmp_path):
    results = tmp_path / "results"
    assert ingest.main([str(_archive(tmp_path, "a", 1.0)), "--results", str(results)]) == 0
    with pytest.raises(SystemExit, match="differs"):
        ingest.main([str(_archive(tmp_path, "b", 2.0)), "--results", str(results)])
    kept = json.loads(gzip.decompress(next((results / "h200" / "toy_experiment").glob("*.json.gz")).read_bytes()))
    assert kept["benchmarks"][0]["real_time"] == 1.0


def test_sweep_summary_is_kept(tmp_path):
    tgz = _archive(tmp_path, "a", 1.0)
    with tarfile.open(tgz, "r:gz") as tar:
        tar.extractall(tmp_path / "re")
    summary = tmp_path / "re" / "results" / "h200" / "sweeps" / "20260101T000000Z-abcdef1234.json"
    summary.parent.mkdir(parents=True)
    summary.write_text(json.dumps({"schema": "schedlab-sweep/1", "tier": "default", "experiments": []}))
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(tmp_path / "re", arcname=".")
    results = tmp_path / "results"
    assert ingest.main([str(tgz), "--results", str(results)]) == 0
    assert (results / "h200" / "sweeps" / summary.name).read_bytes() == summary.read_bytes()
    assert ingest.main([str(tgz), "--results", str(results)]) == 0


def test_a_seed_sweep_is_kept_and_one_without_records_is_not(tmp_path):
    tgz = _archive(tmp_path, "a", 1.0)
    with tarfile.open(tgz, "r:gz") as tar:
        tar.extractall(tmp_path / "re")
    sweep_dir = tmp_path / "re" / "results" / "h200" / "seed_sweep"
    sweep_dir.mkdir(parents=True)
    sweep = sweep_dir / "20260101T000000Z-abcdef1234.json"
    sweep.write_text(json.dumps({"context": {"schedlab_commit": "abcdef1234", "device": "NVIDIA H200"},
                                 "records": [{"variant": "token_balanced_exact_max", "worst_row_rel_err": 0.005}]}))
    (sweep_dir / "20260101T000001Z-abcdef1234.json").write_text(json.dumps({"context": {}, "records": []}))
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(tmp_path / "re", arcname=".")
    results = tmp_path / "results"
    assert ingest.main([str(tgz), "--results", str(results)]) == 0
    kept = sorted((results / "h200" / "seed_sweep").glob("*"))
    assert [p.name for p in kept] == [sweep.name + ".gz"]
    assert gzip.decompress(kept[0].read_bytes()) == sweep.read_bytes()
    assert ingest.main([str(tgz), "--results", str(results)]) == 0


def test_an_older_builds_files_are_kept_beside_the_experiments(tmp_path):
    tgz = _archive(tmp_path, "a", 1.0)
    with tarfile.open(tgz, "r:gz") as tar:
        tar.extractall(tmp_path / "re")
    older = tmp_path / "re" / "results" / "h200" / "builds" / "toy_experiment" / "20260101T000001Z-0123456789.json"
    older.parent.mkdir(parents=True)
    older.write_text(json.dumps({"benchmarks": [{"run_name": "toy/a", "aggregate_name": "median", "real_time": 2.0}]}))
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(tmp_path / "re", arcname=".")
    results = tmp_path / "results"
    assert ingest.main([str(tgz), "--results", str(results)]) == 0
    kept = results / "h200" / "builds" / "toy_experiment" / (older.name + ".gz")
    assert gzip.decompress(kept.read_bytes()) == older.read_bytes()
    assert [p.name for p in (results / "h200" / "toy_experiment").glob("*")] == ["20260101T000000Z-abcdef1234.json.gz"]
    assert ingest.main([str(tgz), "--results", str(results)]) == 0
