"""The DuckDB warehouse file: build a new one beside the published one, then swap it in atomically."""
import errno
import fcntl
import os
import shutil
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path

import duckdb

from provider_eval import progress
from provider_eval.errors import WarehouseMissing
from provider_eval.settings import get_settings


def __getattr__(name: str):
    # BUILD_MEMORY_LIMIT (PROVIDER_EVAL_BUILD_MEMORY_LIMIT, provider_eval/settings.py) is read when used.
    if name == "BUILD_MEMORY_LIMIT":
        return get_settings("build_memory_limit").build_memory_limit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def connect(path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a warehouse with times in UTC."""
    con = duckdb.connect(str(path), read_only=read_only)
    con.execute("set TimeZone = 'UTC'")
    return con


def connect_build(path: Path, spill_dir: Path) -> duckdb.DuckDBPyConnection:
    """Open a warehouse being built, with bounded memory that spills into spill_dir (removed with the build)."""
    con = connect(path)
    limit = get_settings("build_memory_limit").build_memory_limit  # checked: a number and a unit, no quote
    con.execute(f"set memory_limit = '{limit}'")
    con.execute("set temp_directory = '{}'".format(str(spill_dir).replace("'", "''")))
    return con


# A reader of the published warehouse writes no file: the warehouse is attached read-only to a
# private in-memory database, then external access is switched off (no `copy … to`, `export
# database`, `attach` of a file, `install`/`load`, read_csv/read_text of other files) and the
# configuration locked, before the caller's SQL runs. Attaching (rather than opening the file
# with a config) also keeps DuckDB's per-process instance cache out of the way: another
# connection to the same file in this process, with other settings, does not block this one.
LOCKED_READER_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}


def connect_published(path: Path) -> duckdb.DuckDBPyConnection:
    """Open the published warehouse so that nothing run on it can write any file (docs/warehouse.md)."""
    if not path.exists():
        raise WarehouseMissing(f"no warehouse at {path}; run `provider-eval refresh` first")
    con = duckdb.connect(":memory:", config=LOCKED_READER_CONFIG)
    alias = '"' + path.stem.replace('"', '""') + '"'  # the name DuckDB gives a file it opens itself
    con.execute(f"attach '{str(path.resolve()).replace(chr(39), chr(39) * 2)}' as {alias} (read_only)")
    con.execute(f"use {alias}")
    con.execute("set enable_external_access = false")
    con.execute("set TimeZone = 'UTC'")
    # Last, before any caller's SQL: no `set`/`pragma`/`reset` can turn external access back on.
    con.execute("set lock_configuration = true")
    return con


@contextmanager
def writer_lock(published: Path):
    """One refresh writes at a time per warehouse; a second one waits for the first."""
    published.parent.mkdir(parents=True, exist_ok=True)
    with open(published.with_name(published.name + ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@progress.timed("copy")
def copy_published(published: Path, build: Path) -> bool:
    """Start a build from a copy of the published file (False: none published); the original is never opened.

    The copy runs in the kernel (copy_file_range: a reflink, no bytes copied, on XFS/btrfs; a
    page-cache copy elsewhere), so it costs a fraction of rebuilding the history it holds. Call
    it under the writer lock: the published file is then checkpointed and nothing writes it.
    """
    if not published.is_file():
        return False
    build.parent.mkdir(parents=True, exist_ok=True)
    with open(published, "rb") as src, open(build, "wb") as dst:
        left = os.fstat(src.fileno()).st_size
        try:
            while left > 0:
                copied = os.copy_file_range(src.fileno(), dst.fileno(), left)
                if copied == 0:
                    break
                left -= copied
        except OSError as exc:
            # A file system without it, or across devices on old kernels; anything else (a full
            # disk) fails the build, which then publishes nothing.
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
                raise
            src.seek(0)
            dst.seek(0)
            dst.truncate()
            shutil.copyfileobj(src, dst, 16 * 2**20)
            left = 0
        if left:
            raise RuntimeError(f"copying {published} stopped {left} bytes short")
    return True


def previous_path(published: Path) -> Path:
    """Where publish keeps the warehouse it replaced, for the next refresh to start from."""
    return published.parent / ".previous" / published.name


def _open_in_this_process(path: Path) -> bool:
    """Whether any file descriptor of this process refers to the file at path (True where unknown).

    DuckDB's lock keeps other processes' readers of a file safe from a writer, but not readers in the
    writer's own process (POSIX locks never conflict within one process): those are found here."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        return True
    target = path.stat()
    for fd in fds.iterdir():
        try:
            held = os.stat(fd)
        except OSError:  # closed since it was listed
            continue
        if (held.st_dev, held.st_ino) == (target.st_dev, target.st_ino):
            return True
    return False


@progress.timed("take_previous")
def take_previous(published: Path, build: Path) -> bool:
    """Move the warehouse the last publish replaced (previous_path) in as the build's start.

    False (and nothing moved, or the file dropped) when there is none, when another name links the
    same file (the published one, if a publish was killed between keeping it and its rename: the
    build would write the published file in place), or a reader in this process still has it open.
    A reader in another process holds DuckDB's lock on it: connecting for the build then fails, and
    the caller drops it (its reader keeps the file) and copies instead. Call it under the writer lock."""
    previous = previous_path(published)
    if not previous.is_file():
        return False
    if previous.stat().st_nlink > 1:
        previous.unlink()
        return False
    build.parent.mkdir(parents=True, exist_ok=True)
    os.replace(previous, build)
    if _open_in_this_process(build):
        build.unlink()
        return False
    return True


@progress.timed("publish")
def publish(build: Path, published: Path, retired_dir: Path | None = None,
            keep_previous: bool = False) -> threading.Thread | None:
    """Atomically replace the published file; readers holding the old one keep their snapshot.

    retired_dir: a file to drop is first linked there (as <published name>.retired-<id>) and
    removed on a background thread, which is returned: freeing a file's blocks takes time that grows
    with its size (0.75 s for the 3 GB warehouse at SCALE=default), so the rename itself frees
    nothing. A removal cut short (the process killed) leaves the link for the next build's sweep of
    retired_dir. None: the rename removes it, as before. keep_previous: the replaced file is linked
    at previous_path instead (the next refresh starts from it, take_previous), and the file kept
    there before is the one retired.
    """
    with connect(build) as con:
        con.execute("checkpoint")
    wal = Path(str(build) + ".wal")
    if wal.exists():
        raise RuntimeError(f"{build} still has a write-ahead log after checkpoint; not publishing")
    retired = None
    previous = previous_path(published)
    if retired_dir is not None and (previous.is_file() or (published.exists() and not keep_previous)):
        retired_dir.mkdir(parents=True, exist_ok=True)
        retired = retired_dir / f"{published.name}.retired-{uuid.uuid4().hex}"
        try:
            if previous.is_file():  # the file kept last time, not taken by this build: dropped now
                os.replace(previous, retired)
            else:
                os.link(published, retired)
        except OSError:  # a file system without hard links: the rename frees the old file itself
            retired = None
    previous.unlink(missing_ok=True)  # still there only when it could not be retired (or none is kept)
    if keep_previous and published.exists():
        previous.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(published, previous)
        except OSError:  # no hard links here: nothing is kept, the next refresh copies
            pass
    os.replace(build, published)
    # Make the rename durable before we report success.
    dir_fd = os.open(published.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    if retired is None:
        return None
    # Not a daemon: the interpreter waits for it at exit rather than leaving the blocks held.
    remover = threading.Thread(target=retired.unlink, kwargs={"missing_ok": True}, name="retire-warehouse")
    remover.start()
    return remover
