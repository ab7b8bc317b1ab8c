"""The bench's refreshes of the generated inputs: the first, an incremental one, and the full rebuild it is measured against."""
import shutil
import time
from pathlib import Path


def timed_refresh(gen: dict, published: Path, what: str, full: bool = False):
    """Run the real refresh flow on the generated inputs with every stage timed: (state, clock, seconds)."""
    from bench.timing import StageClock, rss_bytes
    from flows.refresh import refresh
    from provider_eval.paths import SQL_DIR

    clock = StageClock()
    # What this process (and its live children) already held: the sampled peak below includes it.
    rss_before = rss_bytes()
    start = time.perf_counter()
    with clock.attach():
        state = refresh(sources=gen["sources"], workloads=gen["workloads_file"], warehouse_path=str(published),
                        sql_dir=str(SQL_DIR), full=full, return_state=True)
    seconds = time.perf_counter() - start
    # Printed as it happens: a later step that fails (a full disk at SCALE=large) still leaves this on record.
    peak = max((rss for _, rss in clock.samples), default=0)
    print(f"bench: {what} {'done' if state.is_completed() else 'failed'} in {seconds:.1f}s "
          f"(SQL models {clock.wall('sql_models'):.1f}s, sampled peak RSS {peak / 2**30:.2f} GiB, "
          f"{rss_before / 2**30:.2f} GiB held when it began)", flush=True)
    if not state.is_completed():
        raise SystemExit(f"bench: the {what} failed: {state.message}")
    return state, clock, seconds


def incremental_vs_full(gen: dict, published: Path, work: Path, refresh_s: float) -> dict:
    """One new scrape file refreshed incrementally, then the same inputs rebuilt from nothing; same rows?"""
    from bench.compare_warehouses import compare
    from bench.synthetic import next_scrape

    # A scheduled refresh: one new scrape file lands beside everything already staged.
    new_file = next_scrape(gen["quote_files"][-1])
    again, again_clock, incremental_s = timed_refresh(gen, published, "incremental refresh")
    # The same final inputs rebuilt from nothing (`refresh --full`; staging cached as above): the
    # anchor the incremental refresh is measured against.
    incremental_copy = work / "incremental.duckdb"
    shutil.copyfile(published, incremental_copy)
    _, full_clock, full_s = timed_refresh(gen, published, "full rebuild", full=True)
    Path(new_file).unlink()
    # Same rows both ways: every public table, EXCEPT ALL in both directions.
    t_compare = time.perf_counter()
    differences = {t: d for t, d in compare(str(incremental_copy), str(published)).items() if d != (0, 0)}
    print(f"bench: incremental vs full compared (EXCEPT ALL both ways) in {time.perf_counter() - t_compare:.1f}s",
          flush=True)
    return {
        "incremental_refresh_seconds": round(incremental_s, 3),
        "incremental_stages_seconds": {k: v["seconds"] for k, v in again_clock.report(1).items()},
        "incremental_refresh_note": "the same inputs plus one new quote-csv scrape file; "
                                    f"{again.result().rows_in:,} rows in (every landed file), one file staged, "
                                    "built from a copy of the published warehouse",
        # The copy of the published warehouse the incremental build starts from.
        "incremental_copy_seconds": round(again_clock.wall("copy"), 3),
        # Only the models a changed input reaches run (docs/production.md, step 5); the others keep their tables.
        "incremental_sql_model_seconds": again_clock.slowest_models(),
        "incremental_models_kept": len(full_clock.slowest_models()) - len(again_clock.slowest_models()),
        "full_rebuild_seconds": round(full_s, 3),
        "full_rebuild_stages_seconds": {k: v["seconds"] for k, v in full_clock.report(1).items()},
        "incremental_ratio_vs_full": round(incremental_s / full_s, 3),
        "incremental_ratio_vs_first_refresh": round(incremental_s / refresh_s, 3),
        # Public tables whose rows differ between the incremental and the full build ({} = identical).
        "incremental_vs_full_differences": differences,
    }
