"""Timed spans (provider_eval.progress): what the library announces, and the bench's StageClock that only listens."""
import threading
import time

import pytest

from bench.timing import StageClock
from provider_eval import progress
from provider_eval.sql_layer import NodeResult


def test_a_span_carries_its_times_and_what_the_block_added():
    spans = []
    stop = progress.listen_spans(spans.append)
    try:
        before = time.perf_counter()
        with progress.span("load", source="quotes") as detail:
            detail["rows"] = 3
        with pytest.raises(ValueError), progress.span("publish"):
            raise ValueError("a failed step is still timed")
    finally:
        stop()
    with progress.span("land"):  # nobody listens any more
        pass
    assert [s.name for s in spans] == ["load", "publish"]
    assert before <= spans[0].start <= spans[0].end <= spans[1].start <= spans[1].end
    assert spans[0].detail == {"source": "quotes", "rows": 3} and spans[1].detail == {}


def test_timed_keeps_the_function_and_announces_each_call():
    @progress.timed("quality_gate")
    def gate(path: str) -> str:
        """The gate."""
        return path.upper()

    spans = []
    stop = progress.listen_spans(spans.append)
    try:
        assert gate("a") == "A" and gate(path="b") == "B"
    finally:
        stop()
    assert gate.__name__ == "gate" and gate.__doc__ == "The gate."
    assert [s.name for s in spans] == ["quality_gate", "quality_gate"]


def test_stage_clock_reads_the_spans_of_every_thread():
    """Spans from worker threads land in the clock; the dbt build's nodes give per-model seconds."""
    clock = StageClock(sample_s=0.005)

    def stage_one(fmt: str, files: int = 1) -> None:
        with progress.span("parse"), progress.span("parse_files"), progress.span("parse_file", format=fmt, files=files):
            with progress.span("validate"):
                time.sleep(0.01)

    with clock.attach():
        # A batched adapter call is one span over several files: files counts them, not spans.
        workers = [threading.Thread(target=stage_one, args=a) for a in (("vllm-serve", 3), ("vllm-serve",), ("quote-csv",))]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        with progress.span("sql_models") as detail:
            detail["nodes"] = [NodeResult("rankings", "model", "success", 1.25, None),
                               NodeResult("offers", "model", "success", 2.5, None),
                               NodeResult("assert_costs_finite", "test", "pass", 0.5, None)]
    with progress.span("publish"):  # after the block: not the clock's
        pass
    assert len(clock.intervals["parse"]) == 3 and len(clock.intervals["validate"]) == 3
    assert "publish" not in clock.intervals
    assert clock.by_format("vllm-serve", 10)["files"] == 4 and clock.by_format("quote-csv", 5)["files"] == 1
    assert clock.slowest_models() == {"offers": 2.5, "rankings": 1.25} and clock.check_seconds == 0.5
    assert not clock.staged_in_processes()
    report = clock.report(100)
    assert report["validate"]["seconds"] > 0 and report["parse"]["thread_busy_seconds"] >= 0
    assert clock.samples  # RSS sampled meanwhile


def test_stage_clock_sees_staging_in_worker_processes_as_one_span():
    """Batches staged in worker processes announce their parse spans there, out of the clock's sight."""
    clock = StageClock(sample_s=0.005)
    with clock.attach():
        with progress.span("parse"):  # stage_batch in this process; parse_files ran in a worker
            pass
    assert clock.staged_in_processes()
