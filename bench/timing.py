"""Time the refresh's stages from the spans it announces (provider_eval.progress), sample RSS meanwhile."""
import os
import threading
import time
from collections import defaultdict
from contextlib import contextmanager

from provider_eval import progress

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
    """Per-stage spans the refresh announces (provider_eval.progress) plus an RSS sampler, while `attach` is open."""

    def __init__(self, sample_s: float = 0.02):
        self.intervals: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.staged_by_format: dict[str, list[tuple[float, float]]] = defaultdict(list)  # parse_file spans
        self.files_by_format: dict[str, int] = defaultdict(int)  # a span may cover a batch of one source's files
        self.samples: list[tuple[float, int]] = []
        self.cpu: list[tuple[float, float]] = []  # (time, process CPU seconds): less load-sensitive than wall time
        self.model_seconds: dict[str, float] = {}  # the last dbt build: seconds per SQL model
        self.check_seconds = 0.0  # the last dbt build: seconds of its data tests together
        self.check_seconds_by_name: dict[str, float] = {}  # the last dbt build: seconds per data test
        # The last dbt build: seconds of the first attempts that ran out of memory (built again alone).
        self.memory_rerun_seconds: dict[str, float] = {}
        self._sample_s, self._stop, self._lock = sample_s, threading.Event(), threading.Lock()

    def __getstate__(self) -> dict:
        """Spans and samples only: a clock read back in the bench process after its refresh's process ends."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_stop", "_lock")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _stop=threading.Event(), _lock=threading.Lock())

    def _record(self, span: progress.Span) -> None:
        """One finished span (on the thread that ran it)."""
        with self._lock:
            self.intervals[span.name].append((span.start, span.end))
            if span.name == "parse_file":
                self.staged_by_format[span.detail["format"]].append((span.start, span.end))
                self.files_by_format[span.detail["format"]] += span.detail.get("files", 1)
            if span.name == "sql_models" and "nodes" in span.detail:  # dbt build: each model's and check's time
                nodes = span.detail["nodes"]
                self.model_seconds = {n.name: round(n.seconds, 3) for n in nodes if n.resource_type == "model"}
                self.check_seconds = round(sum(n.seconds for n in nodes if n.resource_type == "test"), 3)
                self.check_seconds_by_name = {n.name: round(n.seconds, 3) for n in nodes if n.resource_type == "test"}
                self.memory_rerun_seconds = {n.name: round(n.seconds, 3) for n in span.detail.get("memory_reruns", [])}
            self.samples.append((span.end, rss_bytes()))  # short spans fall between samples

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
        """Listen to the refresh's spans and sample RSS for the duration of the block (the refresh is untouched)."""
        stop_listening = progress.listen_spans(self._record)
        sampler = threading.Thread(target=self._sample, daemon=True)
        sampler.start()
        try:
            yield self
        finally:
            stop_listening()
            self._stop.set()
            sampler.join()

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
        return {"files": self.files_by_format.get(fmt, 0), "rows": rows, "thread_busy_seconds": round(busy, 3),
                "rows_per_thread_s": round(rows / busy) if busy > 0 else None}

    def slowest_models(self) -> dict[str, float]:
        """Seconds per SQL model of the last dbt build, slowest first."""
        return dict(sorted(self.model_seconds.items(), key=lambda kv: -kv[1]))

    def slowest_checks(self, n: int = 5) -> dict[str, float]:
        """Seconds of the n slowest data tests of the last dbt build, slowest first (in no model's time)."""
        return dict(sorted(self.check_seconds_by_name.items(), key=lambda kv: -kv[1])[:n])

    def staged_in_processes(self) -> bool:
        """Whether files were staged in worker processes: batches ran, but no adapter's span reached this one."""
        return bool(self.intervals.get("parse")) and not self.intervals.get("parse_files")

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
