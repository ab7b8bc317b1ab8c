"""Every column of every public table is documented in docs/warehouse.md."""
import re

from flows.refresh import PUBLIC_TABLES
from provider_eval.paths import PROJECT_ROOT
from tests.conftest import query


def documented_columns() -> dict[str, set[str]]:
    """Columns named in each table's section (`col` or `a`, `b` in the first cell of a row)."""
    sections = re.split(r"^### ", (PROJECT_ROOT / "docs" / "warehouse.md").read_text(), flags=re.M)[1:]
    docs = {}
    for section in sections:
        name, body = section.split("\n", 1)
        cells = [line.split("|")[1] for line in body.splitlines() if line.startswith("| `")]
        docs[name.strip()] = {c for cell in cells for c in re.findall(r"`([a-z0-9_]+)`", cell)}
    return docs


def test_every_public_column_is_documented(sample_warehouse):
    docs = documented_columns()
    for table in PUBLIC_TABLES:
        columns = {r[0] for r in query(sample_warehouse, f'describe "{table}"')}
        assert table in docs, f"docs/warehouse.md has no section for {table}"
        assert columns - docs[table] == set(), f"{table}: undocumented columns"
