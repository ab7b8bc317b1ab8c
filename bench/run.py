"""`make bench`: synthetic inputs → the real refresh, timed per stage, against DuckDB loading the same files."""
import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.baselines import duckdb_baseline_apart
from bench.floor import ingest_floor
from bench.queries import cli_rank_p50, feasibility_seconds, rank_query_p50
from bench.refreshes import incremental_vs_full, timed_refresh
from bench.table import print_table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def _prefect_home() -> None:
    """A private Prefect home and quiet logs, before Prefect is imported."""
    os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="provider-eval-bench-prefect-"))
    os.environ.pop("PREFECT_API_URL", None)
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    os.environ["DO_NOT_TRACK"] = "1"
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # On a busy machine the in-process Prefect server can take longer than its default to start.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


def published_counts(published: Path) -> dict:
    """What the published warehouse holds: the most-ranked workload, manifest totals, table row counts."""
    import duckdb

    with duckdb.connect(str(published), read_only=True) as con:
        workload = con.execute("select workload_id from rankings group by 1 order by count(*) desc limit 1").fetchone()
        manifest = con.execute("select coalesce(sum(rows_in), 0), coalesce(sum(rows_accepted), 0), "
                               "coalesce(sum(rows_quarantined), 0) from ingest_manifest").fetchone()
        counts = {t: con.execute(f"select count(*) from {t}").fetchone()[0]
                  for t in ("quarantine", "rankings", "benchmark_requests")}
        # The vllm-serve files whose run was quarantined (one run per file).
        quarantined_runs = [r[0] for r in con.execute(
            "select distinct file from quarantine q join ingest_manifest m using (source_name, file_sha256) "
            "where m.format = 'vllm-serve'").fetchall()]
    if workload is None:
        raise SystemExit("bench: the refresh ranked nothing; the synthetic inputs are not realistic enough")
    return {"workload_id": workload[0], "manifest": manifest, "quarantined_run_files": quarantined_runs, **counts}


def row_conservation(gen: dict, rows_in: int, counts: dict, summary_rows_in: int) -> dict:
    """Every generated row in the manifest, accepted or quarantined; every request of an accepted run
    loaded (a quarantined run takes its requests with it, docs/quarantine.md)."""
    rows, accepted, quarantined = counts["manifest"]
    dropped = sum(gen["requests_per_file"][Path(f).name] for f in counts["quarantined_run_files"])
    return {
        "rows_generated": rows_in, "rows_in": rows, "rows_accepted": accepted,
        "rows_quarantined": quarantined, "quarantine_table_rows": counts["quarantine"],
        "bad_rows_injected": gen["bad_quote_rows"],
        "requests_generated": gen["rows_requests"], "benchmark_requests_rows": counts["benchmark_requests"],
        "quarantined_run_files": len(counts["quarantined_run_files"]), "requests_of_quarantined_runs": dropped,
        "conserved": rows_in == rows == accepted + quarantined == summary_rows_in
        and counts["quarantine"] == quarantined and quarantined >= gen["bad_quote_rows"]
        and counts["benchmark_requests"] == gen["rows_requests"] - dropped,
    }


