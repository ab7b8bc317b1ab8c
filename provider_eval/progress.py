"""What a refresh announces as it goes: stage progress (the CLI's bar) and timed spans (make bench).

Silent unless someone in this process listens; listeners are called on the thread that announces.
Spans announced in worker processes stay there (nobody listens in a worker).
"""
import functools
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator

Listener = Callable[[str, int | None, int | None], None]
_listeners: list[Listener] = []


def listen(listener: Listener) -> Callable[[], None]:
    """Receive (stage, completed, total) updates; returns a function that stops listening."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener)


def stage(name: str, completed: int | None = None, total: int | None = None) -> None:
    """Announce a stage (and, for fan-out stages, how many of how many items are done)."""
    for listener in list(_listeners):
        listener(name, completed, total)


@dataclass(frozen=True)
class Span:
    """One timed piece of work: its stage name, time.perf_counter() at start and end, and what it was about."""

    name: str
    start: float
    end: float
    detail: dict = field(default_factory=dict)


SpanListener = Callable[[Span], None]
_span_listeners: list[SpanListener] = []


def listen_spans(listener: SpanListener) -> Callable[[], None]:
    """Receive every finished Span; returns a function that stops listening."""
    _span_listeners.append(listener)
    return lambda: _span_listeners.remove(listener)


@contextmanager
def span(name: str, **detail) -> Iterator[dict]:
    """Time the block as a span of stage `name`; what the block adds to the yielded dict travels with it.

    The span is announced when the block ends, raised or not; with nobody listening it costs two clock reads.
    """
    start = time.perf_counter()
    try:
        yield detail
    finally:
        if _span_listeners:
            done = Span(name, start, time.perf_counter(), detail)
            for listener in list(_span_listeners):
                listener(done)


def timed(name: str) -> Callable:
    """Decorator: every call of the function is a span of stage `name`."""
    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def timed_call(*args, **kwargs):
            with span(name):
                return fn(*args, **kwargs)
        return timed_call
    return decorate
