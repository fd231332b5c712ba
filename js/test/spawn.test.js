// Sandbox.spawn: a shell driven through its streams, waiting, killing, a
// terminal, set-up errors, and no sandbox outliving this process.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn as spawnProcess } from "node:child_process";
import { mkdirSync, openSync, closeSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { eventually, PATH, REPO, running, SKIP, stateLeft, stateRoot, tempDir } from "./helpers.js";
import { NanoboxError, ProgramNotFoundError, Sandbox } from "../src/index.js";

const sandbox = (t) => Sandbox.builder().stateRoot(stateRoot(t)).env("PATH", PATH).build();

/** Lines of a readable stream, one at a time. */
function lines(stream) {
  const it = createInterface({ input: stream })[Symbol.asyncIterator]();
  return async () => (await it.next()).value;
}

test("a shell", { skip: SKIP }, async (t) => {
  const child = (await sandbox(t)).spawn("sh");
  const next = lines(child.stdout);
  child.stdin.write("echo hello from $(hostname)\n");
  assert.equal(await next(), "hello from sandbox");
  child.stdin.write("x=41; echo $((x + 1))\n");
  assert.equal(await next(), "42");
  child.stdin.end("exit 5\n");
  const r = await child.wait();
  assert.equal(r.exitCode, 5);
  assert.equal(r.status, "exited");
  assert.equal(r.stdout, "");
});

test("waitWithOutput", { skip: SKIP }, async (t) => {
  const sb = await sandbox(t);
  const r = await sb.spawn("sh", ["-c", "read first; echo got $first; cat; echo err >&2"]).waitWithOutput("one\ntwo\n");
  assert.deepEqual([r.stdout, r.stderr, r.success], ["got one\ntwo\n", "err\n", true]);
});

test("kill ends the whole sandbox", { skip: SKIP }, async (t) => {
  const mark = String(6300000 + (process.pid % 100000));
  const child = (await sandbox(t)).spawn("sh", ["-c", `sleep ${mark} & sleep ${mark} & echo ready; wait`], { stdin: "ignore" });
  assert.equal(await lines(child.stdout)(), "ready");
  // The shell's children may not have become sleep yet (fork, then exec).
  await eventually(() => running(`^sleep ${mark}$`), "the sleeps run");
  child.kill();
  const r = await child.wait();
  assert.equal(r.status, "cancelled");
  assert.ok(r.report.killed);
  assert.ok(!running(`^sleep ${mark}$`), "processes left");
});

test("stdio to files, and close", { skip: SKIP }, async (t) => {
  const tmp = tempDir(t);
  const fd = openSync(join(tmp, "out"), "w");
  const r = await (await sandbox(t)).spawn("echo", ["to a file"], { stdin: "ignore", stdout: fd }).waitWithOutput();
  closeSync(fd);
  assert.ok(r.success);
  assert.equal(readFileSync(join(tmp, "out"), "utf8"), "to a file\n");
  const c = (await sandbox(t)).spawn("sleep", ["1000"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  await c.close();
  assert.throws(() => process.kill(c.pid, 0), { code: "ESRCH" }, "the runtime still runs");
});

test("set-up errors reject wait", { skip: SKIP }, async (t) => {
  const child = (await sandbox(t)).spawn("no-such-program", [], { stdin: "ignore" });
  await assert.rejects(child.waitWithOutput(), ProgramNotFoundError);
});

test("a terminal of the sandbox's own", { skip: SKIP }, async (t) => {
  const sb = await Sandbox.builder().stateRoot(stateRoot(t)).env("PATH", PATH).env("PS1", "$ ").build();
  assert.throws(() => sb.spawn("sh", [], { pty: { rows: 0, cols: 80 } }), /pty\.rows must be an integer from 1 to 65535/);
  const child = sb.spawn("sh", [], { pty: { rows: 31, cols: 101 } });
  let seen = "";
  const waiters = [];
  child.stdout.on("data", (d) => {
    seen += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  const until = async (marker) => {
    while (!seen.includes(marker)) await new Promise((r) => waiters.push(r));
    const at = seen.indexOf(marker) + marker.length;
    const got = seen.slice(0, at);
    seen = seen.slice(at);
    return got;
  };
  child.stdin.write("tty; stty size; echo mark-$((1 + 1))\n");
  const out = await until("mark-2\r\n");
  assert.match(out, /\/dev\/pts\/0\r\n31 101\r\n/);
  // ^C reaches the program in the foreground: the sleep ends, and so
  // does the rest of its line. The job says it runs once it is the
  // terminal's foreground (the shell's child makes itself that before it
  // runs anything): a ^C earlier would reach the shell instead.
  child.stdin.write("sh -c 'echo sleep-$((3 + 4)); exec sleep 1000'; echo after-$((4 + 5))\n");
  await until("sleep-7\r\n");
  child.stdin.write("\x03");
  assert.ok(!(await until("\n$ ")).includes("after-9"));
  child.stdin.write("exit 7\n");
  const r = await child.wait();
  assert.equal(r.exitCode, 7);
  assert.throws(() => child.resize(40, 100), NanoboxError);
});

test("no sandbox outlives this process", { skip: SKIP }, async (t) => {
  const tmp = tempDir(t);
  const st = join(tmp, "st");
  mkdirSync(st, { mode: 0o700 });
  const mark = String(6400000 + (process.pid % 100000));
  const script = `
    import { Sandbox } from ${JSON.stringify(join(REPO, "js", "src", "index.js"))};
    const sb = await Sandbox.builder().stateRoot(${JSON.stringify(st)}).env("PATH", "/usr/bin:/bin").build();
    const child = sb.spawn("sh", ["-c", "sleep ${mark} & echo up; wait"], { stdin: "ignore" });
    child.stdout.pipe(process.stdout);
    await child.wait();`;
  const p = spawnProcess(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    assert.equal(await lines(p.stdout)(), "up");
    await eventually(() => running(`^sleep ${mark}$`), "the sleep runs");
  } finally {
    p.kill("SIGKILL");
  }
  await eventually(() => !running(`^sleep ${mark}$`), "the sandbox ends with the program that spawned it");
  await eventually(() => stateLeft(st).length === 0, "the sandbox's state removed");
});
