"""Sandbox, Result and Child: running programs in sandboxes."""

from __future__ import annotations

import contextlib
import copy
import errno
import fcntl
import io
import os
import selectors
import signal as _signal
import struct
import subprocess
import termios
import time
import tty
import weakref
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Dict, Iterator, Mapping, Optional, Sequence, Tuple, Union, cast

from . import _runtime
from .errors import NanoboxError
from .options import Duration, SandboxBuilder, seconds
from .report import Report

if TYPE_CHECKING:
    from .aio import AsyncChild

__all__ = ["Sandbox", "Result", "Child", "PIPE", "DEVNULL", "INHERIT", "Stdio"]

#: Stdio choices for :meth:`Sandbox.spawn`: a pipe to this process (the
#: default), /dev/null, or this process's own stream.
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
INHERIT: None = None

#: A spawn stream: PIPE, DEVNULL, INHERIT, a file descriptor or a file object.
Stdio = Union[int, IO[Any], None]

Input = Union[str, bytes, None]


@dataclass(frozen=True)
class Result:
    """What a run returns: the program's output, its exit status and the
    execution report."""

    #: The program's stdout and stderr, at most the output limit (or
    #: 64 MiB without one) together.
    stdout_bytes: bytes
    stderr_bytes: bytes
    #: The exit status; 128+N when signal N killed the program.
    exit_code: int
    #: The signal that killed the program, or None.
    signal: Optional[int]
    report: Report
    #: Output was dropped (past the output limit, or the 64 MiB cap).
    output_truncated: bool = False

    @property
    def stdout(self) -> str:
        """stdout decoded as UTF-8 (undecodable bytes replaced)."""
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        """stderr decoded as UTF-8 (undecodable bytes replaced)."""
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def success(self) -> bool:
        """The program exited 0 (report status ``ok``)."""
        return self.report.status == "ok"

    @property
    def status(self) -> str:
        """The report's status: ``ok``, ``exited``, ``signaled``, ``oom``,
        ``wall-timeout``, ``cpu-timeout``, ``output-limit``, ``cancelled``."""
        return self.report.status


def _result(report: Report, out: bytes = b"", err: bytes = b"", truncated: bool = False) -> Result:
    return Result(
        stdout_bytes=out,
        stderr_bytes=err,
        exit_code=report.exit_code,
        signal=report.signal or None,
        report=report,
        output_truncated=truncated or report.output_truncated,
    )


def _input_bytes(data: Input) -> Optional[bytes]:
    if data is None or isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    raise TypeError(f"input: want str or bytes, got {type(data).__name__}")


def _argv(cmd: str, args: Optional[Sequence[str]]) -> Tuple[str, ...]:
    if not isinstance(cmd, str) or not cmd:
        raise ValueError("the program to run must be a non-empty string")
    if isinstance(args, str):
        raise TypeError("args: want a list of strings, not one string")
    return (cmd, *(args or ()))


def _timeout(timeout: Optional[Duration]) -> Optional[float]:
    return None if timeout is None else float(seconds(timeout, "timeout"))