def run(scale_name: str, work: Path, keep: bool = False, repeats: int = 20) -> dict:
    """Generate, refresh, measure; returns the result document."""
    _prefect_home()
    from bench.synthetic import SCALES, generate

    scale = SCALES[scale_name]
    shutil.rmtree(work, ignore_errors=True)
    t0 = time.perf_counter()
    gen = generate(work / "inputs", scale)
    generate_s = time.perf_counter() - t0
    print(f"generated {gen['rows_offers']:,} quote observations across {gen['offers']:,} offers, "
          f"{gen['rows_runs']:,} run rows, {gen['rows_requests']:,} per-request rows in "
          f"{len(gen['request_files']):,} vllm-serve files, {gen['workloads']} workloads in {generate_s:.1f}s",
          flush=True)

    published = work / "warehouse" / "provider_eval.duckdb"
    first = timed_refresh(gen, published, "refresh")
    clock, refresh_s = first.clock, first.seconds
    # The refresh's process: the sampled total includes its live children (staging workers, Prefect's
    # local API server); ru_maxrss catches the process's own peaks between samples.
    peak_rss = max(first.max_rss, max((rss for _, rss in clock.samples), default=0))
    # Each vllm-serve file is one run (a row in); its requests are detail rows hanging off it.
    rows_in = gen["rows_offers"] + gen["rows_runs"] + len(gen["request_files"])
    stages = clock.report(rows_in + gen["rows_requests"])
    pipeline_ingest_s = clock.wall("land", "parse", "load")
    pipeline_cpu_s = clock.cpu_between("land", "parse", "load")

    csv_files = {"quotes": gen["quote_files"], "runs": gen["run_files"]}
    baseline_s, baseline_parts = duckdb_baseline_apart(csv_files, gen["request_files"], work / "baseline.duckdb")
    # The stronger anchor: the same files as fast as DuckDB reads them correctly (plain read_csv).
    plain_s, plain_parts = duckdb_baseline_apart(csv_files, gen["request_files"], work / "baseline-plain.duckdb",
                                                 plain=True)
    print(f"bench: ingest {pipeline_ingest_s:.1f}s, DuckDB alone {baseline_s:.1f}s (union_by_name) / {plain_s:.1f}s "
          f"(plain): {pipeline_ingest_s / plain_s:.2f}x the plain load", flush=True)
    # What no build of the ingest could skip: keep the bytes, read every cell, check every row, write it once.
    floor = ingest_floor(csv_files, gen["request_files"], work / "warehouse" / "staged-cache", work / "floor.duckdb")
    print(f"bench: the ingest's floor {floor['seconds']:.1f}s = {floor['seconds'] / plain_s:.2f}x the plain load "
          f"(CPU {floor['cpu_seconds'] / plain_parts['cpu_seconds']:.2f}x)", flush=True)

    t_queries = time.perf_counter()
    counts = published_counts(published)
    workload_id = counts["workload_id"]
    rank_p50 = rank_query_p50(published, workload_id, repeats)
    cli_p50 = cli_rank_p50(published, workload_id, 3)
    feas_s, feas_rows = feasibility_seconds(published, 3)
    print(f"bench: counts, queries and feasibility took {time.perf_counter() - t_queries:.1f}s", flush=True)
    incremental = incremental_vs_full(gen, published, work, refresh_s)

    result = {
        "scale": scale.name,
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "rows_offers": gen["rows_offers"], "offers": gen["offers"], "rows_runs": gen["rows_runs"],
        "rows_requests": gen["rows_requests"], "request_files": len(gen["request_files"]),
        "quote_files": len(gen["quote_files"]),
        "requests": clock.by_format("vllm-serve", gen["rows_requests"]),
        # Big refreshes stage in worker processes (flows/ingest/stage_pool.py): the spans of the parsing
        # there stay there, and parse/validate are timed as one span from this process.
        "staged_in_processes": clock.staged_in_processes(),
        "workloads": gen["workloads"],
        "generate_seconds": round(generate_s, 3),
        "refresh_seconds": round(refresh_s, 3),
        "stages": stages,
        **incremental,
        "pipeline_ingest_seconds": round(pipeline_ingest_s, 3),
        "duckdb_baseline_seconds": round(baseline_s, 3),
        "duckdb_baseline_seconds_by_table": baseline_parts,
        "ingest_ratio_vs_duckdb": round(pipeline_ingest_s / baseline_s, 2),
        "duckdb_plain_baseline_seconds": round(plain_s, 3),
        "duckdb_plain_baseline_seconds_by_table": plain_parts,
        "ingest_ratio_vs_duckdb_plain": round(pipeline_ingest_s / plain_s, 2),
        # Work any build of the ingest must do (bench/floor.py): how close to the anchor it could come.
        "ingest_floor": floor,
        "ingest_floor_ratio_vs_duckdb_plain": round(floor["seconds"] / plain_s, 2),
        "ingest_floor_cpu_ratio_vs_duckdb_plain": round(floor["cpu_seconds"] / plain_parts["cpu_seconds"], 2),
        # CPU seconds (all threads) of the same two spans: the ratio a busy, shared machine distorts least.
        "pipeline_ingest_cpu_seconds": round(pipeline_cpu_s, 3),
        "duckdb_baseline_cpu_seconds": baseline_parts["cpu_seconds"],
        "ingest_cpu_ratio_vs_duckdb": round(pipeline_cpu_s / baseline_parts["cpu_seconds"], 2),
        "ingest_cpu_ratio_vs_duckdb_plain": round(pipeline_cpu_s / plain_parts["cpu_seconds"], 2),
        "peak_rss_bytes": peak_rss,
        "rank_query_workload": workload_id,
        # The table's query (`rank --workload W`), and every row and column (--format csv|json).
        "rank_query_p50_ms": rank_p50["table"],
        "rank_export_query_p50_ms": rank_p50["export"],
        "cli_rank_p50_ms": cli_p50,
        # Seconds per SQL model in the first refresh, slowest first.
        "sql_model_seconds": clock.slowest_models(),
        "checks_seconds": clock.check_seconds,  # inside the sql_models stage (dbt build runs both)
        "slowest_check_seconds": clock.slowest_checks(),
        # Models whose first attempt ran out of memory and was built again alone, and its seconds.
        "memory_rerun_seconds": clock.memory_rerun_seconds,
        "quality_gate_seconds": stages["quality_gate"]["seconds"],
        "feasibility_seconds": feas_s,
        "feasibility_rows": feas_rows,
        "rankings_rows": counts["rankings"],
        "row_conservation": row_conservation(gen, rows_in, counts, first.rows_in),
    }
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", default="default", choices=["tiny", "small", "default", "large"])
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json", help="where the JSON result goes")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs and warehouse")
    parser.add_argument("--repeats", type=int, default=20, help="timed repeats of each query")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix=f"provider-eval-bench-{args.scale}-"))
    result = run(args.scale, work, keep=args.keep, repeats=args.repeats)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print_table(result)
    print(f"written: {args.out}")
    # Exit 1 when rows were not conserved or the incremental refresh's rows differ from a full rebuild's.
    return 0 if result["row_conservation"]["conserved"] and not result["incremental_vs_full_differences"] else 1


if __name__ == "__main__":
    sys.exit(main())
