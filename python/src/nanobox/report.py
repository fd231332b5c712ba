"""The execution report: what happened to a program, as the runtime saw it.

These dataclasses have the fields of the report's JSON (the sandbox
contract, docs/sandbox-contract.md), in snake_case: ``exitCode`` is
``exit_code``. Durations are seconds (floats), sizes bytes. ``raw`` keeps
the JSON object as the runtime wrote it, including any field newer than
this package.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple, Type, TypeVar

from .errors import ContractError

__all__ = ["CONTRACT_VERSION", "Report", "LimitReport", "Isolation", "Problem", "NetworkReport", "Denial"]

#: The version of the sandbox contract this package speaks.
CONTRACT_VERSION = 1

_T = TypeVar("_T")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _from_json(cls: Type[_T], obj: Any, what: str) -> _T:
    """cls from the JSON object obj: known keys become fields (converted to
    their declared shape by the class's _convert), the rest are ignored."""
    if not isinstance(obj, Mapping):
        raise ContractError(f"report: {what} is {type(obj).__name__}, want an object")
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs: Dict[str, Any] = {}
    for key, value in obj.items():
        name = _snake(key)
        if name in names and name != "raw":
            kwargs[name] = value
    convert = getattr(cls, "_convert", None)
    if convert is not None:
        kwargs = convert(kwargs)
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise ContractError(f"report: {what}: {e}") from None


@dataclass(frozen=True)
class Problem:
    """One cause of a set-up error."""

    #: ``invalid-options``, ``limit-unavailable``, ``program-not-found``,
    #: ``program-not-executable`` or ``setup-failed``.
    kind: str
    #: This cause's one-line error.
    message: str
    #: The option at fault, by its JSON path ("limits.memory"), if any.
    field: str = ""
    #: The limit that cannot be enforced (``limit-unavailable``).
    limit: str = ""
    #: What to do about it, when the runtime knows.
    fix: str = ""


@dataclass(frozen=True)
class LimitReport:
    """The fate of one limit that was asked for."""

    #: The value asked for, in ``unit``.
    requested: float
    #: ``bytes``, ``seconds``, ``count`` or ``cpus``.
    unit: str
    #: ``enforced``, ``degraded`` or ``unavailable``.
    status: str
    #: What enforces it ("cgroup v1 memory.limit_in_bytes", "RLIMIT_AS ...").
    mechanism: str = ""
    #: Why it is degraded or unavailable.
    reason: str = ""
    #: The runtime knows the program reached the limit (False is not proof
    #: that an rlimit was never reached).
    hit: bool = False

    @property
    def enforced(self) -> bool:
        return self.status == "enforced"


@dataclass(frozen=True)
class Denial:
    """One network attempt the allowlist refused."""

    #: When (RFC 3339, as the runtime wrote it).
    time: str
    #: The name asked for.
    name: str
    #: ``dns`` (the resolver answered NXDOMAIN), ``proxy`` (the explicit
    #: proxy answered 403) or ``connect`` (a direct connection was closed).
    via: str
    #: What was wrong, in words.
    reason: str
    port: int = 0
    #: The rule that denied it ("deny *.example.com"), "" when no allow
    #: rule matched.
    rule: str = ""
    #: Identical attempts in a row this entry stands for.
    count: int = 1


@dataclass(frozen=True)
class NetworkReport:
    """What the network allowlist let through and refused."""

    #: The rules in force when the run ended.
    allow: Tuple[str, ...] = ()
    deny: Tuple[str, ...] = ()
    #: The first refused attempts (bounded); ``denied_total`` counts all.
    denied: Tuple[Denial, ...] = ()
    denied_total: int = 0
    #: Connections let through, per name.
    connections: Dict[str, int] = field(default_factory=dict)

    @staticmethod
    def _convert(kw: Dict[str, Any]) -> Dict[str, Any]:
        kw["allow"] = tuple(kw.get("allow") or ())
        kw["deny"] = tuple(kw.get("deny") or ())
        kw["denied"] = tuple(_from_json(Denial, d, "network.denied[]") for d in kw.get("denied") or ())
        kw["connections"] = dict(kw.get("connections") or {})
        return kw


@dataclass(frozen=True)
class Isolation:
    """What confined the program."""

    rootless: bool = False
    #: ``all`` (or ``none`` in the degraded namespace-less mode).
    namespaces: str = ""
    #: ``none``, ``host`` or ``allowlist``.
    network: str = ""
    #: ``default``, ``strict``, ``custom`` or ``none``.
    seccomp: str = ""
    #: The Landlock policy's fate, "" without one.
    landlock: str = ""
    #: ``v1``, ``v2`` or "" without a cgroup.
    cgroup: str = ""
    #: Everything weaker than asked for, in words.
    degraded: Tuple[str, ...] = ()

    @staticmethod
    def _convert(kw: Dict[str, Any]) -> Dict[str, Any]:
        if kw.get("degraded") is not None:
            kw["degraded"] = tuple(kw["degraded"])
        else:
            kw.pop("degraded", None)
        return kw


@dataclass(frozen=True)
class Report:
    """The execution report of one run (the contract's report object)."""

    version: int
    #: The sandbox's id ("sb-" and 16 hex digits; "" when none was made).
    id: str
    #: ``ok``, ``exited``, ``signaled``, ``oom``, ``wall-timeout``,
    #: ``cpu-timeout``, ``output-limit``, ``cancelled`` or ``setup-error``.
    status: str
    #: The exit status; 128+N for signal N; 125/126/127 for a set-up error.
    exit_code: int
    signal: int = 0
    signal_name: str = ""
    #: The runtime killed the sandbox (``status`` says why).
    killed: bool = False
    #: The set-up error, or why the runtime killed the sandbox.
    error: str = ""
    #: A set-up error's kind (that of its first problem).
    error_kind: str = ""
    problems: Tuple[Problem, ...] = ()
    #: Seconds from the program's execve to its exit.
    wall_time: float = 0.0
    cpu_user: float = 0.0
    cpu_system: float = 0.0
    #: ``cgroup`` (the whole sandbox) or ``rusage``.
    cpu_source: str = ""
    #: Bytes, measured by ``peak_memory_source``.
    peak_memory: int = 0
    peak_memory_source: str = ""
    oom_killed: bool = False
    voluntary_context_switches: int = 0
    involuntary_context_switches: int = 0
    output_bytes: int = 0
    output_truncated: bool = False
    #: The network allowlist's account (allowlist mode only, else None).
    network: Optional[NetworkReport] = None
    #: One entry per limit asked for, by its JSON name ("memory", "wallTime").
    limits: Dict[str, LimitReport] = field(default_factory=dict)
    isolation: Isolation = field(default_factory=Isolation)
    #: The JSON object as the runtime wrote it.
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def cpu_time(self) -> float:
        """User plus system CPU seconds."""
        return self.cpu_user + self.cpu_system

    @property
    def success(self) -> bool:
        """The program exited 0."""
        return self.status == "ok"

    @staticmethod
    def _convert(kw: Dict[str, Any]) -> Dict[str, Any]:
        kw["problems"] = tuple(_from_json(Problem, p, "problems[]") for p in kw.get("problems") or ())
        kw["limits"] = {str(k): _from_json(LimitReport, v, f"limits.{k}") for k, v in (kw.get("limits") or {}).items()}
        kw["isolation"] = _from_json(Isolation, kw.get("isolation") or {}, "isolation")
        if kw.get("network") is not None:
            kw["network"] = _from_json(NetworkReport, kw["network"], "network")
        return kw

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "Report":
        """Read a report object; a missing or other contract version is a
        ContractError."""
        if not isinstance(obj, Mapping):
            raise ContractError(f"report: want a JSON object, got {type(obj).__name__}")
        version = obj.get("version")
        if version != CONTRACT_VERSION:
            raise ContractError(
                f"report: contract version {version!r}: this nanobox package speaks version {CONTRACT_VERSION} "
                "(install the nanobox package that matches nanobox-runc)"
            )
        rep = _from_json(cls, obj, "report")
        object.__setattr__(rep, "raw", dict(obj))
        return rep

    def limit(self, name: str) -> Optional[LimitReport]:
        """The fate of the limit ``name`` ("memory"), or None if it was not asked for."""
        return self.limits.get(name)
