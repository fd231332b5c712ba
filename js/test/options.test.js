// The builder writes the sandbox contract's options, exactly: every
// method's JSON, and a round trip through nanobox-runc (--print-options),
// which rejects any field it does not know.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, SKIP, tempDir } from "./helpers.js";
import { GB, KB, Limit, MB, Permission, Sandbox } from "../src/index.js";

function everyOption(tmp) {
  return Sandbox.builder()
    .rootfs(tmp)
    .mount(join(tmp, "in"), "/input", Permission.ReadOnly)
    .mount(join(tmp, "out"), "/output", Permission.ReadWrite)
    .tmpfs("/scratch", { size: 64 * MB })
    .tmpfs("/empty", { readOnly: true })
    .workingDir("/scratch")
    .env("A", "1")
    .envs({ B: "2", A: "3" })
    .hostname("box")
    .user(1000, 100, { umask: 0o22 })
    .memoryLimit(256 * MB)
    .cpuLimit(1.5)
    .pidsLimit(64)
    .wallTimeLimit(1.5)
    .cpuTimeLimit(0.25)
    .openFilesLimit(128)
    .fileSizeLimit(16 * MB)
    .outputLimit(MB)
    .allowDegraded(Limit.Memory, Limit.Pids, Limit.Memory)
    .hostNetwork()
    .seccomp("strict")
    .landlock({ readOnly: ["/usr"], readWrite: ["/tmp"], restrictNetwork: true, allowConnect: [443] })
    .hostIds(60000, 60000)
    .stateRoot(join(tmp, "state"));
}

test("every method writes the contract", async (t) => {
  const tmp = "/srv/x";
  assert.deepEqual(await everyOption(tmp).options(), {
    version: 1,
    rootfs: tmp,
    mounts: [
      { source: "/srv/x/in", target: "/input", readOnly: true },
      { source: "/srv/x/out", target: "/output" },
    ],
    tmpfs: [{ target: "/scratch", size: 64 * MB }, { target: "/empty", readOnly: true }],
    workDir: "/scratch",
    env: ["B=2", "A=3"],
    hostname: "box",
    user: { uid: 1000, gid: 100, umask: 0o22 },
    limits: { memory: 268435456, cpus: 1.5, pids: 64, wallTime: 1.5, cpuTime: 0.25, openFiles: 128, fileSize: 16 * MB, output: MB },
    allowDegraded: ["memory", "pids"],
    network: { mode: "host" },
    seccomp: "strict",
    landlock: { readOnly: ["/usr"], readWrite: ["/tmp"], restrictNetwork: true, allowConnect: [443] },
    namespaces: { hostUID: 60000, hostGID: 60000 },
    stateRoot: "/srv/x/state",
  });
  assert.deepEqual([KB, MB, GB], [1024, 1024 ** 2, 1024 ** 3]);
});

function printOptions(o, tmp) {
  const f = join(tmp, "opts.json");
  writeFileSync(f, JSON.stringify(o));
  const p = spawnSync(BINARY, ["sandbox", "--options", f, "--print-options"], { encoding: "utf8" });
  assert.equal(p.status, 0, p.stderr);
  return JSON.parse(p.stdout);
}

test("a round trip through the runtime", { skip: SKIP }, async (t) => {
  const tmp = tempDir(t);
  let o = await everyOption(tmp).options();
  assert.deepEqual(printOptions(o, tmp), o);
  const custom = { defaultAction: "errno", defaultErrno: 1, syscalls: [{ names: ["read", "write"], action: "allow" }] };
  o = await Sandbox.builder().seccomp(custom).noNetwork().options();
  assert.deepEqual(o.seccomp, { profile: custom });
  const back = printOptions(o, tmp);
  assert.deepEqual(back.seccomp.profile.syscalls[0].names, ["read", "write"]);
  o = await Sandbox.builder().allowNetwork(["api.example.com"]).denyNetwork(["*.evil.example"])
    .addHost("api.example.com", "127.0.0.2").allowPrivateTargets().options();
  assert.deepEqual(o.network, {
    mode: "allowlist", allow: ["api.example.com"], deny: ["*.evil.example"],
    hosts: { "api.example.com": "127.0.0.2" }, allowPrivateTargets: true,
  });
  assert.deepEqual(printOptions(o, tmp), o);
});

test("presets are the runtime's", { skip: SKIP }, async (t) => {
  const tmp = tempDir(t);
  const sub = join(tmp, "sub");
  mkdirSync(sub);
  const p = spawnSync(BINARY, ["sandbox", "--preset", `code-judge=${sub}`, "--print-options"], { encoding: "utf8" });
  assert.deepEqual(await Sandbox.codeJudge(sub).options(), JSON.parse(p.stdout));
  const o = await Sandbox.codeJudge(sub).memoryLimit(64 * MB).env("PATH", "/bin").options();
  assert.equal(o.limits.memory, 64 * MB);
  assert.equal(o.limits.pids, 64);
  assert.deepEqual(o.env.filter((e) => e.startsWith("PATH=")), ["PATH=/bin"]);
  assert.deepEqual(o.mounts, [{ source: sub, target: "/submission", readOnly: true }]);
  const a = await Sandbox.dataAnalysis(join(tmp, "i"), join(tmp, "o")).options();
  assert.deepEqual(a.mounts.map((m) => m.target), ["/input", "/output"]);
});

test("builder type errors", () => {
  const b = Sandbox.builder();
  assert.throws(() => b.memoryLimit("128M"), TypeError);
  assert.throws(() => b.wallTimeLimit("30s"), TypeError);
  assert.throws(() => b.mount("/a", "/b", "readonly"), TypeError);
  assert.throws(() => b.allowNetwork("example.com"), TypeError);
  assert.throws(() => b.env("A=B", "c"), TypeError);
});
