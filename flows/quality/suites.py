"""The expectation suites of the quality gate: one per mart, each with the query that frames it."""
import datetime as dt
from dataclasses import dataclass

import duckdb
import great_expectations.expectations as gxe


# Row-level expectations (meta level "row") judge one vendor's rows, which the SQL models already
# exclude from ranking with a reason: they never block a publish unless more than this share of the
# rows they judge, and at least ROW_FAILURE_MIN_ROWS rows, fail them (then the cause is systemic: a
# unit, currency or parser bug, not one vendor's row; the minimum keeps one bad row of a GPU model
# with two offers from reading as 50 %).
ROW_LEVEL = {"level": "row"}
ROW_FAILURE_LIMIT_PCT = 10.0
ROW_FAILURE_MIN_ROWS = 3

# The largest finite double: "between 0 and this" rejects negatives, NaN and ±Inf in one expectation.
FINITE_MAX = 1.7976931348623157e308

# Each canonical (staged) table and the public mart that holds its accepted rows one-for-one.
# Where each canonical table's accepted rows land one-for-one. offer_history collapses repeated
# identical observations (times_observed), so quotes are counted at staging, as the SQL check does.
ACCEPTED_ROWS_MART = {"quote_observations": "staging.stg_quote_observations", "benchmark_runs": "benchmark_runs",
                     "model_configs": "staging.stg_model_configs",
                     "hardware_validations": "hardware_validations"}


@dataclass
class Suite:
    """A named suite over one frame: the SQL that selects the frame and the expectations on it."""

    name: str
    table: str
    frame_sql: str
    expectations: list
    # frame_sql counts the rows (one number) and GX gets a frame of that many rows and no column:
    # a table-level expectation needs nothing more (reading the 10M rows of a history into pandas
    # took seconds on every refresh, growing with the history).
    counted: bool = False


def _positive_finite(column: str) -> gxe.Expectation:
    return gxe.ExpectColumnValuesToBeBetween(column=column, min_value=0, max_value=FINITE_MAX, strict_min=True)


RANKED_COSTS = ["cost_per_unit_usd", "total_cost_usd", "hours_billed"]


def _ranked_frame_sql(table: str, extra_columns: str = "") -> str:
    """A ranked table's frame: the columns its expectations read (decimals as doubles: pandas compares
    them; whether any evidence id is there). Reading a column into pandas costs as much as checking it."""
    return f"""
            select workload_id, rank, {extra_columns}
                   cost_per_unit_usd::double as cost_per_unit_usd, total_cost_usd::double as total_cost_usd,
                   hours_billed::double as hours_billed,
                   -- Some id not null and not empty: the largest non-null id is not ''. (A lambda counting
                   -- them took 0.55 s over 20M ids at SCALE=default, this 0.35 s.)
                   coalesce(list_max(benchmark_run_ids), '') != '' as has_evidence_run
            from {table}"""


def _ranked_expectations() -> list:
    """What every ranked row needs: finite positive costs and hours, evidence, one row per rank."""
    return [
        *[gxe.ExpectColumnValuesToNotBeNull(column=c) for c in RANKED_COSTS],
        *[_positive_finite(c) for c in RANKED_COSTS],
        gxe.ExpectColumnValuesToBeInSet(column="has_evidence_run", value_set=[True]),
        gxe.ExpectCompoundColumnsToBeUnique(column_list=["workload_id", "rank"]),
    ]


def rankings_suite() -> Suite:
    """Every ranked row has a finite positive cost and hours, and benchmark evidence behind it."""
    return Suite(name="rankings", table="rankings", frame_sql=_ranked_frame_sql("rankings"),
                 expectations=_ranked_expectations())


def estimate_rankings_suite() -> Suite:
    """Every estimate has a finite positive cost, the measured runs it derives from, and says what it is."""
    return Suite(
        name="estimate_rankings", table="estimate_rankings",
        frame_sql=_ranked_frame_sql("estimate_rankings", "throughput_source, estimate_basis,"),
        expectations=[
            *_ranked_expectations(),
            # Lower confidence, labelled as such: never a measured row, always with its basis.
            gxe.ExpectColumnValuesToBeInSet(column="throughput_source", value_set=["estimate"]),
            gxe.ExpectColumnValuesToNotBeNull(column="estimate_basis"),
        ],
    )


NOT_DEADLINE = 'demand_kind != "deadline"'


def ranking_sensitivity_suite() -> Suite:
    """One row per ranked configuration; break-even prices, when there are any, finite and positive."""
    prices = ["break_even_usd_per_node_hour", "break_even_usd_per_gpu_hour", "break_even_usd_per_node_month"]
    return Suite(
        name="ranking_sensitivity", table="ranking_sensitivity",
        frame_sql="""
            select s.workload_id, s.rank,
                   s.break_even_usd_per_node_hour::double as break_even_usd_per_node_hour,
                   s.break_even_usd_per_gpu_hour::double as break_even_usd_per_gpu_hour,
                   s.break_even_usd_per_node_month::double as break_even_usd_per_node_month,
                   s.rank_at_30pct, s.rank_at_60pct, s.rank_at_100pct,
                   count(*) over (partition by s.workload_id) as ranked_in_workload,
                   r.offer_id is not null as is_in_rankings, coalesce(r.demand_kind, 'fixed') as demand_kind
            from ranking_sensitivity as s
            left join rankings as r using (workload_id, rank)""",
        expectations=[
            # Null means "no one to compare with" or "a free node would not be enough" (docs/cost-model.md).
            *[gxe.ExpectColumnValuesToBeBetween(column=c, min_value=0, max_value=FINITE_MAX, strict_min=True,
                                                mostly=1.0) for c in prices],
            # A deadline workload may miss its deadline at a lower utilisation: no rank there (null).
            *[gxe.ExpectColumnValuesToNotBeNull(column=f"rank_at_{p}pct", row_condition=NOT_DEADLINE,
                                                condition_parser="pandas") for p in (30, 60, 100)],
            *[gxe.ExpectColumnPairValuesAToBeGreaterThanB(column_A="ranked_in_workload", column_B=f"rank_at_{p}pct",
                                                          or_equal=True, ignore_row_if="either_value_is_missing")
              for p in (30, 60, 100)],
            gxe.ExpectColumnValuesToBeInSet(column="is_in_rankings", value_set=[True]),
            gxe.ExpectCompoundColumnsToBeUnique(column_list=["workload_id", "rank"]),
        ],
    )


