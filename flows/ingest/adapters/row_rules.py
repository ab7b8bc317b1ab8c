"""Row-level rules: split a parsed frame into accepted rows and quarantined rows with their reasons."""
from dataclasses import dataclass

import polars as pl

from flows.ingest.adapters.quarantine import empty_quarantine, quarantine_rows


@dataclass(frozen=True)
class Rule:
    """A row-level rule: rows where `failed` is true are quarantined with `reason_code`."""

    reason_code: str
    failed: pl.Expr
    detail: pl.Expr


# Frames at least this tall evaluate each group of rules on the distinct values of the columns the
# rules read, and join the failing ones back: rules are row-wise, and a batch of scrape files repeats the
# same GPU names, units and timestamps thousands of times (320k quote rows: 1.2 → 0.7 CPU-s). On one
# small file the extra unique() and join cost more than they save.
DISTINCT_RULES_MIN_ROWS = 50_000
EXACT_KEY_TYPES = (pl.String, pl.Boolean, pl.Date)


def _rule_flags(frame: pl.DataFrame, rules: list[Rule]) -> pl.DataFrame:
    """frame with a boolean `__fail_<i>` column per rule (null counts as passing)."""
    flags = [r.failed.fill_null(False).alias(f"__fail_{i}") for i, r in enumerate(rules)]
    if frame.height < DISTINCT_RULES_MIN_ROWS:
        return frame.with_columns(flags)
    by_columns: dict[tuple[str, ...], list[tuple[str, pl.Expr]]] = {}
    for i, (rule, flag) in enumerate(zip(rules, flags)):
        by_columns.setdefault(tuple(sorted(set(rule.failed.meta.root_names()))), []).append((f"__fail_{i}", flag))
    row_wise = []
    for columns, group in by_columns.items():
        # Only exact keys are joined on: float keys (NaN, -0.0) are evaluated row by row.
        exact = columns and all(frame.schema[c] in EXACT_KEY_TYPES or frame.schema[c].is_integer() for c in columns)
        distinct = frame.select(columns).unique() if exact else None
        if distinct is None or distinct.height * 4 > frame.height:
            row_wise += [flag for _, flag in group]
            continue
        names = [name for name, _ in group]
        # Only the failing values are joined back (usually none): joining every verdict to every row
        # cost more than the rules (200k quote rows: 0.37 -> 0.22 s).
        failing = distinct.with_columns([flag for _, flag in group]).filter(pl.any_horizontal(names))
        if failing.height == 0:
            row_wise += [pl.lit(False).alias(name) for name in names]
            continue
        frame = frame.join(failing, on=list(columns), how="left", nulls_equal=True, maintain_order="left"
                           ).with_columns(pl.col(name).fill_null(False) for name in names)
    return frame.with_columns(row_wise)


def apply_rules(frame: pl.DataFrame, rules: list[Rule], keep: list[str] = ()) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split a frame into (accepted, quarantined); the first failing rule names the reason, all are listed.

    `keep` names columns copied into the quarantine rows as they are (e.g. which file a row came from).
    """
    if frame.height == 0:
        return frame, empty_quarantine({k: frame.schema[k] for k in keep})
    if len(set(frame.n_chunks("all"))) > 1:
        # Files concatenated with different columns leave columns chunked differently; polars 2.1
        # panics evaluating Python UDF rules (the name resolver, fields._per_name) over such a frame.
        frame = frame.rechunk()
    flagged = _rule_flags(frame, rules)
    details = [
        pl.when(pl.col(f"__fail_{i}")).then(pl.lit(f"{r.reason_code}: ") + r.detail).otherwise(None)
        for i, r in enumerate(rules)
    ]
    codes = [pl.when(pl.col(f"__fail_{i}")).then(pl.lit(r.reason_code)) for i, r in enumerate(rules)]
    failing = flagged.select(pl.any_horizontal([pl.col(f"__fail_{i}") for i in range(len(rules))])).to_series()
    helper = [c for c in flagged.columns if c.startswith("__")]
    good = flagged.drop(helper).filter(~failing)
    # Reasons are written for the failing rows only: polars computes every branch of a when/then
    # for every row, and ~45 formatted messages × every good row was most of a quote file's parse.
    # (Rules are row-wise, so a row's message does not depend on which other rows are present.)
    bad = flagged.filter(failing).with_columns(
        pl.coalesce(codes).alias("__reason_code"),
        pl.concat_str(details, separator="; ", ignore_nulls=True).alias("__detail"),
    )
    return good, quarantine_rows(bad, "__reason_code", "__detail", keep)
