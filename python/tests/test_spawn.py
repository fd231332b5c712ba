"""Sandbox.spawn: a shell driven through its streams, waiting, killing,
and set-up errors."""

from __future__ import annotations

import errno
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import eventually, running, state_left
from nanobox import DEVNULL, PIPE, Child, ProgramNotFoundError, SandboxBuilder

PATH = "/usr/local/bin:/usr/bin:/bin"


def test_shell(builder: SandboxBuilder) -> None:
    sb = builder.env("PATH", PATH).build()
    with sb.spawn("sh") as child:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(b"echo hello from $(hostname)\n")
        child.stdin.flush()
        assert child.stdout.readline() == b"hello from sandbox\n"
        child.stdin.write(b"x=41; echo $((x + 1))\n")
        child.stdin.flush()
        assert child.stdout.readline() == b"42\n"
        child.stdin.write(b"echo bye >&2; exit 5\n")
        child.stdin.close()
        assert child.stderr is not None and child.stderr.read() == b"bye\n"
        r = child.wait()
    assert r.exit_code == 5 and r.status == "exited" and r.stdout_bytes == b""
    assert child.poll() is r


def test_wait_with_output(builder: SandboxBuilder) -> None:
    sb = builder.env("PATH", PATH).build()
    child = sb.spawn("sh", ["-c", "read first; echo got $first; cat; echo err >&2"])
    r = child.wait_with_output(input="one\ntwo\n")
    assert r.stdout == "got one\ntwo\n" and r.stderr == "err\n" and r.success
    # Output already read through the stream is not read again; the rest is.
    child = sb.spawn("sh", ["-c", "echo a; echo b; echo c"], stdin=DEVNULL)
    assert child.stdout is not None and child.stdout.readline() == b"a\n"
    assert child.wait_with_output().stdout == "b\nc\n"


def test_kill_ends_the_whole_sandbox(builder: SandboxBuilder, shared_dir: Path) -> None:
    mark = str(6000000 + os.getpid() % 100000)
    sb = builder.env("PATH", PATH).build()
    child = sb.spawn("sh", ["-c", f"sleep {mark} & sleep {mark} & echo ready; wait"], stdin=DEVNULL)
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    # The shell's children may not have become sleep yet (fork, then exec).
    eventually(lambda: running(f"^sleep {mark}$"), "the sleeps run")
    child.kill()
    r = child.wait()
    assert r.status == "cancelled" and r.report.killed and r.exit_code == 137
    assert subprocess.run(["pgrep", "-f", f"^sleep {mark}$"], stdout=subprocess.DEVNULL).returncode == 1, "processes left"
    child.stdout.close()


def test_context_manager_kills(builder: SandboxBuilder) -> None:
    sb = builder.build()
    with sb.spawn("sleep", ["1000"], stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL) as child:
        pass
    assert child.returncode is not None
    with pytest.raises(TimeoutError):
        with sb.spawn("sleep", ["1000"], stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL) as child2:
            child2.wait(timeout=0.01)
    assert child2.returncode is not None


