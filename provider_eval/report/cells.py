"""The report's HTML pieces: the page style, a query's rows as a table, a chart as a figure."""
import datetime as dt
import html
from decimal import Decimal

import duckdb
import numpy as np
import pandas as pd

CSS = """
body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{border-bottom:2px solid #2f6f9f;padding-bottom:.2rem;margin-top:2.2rem}
h3{margin-top:1.6rem}.meta,.note{color:#555}.empty{background:#f4f4f4;border-left:4px solid #999;padding:.6rem 1rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.88rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
th{background:#eef3f7}td.num{text-align:right;font-variant-numeric:tabular-nums}figure{margin:.6rem 0}
nav a{margin-right:1rem}
"""



def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> pd.DataFrame:
    return con.execute(sql, params or []).df()


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT:
        return "<td></td>"
    if isinstance(value, (list, tuple, np.ndarray)):
        # List columns (e.g. reasons) arrive as arrays; show them as one readable cell.
        return f"<td>{html.escape('; '.join(str(v) for v in list(value)))}</td>"
    if isinstance(value, (pd.Timestamp, dt.datetime)):
        return f"<td>{html.escape(value.strftime('%Y-%m-%d %H:%M UTC'))}</td>"
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        text = f"{value:,.4f}".rstrip("0").rstrip(".") if isinstance(value, (float, Decimal)) else f"{value:,}"
        return f'<td class="num">{text}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def _table(frame: pd.DataFrame, empty: str) -> str:
    if frame.empty:
        return f'<p class="empty">{html.escape(empty)}</p>'
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>"
                   for row in frame.astype(object).itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"



def _figure(svg: str, caption: str) -> str:
    return f'<figure class="chart">{svg}<figcaption class="note">{html.escape(caption)}</figcaption></figure>'
