"""The bench's console output: the per-stage table and the summary lines of one result document."""


def print_table(r: dict) -> None:
    """The per-stage table and the one-line summary."""
    print(f"\n{'stage':<13}{'seconds':>9}{'thread s':>10}{'rows/s':>12}{'peak RSS MiB':>14}")
    for stage, s in r["stages"].items():
        rate = f"{s['rows_per_s']:,}" if s["rows_per_s"] else "-"
        print(f"{stage:<13}{s['seconds']:>9.2f}{s['thread_busy_seconds']:>10.2f}{rate:>12}{s['peak_rss_bytes'] / 2**20:>14.0f}")
    c = r["row_conservation"]
    print(f"\nrows: {c['rows_in']:,} in = {c['rows_accepted']:,} accepted + {c['rows_quarantined']:,} quarantined "
          f"({'conserved' if c['conserved'] else 'NOT CONSERVED'}); per-request rows: {c['requests_generated']:,} "
          f"generated, {c['benchmark_requests_rows']:,} in benchmark_requests, "
          f"{c['requests_of_quarantined_runs']:,} with the {c['quarantined_run_files']:,} quarantined run(s) "
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
    f = r["ingest_floor"]
    print(f"the ingest's floor (bench/floor.py) {f['seconds']:.2f}s = {r['ingest_floor_ratio_vs_duckdb_plain']}x the plain "
          f"load (CPU {r['ingest_floor_cpu_ratio_vs_duckdb_plain']}x): hash and copy {f['keep_bytes']['files']:,} files "
          f"{f['keep_bytes']['seconds']:.2f}s + DuckDB reading every input cell {f['read_cells']['seconds']:.2f}s + pandera "
          f"over {f['contracts']['rows']:,} staged rows {f['contracts']['seconds']:.2f}s + DuckDB writing them once "
          f"{f['write_tables']['seconds']:.2f}s")
    slowest = ", ".join(f"{m} {v:.1f}s" for m, v in list(r["sql_model_seconds"].items())[:5])
    print(f"slowest SQL models: {slowest}")
    checks = ", ".join(f"{c} {v:.1f}s" for c, v in r["incremental_slowest_check_seconds"].items())
    print(f"slowest data tests of the incremental refresh (in no model's time): {checks or 'none'}")
    print(f"first incremental refresh after the full one (one new scrape file, from a copy of the published "
          f"warehouse): {r['first_incremental_refresh_seconds']:.1f}s (copy {r['first_incremental_copy_seconds']:.2f}s)")
    print(f"incremental refresh (one new scrape file; the rest staged already): {r['incremental_refresh_seconds']:.1f}s "
          f"(from the {r['incremental_started_from']} start: copy {r['incremental_copy_seconds']:.2f}s, "
          f"previous file moved in {r['incremental_take_previous_seconds']:.2f}s) vs full rebuild of the same inputs "
          f"(`refresh --full`, staging cached) {r['full_rebuild_seconds']:.1f}s; public tables "
          + ("identical" if not r["incremental_vs_full_differences"] else f"DIFFER: {r['incremental_vs_full_differences']}"))
    print(f"incremental refresh (that scrape file rewritten: a new version of the same path): "
          f"{r['version_refresh_seconds']:.1f}s = {r['version_ratio_vs_full']:.0%} of full")
    print(f"refresh with nothing new (only the reads and the clock moved): {r['unchanged_refresh_seconds']:.1f}s, "
          f"{r['unchanged_models_run']} SQL models run"
          + (" (a UTC midnight fell between the two refreshes: every quote aged a day)"
             if r.get("unchanged_refresh_crossed_utc_day") else ""))
    reruns = {"first": r["memory_rerun_seconds"], **r["memory_reruns_seconds"]}
    print("SQL models built again alone after running out of memory side by side: "
          + ("; ".join(f"{when} refresh: " + ", ".join(f"{m} ({s:.1f}s lost)" for m, s in models.items())
                       for when, models in reruns.items() if models) or "none"))
    print(f"\nbench {r['scale']}: {r['rows_offers']:,} offer rows, {r['rows_requests']:,} request rows, refresh {r['refresh_seconds']:.1f}s, "
          f"ingest {r['ingest_ratio_vs_duckdb_plain']}x plain DuckDB read_csv (CPU {r['ingest_cpu_ratio_vs_duckdb_plain']}x), "
          f"{r['ingest_ratio_vs_duckdb']}x union_by_name (CPU {r['ingest_cpu_ratio_vs_duckdb']}x), "
          f"its floor {r['ingest_floor_ratio_vs_duckdb_plain']}x (CPU {r['ingest_floor_cpu_ratio_vs_duckdb_plain']}x), "
          f"incremental {r['incremental_refresh_seconds']:.1f}s = {r['incremental_ratio_vs_full']:.0%} of full "
          f"{r['full_rebuild_seconds']:.1f}s (a new version of a path {r['version_ratio_vs_full']:.0%}), peak RSS {r['peak_rss_bytes'] / 2**30:.2f} GiB, "
          f"rank p50 {r['rank_query_p50_ms']:.1f} ms (every row {r['rank_export_query_p50_ms']:.0f} ms, CLI {r['cli_rank_p50_ms']:.0f} ms), "
          f"checks {r['checks_seconds']:.2f}s, feasibility {r['feasibility_seconds']:.3f}s")