def test_stdio_to_files(builder: SandboxBuilder, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with open(out, "wb") as f:
        child = builder.build().spawn("echo", ["to a file"], stdin=DEVNULL, stdout=f, stderr=PIPE)
        r = child.wait_with_output()
    assert r.success and out.read_bytes() == b"to a file\n"


def test_setup_error_at_wait(builder: SandboxBuilder) -> None:
    child = builder.build().spawn("no-such-program", stdin=DEVNULL)
    with pytest.raises(ProgramNotFoundError):
        child.wait_with_output()


def read_until(child: Child, marker: bytes) -> bytes:
    """What the program's terminal shows, up to marker (reads block until
    the program writes: no sleeps)."""
    assert child.pty is not None
    seen = b""
    while marker not in seen:
        chunk = child.pty.read(4096)
        assert chunk, f"the terminal closed before {marker!r}: {seen!r}"
        seen += chunk
    return seen


def test_pty(builder: SandboxBuilder) -> None:
    """A terminal of the sandbox's own: its size, a resize, line editing
    and ^C done by the sandbox's pty, the program's exit status."""
    sb = builder.env("PATH", PATH).env("PS1", "$ ").build()
    with sb.spawn("sh", pty=(30, 100)) as child:
        assert child.stdin is child.stdout is child.pty and child.stderr is None
        child.pty.write(b"tty; stty size; echo mark-$((1 + 1))\n")
        out = read_until(child, b"mark-2")
        assert b"/dev/pts/0\r\n30 100\r\n" in out
        # The runtime passes the new size on when it gets SIGWINCH, a
        # moment later: ask until the program sees it.
        child.resize(40, 120)
        deadline = time.monotonic() + 60
        for i in itertools.count(3):
            child.pty.write(f"stty size; echo mark-$(({i} + 0))\n".encode())
            if b"40 120\r\n" in read_until(child, f"mark-{i}\r\n".encode()):
                break
            assert time.monotonic() < deadline, "the program never saw the new size"
        # Line editing: the terminal's erase (DEL) takes back the typed x.
        child.pty.write(b"echo edited-ax\x7fb\n")
        assert b"edited-ab" in read_until(child, b"edited-ab\r\n")
        # ^C reaches the program in the foreground, not the runtime: the
        # sleep ends, and so does the rest of its line. The job says it
        # runs once it is the terminal's foreground (the shell's child
        # makes itself that before it runs anything): a ^C earlier would
        # reach the shell instead.
        child.pty.write(b"sh -c 'echo sleep-$((3 + 4)); exec sleep 1000'; echo after-$((4 + 5))\n")
        read_until(child, b"sleep-7\r\n")
        child.pty.write(b"\x03")
        assert b"after-9" not in read_until(child, b"\n$ ")
        child.pty.write(b"echo still-$((5 + 5)); exit 7\n")
        r = child.wait_with_output()
    assert b"still-10\r\n" in r.stdout_bytes and b"after-9" not in r.stdout_bytes
    assert r.exit_code == 7 and r.status == "exited", r.stdout


def test_pty_spawn_failure_leaves_nothing(builder: SandboxBuilder, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A pty spawn whose runtime cannot be started raises the cause and
    leaves neither end of the pty nor the options' temporary directory."""
    sb = builder.build()
    tmp = tmp_path / "inv"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    fds = sorted(os.listdir("/proc/self/fd"))

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EAGAIN, "no process for the runtime")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    with pytest.raises(OSError, match="no process for the runtime"):
        sb.spawn("sh", pty=True)
    assert sorted(os.listdir("/proc/self/fd")) == fds
    assert os.listdir(tmp) == []


def test_the_sandbox_ends_with_this_process(builder: SandboxBuilder, tmp_path: Path) -> None:
    """A Python program that dies (SIGKILL: nothing of it runs) leaves no
    sandbox running."""
    mark = str(6200000 + os.getpid() % 100000)
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    script = f"""
import sys
from nanobox import Sandbox, Permission
sb = Sandbox.builder().state_root({str(tmp_path / "st")!r}).env("PATH", "/usr/bin:/bin").mount({str(tmp_path)!r}, "/sync", Permission.ReadWrite).build()
child = sb.spawn("sh", ["-c", "sleep {mark} & echo up >/sync/ready; wait"])
child.wait()
"""
    (tmp_path / "st").mkdir(mode=0o700)
    p = subprocess.Popen([sys.executable, "-c", script])
    try:
        with open(ready) as f:
            assert f.readline() == "up\n"
        eventually(lambda: running(f"^sleep {mark}$"), "the sleep runs")
    finally:
        p.kill()
        p.wait()
    # The runtime ends the run on its own once its parent is gone: poll,
    # with a generous deadline.
    deadline = time.monotonic() + 60
    while subprocess.run(["pgrep", "-f", f"^sleep {mark}$"], stdout=subprocess.DEVNULL).returncode == 0:
        assert time.monotonic() < deadline, "the sandbox outlived the program that spawned it"
        time.sleep(0.05)
    while state_left(tmp_path / "st"):
        assert time.monotonic() < deadline, f"state left: {state_left(tmp_path / 'st')}"
        time.sleep(0.05)
