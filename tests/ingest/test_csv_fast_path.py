"""read_csv_rows' polars path gives exactly the csv module's frame, and steps aside whenever they could differ."""
from pathlib import Path

import pytest

from flows.ingest.adapters import csv_text
from flows.ingest.adapters.base import FileContext, FileRejected
from flows.ingest.adapters.quote_columns import OPTIONAL, REQUIRED

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures").rglob("*.csv"))
HEADER = "offer_id,gpu_model,gpus_per_node,price,price_unit,price_scope,billing_model,notes"
CASES = {
    "plain": f"{HEADER}\na,MI300X,8,2.0,hour,per_gpu,on_demand,x\n b ,MI300X, 8 ,\t2.5 ,hour,per_gpu,spot,\n",
    "blank lines and spaces": f"\n{HEADER}\n\na,MI300X,8,2,hour,per_gpu,on_demand, \n\n  ,,,,,,,\n",
    "ragged": f"{HEADER}\na,MI300X,8,2,hour,per_gpu,on_demand\nb,MI300X,8,2,hour,per_gpu,on_demand,n,extra\n",
    "quoted": f'{HEADER}\n"a,b",MI300X,8,2,hour,per_gpu,on_demand,"say ""hi"""\n',
    "crlf": f"{HEADER}\r\na,MI300X,8,2,hour,per_gpu,on_demand,x\r\n",
    "no-break space kept": f"{HEADER}\na,MI300X\u00a0,8,2,hour,per_gpu,on_demand,x\n",
    "header only": f"{HEADER}\n",
    "unknown column": "offer_id,colour\na,red\n",
    # polars pads short lines with nulls: the ',' count must send these to the csv module.
    "short row": f"{HEADER}\na,MI300X,8,2,hour,per_gpu,on_demand,x\nb,MI300X,8\n",
    "blank line at the end": f"{HEADER}\na,MI300X,8,2,hour,per_gpu,on_demand,x\n\n",
    "blank line inside": f"{HEADER}\na,MI300X,8,2,hour,per_gpu,on_demand,x\n\nb,MI300X,8,2,hour,per_gpu,spot,y\n",
    "whitespace line": f"{HEADER}\na,MI300X,8,2,hour,per_gpu,on_demand,x\n   \n",
    "no final newline": f"{HEADER}\na,MI300X,8,2,hour,per_gpu,on_demand,x",
    "short and long rows balance": f"{HEADER}\na,MI300X,8,2,hour,per_gpu,on_demand,x,y\nb,MI300X,8,2,hour,per_gpu,spot\n",
}


def _both(path: Path, monkeypatch):
    ctx = FileContext(path=path, source_name="s", original_name=path.name, file_sha256="0" * 64,
                      first_seen_at="2026-11-29T00:00:00+00:00", defaults={})

    def read():
        try:
            return csv_text.read_csv_rows(ctx, REQUIRED, OPTIONAL)
        except FileRejected as exc:
            return (exc.reason_code, exc.detail)
    fast = read()
    with monkeypatch.context() as m:
        m.setattr(csv_text, "_plain_rows", lambda *a: None)
        slow = read()
    return fast, slow


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_frame_either_way(name, tmp_path, monkeypatch):
    path = tmp_path / "q.csv"
    path.write_bytes(CASES[name].encode("utf-8"))
    fast, slow = _both(path, monkeypatch)
    assert fast == slow if isinstance(slow, tuple) else fast.equals(slow, null_equal=True)
    if not isinstance(slow, tuple):
        assert fast.schema == slow.schema


def test_same_frame_for_every_csv_fixture(monkeypatch):
    assert FIXTURES
    for path in FIXTURES:
        fast, slow = _both(path, monkeypatch)
        assert (fast == slow) if isinstance(slow, tuple) else (fast.equals(slow, null_equal=True)
                                                              and fast.schema == slow.schema), path


def test_polars_path_taken_only_where_nothing_could_read_differently():
    taken = {name for name, text in CASES.items()
             if name != "unknown column" and csv_text._plain_rows(text, REQUIRED, OPTIONAL) is not None}
    # A blank line inside is skipped by the csv module but padded by polars: such files take the csv module.
    assert taken == {"plain", "no-break space kept", "no final newline", "blank line at the end"}
