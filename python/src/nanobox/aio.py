"""The asyncio variants of run and spawn (Sandbox.run_async,
Sandbox.spawn_async): the same runtime process, driven by asyncio."""

from __future__ import annotations

import asyncio
import errno
import os
import signal as _signal
import weakref
from typing import TYPE_CHECKING, Any, Optional, Sequence

from . import _runtime
from .errors import NanoboxError
from .options import Duration

if TYPE_CHECKING:
    from .sandbox import Input, Result, Sandbox, Stdio

__all__ = ["AsyncChild"]


def _terminate(proc: "asyncio.subprocess.Process") -> None:
    if proc.returncode is None:
        try:
            proc.send_signal(_signal.SIGTERM)
        except ProcessLookupError:
            pass


async def _end(proc: "asyncio.subprocess.Process") -> None:
    """End the run after an exception or a cancellation: SIGTERM (the
    runtime kills the sandbox), then SIGKILL if it does not end."""
    _terminate(proc)
    try:
        await asyncio.wait_for(proc.wait(), _runtime.TIMEOUT_GRACE)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()


async def _pump(
    proc: "asyncio.subprocess.Process", data: Optional[bytes], cap: int, timeout: Optional[float]
) -> _runtime.OutputBuffer:
    buf = _runtime.OutputBuffer(cap)

    async def read(stream: Optional[asyncio.StreamReader], n: int) -> None:
        if stream is None:
            return
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            buf.add(n, chunk)

    async def write() -> None:
        if proc.stdin is None:
            return
        try:
            if data:
                proc.stdin.write(data)
                await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            proc.stdin.close()

    async def all_of_it() -> None:
        await asyncio.gather(read(proc.stdout, 1), read(proc.stderr, 2), write())
        await proc.wait()

    work = asyncio.ensure_future(all_of_it())
    try:
        if timeout is None:
            await work
        else:
            done, _ = await asyncio.wait({work}, timeout=timeout)
            if not done:
                # Past the deadline: the runtime ends the run and writes its
                # report, or is killed if it does not end either.
                _terminate(proc)
                done, _ = await asyncio.wait({work}, timeout=_runtime.TIMEOUT_GRACE)
                if not done:
                    proc.kill()
            await work
    finally:
        if not work.done():
            work.cancel()
    return buf


async def run(sb: "Sandbox", argv: Sequence[str], data: Optional[bytes], timeout: Optional[float]) -> "Result":
    from .sandbox import _result

    opts = _runtime.run_options(sb._options, timeout)
    cap, _ = _runtime.output_cap(opts)
    inv = _runtime.Invocation(sb.binary, opts, argv)
    try:
        proc = await asyncio.create_subprocess_exec(
            *inv.argv,
            stdin=asyncio.subprocess.PIPE if data is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            buf = await _pump(proc, data, cap, None if timeout is None else timeout + _runtime.TIMEOUT_GRACE)
        except BaseException:
            await _end(proc)
            raise
        err = buf.get(2)
        report = inv.report(proc.returncode if proc.returncode is not None else 0, err)
        inv.check(report, err)
        return _result(report, buf.get(1), err, buf.truncated)
    finally:
        inv.cleanup()


async def spawn(sb: "Sandbox", argv: Sequence[str], stdin: "Stdio", stdout: "Stdio", stderr: "Stdio") -> "AsyncChild":
    inv = _runtime.Invocation(sb.binary, sb._options, argv)
    try:
        proc = await asyncio.create_subprocess_exec(*inv.argv, stdin=stdin, stdout=stdout, stderr=stderr)
    except BaseException:
        inv.cleanup()
        raise
    return AsyncChild(proc, inv, _runtime.output_cap(sb._options)[0])


async def spawn_pty(sb: "Sandbox", argv: Sequence[str], rows: int, cols: int) -> "AsyncChild":
    from .sandbox import _pty_invocation

    with _pty_invocation(sb, argv, rows, cols) as (master, slave, inv):
        proc = await asyncio.create_subprocess_exec(*inv.argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    return AsyncChild(proc, inv, _runtime.output_cap(sb._options)[0], AsyncPty(master))


class AsyncPty:
    """This side of a spawned program's terminal, for asyncio: ``await
    read()`` returns b"" once the runtime has closed the other side."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        os.set_blocking(fd, False)
        self.closed = False

    def fileno(self) -> int:
        return self._fd

    async def read(self, n: int = 65536) -> bytes:
        """What the terminal shows next (waits for it); b"" at its end."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                return os.read(self._fd, n)
            except BlockingIOError:
                pass
            except OSError as e:
                if e.errno == errno.EIO:
                    return b""
                raise
            ready = loop.create_future()
            loop.add_reader(self._fd, ready.set_result, None)
            try:
                await ready
            finally:
                loop.remove_reader(self._fd)

    async def write(self, data: bytes) -> None:
        """Type data into the terminal (waits while the terminal is full)."""
        loop = asyncio.get_running_loop()
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._fd, view):]
                continue
            except BlockingIOError:
                pass
            ready = loop.create_future()
            loop.add_writer(self._fd, ready.set_result, None)
            try:
                await ready
            finally:
                loop.remove_writer(self._fd)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self._fd)


