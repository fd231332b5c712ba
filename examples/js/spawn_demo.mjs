// An interactive shell in a sandbox through spawn: write commands, read
// their output, wait; then a second shell killed from outside.
//
//     node examples/js/spawn_demo.mjs
import { createInterface } from "node:readline";
import { Sandbox } from "../../js/src/index.js";

const sandbox = await Sandbox.builder().env("PATH", "/usr/bin:/bin").wallTimeLimit(60).build();

const shell = sandbox.spawn("sh");
const lines = createInterface({ input: shell.stdout })[Symbol.asyncIterator]();
for (const line of ["echo hello from $(hostname)", "cd /tmp && echo scratch >f && ls", "echo $((6 * 7))"]) {
  shell.stdin.write(line + "\n");
  console.log(`$ ${line}\n${(await lines.next()).value}`);
}
shell.stdin.end("exit 3\n");
let res = await shell.wait();
console.log(`shell: ${res.status}, exit ${res.exitCode}`);

const sleeper = sandbox.spawn("sh", ["-c", "echo ready; sleep 1000"], { stdin: "ignore" });
const ready = createInterface({ input: sleeper.stdout })[Symbol.asyncIterator]();
console.log(`sleeper: ${(await ready.next()).value}`);
sleeper.kill();
res = await sleeper.wait();
console.log(`sleeper: ${res.status} (killed: ${res.report.killed})`);
