"""Stage progress for whoever watches a refresh in this process (the CLI's bar); silent otherwise."""
from typing import Callable

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
