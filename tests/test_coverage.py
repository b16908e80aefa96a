"""Every primitive discharges every obligation traxla has implemented so far."""
from traxla.cli.rule_coverage import REQUIRED, coverage, coverage_table


def test_every_primitive_has_typing_lowering_and_batching_rules():
    missing = {name: [reg for reg, ok in row.items() if not ok and reg in REQUIRED]
               for name, row in coverage().items()}
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"primitives with missing rules: {missing}"


def test_coverage_table_lists_totals():
    table = coverage_table()
    assert "primitives;" in table.splitlines()[-2]
    assert "batching:" in table and "jvp:" in table and "transpose:" in table
