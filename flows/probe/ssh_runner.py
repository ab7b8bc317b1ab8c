"""Run the probe on a remote host over SSH: verified host key, key auth, deadlines, capped output."""
import asyncio
import ipaddress
import math
import re
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from provider_eval.errors import ProviderEvalError
from provider_eval.exit_codes import ExitCode

PROBE_SCRIPT = Path(__file__).with_name("probe.py")
HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
USERNAME = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$")
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
KILL_AFTER_S = 10
CLIENT_GRACE_S = 5


class SSHRefused(ProviderEvalError):
    """The host could not be reached or trusted: unknown/changed key, auth failure, timeout."""


class UnsafeTarget(ProviderEvalError):
    """A host, user or port failed allow-list validation; nothing was sent anywhere."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class Target:
    """Where to connect, already validated."""

    host: str
    port: int
    user: str
    identity_file: Path
    known_hosts: Path


@dataclass
class RemoteResult:
    """What came back from the remote command."""

    stdout: str
    stderr: str
    exit_status: int | None
    timed_out: bool
    truncated: bool
    host_key_fingerprint: str | None


def validate_target(host: str, port: int, user: str, identity_file: str | Path, known_hosts: str | Path) -> Target:
    """Allow-list the connection parameters before anything is built from them (reference §5.3)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not HOSTNAME.match(host or ""):
            raise UnsafeTarget(f"host {host!r} is not a hostname or IP address (letters, digits, dots, hyphens only)")
    if not USERNAME.match(user or ""):
        raise UnsafeTarget(f"user {user!r} is not a plain login name ([a-z_][a-z0-9_.-], at most 32 characters)")
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise UnsafeTarget(f"port {port!r} is not an integer from 1 to 65535")
    identity_file, known_hosts = Path(identity_file), Path(known_hosts)
    if not identity_file.is_file():
        raise UnsafeTarget(f"identity file {identity_file} does not exist")
    if not known_hosts.is_file():
        raise UnsafeTarget(f"known_hosts file {known_hosts} does not exist; host keys are never accepted unseen")
    return Target(host, port, user, identity_file, known_hosts)


def remote_command(timeout_s: int, bench: bool, deep: bool = False) -> str:
    """The one fixed remote command: python3 reads the probe from stdin, under `timeout -k`."""
    seconds = int(timeout_s)  # only integers we produced and fixed flags ever reach the command line
    args = ("" if bench else " --no-bench") + (" --deep" if deep else "")
    return f"timeout -k {KILL_AFTER_S} {seconds} python3 -{args}"


async def _read_capped(stream, limit: int, on_overflow) -> tuple[bytes, bool]:
    """Read a stream to EOF keeping at most limit bytes; on overflow call on_overflow (close the channel)."""
    kept = bytearray()
    try:
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return bytes(kept), False
            if len(kept) + len(chunk) > limit:
                kept += chunk[:limit - len(kept)]
                on_overflow()
                return bytes(kept), True
            kept += chunk
    except (asyncssh.Error, BrokenPipeError, ConnectionError):
        return bytes(kept), False


async def _run(target: Target, command: str, script: bytes, connect_timeout_s: float, command_timeout_s: float,
               max_output_bytes: int) -> RemoteResult:
    try:
        conn = await asyncssh.connect(
            target.host, port=target.port, username=target.user,
            known_hosts=str(target.known_hosts),  # never None: that would disable verification
            client_keys=[str(target.identity_file)], agent_path=None, password=None,
            kbdint_auth=False, gss_auth=False, preferred_auth=["publickey"],
            connect_timeout=connect_timeout_s, login_timeout=connect_timeout_s,
            keepalive_interval=15, keepalive_count_max=3, config=[],
        )
    except asyncssh.HostKeyNotVerifiable as exc:
        raise SSHRefused(f"{target.host}:{target.port}: host key not accepted ({exc.reason}); it is not the key "
                         f"recorded for this host in {target.known_hosts}. Get the fingerprint from the provider "
                         "out of band and add it; unknown or changed keys are never accepted") from None
    except asyncssh.PermissionDenied as exc:
        raise SSHRefused(f"{target.user}@{target.host}:{target.port}: key authentication refused ({exc.reason})") from None
    except (asyncio.TimeoutError, TimeoutError):
        raise SSHRefused(f"{target.host}:{target.port}: no SSH handshake within {connect_timeout_s:g} s") from None
    except (OSError, asyncssh.Error) as exc:
        raise SSHRefused(f"{target.host}:{target.port}: SSH connection failed: {exc}") from None
    fingerprint = None
    key = conn.get_server_host_key()
    if key is not None:
        fingerprint = key.get_fingerprint("sha256")
    timed_out = False
    try:
        process = await conn.create_process(command, encoding=None)
        process.stdin.write(script)
        process.stdin.write_eof()
        # A reader over its cap closes the channel at once, so the host cannot block the other stream.
        readers = asyncio.gather(_read_capped(process.stdout, max_output_bytes, process.close),
                                 _read_capped(process.stderr, 65536, process.close))
        try:
            (out, out_truncated), (errb, _) = await asyncio.wait_for(readers, command_timeout_s)
        except (asyncio.TimeoutError, TimeoutError):
            timed_out, out, errb, out_truncated = True, b"", b"", False
        if out_truncated or timed_out:
            # Stop the remote side now: closing the channel sends EOF/hangup; `timeout -k` is the backstop.
            process.close()
            exit_status = None
        else:
            try:
                completed = await asyncio.wait_for(process.wait(), 10)
                exit_status = completed.exit_status
            except (asyncio.TimeoutError, TimeoutError):
                exit_status = None
    finally:
        conn.abort()
    return RemoteResult(out.decode("utf-8", "replace"), errb.decode("utf-8", "replace"), exit_status,
                        timed_out, out_truncated, fingerprint)


def run_probe(target: Target, connect_timeout_s: float = 10, command_timeout_s: float = 300,
              bench: bool = True, max_output_bytes: int = MAX_OUTPUT_BYTES,
              script: bytes | None = None, deep: bool = False) -> RemoteResult:
    """Send the probe on stdin to `python3 -` on the target and collect its JSON output."""
    # The host stops the probe at the limit (TERM, then KILL after KILL_AFTER_S); the client waits a
    # little longer so the host's own exit status normally comes back, and gives up regardless.
    command = remote_command(max(1, math.ceil(command_timeout_s)), bench, deep)
    payload = PROBE_SCRIPT.read_bytes() if script is None else script
    return asyncio.run(_run(target, command, payload, connect_timeout_s, command_timeout_s + CLIENT_GRACE_S,
                            max_output_bytes))


def run_command(target: Target, command: str, connect_timeout_s: float = 10, command_timeout_s: float = 300,
                max_output_bytes: int = MAX_OUTPUT_BYTES) -> RemoteResult:
    """Run one prepared command (already allow-listed and quoted) with nothing on stdin."""
    return asyncio.run(_run(target, command, b"", connect_timeout_s, command_timeout_s + CLIENT_GRACE_S,
                            max_output_bytes))
