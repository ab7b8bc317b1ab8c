"""`make bench`: synthetic inputs → the real refresh, timed per stage, against DuckDB loading the same files."""
import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


# DuckDB alone, per-request rows: the --save-detailed lists of every file unnested into one row per request.
REQUESTS_BASELINE = """
create table requests as
select filename, unnest(input_lens) as input_len, unnest(output_lens) as output_len, unnest(ttfts) as ttft_s,
       unnest(latencies) as latency_s, unnest(errors) as error
from read_json(?, format = 'auto', filename = true, maximum_object_size = 67108864)
"""


def shared_header(paths: list[str]) -> bool:
    """Whether every CSV file starts with the same header line (read from each file, not assumed)."""
    import csv

    headers = set()
    for path in paths:
        with open(path, newline="", encoding="utf-8") as fh:
            headers.add(tuple(next(csv.reader(fh), [])))
    return len(headers) <= 1


def duckdb_baseline(files: dict[str, list[str]], json_files: list[str], db: Path,
                    plain: bool = False) -> tuple[float, dict]:
    """Seconds for DuckDB alone to read_csv / read_json the same files into tables of a new database file,
    the seconds of each table's statement (the final checkpoint is in the total only) and the CPU seconds.

    plain: the fastest correct load: a plain positional read_csv of the files of a table whose
    headers all agree (checked by reading each header), union_by_name only where they do not;
    `read_csv_modes` says which each table got. Otherwise union_by_name everywhere (the first anchor)."""
    import duckdb

    from bench.timing import cpu_seconds

    start, cpu_start, parts, modes = time.perf_counter(), cpu_seconds(), {}, {}
    with duckdb.connect(str(db)) as con:
        for table, paths in files.items():
            t = time.perf_counter()
            by_position = plain and shared_header(paths)
            modes[table] = "plain" if by_position else "union_by_name"
            option = "" if by_position else ", union_by_name = true"
            con.execute(f'create table "{table}" as select * from read_csv(?, header = true{option})', [paths])
            parts[table] = round(time.perf_counter() - t, 3)
        if json_files:
            t = time.perf_counter()
            con.execute(REQUESTS_BASELINE, [json_files])
            parts["requests"] = round(time.perf_counter() - t, 3)
        con.execute("checkpoint")
    parts["cpu_seconds"] = round(cpu_seconds() - cpu_start, 3)
    if plain:
        parts["read_csv_modes"] = modes
    return time.perf_counter() - start, parts


def p50_ms(fn, repeats: int) -> float:
    """Median wall time of fn() in milliseconds (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 3)


def rank_query_p50(published: Path, workload_id: str, repeats: int) -> float:
    """The CLI's rankings query for one workload, on the published warehouse, read-only."""
    from provider_eval import warehouse
    from provider_eval.cli import RANK_COLUMNS

    sql = (f"select {', '.join(RANK_COLUMNS)} from rankings where ($1 is null or workload_id = $1) "
           "and ($2 is null or rank <= $2) order by workload_id, rank")
    with warehouse.connect_published(published) as con:
        return p50_ms(lambda: con.execute(sql, [workload_id, None]).fetchall(), repeats)


def cli_rank_p50(published: Path, workload_id: str, repeats: int) -> float:
    """`provider-eval rank --workload W` as a command (in-process: interpreter start-up excluded)."""
    from typer.testing import CliRunner

    from provider_eval.cli import app

    runner = CliRunner()

    def once():
        result = runner.invoke(app, ["rank", "--workload", workload_id, "--warehouse", str(published)])
        if result.exit_code != 0:
            raise RuntimeError(f"provider-eval rank failed: {result.output}")
    return p50_ms(once, repeats)


def feasibility_seconds(published: Path, repeats: int) -> tuple[float, dict]:
    """Median seconds to recompute memory_fit + compat over every workload × configuration of the warehouse."""
    import duckdb

    from provider_eval import sql_compiled
    from provider_eval.paths import SQL_DIR

    models = sql_compiled.compiled_models(SQL_DIR)
    inputs = {"int_fit_requests", "int_compat_requests"}
    chain = sql_compiled.upstream(models, "int_memory_fit", inputs) + \
        sql_compiled.upstream(models, "int_compat_checks", inputs)
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        con.execute(f"attach '{published}' as published (read_only)")
        sql_compiled.create_schemas(con)
        # The chain's tables are built in memory; what it reads (sources, the two input tables) are
        # views of the published warehouse under the same schema-qualified names.
        built = {m.name for m in chain}
        for schema, table in con.execute(
                "select table_schema, table_name from information_schema.tables "
                "where table_catalog = 'published' and table_schema in ('raw', 'ref', 'staging', 'intermediate')").fetchall():
            if table not in built:
                con.execute(f'create view memory.{schema}."{table}" as select * from published.{schema}."{table}"')
        counts = {t: con.execute(f"select count(*) from published.intermediate.{t}").fetchone()[0] for t in inputs}
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            sql_compiled.build(con, chain)
            times.append(time.perf_counter() - start)
    return round(statistics.median(times), 4), counts


