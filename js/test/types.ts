// Compiled (not run) by `tsc -p js` in js/run-tests.sh: the shipped types
// (src/index.d.ts) take the package's documented uses, and refuse wrong
// ones (each @ts-expect-error line must be an error, or tsc fails).
import {
  GB,
  KB,
  Limit,
  LimitUnavailableError,
  MB,
  Permission,
  Sandbox,
  SandboxSetupError,
  type Child,
  type Report,
  type Result,
} from "../src/index.js";

export async function seed(): Promise<string> {
  const sandbox = await Sandbox.builder().workingDir("/tmp").memoryLimit(128 * MB).build();
  const result: Result = await sandbox.run("echo", ["hello"]);
  return result.stdout;
}

export async function everything(ws: string): Promise<void> {
  const sb = await Sandbox.agentExecutor(ws)
    .mount("/data", "/data", Permission.ReadOnly)
    .tmpfs("/scratch", { size: 64 * MB })
    .env("K", "V")
    .pidsLimit(64)
    .wallTimeLimit(1.5)
    .fileSizeLimit(KB)
    .outputLimit(GB)
    .allowNetwork(["api.github.com"])
    .seccomp("strict")
    .allowDegraded(Limit.Memory)
    .build();
  const r = await sb.run("sh", ["-c", "cat"], { input: "x", timeout: 2 });
  const rep: Report = r.report;
  const status: "ok" | "exited" | "signaled" | "oom" | "wall-timeout" | "cpu-timeout" | "output-limit" | "cancelled" | "setup-error" = rep.status;
  const peak: number = rep.peakMemory;
  const hit: boolean | undefined = rep.limits.wallTime?.hit;
  void [status, peak, hit];
  sb.spawn("sh", [], { pty: { rows: 40, cols: 120 } });
  const child: Child = sb.spawn("sh", [], { pty: true });
  child.stdin?.write("exit\n");
  const done: Result = await child.waitWithOutput();
  void done.exitCode;
  try {
    await Sandbox.codeJudge("/sub").build();
  } catch (e) {
    if (e instanceof LimitUnavailableError) void (e.limit + e.fix);
    else if (e instanceof SandboxSetupError) void e.kind;
  }
  // @ts-expect-error a permission is Permission.ReadOnly or ReadWrite
  Sandbox.builder().mount("/a", "/b", "readonly");
  // @ts-expect-error args are a list of strings
  await sb.run("echo", "hello");
  // @ts-expect-error the result has no such field
  void r.exit_code;
}