class Sandbox:
    """A set of sandbox options; every run gets a fresh sandbox made from
    them, and nothing carries over from one run to the next. Safe to share
    between threads.

    Make one with :meth:`builder` or a preset (:meth:`agent_executor`,
    :meth:`code_judge`, :meth:`data_analysis`) and ``.build()``.
    """

    def __init__(self, options: Mapping[str, Any], binary: Optional[str] = None) -> None:
        self._options: Dict[str, Any] = copy.deepcopy(dict(options))
        self._binary = _runtime.find_binary(binary)

    # ---- Making one

    @staticmethod
    def builder() -> SandboxBuilder:
        """A builder starting from the default options: the host's system
        directories read-only, private /tmp, no network, no limits."""
        return SandboxBuilder()

    @staticmethod
    def agent_executor(workspace: str = ".") -> SandboxBuilder:
        """The agent-executor preset: ``workspace`` read-write at /workspace,
        its .git read-only (history and diffs, no commits), the rest read-only, no
        network, generous limits (see the README)."""
        return SandboxBuilder(preset=("agent-executor", workspace))

    @staticmethod
    def code_judge(submission: str = ".") -> SandboxBuilder:
        """The code-judge preset: ``submission`` read-only at /submission,
        strict limits that fail closed, the strict seccomp profile."""
        return SandboxBuilder(preset=("code-judge", submission))

    @staticmethod
    def data_analysis(input: str, output: str) -> SandboxBuilder:
        """The data-analysis preset: ``input`` read-only at /input, ``output``
        read-write at /output, no network."""
        return SandboxBuilder(preset=("data-analysis", input, output))

    @staticmethod
    def from_options(options: Mapping[str, Any], binary: Optional[str] = None) -> "Sandbox":
        """A sandbox from an options object in the contract's JSON form,
        checked against this host like :meth:`SandboxBuilder.build`."""
        b = SandboxBuilder(options=options)
        if binary is not None:
            b.binary(binary)
        return b.build()

    @property
    def options(self) -> Dict[str, Any]:
        """The options, in the contract's JSON form (a copy)."""
        return copy.deepcopy(self._options)

    @property
    def binary(self) -> str:
        """The nanobox-runc this sandbox runs."""
        return self._binary

    # ---- Running

    def run(
        self,
        cmd: str,
        args: Optional[Sequence[str]] = None,
        input: Input = None,
        timeout: Optional[Duration] = None,
    ) -> Result:
        """Run ``cmd`` with ``args`` in a fresh sandbox and wait for it.

        ``input`` (str or bytes) is the program's stdin (/dev/null without
        it). ``timeout`` (seconds or timedelta) tightens the wall-time limit
        for this run: past it the runtime kills the whole sandbox and the
        result's status is ``wall-timeout``.

        A program that fails is a Result (``success`` False, ``status``
        says why); a sandbox that could not be set up raises a
        :class:`~nanobox.SandboxSetupError` subclass.
        """
        argv = _argv(cmd, args)
        data = _input_bytes(input)
        t = _timeout(timeout)
        opts = _runtime.run_options(self._options, t)
        cap, _ = _runtime.output_cap(opts)
        inv = _runtime.Invocation(self._binary, opts, argv)
        try:
            proc = subprocess.Popen(
                inv.argv,
                stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            try:
                buf = _pump(proc, data, cap, None if t is None else time.monotonic() + t + _runtime.TIMEOUT_GRACE)
            except BaseException:
                _end(proc)
                raise
            report = inv.report(proc.returncode, buf.get(2))
            inv.check(report, buf.get(2))
            return _result(report, buf.get(1), buf.get(2), buf.truncated)
        finally:
            inv.cleanup()

    def spawn(
        self,
        cmd: str,
        args: Optional[Sequence[str]] = None,
        *,
        stdin: Stdio = PIPE,
        stdout: Stdio = PIPE,
        stderr: Stdio = PIPE,
        pty: Union[bool, Tuple[int, int]] = False,
    ) -> "Child":
        """Start ``cmd`` in a fresh sandbox and return at once.

        Each of stdin, stdout and stderr is PIPE (the default: the Child's
        ``stdin``/``stdout``/``stderr`` streams), DEVNULL, INHERIT (this
        process's own), a file descriptor or a file object. A sandbox that
        cannot be set up raises its :class:`~nanobox.SandboxSetupError`
        from :meth:`Child.wait`.

        ``pty=True`` (24 rows, 80 columns) or ``pty=(rows, cols)`` gives the
        program a terminal of its own instead, a pty inside the sandbox
        (``nanobox-runc sandbox -t``): the Child's ``pty`` (also its
        ``stdin`` and ``stdout``) is the other end, raw bytes both ways
        (line editing, echo and ^C are the sandbox's terminal's), and
        :meth:`Child.resize` changes its size.
        """
        argv = _argv(cmd, args)
        if pty:
            if (stdin, stdout, stderr) != (PIPE, PIPE, PIPE):
                raise ValueError("spawn: pty gives the program its stdin, stdout and stderr: drop the stdio arguments")
            return self._spawn_pty(argv, *_pty_size(pty))
        inv = _runtime.Invocation(self._binary, self._options, argv)
        try:
            proc = subprocess.Popen(inv.argv, stdin=stdin, stdout=stdout, stderr=stderr)
        except BaseException:
            inv.cleanup()
            raise
        return Child(proc, inv, self._options)

    def _spawn_pty(self, argv: Sequence[str], rows: int, cols: int) -> "Child":
        # The runtime (-t) makes the program's pty in the sandbox and relays
        # it to its own stdin and stdout: here, a pty of this process's, so
        # that the runtime reads the window size from it (at start, and on
        # SIGWINCH: resize).
        with _pty_invocation(self, argv, rows, cols) as (master, slave, inv):
            proc = subprocess.Popen(inv.argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
        return Child(proc, inv, self._options, pty_master=master)

    async def run_async(
        self,
        cmd: str,
        args: Optional[Sequence[str]] = None,
        input: Input = None,
        timeout: Optional[Duration] = None,
    ) -> Result:
        """:meth:`run` for asyncio."""
        from . import aio

        return await aio.run(self, _argv(cmd, args), _input_bytes(input), _timeout(timeout))

    async def spawn_async(
        self,
        cmd: str,
        args: Optional[Sequence[str]] = None,
        *,
        stdin: Stdio = PIPE,
        stdout: Stdio = PIPE,
        stderr: Stdio = PIPE,
        pty: Union[bool, Tuple[int, int]] = False,
    ) -> "AsyncChild":
        """:meth:`spawn` for asyncio: the streams are asyncio's
        StreamWriter (stdin) and StreamReaders; with ``pty`` (as for
        :meth:`spawn`), ``pty`` is the terminal's other end, with
        ``await read()`` and ``write()``."""
        from . import aio

        argv = _argv(cmd, args)
        if pty:
            if (stdin, stdout, stderr) != (PIPE, PIPE, PIPE):
                raise ValueError("spawn_async: pty gives the program its stdin, stdout and stderr: drop the stdio arguments")
            return await aio.spawn_pty(self, argv, *_pty_size(pty))
        return await aio.spawn(self, argv, stdin, stdout, stderr)

    def __repr__(self) -> str:
        return f"Sandbox({self._options!r})"


def _read(f: IO[bytes]) -> Optional[bytes]:
    """What a non-blocking stream has now (None: nothing yet, b"": its end)."""
    try:
        return f.read(65536)
    except BlockingIOError:
        return None


def _pump(proc: "subprocess.Popen[bytes]", data: Optional[bytes], cap: int, deadline: Optional[float]) -> _runtime.OutputBuffer:
    """Feed data to proc's stdin and read its stdout and stderr into a
    buffer of cap bytes until both end and proc exits; past deadline the
    run is ended (the runtime kills the sandbox and reports cancelled)."""
    buf = _runtime.OutputBuffer(cap)
    sel = selectors.DefaultSelector()
    streams = [(n, f) for n, f in ((1, proc.stdout), (2, proc.stderr)) if f is not None]
    try:
        for n, f in streams:
            os.set_blocking(f.fileno(), False)
            # What a caller's reads left in the stream's buffer comes first.
            chunk = _read(f)
            if chunk == b"":
                continue
            if chunk:
                buf.add(n, chunk)
            sel.register(f, selectors.EVENT_READ, n)
        view = memoryview(data or b"")
        if proc.stdin is not None:
            try:
                proc.stdin.flush()
            except BrokenPipeError:
                view = view[len(view):]
            if view:
                os.set_blocking(proc.stdin.fileno(), False)
                sel.register(proc.stdin, selectors.EVENT_WRITE, 0)
            else:
                _close(proc.stdin)
        ended = False
        while sel.get_map():
            wait = None
            if deadline is not None:
                wait = max(deadline - time.monotonic(), 0)
                if wait == 0:
                    if not ended:
                        _terminate(proc)
                        ended = True
                        # The runtime tears the sandbox down and writes its
                        # report; it is killed if it does not end either.
                        deadline = time.monotonic() + _runtime.TIMEOUT_GRACE
                    else:
                        proc.kill()
                        deadline = None
                    continue
            for key, _ in sel.select(wait):
                f = cast(IO[bytes], key.fileobj)
                if key.data == 0:
                    try:
                        n = os.write(key.fd, view[:65536])
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        n = len(view)
                    view = view[n:]
                    if not view:
                        sel.unregister(f)
                        _close(f)
                    continue
                chunk = _read(f)
                if chunk is None:
                    continue
                if not chunk:
                    sel.unregister(f)
                    continue
                buf.add(key.data, chunk)
    finally:
        sel.close()
        for _, f in streams:
            _close(f)
        if proc.stdin is not None:
            _close(proc.stdin)
    proc.wait()
    return buf


def _close(f: Union[IO[Any], io.IOBase]) -> None:
    try:
        f.close()
    except (BrokenPipeError, BlockingIOError):
        pass


def _terminate(proc: "subprocess.Popen[Any]") -> None:
    """Ask the runtime to end the run: SIGTERM makes it kill every process
    of the sandbox and write the report (status cancelled)."""
    if proc.returncode is None:
        try:
            proc.send_signal(_signal.SIGTERM)
        except ProcessLookupError:
            pass


def _end(proc: "subprocess.Popen[Any]") -> None:
    """End the run after an exception in this process: the sandbox is
    killed (by the runtime, or by its parent-death signal) and reaped."""
    _terminate(proc)
    try:
        proc.wait(timeout=_runtime.TIMEOUT_GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _open_pty(rows: int, cols: int) -> Tuple[int, int]:
    """A pty of this process's for the runtime's -t: (master, slave)."""
    master, slave = os.openpty()
    try:
        # Raw from the start (the runtime makes it raw too, once the
        # sandbox runs), so that what is written before then is not echoed
        # here; and without ONLCR, which the runtime's raw mode keeps (with
        # OPOST, as containerd's console does): the sandbox's terminal has
        # already made each newline "\r\n".
        tty.setraw(slave)
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.ONLCR
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        _set_winsize(slave, rows, cols)
    except BaseException:
        os.close(master)
        os.close(slave)
        raise
    return master, slave


@contextlib.contextmanager
def _pty_invocation(sb: "Sandbox", argv: Sequence[str], rows: int, cols: int) -> Iterator[Tuple[int, int, _runtime.Invocation]]:
    """The pty and the --tty invocation a spawn with pty starts the runtime
    with, on the slave: (master, slave, inv). The slave is closed when the
    block ends (the runtime has its own); if the block raises, the master
    and the invocation's files go too. Shared by spawn and spawn_async."""
    master, slave = _open_pty(rows, cols)
    inv: Optional[_runtime.Invocation] = None
    try:
        inv = _runtime.Invocation(sb.binary, sb._options, argv, ["--tty"])
        yield master, slave, inv
    except BaseException:
        if inv is not None:
            inv.cleanup()
        os.close(master)
        raise
    finally:
        os.close(slave)


def _pty_size(pty: Union[bool, Tuple[int, int]]) -> Tuple[int, int]:
    rows, cols = (24, 80) if pty is True else cast(Tuple[int, int], pty)
    rows, cols = int(rows), int(cols)
    if not (0 < rows < 65536 and 0 < cols < 65536):
        raise ValueError(f"pty: rows and columns must be in 1..65535, got {rows}x{cols}")
    return rows, cols


def _set_winsize(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class _PtyIO(io.RawIOBase):
    """This side of a spawned program's terminal: reads end (b"") once the
    runtime has closed the other side (the kernel says EIO then)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        try:
            return os.readv(self._fd, [b])
        except OSError as e:
            if e.errno == errno.EIO:
                return 0
            raise

    def write(self, b: Any) -> int:
        return os.write(self._fd, b)

    def close(self) -> None:
        if not self.closed:
            try:
                os.close(self._fd)
            finally:
                super().close()


class Child:
    """A program running in a sandbox of its own, from :meth:`Sandbox.spawn`.

    ``stdin``, ``stdout`` and ``stderr`` are binary file objects for the
    streams spawned with PIPE (None otherwise). Use it as a context manager
    to be sure the sandbox is gone when the block ends.
    """

    def __init__(
        self, proc: "subprocess.Popen[bytes]", inv: _runtime.Invocation, options: Mapping[str, Any], pty_master: Optional[int] = None
    ) -> None:
        self._proc = proc
        self._inv = inv
        self._cap = _runtime.output_cap(dict(options))[0]
        self._result: Optional[Result] = None
        #: The program's terminal (spawned with pty), else None.
        self.pty: Optional[_PtyIO] = _PtyIO(pty_master) if pty_master is not None else None
        self.stdin: Optional[IO[bytes]] = proc.stdin
        self.stdout: Optional[IO[bytes]] = proc.stdout
        self.stderr: Optional[IO[bytes]] = proc.stderr
        if self.pty is not None:
            self.stdin = self.stdout = cast(IO[bytes], self.pty)
        # The temporary directory goes with the Child even if wait is never
        # called.
        self._finalizer = weakref.finalize(self, inv.cleanup)

    @property
    def pid(self) -> int:
        """The pid of the runtime process that supervises the sandbox (not
        of the program inside it)."""
        return self._proc.pid

    @property
    def returncode(self) -> Optional[int]:
        """The exit status once it is known (see :meth:`poll`)."""
        return self._proc.returncode

    def poll(self) -> Optional[Result]:
        """The result if the sandbox has ended, None if it still runs."""
        if self._result is None and self._proc.poll() is not None:
            return self._finish(b"", b"", False)
        return self._result

    def wait(self, timeout: Optional[Duration] = None) -> Result:
        """Wait for the sandbox to end and return its result (stdout and
        stderr empty: they are the caller's streams). As with
        subprocess.Popen, a program blocked on a full pipe that nobody
        reads never ends: read the pipes, or use :meth:`wait_with_output`.
        Raises TimeoutError if ``timeout`` passes first (the sandbox keeps
        running)."""
        if self._result is not None:
            return self._result
        try:
            self._proc.wait(_timeout(timeout))
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"the sandbox still runs after {timeout} s") from None
        return self._finish(b"", b"", False)

    def wait_with_output(self, input: Input = None) -> Result:
        """Write ``input`` to stdin (then close it), read stdout and stderr
        to their end (at most the output limit, or 64 MiB, together), wait,
        and return the result with the output."""
        if self._result is not None:
            return self._result
        data = _input_bytes(input)
        if data is not None and self.stdin is None:
            raise NanoboxError("wait_with_output: input given, but stdin was not spawned with PIPE")
        if self.pty is not None:
            return self._pty_output(data)
        try:
            buf = _pump(self._proc, data, self._cap, None)
        except BaseException:
            _end(self._proc)
            raise
        return self._finish(buf.get(1), buf.get(2), buf.truncated)

    def kill(self) -> None:
        """End the whole sandbox now: every process in it is killed, and the
        result's status is ``cancelled``."""
        _terminate(self._proc)

    def resize(self, rows: int, cols: int) -> None:
        """Change the size of the program's terminal (spawned with pty): the
        program gets SIGWINCH and the new size a moment later (the runtime
        passes it on when it gets SIGWINCH itself)."""
        if self.pty is None:
            raise NanoboxError("resize: the program was not spawned with a pty")
        _set_winsize(self.pty.fileno(), rows, cols)
        if self._proc.returncode is None:
            try:
                self._proc.send_signal(_signal.SIGWINCH)
            except ProcessLookupError:
                pass

    def _pty_output(self, data: Optional[bytes]) -> Result:
        assert self.pty is not None
        if data:
            self.pty.write(data)
        buf = _runtime.OutputBuffer(self._cap)
        try:
            while True:
                chunk = self.pty.read(65536)
                if not chunk:
                    break
                buf.add(1, chunk)
            self._proc.wait()
        except BaseException:
            _end(self._proc)
            raise
        return self._finish(buf.get(1), b"", buf.truncated)

    def _finish(self, out: bytes, err: bytes, truncated: bool) -> Result:
        try:
            report = self._inv.report(self._proc.returncode or 0, err)
            self._inv.check(report, err)
            self._result = _result(report, out, err, truncated)
            return self._result
        finally:
            self._finalizer()

    def __enter__(self) -> "Child":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._proc.returncode is None:
            self.kill()
            _end(self._proc)
        for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr, self.pty):
            if f is not None:
                _close(f)
        self._finalizer()

    def __repr__(self) -> str:
        return f"<nanobox.Child pid={self.pid} returncode={self._proc.returncode}>"
