"""Judge a submission against test cases with the code-judge preset, as an
online judge would: strict limits that fail closed, the strict seccomp
profile, one fresh box per test.

    python3 examples/python/code_judge.py [--allow-degraded]

Without a cgroup for the caller (an ordinary user on a cgroup v1 host) the
preset's memory, pids and CPU limits cannot be enforced, and build() says
so; --allow-degraded runs anyway, with rlimits, and the report says
degraded.
"""

import os
import sys
import tempfile

from nanobox import Limit, LimitUnavailableError, Result, Sandbox

# The submission: sums the numbers of its input, one case badly.
SUBMISSION = """read a b
if [ "$a" = 7 ]; then while :; do :; done; fi
echo $((a + b))
"""

CASES = [("1 2", "3"), ("40 2", "42"), ("7 0", "7")]  # the last one loops: TLE


def verdict(res: Result, want: str) -> str:
    """What a judge makes of the report."""
    status = res.report.status
    if status == "ok":
        return "AC" if res.stdout.strip() == want else "WA"
    return {"cpu-timeout": "TLE", "wall-timeout": "TLE", "oom": "MLE", "output-limit": "OLE"}.get(status, "RE")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="judge-") as d:
        os.chmod(d, 0o755)
        with open(os.path.join(d, "solution.sh"), "w") as f:
            f.write(SUBMISSION)
        judge = Sandbox.code_judge(d).cpu_time_limit(1).wall_time_limit(3)
        if "--allow-degraded" in sys.argv[1:]:
            judge.allow_degraded(Limit.MEMORY, Limit.PIDS, Limit.CPUS)
        try:
            sandbox = judge.build()
        except LimitUnavailableError as e:
            print(f"code_judge: {e}", file=sys.stderr)
            sys.exit(1)
        for i, (given, want) in enumerate(CASES, 1):
            res = sandbox.run("sh", ["/submission/solution.sh"], input=given + "\n")
            print(f"case {i}: {verdict(res, want)}  ({res.status}, cpu {res.report.cpu_time:.3f}s, wall {res.report.wall_time:.3f}s)")


if __name__ == "__main__":
    main()
