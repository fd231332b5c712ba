"""Sandbox options: the builder, and the contract's JSON form it writes.

The builder only fills in the options object of the sandbox contract
(docs/sandbox-contract.md); nanobox-runc validates it and decides how each
limit is enforced. Presets are the runtime's own (``nanobox-runc sandbox
--preset NAME --print-options``): the builder starts from them and applies
its calls on top.
"""

from __future__ import annotations

import copy
import enum
import os
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

if TYPE_CHECKING:
    from .sandbox import Sandbox

__all__ = ["KB", "MB", "GB", "Permission", "Limit", "SandboxBuilder", "Duration"]

#: Sizes in bytes, for limits and tmpfs: ``128 * MB``.
KB = 1 << 10
MB = 1 << 20
GB = 1 << 30

#: A duration: a :class:`datetime.timedelta`, or a number of seconds.
Duration = Union[timedelta, int, float]

Options = Dict[str, Any]


class Permission(enum.Enum):
    """How a bind mount may be used inside the sandbox."""

    ReadOnly = "ro"
    ReadWrite = "rw"
    # PEP 8 spellings of the same members.
    READ_ONLY = "ro"
    READ_WRITE = "rw"


class Limit:
    """The limits' names, as ``allow_degraded`` and the report spell them."""

    MEMORY = "memory"
    CPUS = "cpus"
    PIDS = "pids"
    WALL_TIME = "wallTime"
    CPU_TIME = "cpuTime"
    OPEN_FILES = "openFiles"
    FILE_SIZE = "fileSize"
    OUTPUT = "output"
    #: Allows the namespace-less mode.
    NAMESPACES = "namespaces"


def seconds(d: Duration, what: str) -> float:
    """A duration as the contract writes it: a number of seconds."""
    if isinstance(d, timedelta):
        return d.total_seconds()
    if isinstance(d, bool) or not isinstance(d, (int, float)):
        raise TypeError(f"{what}: want a timedelta or a number of seconds, got {type(d).__name__}")
    return float(d) if isinstance(d, float) else d


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what}: want an int, got {type(v).__name__}")
    return v


