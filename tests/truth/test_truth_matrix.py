"""The truth matrix's seeded subset (tests/truth/truth_expected.py): its scenarios run once,
at once, on the session's lab broker under every witness; each cell is a test. A cell
expected "ok" must agree with the broker's log, the records as Kafka decodes them and the
clients' callbacks, or say why it cannot know; a cell naming a defect disagrees today
(strict xfail: when the fix lands it passes, and the lead flips it to "ok")."""
from __future__ import annotations

import pytest
from truth_expected import DEFECTS, EXPECTED, OK, SUBSET, defects


def _params():
    for key, expected in sorted(EXPECTED.items()):
        if (key[0], key[1]) not in SUBSET:
            continue
        reason = "; ".join(f"{d}: {DEFECTS[d]}" for d in defects(expected))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if expected != OK else []
        yield pytest.param(key, id="/".join(key), marks=marks)


@pytest.fixture(scope="module")
def matrix(kafka, tmp_path_factory):
    from truth_run import run_matrix

    cells, runs = run_matrix(kafka, SUBSET, tmp_path_factory.mktemp("truth"), wave_size=len(SUBSET))
    return cells, runs


@pytest.mark.parametrize("cell", list(_params()))
def test_cell(matrix, cell):
    cells, runs = matrix
    got = cells.get(cell)
    assert got is not None, f"no cell {cell}: the witness told nothing of the scenario"
    assert got.verdict != "disagree", f"{'/'.join(cell)}: {got.text}"


def test_every_expected_cell_is_a_defect_or_ok():
    assert {d for v in EXPECTED.values() for d in defects(v)} <= set(DEFECTS)
    assert {(s, c) for s, c, _ in EXPECTED} <= set(SUBSET)


def test_every_scenario_ran_to_its_end(matrix):
    """A cell of a scenario whose clients never reached a step would judge another story."""
    _, runs = matrix
    assert not [(c.scenario, c.client, c.failure) for c in runs if c.failure]
