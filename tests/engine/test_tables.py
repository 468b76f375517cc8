"""The table printer of the command line tools (engine/tools/tables.py), on its own; the CLI
tests read whole tables printed by `groups` and `transactions`."""
from engine.tools.tables import format_table


def test_columns_are_as_wide_as_their_widest_cell_and_none_prints_as_a_dash():
    assert format_table(("A", "LONGER"), [("x", None), ("wide-value", 1)]).splitlines() == [
        "A          LONGER", "x          -", "wide-value 1"]


def test_a_table_without_rows_is_its_header():
    assert format_table(("TransactionalId", "Coordinator"), []) == "TransactionalId Coordinator"
