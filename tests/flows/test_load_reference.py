"""Reference CSVs load into ref.* without losing what they say (flows/load.py, load_reference)."""
import csv
from decimal import Decimal, InvalidOperation

import duckdb

from flows.load import is_version_column, load_reference
from provider_eval.paths import REFERENCE_DIR


def _as_number(text: str):
    """The number a cell denotes ('1.0' and '1' are one number), or the text itself."""
    try:
        return Decimal(text).normalize()
    except InvalidOperation:
        return text


def test_version_columns_stay_text_and_no_column_merges_values():
    con = duckdb.connect()
    names = load_reference(con, REFERENCE_DIR)
    assert "pytorch_rocm_wheels" in names and "rocm_pytorch_versions" in names
    version_columns = 0
    for name in names:
        with (REFERENCE_DIR / f"{name}.csv").open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        for column, dtype in con.execute(f'select column_name, column_type from (describe ref."{name}")').fetchall():
            texts = {r[column] for r in rows if r[column] != ""}
            if is_version_column(column):
                # Sniffed as a number, '2.10' would read 2.1: PyTorch 2.10's wheels then passed for 2.1's.
                version_columns += 1
                assert dtype == "VARCHAR", f"{name}.csv column {column} loaded as {dtype}"
                stored = {v for (v,) in con.execute(f'select distinct "{column}" from ref."{name}" where "{column}" is not null').fetchall()}
                assert stored == texts, f"{name}.csv column {column}"
            else:
                distinct = len({_as_number(t) for t in texts}) if dtype != "VARCHAR" else len(texts)
                stored = con.execute(f'select count(distinct "{column}") from ref."{name}"').fetchone()[0]
                assert stored == distinct, f"{name}.csv column {column} ({dtype}): {distinct} distinct values became {stored}"
    assert version_columns >= 10
    assert ("2.10",) in con.execute("select torch_major_minor from ref.pytorch_rocm_wheels").fetchall()
