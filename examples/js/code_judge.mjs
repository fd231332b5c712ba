// Judge a submission against test cases with the code-judge preset, as an
// online judge would: strict limits that fail closed, the strict seccomp
// profile, one fresh box per test.
//
//     node examples/js/code_judge.mjs [--allow-degraded]
//
// Without a cgroup for the caller (an ordinary user on a cgroup v1 host)
// the preset's memory, pids and CPU limits cannot be enforced, and build()
// says so; --allow-degraded runs anyway, with rlimits, and the report says
// degraded.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Limit, LimitUnavailableError, Sandbox } from "../../js/src/index.js";

// The submission: sums the numbers of its input, one case badly.
const SUBMISSION = `read a b
if [ "$a" = 7 ]; then while :; do :; done; fi
echo $((a + b))
`;
const CASES = [["1 2", "3"], ["40 2", "42"], ["7 0", "7"]]; // the last one loops: TLE

/** What a judge makes of the report. */
function verdict(res, want) {
  if (res.status === "ok") return res.stdout.trim() === want ? "AC" : "WA";
  return { "cpu-timeout": "TLE", "wall-timeout": "TLE", oom: "MLE", "output-limit": "OLE" }[res.status] ?? "RE";
}

const d = mkdtempSync(join(tmpdir(), "judge-"));
try {
  chmodSync(d, 0o755);
  writeFileSync(join(d, "solution.sh"), SUBMISSION);
  const judge = Sandbox.codeJudge(d).cpuTimeLimit(1).wallTimeLimit(3);
  if (process.argv.includes("--allow-degraded")) judge.allowDegraded(Limit.Memory, Limit.Pids, Limit.CPUs);
  let sandbox;
  try {
    sandbox = await judge.build();
  } catch (e) {
    if (!(e instanceof LimitUnavailableError)) throw e;
    console.error(`code_judge: ${e.message}`);
    process.exitCode = 1;
  }
  for (const [i, [given, want]] of (sandbox ? CASES : []).entries()) {
    const res = await sandbox.run("sh", ["/submission/solution.sh"], { input: given + "\n" });
    const cpu = res.report.cpuUser + res.report.cpuSystem;
    console.log(`case ${i + 1}: ${verdict(res, want)}  (${res.status}, cpu ${cpu.toFixed(3)}s, wall ${res.report.wallTime.toFixed(3)}s)`);
  }
} finally {
  rmSync(d, { recursive: true, force: true });
}