def _band_expectations(bands: list[tuple[str, float, float]]) -> list[gxe.Expectation]:
    """One price band per GPU model; the '*' band covers every GPU model without its own."""
    named = [b[0] for b in bands if b[0] != "*"]
    out = []
    for gpu_model, low, high in bands:
        condition = f"gpu_model not in {named!r}" if gpu_model == "*" else f"gpu_model == {gpu_model!r}"
        out.append(gxe.ExpectColumnValuesToBeBetween(
            column="usd_per_gpu_hour", min_value=low, max_value=high,
            row_condition=condition, condition_parser="pandas",
            meta={**ROW_LEVEL, "where": condition, "price_band": gpu_model, "source": "data/reference/price_bands.csv",
                  "excluded_as": "PRICE_IMPLAUSIBLE"},
        ))
    return out


def offers_suite(bands: list[tuple[str, float, float]], now: dt.datetime) -> Suite:
    """Current offers: a price within the GPU model's plausible band (row-level), observed no later than now."""
    return Suite(
        name="offers", table="offers",
        # Offers already flagged SCOPE_SUSPECT (a node price recorded per GPU, or the reverse) are
        # excluded from ranking with that reason; one provider's slip must not block the publish.
        frame_sql="""
            select offer_id, provider, gpu_model, billing_model, source_name,
                   usd_per_gpu_hour::double as usd_per_gpu_hour, observed_at
            from offers
            where scope_reason is null""",
        expectations=[
            gxe.ExpectColumnValuesToNotBeNull(column="gpu_model"),
            gxe.ExpectColumnValuesToNotBeNull(column="observed_at"),
            gxe.ExpectColumnValuesToBeBetween(column="observed_at", max_value=now, meta=ROW_LEVEL),
            *_band_expectations(bands),
        ],
    )


def offer_history_suite(now: dt.datetime) -> Suite:
    """Every observation ever seen: none from the future."""
    return Suite(
        name="offer_history", table="offer_history",
        # Each offer's latest observation: none is in the future exactly when no observation is, and
        # GX gets one row per offer instead of the whole history (10M rows were GBs of pandas).
        frame_sql="""
            select offer_id, provider, gpu_model, max(observed_at) as observed_at, source_name
            from offer_history group by offer_id, provider, gpu_model, source_name""",
        expectations=[gxe.ExpectColumnValuesToBeBetween(column="observed_at", max_value=now, meta=ROW_LEVEL)],
    )


def row_count_suites(con: duckdb.DuckDBPyConnection) -> list[Suite]:
    """Each mart fed by input files holds exactly the rows the manifest says were accepted (and still count)."""
    # benchmark_runs keeps the runs of current files only (superseded and withdrawn files stop counting).
    expected = dict(con.execute("""
        select m."table", sum(m.rows_accepted)::bigint
        from raw.ingest_manifest as m
        left join intermediate.int_file_states as f on f.source_name = m.source_name and f.file_sha256 = m.file_sha256
        where m.status = 'loaded' and (m."table" != 'benchmark_runs' or coalesce(f.state, 'current') = 'current')
        group by all""").fetchall())
    quarantined = con.execute(
        "select coalesce(sum(rows_quarantined), 0)::bigint from raw.ingest_manifest where status = 'loaded'"
    ).fetchone()[0]
    suites = [
        Suite(name=f"{mart.split('.')[-1]}_row_count", table=mart, frame_sql=f"select count(*) from {mart}", counted=True,
              expectations=[gxe.ExpectTableRowCountToEqual(
                  value=int(expected.get(canonical, 0)),
                  meta={"why": f"rows accepted from {canonical} files in ingest_manifest (rows in minus quarantined)"})])
        for canonical, mart in ACCEPTED_ROWS_MART.items()
    ]
    suites.append(Suite(
        name="quarantine_row_count", table="quarantine",
        frame_sql="select count(*) from quarantine", counted=True,
        expectations=[gxe.ExpectTableRowCountToEqual(
            value=int(quarantined), meta={"why": "rows quarantined according to ingest_manifest"})]))
    return suites


def all_suites(con: duckdb.DuckDBPyConnection, now: dt.datetime) -> list[Suite]:
    """The gate's suites for the warehouse behind this connection."""
    bands = con.execute(
        "select gpu_model, min_usd_per_gpu_hour::double, max_usd_per_gpu_hour::double from ref.price_bands"
    ).fetchall()
    return [rankings_suite(), estimate_rankings_suite(), ranking_sensitivity_suite(), offers_suite(bands, now), offer_history_suite(now), *row_count_suites(con)]
