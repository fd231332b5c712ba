"""Run one program in a sandbox from Python: hello from python3 when the
host has it, from echo otherwise, and what the report says.

    python3 examples/python/demo.py
"""

from nanobox import MB, ProgramNotFoundError, Sandbox


def main() -> None:
    sandbox = Sandbox.builder().wall_time_limit(30).output_limit(MB).build()
    try:
        result = sandbox.run("/usr/bin/python3", ["-c", "print('hello from python in a sandbox')"])
    except ProgramNotFoundError:
        result = sandbox.run("/bin/echo", ["hello from echo in a sandbox (no python3 here)"])
    print(result.stdout, end="")
    r = result.report
    print(
        f"status {r.status}, exit {r.exit_code}, wall {r.wall_time * 1e3:.3f}ms, "
        f"cpu {r.cpu_time * 1e3:.3f}ms, peak memory {r.peak_memory // 1024} KiB ({r.peak_memory_source})"
    )
    for name, lim in r.limits.items():
        print(f"limit {name}: {lim.status} by {lim.mechanism}")


if __name__ == "__main__":
    main()
