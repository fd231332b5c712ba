"""nanobox: run untrusted programs in nanobox-runc sandboxes.

>>> from nanobox import Sandbox, Permission, MB
>>> sandbox = (Sandbox.builder()
...     .working_dir("/tmp")
...     .memory_limit(128 * MB)
...     .build())
>>> result = sandbox.run("echo", ["hello"])
>>> print(result.stdout)
hello

The package speaks the sandbox contract (docs/sandbox-contract.md in the
nanobox-runc repository) to the installed ``nanobox-runc`` binary, found at
``$NANOBOX_RUNC`` or on ``PATH``: the options are the contract's JSON, every
limit and policy is the runtime's own, and each run's execution report
comes back as a :class:`Report`.
"""

from .aio import AsyncChild, AsyncPty
from .errors import (
    BinaryNotFoundError,
    ContractError,
    InvalidOptionsError,
    LimitUnavailableError,
    NanoboxError,
    ProgramNotExecutableError,
    ProgramNotFoundError,
    SandboxSetupError,
)
from .options import GB, KB, MB, Limit, Permission, SandboxBuilder
from .report import CONTRACT_VERSION, Denial, Isolation, LimitReport, NetworkReport, Problem, Report
from .sandbox import DEVNULL, INHERIT, PIPE, Child, Result, Sandbox

__version__ = "0.1.0"

__all__ = [
    "Sandbox",
    "SandboxBuilder",
    "Result",
    "Child",
    "AsyncChild",
    "AsyncPty",
    "Report",
    "LimitReport",
    "Isolation",
    "Problem",
    "NetworkReport",
    "Denial",
    "Permission",
    "Limit",
    "KB",
    "MB",
    "GB",
    "PIPE",
    "DEVNULL",
    "INHERIT",
    "CONTRACT_VERSION",
    "NanoboxError",
    "BinaryNotFoundError",
    "ContractError",
    "SandboxSetupError",
    "InvalidOptionsError",
    "LimitUnavailableError",
    "ProgramNotFoundError",
    "ProgramNotExecutableError",
]