def timed_refresh(gen: dict, published: Path, what: str, full: bool = False):
    """Run the real refresh flow on the generated inputs with every stage timed: (state, clock, seconds)."""
    from bench.timing import StageClock
    from flows.refresh import refresh
    from provider_eval.paths import SQL_DIR

    clock = StageClock()
    start = time.perf_counter()
    with clock.attach():
        state = refresh(sources=gen["sources"], workloads=gen["workloads_file"], warehouse_path=str(published),
                        sql_dir=str(SQL_DIR), full=full, return_state=True)
    seconds = time.perf_counter() - start
    if not state.is_completed():
        raise SystemExit(f"bench: the {what} failed: {state.message}")
    return state, clock, seconds


def run(scale_name: str, work: Path, keep: bool = False, repeats: int = 20) -> dict:
    """Generate, refresh, measure; returns the result document."""
    _prefect_home()
    from bench.synthetic import SCALES, generate, next_scrape

    scale = SCALES[scale_name]
    inputs = work / "inputs"
    shutil.rmtree(work, ignore_errors=True)
    t0 = time.perf_counter()
    gen = generate(inputs, scale)
    generate_s = time.perf_counter() - t0
    print(f"generated {gen['rows_offers']:,} quote observations across {gen['offers']:,} offers, "
          f"{gen['rows_runs']:,} run rows, {gen['rows_requests']:,} per-request rows in "
          f"{len(gen['request_files']):,} vllm-serve files, {gen['workloads']} workloads in {generate_s:.1f}s",
          flush=True)

    published = work / "warehouse" / "provider_eval.duckdb"
    state, clock, refresh_s = timed_refresh(gen, published, "refresh")
    summary = state.result()
    # Before the baseline runs. The sampled total includes live children (staging workers, Prefect's
    # local API server); ru_maxrss catches this process's peaks between samples.
    peak_rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                   max((rss for _, rss in clock.samples), default=0))
    # Each vllm-serve file is one run (a row in); its requests are detail rows hanging off it.
    rows_in = gen["rows_offers"] + gen["rows_runs"] + len(gen["request_files"])
    stages = clock.report(rows_in + gen["rows_requests"])
    pipeline_ingest_s = clock.wall("land", "parse", "load")
    pipeline_cpu_s = clock.cpu_between("land", "parse", "load")

    csv_files = {"quotes": gen["quote_files"], "runs": gen["run_files"]}
    baseline_s, baseline_parts = duckdb_baseline(csv_files, gen["request_files"], work / "baseline.duckdb")
    # The stronger anchor: the same files as fast as DuckDB reads them correctly (plain read_csv).
    plain_s, plain_parts = duckdb_baseline(csv_files, gen["request_files"], work / "baseline-plain.duckdb", plain=True)

    import duckdb

    with duckdb.connect(str(published), read_only=True) as con:
        workload_id = con.execute("select workload_id from rankings group by 1 order by count(*) desc limit 1").fetchone()
        manifest = con.execute("select coalesce(sum(rows_in), 0), coalesce(sum(rows_accepted), 0), "
                               "coalesce(sum(rows_quarantined), 0) from ingest_manifest").fetchone()
        quarantined_rows = con.execute("select count(*) from quarantine").fetchone()[0]
        rankings_rows = con.execute("select count(*) from rankings").fetchone()[0]
        request_rows = con.execute("select count(*) from benchmark_requests").fetchone()[0]
    if workload_id is None:
        raise SystemExit("bench: the refresh ranked nothing; the synthetic inputs are not realistic enough")
    workload_id = workload_id[0]
    rank_p50 = rank_query_p50(published, workload_id, repeats)
    cli_p50 = cli_rank_p50(published, workload_id, 3)
    feas_s, feas_rows = feasibility_seconds(published, 3)

    # A scheduled refresh: one new scrape file lands beside everything already staged.
    new_file = next_scrape(gen["quote_files"][-1])
    again, again_clock, incremental_s = timed_refresh(gen, published, "incremental refresh")
    incremental_rows_in = again.result().rows_in
    incremental_models = dict(sorted(again_clock.model_seconds.items(), key=lambda kv: -kv[1]))
    # The same final inputs rebuilt from nothing (`refresh --full`; staging cached as above): the
    # anchor the incremental refresh is measured against.
    incremental_copy = work / "incremental.duckdb"
    shutil.copyfile(published, incremental_copy)
    _, full_clock, full_s = timed_refresh(gen, published, "full rebuild", full=True)
    Path(new_file).unlink()
    # Same rows both ways: every public table, EXCEPT ALL in both directions.
    from bench.compare_warehouses import compare

    differences = {t: d for t, d in compare(str(incremental_copy), str(published)).items() if d != (0, 0)}

    conservation = {
        "rows_generated": rows_in, "rows_in": manifest[0], "rows_accepted": manifest[1],
        "rows_quarantined": manifest[2], "quarantine_table_rows": quarantined_rows,
        "bad_rows_injected": gen["bad_quote_rows"],
        "requests_generated": gen["rows_requests"], "benchmark_requests_rows": request_rows,
        "conserved": rows_in == manifest[0] == manifest[1] + manifest[2] == summary.rows_in
        and quarantined_rows == manifest[2] and manifest[2] >= gen["bad_quote_rows"]
        # Every generated request belongs to an accepted run, so every one must be loaded.
        and request_rows == gen["rows_requests"],
    }
    result = {
        "scale": scale.name,
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "rows_offers": gen["rows_offers"], "offers": gen["offers"], "rows_runs": gen["rows_runs"],
        "rows_requests": gen["rows_requests"], "request_files": len(gen["request_files"]),
        "requests": clock.by_format("vllm-serve", gen["rows_requests"]),
        # Big refreshes stage in worker processes (flows/ingest/stage_pool.py): the adapters' own
        # timers then run out of sight, and parse/validate are timed as one span from this process.
        "staged_in_processes": bool(clock.intervals.get("parse")) and not clock.intervals.get("parse_files"),
        "workloads": gen["workloads"],
        "generate_seconds": round(generate_s, 3),
        "refresh_seconds": round(refresh_s, 3),
        "stages": stages,
        "incremental_refresh_seconds": round(incremental_s, 3),
        "incremental_stages_seconds": {k: v["seconds"] for k, v in again_clock.report(1).items()},
        "incremental_refresh_note": "the same inputs plus one new quote-csv scrape file; "
                                    f"{incremental_rows_in:,} rows in (every landed file), one file staged, "
                                    "built from a copy of the published warehouse",
        # The copy of the published warehouse the incremental build starts from.
        "incremental_copy_seconds": round(again_clock.wall("copy"), 3),
        "incremental_sql_model_seconds": incremental_models,
        "full_rebuild_seconds": round(full_s, 3),
        "full_rebuild_stages_seconds": {k: v["seconds"] for k, v in full_clock.report(1).items()},
        "incremental_ratio_vs_full": round(incremental_s / full_s, 3),
        "incremental_ratio_vs_first_refresh": round(incremental_s / refresh_s, 3),
        # Public tables whose rows differ between the incremental and the full build ({} = identical).
        "incremental_vs_full_differences": differences,
        "pipeline_ingest_seconds": round(pipeline_ingest_s, 3),
        "duckdb_baseline_seconds": round(baseline_s, 3),
        "duckdb_baseline_seconds_by_table": baseline_parts,
        "ingest_ratio_vs_duckdb": round(pipeline_ingest_s / baseline_s, 2),
        "duckdb_plain_baseline_seconds": round(plain_s, 3),
        "duckdb_plain_baseline_seconds_by_table": plain_parts,
        "ingest_ratio_vs_duckdb_plain": round(pipeline_ingest_s / plain_s, 2),
        # CPU seconds (all threads) of the same two spans: the ratio a busy, shared machine distorts least.
        "pipeline_ingest_cpu_seconds": round(pipeline_cpu_s, 3),
        "duckdb_baseline_cpu_seconds": baseline_parts["cpu_seconds"],
        "ingest_cpu_ratio_vs_duckdb": round(pipeline_cpu_s / baseline_parts["cpu_seconds"], 2),
        "ingest_cpu_ratio_vs_duckdb_plain": round(pipeline_cpu_s / plain_parts["cpu_seconds"], 2),
        "peak_rss_bytes": peak_rss,
        "rank_query_workload": workload_id,
        "rank_query_p50_ms": rank_p50,
        "cli_rank_p50_ms": cli_p50,
        # Seconds per SQL model in the first refresh, slowest first.
        "sql_model_seconds": dict(sorted(clock.model_seconds.items(), key=lambda kv: -kv[1])),
        "checks_seconds": clock.check_seconds,  # inside the sql_models stage (dbt build runs both)
        "quality_gate_seconds": stages["quality_gate"]["seconds"],
        "feasibility_seconds": feas_s,
        "feasibility_rows": feas_rows,
        "rankings_rows": rankings_rows,
        "row_conservation": conservation,
    }
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return result


