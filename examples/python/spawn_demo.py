"""An interactive shell in a sandbox through spawn: write commands, read
their output, wait; then a second shell killed from outside.

    python3 examples/python/spawn_demo.py
"""

from nanobox import DEVNULL, Sandbox


def main() -> None:
    sandbox = Sandbox.builder().env("PATH", "/usr/bin:/bin").wall_time_limit(60).build()
    with sandbox.spawn("sh") as shell:
        assert shell.stdin is not None and shell.stdout is not None
        for line in ("echo hello from $(hostname)", "cd /tmp && echo scratch >f && ls", "echo $((6 * 7))"):
            shell.stdin.write(line.encode() + b"\n")
            shell.stdin.flush()
            print(f"$ {line}\n{shell.stdout.readline().decode()}", end="")
        shell.stdin.write(b"exit 3\n")
        shell.stdin.close()
        res = shell.wait()
        print(f"shell: {res.status}, exit {res.exit_code}")

    with sandbox.spawn("sh", ["-c", "echo ready; sleep 1000"], stdin=DEVNULL) as sleeper:
        assert sleeper.stdout is not None
        print("sleeper:", sleeper.stdout.readline().decode(), end="")
        sleeper.kill()
        res = sleeper.wait()
        print(f"sleeper: {res.status} (killed: {res.report.killed})")


if __name__ == "__main__":
    main()