def _number(v: Any, what: str) -> Union[int, float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{what}: want a number, got {type(v).__name__}")
    return v


def _strs(v: Iterable[str], what: str) -> List[str]:
    if isinstance(v, (str, bytes)):
        raise TypeError(f"{what}: want a list of strings, not one string")
    out = list(v)
    for s in out:
        if not isinstance(s, str):
            raise TypeError(f"{what}: want strings, got {type(s).__name__}")
    return out


def _allowlist(o: Options) -> Dict[str, Any]:
    """o's network, made an allowlist (the other modes' fields dropped)."""
    n = o.get("network") or {}
    if n.get("mode") != "allowlist":
        n = {"mode": "allowlist"}
        o["network"] = n
    return n


def _set_env(o: Options, key: str, value: str) -> None:
    env = [kv for kv in o.get("env", []) if kv.split("=", 1)[0] != key]
    env.append(f"{key}={value}")
    o["env"] = env


class SandboxBuilder:
    """Builds a :class:`~nanobox.Sandbox` from options.

    Every method returns the builder, so calls chain; :meth:`build` checks
    the options against this host (as nanobox-runc would for a run) and
    returns the sandbox. A builder made from a preset starts from the
    preset's options, read from nanobox-runc at :meth:`build` time.
    """

    def __init__(self, preset: Optional[Sequence[str]] = None, options: Optional[Mapping[str, Any]] = None) -> None:
        # preset is (name, dir...); options a starting options object.
        self._preset = tuple(preset) if preset else None
        self._base: Options = copy.deepcopy(dict(options)) if options is not None else {"version": 1}
        self._ops: List[Callable[[Options], object]] = []
        self._binary: Optional[str] = None

    def _op(self, f: Callable[[Options], object]) -> "SandboxBuilder":
        self._ops.append(f)
        return self

    # ---- Filesystem

    def rootfs(self, path: str) -> "SandboxBuilder":
        """Use the host directory ``path`` as the root (read-only) instead of
        the host's system directories."""
        p = os.path.abspath(path)
        return self._op(lambda o: o.__setitem__("rootfs", p))

    def mount(self, source: str, target: str, permission: Permission) -> "SandboxBuilder":
        """Bind the host path ``source`` at ``target`` inside the sandbox,
        :attr:`Permission.ReadOnly` or :attr:`Permission.ReadWrite`."""
        if not isinstance(permission, Permission):
            raise TypeError("mount: permission must be Permission.ReadOnly or Permission.ReadWrite")
        m: Dict[str, Any] = {"source": os.path.abspath(source), "target": target}
        if permission is Permission.ReadOnly:
            m["readOnly"] = True
        return self._op(lambda o: o.setdefault("mounts", []).append(dict(m)))

    def tmpfs(self, target: str, size: Optional[int] = None, read_only: bool = False) -> "SandboxBuilder":
        """A private tmpfs at ``target`` of ``size`` bytes (default 64 MiB);
        ``read_only`` makes an empty directory nothing can be created in.
        One at /tmp replaces the default /tmp."""
        t: Dict[str, Any] = {"target": target}
        if size is not None:
            t["size"] = _int(size, "tmpfs size")
        if read_only:
            t["readOnly"] = True
        return self._op(lambda o: o.setdefault("tmpfs", []).append(dict(t)))

    def working_dir(self, path: str) -> "SandboxBuilder":
        """The program's working directory inside the sandbox (default /tmp)."""
        return self._op(lambda o: o.__setitem__("workDir", path))

    # ---- Environment

    def env(self, key: str, value: str) -> "SandboxBuilder":
        """Set ``key`` in the program's environment. The environment is only
        what is set here (and the preset's): nothing of the caller's."""
        if not key or "=" in key:
            raise ValueError(f"env: {key!r} is not a variable name")
        return self._op(lambda o: _set_env(o, key, value))

    def envs(self, variables: Mapping[str, str]) -> "SandboxBuilder":
        """Set several variables (see :meth:`env`)."""
        for k, v in variables.items():
            self.env(k, v)
        return self

    def inherit_env(self, *keys: str) -> "SandboxBuilder":
        """Pass the caller's value of each of ``keys`` (those that are set)."""
        for k in keys:
            if k in os.environ:
                self.env(k, os.environ[k])
        return self

    def clear_env(self) -> "SandboxBuilder":
        """Start from an empty environment (a preset sets PATH, HOME, LANG)."""
        return self._op(lambda o: o.pop("env", None))

    def hostname(self, name: str) -> "SandboxBuilder":
        """The hostname inside the sandbox (default "sandbox")."""
        return self._op(lambda o: o.__setitem__("hostname", name))

    def user(self, uid: int, gid: int = 0, umask: Optional[int] = None) -> "SandboxBuilder":
        """The uid and gid the program runs as inside the sandbox (0:0 by
        default, with no capabilities; the caller's own ids on the host)."""
        u: Dict[str, Any] = {"uid": _int(uid, "user uid"), "gid": _int(gid, "user gid")}
        if umask is not None:
            u["umask"] = _int(umask, "user umask")
        return self._op(lambda o: o.__setitem__("user", u))

    # ---- Resources

    def _limit(self, name: str, value: Any) -> "SandboxBuilder":
        return self._op(lambda o: o.setdefault("limits", {}).__setitem__(name, value))

    def memory_limit(self, size: int) -> "SandboxBuilder":
        """Memory of the whole sandbox, in bytes (``128 * MB``)."""
        return self._limit("memory", _int(size, "memory_limit"))

    def cpu_limit(self, cpus: float) -> "SandboxBuilder":
        """CPU bandwidth, in CPUs (1.5)."""
        return self._limit("cpus", _number(cpus, "cpu_limit"))

    def pids_limit(self, n: int) -> "SandboxBuilder":
        """Processes and threads at once."""
        return self._limit("pids", _int(n, "pids_limit"))

    def wall_time_limit(self, d: Duration) -> "SandboxBuilder":
        """Real time from the program's start (timedelta or seconds)."""
        return self._limit("wallTime", seconds(d, "wall_time_limit"))

    def cpu_time_limit(self, d: Duration) -> "SandboxBuilder":
        """User plus system CPU time (timedelta or seconds)."""
        return self._limit("cpuTime", seconds(d, "cpu_time_limit"))

    def open_files_limit(self, n: int) -> "SandboxBuilder":
        """Open file descriptors per process."""
        return self._limit("openFiles", _int(n, "open_files_limit"))

    def file_size_limit(self, size: int) -> "SandboxBuilder":
        """Size of any file a process writes, in bytes."""
        return self._limit("fileSize", _int(size, "file_size_limit"))

    def output_limit(self, size: int) -> "SandboxBuilder":
        """stdout and stderr together, in bytes: past it the output is
        dropped and the sandbox killed (status ``output-limit``)."""
        return self._limit("output", _int(size, "output_limit"))

    def allow_degraded(self, *limits: str) -> "SandboxBuilder":
        """Let these limits (:class:`Limit` names) be enforced by a weaker
        mechanism, or not at all, where this host cannot enforce them; the
        report says which and how. Without it such a limit is a
        :class:`~nanobox.LimitUnavailableError`."""
        names = _strs(limits, "allow_degraded")

        def op(o: Options) -> None:
            have = o.setdefault("allowDegraded", [])
            have.extend(n for n in names if n not in have)

        return self._op(op)

    # ---- Network

    def no_network(self) -> "SandboxBuilder":
        """No network: loopback only (the default)."""
        return self._op(lambda o: o.__setitem__("network", {"mode": "none"}))

    def host_network(self) -> "SandboxBuilder":
        """The caller's network (the report says so)."""
        return self._op(lambda o: o.__setitem__("network", {"mode": "host"}))

    def allow_network(self, domains: Iterable[str]) -> "SandboxBuilder":
        """Reach only these domains ("api.example.com", "*.example.com",
        "host:port"): the allowlist mode."""
        names = _strs(domains, "allow_network")
        return self._op(lambda o: _allowlist(o).setdefault("allow", []).extend(names))

    def deny_network(self, domains: Iterable[str]) -> "SandboxBuilder":
        """Deny rules of the allowlist mode (they win over allow rules)."""
        names = _strs(domains, "deny_network")
        return self._op(lambda o: _allowlist(o).setdefault("deny", []).extend(names))

    def allow_private_targets(self) -> "SandboxBuilder":
        """Let allowed names lead to loopback, private, link-local and this
        host's addresses (refused otherwise): the allowlist mode."""
        return self._op(lambda o: _allowlist(o).__setitem__("allowPrivateTargets", True))

    def add_host(self, name: str, address: str) -> "SandboxBuilder":
        """Resolve ``name`` to ``address`` on the host's side instead of
        looking it up (the allowlist mode; the policy still applies)."""
        return self._op(lambda o: _allowlist(o).setdefault("hosts", {}).__setitem__(name, address))

    # ---- Security

    def seccomp(self, profile: Union[str, Mapping[str, Any]]) -> "SandboxBuilder":
        """The system call filter: ``"default"``, ``"strict"``, ``"none"``, or
        a custom filter in libbox's form (``{"defaultAction": ..., "syscalls":
        [...]}``, or ``{"profile": {...}}``)."""
        if isinstance(profile, str):
            value: Any = profile
        elif isinstance(profile, Mapping):
            value = copy.deepcopy(dict(profile)) if "profile" in profile else {"profile": copy.deepcopy(dict(profile))}
        else:
            raise TypeError("seccomp: want a profile name or a filter mapping")
        return self._op(lambda o: o.__setitem__("seccomp", value))

    def landlock(
        self,
        read_only: Iterable[str] = (),
        read_write: Iterable[str] = (),
        restrict_network: bool = False,
        allow_bind: Iterable[int] = (),
        allow_connect: Iterable[int] = (),
        required: bool = False,
    ) -> "SandboxBuilder":
        """A Landlock policy over sandbox paths, on top of the mounts."""
        ll: Dict[str, Any] = {}
        if read_only:
            ll["readOnly"] = _strs(read_only, "landlock read_only")
        if read_write:
            ll["readWrite"] = _strs(read_write, "landlock read_write")
        if restrict_network:
            ll["restrictNetwork"] = True
        if allow_bind:
            ll["allowBind"] = [_int(p, "landlock allow_bind") for p in allow_bind]
        if allow_connect:
            ll["allowConnect"] = [_int(p, "landlock allow_connect") for p in allow_connect]
        if required:
            ll["required"] = True
        return self._op(lambda o: o.__setitem__("landlock", dict(ll)))

    def host_ids(self, uid: int, gid: int) -> "SandboxBuilder":
        """Map the sandbox's user to these host ids (root only)."""
        ns = {"hostUID": _int(uid, "host uid"), "hostGID": _int(gid, "host gid")}
        return self._op(lambda o: o.setdefault("namespaces", {}).update(ns))

    # ---- Runtime

    def state_root(self, path: str) -> "SandboxBuilder":
        """Where the sandboxes' state directories live while they run."""
        p = os.path.abspath(path)
        return self._op(lambda o: o.__setitem__("stateRoot", p))

    def binary(self, path: str) -> "SandboxBuilder":
        """Use this nanobox-runc (default: ``$NANOBOX_RUNC``, then ``PATH``)."""
        self._binary = path
        return self

    # ---- Result

    def options(self) -> Dict[str, Any]:
        """The options object these calls describe (the contract's JSON form)."""
        from . import _runtime

        if self._preset is not None:
            o = _runtime.preset_options(_runtime.find_binary(self._binary), self._preset)
        else:
            o = copy.deepcopy(self._base)
        for f in self._ops:
            f(o)
        return o

    def build(self) -> "Sandbox":
        """Check the options against this host, as a run would (every field,
        mount source and limit), and return the sandbox. Raises a
        :class:`~nanobox.SandboxSetupError` subclass naming the option or
        limit and the fix."""
        from . import _runtime
        from .sandbox import Sandbox

        binary = _runtime.find_binary(self._binary)
        o = self.options()
        _runtime.validate(binary, o)
        return Sandbox(o, binary=binary)