def print_table(r: dict) -> None:
    """The per-stage table and the one-line summary."""
    print(f"\n{'stage':<13}{'seconds':>9}{'thread s':>10}{'rows/s':>12}{'peak RSS MiB':>14}")
    for stage, s in r["stages"].items():
        rate = f"{s['rows_per_s']:,}" if s["rows_per_s"] else "-"
        print(f"{stage:<13}{s['seconds']:>9.2f}{s['thread_busy_seconds']:>10.2f}{rate:>12}{s['peak_rss_bytes'] / 2**20:>14.0f}")
    c = r["row_conservation"]
    print(f"\nrows: {c['rows_in']:,} in = {c['rows_accepted']:,} accepted + {c['rows_quarantined']:,} quarantined "
          f"({'conserved' if c['conserved'] else 'NOT CONSERVED'}); per-request rows: {c['requests_generated']:,} "
          f"generated, {c['benchmark_requests_rows']:,} in benchmark_requests "
          + ("(staged in worker processes)" if r["staged_in_processes"] else
             f"(adapter parse {r['requests']['thread_busy_seconds']:.2f} thread-s over {r['request_files']:,} files)"))
    parts = ", ".join(f"{t} {v:.2f}s" for t, v in r["duckdb_baseline_seconds_by_table"].items() if t != "cpu_seconds")
    plain = ", ".join(f"{t} {v:.2f}s" for t, v in r["duckdb_plain_baseline_seconds_by_table"].items()
                      if t not in ("cpu_seconds", "read_csv_modes"))
    print(f"ingest+validate+load {r['pipeline_ingest_seconds']:.2f}s vs DuckDB read_csv(union_by_name) + read_json "
          f"{r['duckdb_baseline_seconds']:.2f}s ({parts}) and plain read_csv + read_json "
          f"{r['duckdb_plain_baseline_seconds']:.2f}s ({plain}); feasibility (memory_fit + compat over "
          f"{r['feasibility_rows']['int_fit_requests']:,} fit × {r['feasibility_rows']['int_compat_requests']:,} "
          f"compat rows) {r['feasibility_seconds']:.3f}s")
    slowest = ", ".join(f"{m} {v:.1f}s" for m, v in list(r["sql_model_seconds"].items())[:5])
    print(f"slowest SQL models: {slowest}")
    print(f"incremental refresh (one new scrape file; the rest staged already): {r['incremental_refresh_seconds']:.1f}s "
          f"(copy {r['incremental_copy_seconds']:.2f}s) vs full rebuild of the same inputs "
          f"(`refresh --full`, staging cached) {r['full_rebuild_seconds']:.1f}s; public tables "
          + ("identical" if not r["incremental_vs_full_differences"] else f"DIFFER: {r['incremental_vs_full_differences']}"))
    print(f"\nbench {r['scale']}: {r['rows_offers']:,} offer rows, {r['rows_requests']:,} request rows, refresh {r['refresh_seconds']:.1f}s, "
          f"ingest {r['ingest_ratio_vs_duckdb_plain']}x plain DuckDB read_csv (CPU {r['ingest_cpu_ratio_vs_duckdb_plain']}x), "
          f"{r['ingest_ratio_vs_duckdb']}x union_by_name (CPU {r['ingest_cpu_ratio_vs_duckdb']}x), "
          f"incremental {r['incremental_refresh_seconds']:.1f}s = {r['incremental_ratio_vs_full']:.0%} of full "
          f"{r['full_rebuild_seconds']:.1f}s, peak RSS {r['peak_rss_bytes'] / 2**30:.2f} GiB, "
          f"rank p50 {r['rank_query_p50_ms']:.1f} ms (CLI {r['cli_rank_p50_ms']:.0f} ms), "
          f"checks {r['checks_seconds']:.2f}s, feasibility {r['feasibility_seconds']:.3f}s")


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
