"""The asyncio variants of run and spawn."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import time

import pytest

from nanobox import DEVNULL, AsyncChild, ProgramNotFoundError, SandboxBuilder

PATH = "/usr/local/bin:/usr/bin:/bin"


def test_run_async(builder: SandboxBuilder) -> None:
    sb = builder.env("PATH", PATH).build()

    async def main() -> None:
        r = await sb.run_async("echo", ["hello"])
        assert r.stdout == "hello\n" and r.success
        # Several at once, each in a sandbox of its own.
        rs = await asyncio.gather(*(sb.run_async("sh", ["-c", f"echo {i}; hostname"]) for i in range(6)))
        assert [r.stdout.split() for r in rs] == [[str(i), "sandbox"] for i in range(6)]
        assert len({r.report.id for r in rs}) == 6
        r = await sb.run_async("cat", input=b"in")
        assert r.stdout == "in"
        r = await sb.run_async("sleep", ["30"], timeout=0.3)
        assert r.status == "wall-timeout"
        with pytest.raises(ProgramNotFoundError):
            await sb.run_async("no-such-program")

    asyncio.run(main())


def test_spawn_async_shell(builder: SandboxBuilder) -> None:
    sb = builder.env("PATH", PATH).build()

    async def main() -> None:
        async with await sb.spawn_async("sh") as child:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(b"echo one\n")
            await child.stdin.drain()
            assert await child.stdout.readline() == b"one\n"
            child.stdin.write(b"exit 4\n")
            r = await child.wait_with_output()
        assert r.exit_code == 4

    asyncio.run(main())


def test_cancelling_a_run_ends_its_sandbox(builder: SandboxBuilder) -> None:
    mark = str(7000000 + os.getpid() % 100000)
    sb = builder.env("PATH", PATH).build()

    async def main() -> None:
        task = asyncio.ensure_future(sb.run_async("sh", ["-c", f"sleep {mark} & echo started >/dev/null; wait"]))
        # Wait until the sandbox's process exists (polled, with a deadline).
        for _ in range(2000):
            if subprocess.run(["pgrep", "-f", f"^sleep {mark}$"], stdout=subprocess.DEVNULL).returncode == 0:
                break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("the sandbox never started")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert subprocess.run(["pgrep", "-f", f"^sleep {mark}$"], stdout=subprocess.DEVNULL).returncode == 1, "processes left"


def test_kill_async(builder: SandboxBuilder) -> None:
    sb = builder.env("PATH", PATH).build()

    async def main() -> None:
        child = await sb.spawn_async("sh", ["-c", "echo ready; sleep 1000"], stdin=DEVNULL)
        assert child.stdout is not None and await child.stdout.readline() == b"ready\n"
        child.kill()
        r = await child.wait()
        assert r.status == "cancelled"

    asyncio.run(main())


def test_spawn_async_pty(builder: SandboxBuilder) -> None:
    """spawn_async with a terminal of the sandbox's own: its size, a
    resize, the program's exit status."""
    sb = builder.env("PATH", PATH).env("PS1", "$ ").build()

    async def until(child: AsyncChild, marker: bytes) -> bytes:
        assert child.pty is not None
        seen = b""
        while marker not in seen:
            chunk = await child.pty.read()
            assert chunk, f"the terminal closed before {marker!r}: {seen!r}"
            seen += chunk
        return seen

    async def main() -> None:
        async with await sb.spawn_async("sh", pty=(33, 99)) as child:
            assert child.pty is not None and child.stdin is None and child.stdout is None
            await child.pty.write(b"tty; stty size; echo mark-$((1 + 1))\n")
            assert b"/dev/pts/0\r\n33 99\r\n" in await until(child, b"mark-2\r\n")
            # The runtime passes the new size on when it gets SIGWINCH, a
            # moment later: ask until the program sees it.
            child.resize(41, 121)
            deadline = time.monotonic() + 60
            for i in itertools.count(3):
                await child.pty.write(f"stty size; echo mark-$(({i} + 0))\n".encode())
                if b"41 121\r\n" in await until(child, f"mark-{i}\r\n".encode()):
                    break
                assert time.monotonic() < deadline, "the program never saw the new size"
            r = await child.wait_with_output(b"echo bye-$((3 + 3)); exit 5\n")
        assert b"bye-6\r\n" in r.stdout_bytes and r.exit_code == 5 and r.status == "exited", r.stdout
        with pytest.raises(ValueError):
            await sb.spawn_async("sh", pty=True, stdin=DEVNULL)

    asyncio.run(main())
