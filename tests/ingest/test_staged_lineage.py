"""Every staged raw table carries its file's lineage: an incremental build deletes a file's rows by it."""
from flows.load import STAGED_TABLES, _schema


def test_every_staged_table_carries_source_name_and_file_sha256():
    missing = {t: {"source_name", "file_sha256"} - set(_schema(t)) for t in STAGED_TABLES}
    assert {t: m for t, m in missing.items() if m} == {}
