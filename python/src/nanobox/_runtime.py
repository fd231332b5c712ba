"""How the package speaks to nanobox-runc: the binary, the command lines,
the options and report files, and the errors read back from them.

Every run is one ``nanobox-runc sandbox --options FILE --report FILE -- CMD
ARGS`` process: the options and the report are the sandbox contract's JSON
objects, in a private temporary directory that is removed afterwards. The
process's stdin, stdout and stderr are the program's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .errors import BinaryNotFoundError, ContractError, SandboxSetupError, setup_error
from .report import Report

#: What a run keeps of stdout and stderr together when no output limit is
#: set (libbox.DefaultOutputCap): the rest is dropped, never buffered
#: without bound, and the result says output_truncated.
DEFAULT_OUTPUT_CAP = 64 << 20

#: The prefix of the runtime's own error lines on stderr.
_PREFIX = "nanobox-runc sandbox: "

#: When a run has a timeout, how long past it the runtime itself may take
#: (set-up before the program starts, teardown after it is killed) before
#: the package ends the run (the report then says cancelled).
TIMEOUT_GRACE = 30.0


def find_binary(explicit: Optional[str] = None) -> str:
    """The nanobox-runc to run: ``explicit``, ``$NANOBOX_RUNC``, or the one on PATH."""
    path = explicit or os.environ.get("NANOBOX_RUNC")
    if path:
        where = "binary()" if explicit else "NANOBOX_RUNC"
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise BinaryNotFoundError(
                f"{where}: {path!r} is not an executable file: point it at nanobox-runc"
                + ("" if explicit else ", or unset NANOBOX_RUNC to use the one on PATH")
            )
        return os.path.abspath(path)
    found = shutil.which("nanobox-runc")
    if found is None:
        raise BinaryNotFoundError(
            "nanobox-runc was not found on PATH: install it (make build && install -m 0755 nanobox-runc "
            "/usr/local/bin/) or set NANOBOX_RUNC to its path"
        )
    return found


def runtime_message(stderr: bytes, fallback: str) -> str:
    """The runtime's one-line error: its last ``nanobox-runc sandbox:`` line
    on stderr, or fallback."""
    for line in reversed(stderr.decode("utf-8", "replace").splitlines()):
        if line.startswith(_PREFIX):
            return line[len(_PREFIX):]
    return fallback


def _tail(b: bytes, n: int = 2000) -> str:
    s = b.decode("utf-8", "replace").strip()
    return s if len(s) <= n else "..." + s[-n:]


def preset_options(binary: str, preset: Sequence[str]) -> Dict[str, Any]:
    """A preset's options, as the runtime defines them."""
    name, *dirs = preset
    arg = name + ("=" + ",".join(os.path.abspath(d) for d in dirs) if dirs else "")
    p = subprocess.run(
        [binary, "sandbox", "--preset", arg, "--print-options"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if p.returncode != 0:
        raise SandboxSetupError(runtime_message(p.stderr, f"nanobox-runc exited with status {p.returncode}: {_tail(p.stderr)}"))
    try:
        o = json.loads(p.stdout)
    except ValueError as e:
        raise ContractError(f"preset {name}: nanobox-runc printed options that are not JSON: {e}") from None
    if not isinstance(o, dict):
        raise ContractError(f"preset {name}: nanobox-runc printed {type(o).__name__}, want an object")
    return o


class Invocation:
    """One ``nanobox-runc sandbox`` command line, with its options and report
    files in a private temporary directory (see cleanup)."""

    def __init__(self, binary: str, options: Dict[str, Any], argv: Sequence[str], flags: Sequence[str] = ()) -> None:
        self.dir = tempfile.mkdtemp(prefix="nanobox-")
        try:
            opts = os.path.join(self.dir, "options.json")
            fd = os.open(opts, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(options, f)
            self.report_path = os.path.join(self.dir, "report.json")
            self.argv: List[str] = [binary, "sandbox", "--options", opts, "--report", self.report_path, *flags]
            if argv:
                # A run ends with this process, however it ends: no
                # sandbox is left behind by a program that dies.
                self.argv += ["--die-with-parent", "--", *argv]
        except BaseException:
            self.cleanup()
            raise

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def report(self, returncode: int, stderr: bytes) -> Report:
        """The run's report; a ContractError when the runtime wrote none."""
        try:
            with open(self.report_path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        if not data.strip():
            how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited with status {returncode}"
            raise ContractError(
                f"nanobox-runc {how} and wrote no report"
                + (f": {runtime_message(stderr, _tail(stderr))}" if stderr.strip() else "")
            )
        try:
            obj = json.loads(data)
        except ValueError as e:
            raise ContractError(f"nanobox-runc wrote a report that is not JSON: {e}") from None
        return Report.from_json(obj)

    def check(self, report: Report, stderr: bytes) -> None:
        """Raise the setup error the report describes, if it does."""
        if report.status == "setup-error":
            raise setup_error(runtime_message(stderr, report.error), report)


def validate(binary: str, options: Dict[str, Any]) -> None:
    """Check options against this host as a run would (``--validate``)."""
    inv = Invocation(binary, options, (), ["--validate"])
    try:
        p = subprocess.run(inv.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode == 0:
            return
        inv.check(inv.report(p.returncode, p.stderr), p.stderr)
        raise ContractError(f"nanobox-runc --validate exited with status {p.returncode}: {_tail(p.stderr)}")
    finally:
        inv.cleanup()


def run_options(options: Dict[str, Any], timeout: Optional[float]) -> Dict[str, Any]:
    """options for one run with a timeout: the wall-time limit is the
    smaller of the sandbox's and the timeout."""
    if timeout is None:
        return options
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    o = dict(options)
    limits = dict(o.get("limits") or {})
    wall = limits.get("wallTime")
    limits["wallTime"] = timeout if not wall else min(wall, timeout)
    o["limits"] = limits
    return o


def output_cap(options: Dict[str, Any]) -> Tuple[int, bool]:
    """How much of the output a run keeps: the output limit when set (the
    runtime enforces it, so nothing past it comes), DEFAULT_OUTPUT_CAP
    otherwise."""
    limit = (options.get("limits") or {}).get("output")
    if limit:
        return int(limit), True
    return DEFAULT_OUTPUT_CAP, False


class OutputBuffer:
    """stdout and stderr of a run, together at most cap bytes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = 0
        self.truncated = False
        self.parts: Dict[int, List[bytes]] = {1: [], 2: []}

    def add(self, stream: int, data: bytes) -> None:
        room = self.cap - self.kept
        if len(data) > room:
            data = data[: max(room, 0)]
            self.truncated = True
        if data:
            self.parts[stream].append(data)
            self.kept += len(data)

    def get(self, stream: int) -> bytes:
        return b"".join(self.parts[stream])
