"""A real OpenSSH server on 127.0.0.1 for the tests: own keys, own config, own port, stopped afterwards."""
import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd", path="/usr/sbin:/usr/local/sbin:" + os.environ.get("PATH", "")) or "/usr/sbin/sshd"


@dataclass(frozen=True)
class Keys:
    """Key files made with ssh-keygen for one test session."""

    host_key: Path
    other_host_key: Path
    user_key: Path


def make_keys(directory: Path) -> Keys:
    """An ed25519 host key, a second host key (for 'changed key' tests) and a user key."""
    paths = {}
    for name in ("host_key", "other_host_key", "user_key"):
        path = directory / name
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
        paths[name] = path
    return Keys(**paths)


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def known_hosts_line(port: int, public_key_file: Path) -> str:
    """The known_hosts entry for [127.0.0.1]:port with this public key."""
    key_type, key = public_key_file.read_text().split()[:2]
    return f"[127.0.0.1]:{port} {key_type} {key}\n"


@dataclass(frozen=True)
class Server:
    """A running sshd: where it listens and how a client trusts it."""

    port: int
    user: str
    known_hosts: Path
    identity_file: Path
    log: Path


@contextmanager
def running_sshd(directory: Path, keys: Keys, env: dict[str, str]):
    """Start `sshd -D` with env set in every session (SetEnv); yield a Server; stop it."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    authorized = directory / "authorized_keys"
    authorized.write_text(Path(str(keys.user_key) + ".pub").read_text())
    setenv = " ".join(f"{k}={v}" for k, v in env.items())
    config = directory / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys.host_key}\nPidFile {directory / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {authorized}\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
        f"AllowUsers {getpass.getuser()}\nSetEnv {setenv}\nLogLevel VERBOSE\n"
    )
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation directory sshd requires as root
    known_hosts = directory / "known_hosts"
    known_hosts.write_text(known_hosts_line(port, Path(str(keys.host_key) + ".pub")))
    log = directory / "sshd.log"
    proc = subprocess.Popen([SSHD, "-D", "-f", str(config), "-E", str(log)], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"sshd did not start: {log.read_text() if log.exists() else ''}")
                time.sleep(0.05)
        yield Server(port, getpass.getuser(), known_hosts, keys.user_key, log)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
