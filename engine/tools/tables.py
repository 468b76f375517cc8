"""The tables the command line tools print, in the shape of Kafka's own tools
(kafka-consumer-groups.sh, kafka-transactions.sh): a header row, then one row per line."""
from __future__ import annotations


def format_table(header: tuple[str, ...], rows: list[tuple]) -> str:
    """Left-aligned columns, each as wide as its widest cell, one space apart; None prints as "-"."""
    cells = [list(header)] + [["-" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return "\n".join(" ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in cells)
