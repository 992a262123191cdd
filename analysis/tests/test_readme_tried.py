"""The ``tried`` kind: each knob's verdict against its baseline in the committed run it names,
under the same rule and the same bootstrap as the ``experiment`` kind."""
from pathlib import Path

import pytest

from schedlab_analysis import readme, readme_tried

RUN = "results/h200/prefill_pingpong/20261126T041724Z-07795d304c.json.gz"
HEADER = "what,variant,baseline,run,shape,note\n"


def _csv(tmp_path: Path, *rows: str, header: str = HEADER) -> list[str]:
    path = tmp_path / "tried.csv"
    path.write_text(header + "".join(r + "\n" for r in rows), encoding="utf-8")
    return [str(path)]


@pytest.fixture(autouse=True)
def _committed():
    if not (readme.REPO / RUN).is_file():
        pytest.skip(f"{RUN} is not committed")


def test_the_change_and_verdict_are_those_of_the_experiment_kind():
    rows, view = readme_tried.compare("prefill_pingpong", "pingpong", "free_running", RUN)
    sp = view.speedups[view.speedups["variant"] == "pingpong"].set_index("config")
    assert len(rows) == len(sp) == 10
    for _, r in rows.iterrows():
        assert r["change"] == pytest.approx(sp.loc[r["config"], "change"])
        assert r["verdict"] == sp.loc[r["config"], "verdict"]


def test_a_row_renders_commit_run_and_counts(tmp_path):
    text = readme.render(["tried", "prefill_pingpong"],
                         _csv(tmp_path, f"two consumer warpgroups in turn,pingpong,free_running,{RUN},,kept"))
    row = [line for line in text.splitlines() if line.startswith("| two consumer")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "`pingpong` (`free_running`)"
    assert cells[2] == "`07795d304c`" and cells[3] == "`20261126T041521Z-a3441d1e`"
    # Four configurations faster, one slower, five within the band (the experiment section's counts).
    assert cells[4].startswith("faster at 4 of 10, slower at 1, no difference at 5; median +"), cells[4]
    assert cells[4].endswith("; band 1.0%") and " [-" in cells[4] and cells[5] == "kept"


def test_the_aa_control_is_no_difference_and_a_shape_limits_the_configurations(tmp_path):
    shape = "seq_len=512 head_dim=64 causal=0 bf16"
    text = readme.render(["tried", "prefill_pingpong"], _csv(
        tmp_path, f"the same kernel twice,free_running_aa,free_running,{RUN},,",
        f"at one shape,pingpong,free_running,{RUN},{shape},"))
    aa, one = [line for line in text.splitlines() if line.startswith("| the same") or line.startswith("| at one")]
    assert "| no difference at 10 of 10; median " in aa
    assert f"| faster at 1 of 1 ({shape}); median +" in one


@pytest.mark.parametrize("row,header,message", [
    ("knob,pingpong,free_running,{run},,", "what,variant,baseline,run\n", "header"),
    ("knob,pingpong,free_running,results/h200/prefill_pingpong/no_such.json.gz,,", HEADER, "does not exist"),
    ("knob,pingpong,free_running,experiments/prefill_pingpong/README.md,,", HEADER, "not a results file"),
    ("knob,pingpong,,{run},,", HEADER, "'baseline' is empty"),
    ("knob,pingpong,free_running,{run},,about 3.4% faster", HEADER, "states a figure"),
    ("a 1.15x knob,pingpong,free_running,{run},,", HEADER, "states a figure"),
    ("knob,no_such_variant,free_running,{run},,", HEADER, "no timed record of no_such_variant"),
    ("knob,pingpong,free_running,{run},seq_len=4096,", HEADER, "share no configuration"),
])
def test_bad_rows_are_refused(tmp_path, row, header, message):
    with pytest.raises(readme.ReadmeError, match=message):
        readme.render(["tried", "prefill_pingpong"], _csv(tmp_path, row.format(run=RUN), header=header))


def test_sizes_and_design_facts_are_not_figures():
    for words in ("64 KiB of shared memory", "head dim 128", "16 warps", "page 16", "seq 8192", "sm_90a", "exp2s", "fp8 e4m3"):
        assert not readme_tried.FIGURE.search(words), words
    for words in ("3.4%", "1.15x", "12 us", "4.2 TB/s", "700 TFLOP/s", "3 ms"):
        assert readme_tried.FIGURE.search(words), words
