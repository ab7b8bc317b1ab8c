"""Time the refresh's stages from outside: wrap the functions each stage calls, sample RSS meanwhile."""
import os
import threading
import time
from collections import defaultdict
from contextlib import contextmanager

import flows.ingest.stage as stage_module
import flows.refresh as refresh_module
import flows.stage_inputs as inputs_module
from provider_eval import sql_layer, warehouse

PAGE_BYTES = 4096


TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _children() -> list[int]:
    """Live child processes (staging workers, Prefect's local API server): they count as the pipeline's."""
    pids = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
        except OSError:
            pass
    return pids


def rss_bytes() -> int:
    """Resident set size now of this process plus its live children."""
    total = 0
    for pid in ["self", *_children()]:
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * PAGE_BYTES
        except OSError:  # a child that just exited
            pass
    return total


def cpu_seconds() -> float:
    """User + system CPU seconds so far of this process (every thread, DuckDB's included) and its
    children: live ones from /proc, exited ones from the kernel's children totals."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    for pid in _children():
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICKS_PER_S  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total


class StageClock:
    """Per-stage call intervals plus an RSS sampler; `attach` wraps the refresh's functions."""

    def __init__(self, sample_s: float = 0.02):
        self.intervals: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.staged_by_format: dict[str, list[tuple[float, float]]] = defaultdict(list)  # stage_file calls
        self.samples: list[tuple[float, int]] = []
        self.cpu: list[tuple[float, float]] = []  # (time, process CPU seconds): less load-sensitive than wall time
        self.model_seconds: dict[str, float] = {}  # the last dbt build: seconds per SQL model
        self.check_seconds = 0.0  # the last dbt build: seconds of its data tests together
        self._sample_s, self._stop, self._lock = sample_s, threading.Event(), threading.Lock()

    def _wrap(self, stage: str, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                result = fn(*args, **kwargs)
                if stage == "sql_models":  # dbt build returns each model's and each check's time
                    self.model_seconds = {b.name: round(b.seconds, 3) for b in result.models}
                    self.check_seconds = round(sum(n.seconds for n in result.nodes if n.resource_type == "test"), 3)
                return result
            finally:
                end = time.perf_counter()
                with self._lock:
                    self.intervals[stage].append((start, end))
                    if stage == "parse_file":  # parse_file(landed, fmt, defaults)
                        fmt = args[1] if len(args) > 1 else kwargs.get("fmt")
                        self.staged_by_format[fmt].append((start, end))
                    self.samples.append((end, rss_bytes()))  # short calls fall between samples
        return timed

    def _sample(self):
        while not self._stop.is_set():
            now = time.perf_counter()
            self.samples.append((now, rss_bytes()))
            self.cpu.append((now, cpu_seconds()))
            time.sleep(self._sample_s)

    def cpu_between(self, *stages: str) -> float:
        """Process CPU seconds (all threads) from the first call of these stages to the end of the last."""
        spans = [span for s in stages for span in self.intervals.get(s, [])]
        if not spans or not self.cpu:
            return 0.0
        start, end = min(s for s, _ in spans), max(e for _, e in spans)
        before = [c for t, c in self.cpu if t <= start] or [self.cpu[0][1]]
        after = [c for t, c in self.cpu if t >= end] or [self.cpu[-1][1]]
        return after[0] - before[-1]

    @contextmanager
    def attach(self):
        """Wrap each stage's function for the duration of the block (behaviour unchanged)."""
        patches = [
            (inputs_module, "land_file", "land"), (inputs_module, "read_index", "land"),
            (inputs_module, "read_index_by_key", "land"),
            (inputs_module, "stage_files", "parse"), (stage_module, "parse_file", "parse_file"),
            (stage_module, "parse_files", "parse_files"),
            (stage_module, "validate_frames", "validate"), (stage_module, "validate_details", "validate"),
            (refresh_module, "load_workloads", "load"), (refresh_module, "load_reference", "load"),
            (refresh_module, "load_staged", "load"),
            (sql_layer, "build", "sql_models"),
            (refresh_module, "quality_gate", "quality_gate"), (warehouse, "publish", "publish"),
            (warehouse, "copy_published", "copy"),
        ]
        originals = [(mod, name, getattr(mod, name)) for mod, name, _ in patches]
        for mod, name, stage in patches:
            setattr(mod, name, self._wrap(stage, getattr(mod, name)))
        sampler = threading.Thread(target=self._sample, daemon=True)
        sampler.start()
        try:
            yield self
        finally:
            self._stop.set()
            sampler.join()
            for mod, name, fn in originals:
                setattr(mod, name, fn)

    def report(self, rows_in: int) -> dict:
        """Per stage: wall seconds, rows/s over wall time, thread-busy seconds, peak RSS.

        Files are parsed and validated interleaved on worker threads (stage_files calls
        validate_frames), so their shared wall time is split by each one's share of thread time.
        """
        out = {}
        staged_busy = _busy(self.intervals.get("parse", []))
        validate_share = _busy(self.intervals.get("validate", [])) / staged_busy if staged_busy else 0.0
        staged_wall = _union(self.intervals.get("parse", []))
        for stage in ("land", "parse", "validate", "load", "sql_models", "quality_gate", "publish"):
            spans = self.intervals.get(stage, [])
            busy, wall = _busy(spans), _union(spans)
            if stage == "parse":
                busy, wall = busy - _busy(self.intervals.get("validate", [])), staged_wall * (1 - validate_share)
            elif stage == "validate":
                wall = staged_wall * validate_share
            peak = max((r for t, r in self.samples if any(s <= t <= e for s, e in spans)), default=0)
            out[stage] = {"seconds": round(wall, 3), "thread_busy_seconds": round(busy, 3),
                          "rows_per_s": round(rows_in / wall) if wall > 0 else None, "peak_rss_bytes": peak}
        return out

    def by_format(self, fmt: str, rows: int) -> dict:
        """Files of one format parsed by their adapter: how many, thread seconds, rows per thread-second."""
        spans = self.staged_by_format.get(fmt, [])
        busy = _busy(spans)
        return {"files": len(spans), "rows": rows, "thread_busy_seconds": round(busy, 3),
                "rows_per_thread_s": round(rows / busy) if busy > 0 else None}

    def wall(self, *stages: str) -> float:
        """Wall time covered by calls of these stages together."""
        return _union([span for s in stages for span in self.intervals.get(s, [])])


def _busy(spans) -> float:
    return sum(e - s for s, e in spans)


def _union(spans) -> float:
    total, end = 0.0, float("-inf")
    for s, e in sorted(spans):
        if s > end:
            total, end = total + (e - s), e
        elif e > end:
            total, end = total + (e - end), e
    return total