class AsyncChild:
    """A program running in a sandbox of its own, from
    :meth:`Sandbox.spawn_async`: ``stdin`` is an asyncio StreamWriter,
    ``stdout`` and ``stderr`` StreamReaders (for the streams spawned with
    PIPE; None otherwise). Use it with ``async with`` to be sure the
    sandbox is gone when the block ends."""

    def __init__(
        self, proc: "asyncio.subprocess.Process", inv: _runtime.Invocation, cap: int, pty: Optional[AsyncPty] = None
    ) -> None:
        self._proc = proc
        self._inv = inv
        self._cap = cap
        self._result: Optional["Result"] = None
        self.stdin: Optional[asyncio.StreamWriter] = proc.stdin
        self.stdout: Optional[asyncio.StreamReader] = proc.stdout
        self.stderr: Optional[asyncio.StreamReader] = proc.stderr
        #: The program's terminal (spawned with pty), else None.
        self.pty = pty
        self._finalizer = weakref.finalize(self, inv.cleanup)

    @property
    def pid(self) -> int:
        """The pid of the runtime process that supervises the sandbox."""
        return self._proc.pid

    @property
    def returncode(self) -> Optional[int]:
        return self._proc.returncode

    async def wait(self, timeout: Optional[Duration] = None) -> "Result":
        """Wait for the sandbox to end; the result's stdout and stderr are
        empty (the streams are the caller's). Raises TimeoutError if
        ``timeout`` passes first (the sandbox keeps running)."""
        from .sandbox import _timeout

        if self._result is not None:
            return self._result
        t = _timeout(timeout)
        try:
            await asyncio.wait_for(asyncio.shield(self._proc.wait()), t)
        except asyncio.TimeoutError:
            raise TimeoutError(f"the sandbox still runs after {timeout} s") from None
        return self._finish(b"", b"", False)

    async def wait_with_output(self, input: "Input" = None) -> "Result":
        """Write ``input`` to stdin (then close it), read stdout and stderr
        to their end (at most the output limit, or 64 MiB, together), wait,
        and return the result with the output."""
        from .sandbox import _input_bytes

        if self._result is not None:
            return self._result
        data = _input_bytes(input)
        if data is not None and self.stdin is None and self.pty is None:
            raise NanoboxError("wait_with_output: input given, but stdin was not spawned with PIPE")
        if self.pty is not None:
            return await self._pty_output(data)
        try:
            buf = await _pump(self._proc, data, self._cap, None)
        except BaseException:
            await _end(self._proc)
            raise
        return self._finish(buf.get(1), buf.get(2), buf.truncated)

    def kill(self) -> None:
        """End the whole sandbox now (the result's status is ``cancelled``)."""
        _terminate(self._proc)

    def resize(self, rows: int, cols: int) -> None:
        """Change the size of the program's terminal (spawned with pty): the
        program gets SIGWINCH and the new size a moment later."""
        from .sandbox import _set_winsize

        if self.pty is None:
            raise NanoboxError("resize: the program was not spawned with a pty")
        _set_winsize(self.pty.fileno(), rows, cols)
        if self._proc.returncode is None:
            try:
                self._proc.send_signal(_signal.SIGWINCH)
            except ProcessLookupError:
                pass

    async def _pty_output(self, data: Optional[bytes]) -> "Result":
        assert self.pty is not None
        buf = _runtime.OutputBuffer(self._cap)
        try:
            if data:
                await self.pty.write(data)
            while True:
                chunk = await self.pty.read()
                if not chunk:
                    break
                buf.add(1, chunk)
            await self._proc.wait()
        except BaseException:
            await _end(self._proc)
            raise
        return self._finish(buf.get(1), b"", buf.truncated)

    def _finish(self, out: bytes, err: bytes, truncated: bool) -> "Result":
        from .sandbox import _result

        try:
            report = self._inv.report(self._proc.returncode or 0, err)
            self._inv.check(report, err)
            self._result = _result(report, out, err, truncated)
            return self._result
        finally:
            self._finalizer()

    async def __aenter__(self) -> "AsyncChild":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._proc.returncode is None:
            await _end(self._proc)
        if self.stdin is not None:
            self.stdin.close()
        if self.pty is not None:
            self.pty.close()
        self._finalizer()

    def __repr__(self) -> str:
        return f"<nanobox.AsyncChild pid={self.pid} returncode={self._proc.returncode}>"
