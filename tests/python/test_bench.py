"""``lockstep bench``: the ladder runs and reports every rung it measured."""

import csv

from lockstep import bench


def test_quick_ladder_measures_and_reports_every_rung(tmp_path, capsys):
    rows = bench.run(quick=True)
    rungs = [r.rung for r in rows]
    assert rungs[:5] == ["pure Python loop", "NumPy", "emulator naive", "emulator tiled_static", "emulator tiled_dynamic"]
    assert all(r.seconds > 0 and r.gflops > 0 for r in rows)
    # The interpreted loop is far behind NumPy on any machine.
    assert rows[0].fraction_of_reference < 0.1
    bench.report(rows, tmp_path)
    table = capsys.readouterr().out
    assert all(f"| {rung} |" in table for rung in rungs)
    with open(tmp_path / "ladder.csv") as f:
        assert [row["rung"] for row in csv.DictReader(f)] == rungs
