"""The exceptions of the nanobox package.

Every exception carries the runtime's own one-line message (what
``nanobox-runc sandbox`` prints), never a bare exit code. A sandbox that
could not be set up raises a :class:`SandboxSetupError` subclass chosen by
the report's ``errorKind``; its ``report`` and ``problems`` say exactly
which option or limit was at fault and what to do.

A program that ran and failed (a non-zero exit, a signal, a limit hit) is
not an exception: :class:`~nanobox.Result` says what happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

if TYPE_CHECKING:
    from .report import Problem, Report

__all__ = [
    "NanoboxError",
    "BinaryNotFoundError",
    "ContractError",
    "SandboxSetupError",
    "InvalidOptionsError",
    "LimitUnavailableError",
    "ProgramNotFoundError",
    "ProgramNotExecutableError",
]


class NanoboxError(Exception):
    """The base of every exception this package raises."""


class BinaryNotFoundError(NanoboxError):
    """nanobox-runc is neither at ``$NANOBOX_RUNC`` nor on ``PATH``."""


class ContractError(NanoboxError):
    """nanobox-runc answered with something this package cannot read: no
    report, an unreadable one, or another version of the sandbox contract
    (install a matching nanobox-runc and nanobox package)."""


class SandboxSetupError(NanoboxError):
    """The sandbox could not be set up, so nothing ran.

    ``str(e)`` is the runtime's one-line message. ``report`` is the
    execution report (status ``setup-error``), ``kind`` its ``errorKind``
    and ``problems`` every cause, each with the option or limit at fault
    and, when the runtime knows one, the fix.
    """

    def __init__(self, message: str, report: Optional["Report"] = None) -> None:
        super().__init__(message)
        self.message = message
        self.report = report

    @property
    def kind(self) -> str:
        """The report's ``errorKind`` (``invalid-options``, ``limit-unavailable``,
        ``program-not-found``, ``program-not-executable``, ``setup-failed``)."""
        return self.report.error_kind if self.report is not None else "setup-failed"

    @property
    def problems(self) -> Tuple["Problem", ...]:
        """Every cause of the error, in order."""
        return self.report.problems if self.report is not None else ()

    @property
    def fix(self) -> str:
        """What to do about the first cause, when the runtime knows ("" otherwise)."""
        for p in self.problems:
            if p.fix:
                return p.fix
        return ""


class InvalidOptionsError(SandboxSetupError):
    """An option is malformed, contradicts another, or names a host path
    that does not exist. ``fields`` are the options at fault, by their JSON
    paths (``"mounts[0].source"``)."""

    @property
    def fields(self) -> Tuple[str, ...]:
        return tuple(p.field for p in self.problems if p.field)

    @property
    def field(self) -> str:
        """The first option at fault ("" when the runtime named none)."""
        f = self.fields
        return f[0] if f else ""


class LimitUnavailableError(SandboxSetupError):
    """A limit that was asked for cannot be enforced for this caller on this
    host, and its degradation was not allowed. ``limit`` names it (the JSON
    name: ``"memory"``), ``limits`` every such limit, and ``fix`` says what
    to do: run where it can be enforced, or allow its degradation
    (``.allow_degraded("memory")``)."""

    @property
    def limits(self) -> Tuple[str, ...]:
        return tuple(p.limit for p in self.problems if p.kind == "limit-unavailable" and p.limit)

    @property
    def limit(self) -> str:
        lim = self.limits
        return lim[0] if lim else ""

    @property
    def fix(self) -> str:
        for p in self.problems:
            if p.kind == "limit-unavailable" and p.fix:
                return p.fix
        return super().fix


class ProgramNotFoundError(SandboxSetupError):
    """The program was not found inside the sandbox (exit code 127)."""


class ProgramNotExecutableError(SandboxSetupError):
    """The program is not executable inside the sandbox (exit code 126)."""


_BY_KIND = {
    "invalid-options": InvalidOptionsError,
    "limit-unavailable": LimitUnavailableError,
    "program-not-found": ProgramNotFoundError,
    "program-not-executable": ProgramNotExecutableError,
}


def setup_error(message: str, report: "Report") -> SandboxSetupError:
    """The exception for a report whose status is ``setup-error``."""
    return _BY_KIND.get(report.error_kind, SandboxSetupError)(message, report)
