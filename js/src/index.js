// nanobox: run untrusted programs in nanobox-runc sandboxes from Node.js.
//
// The package speaks the sandbox contract (docs/sandbox-contract.md in the
// nanobox-runc repository) to the installed nanobox-runc binary, found at
// $NANOBOX_RUNC or on PATH: the options are the contract's JSON, every
// limit and policy is the runtime's own, and each run's execution report
// comes back as the contract's report object. No dependencies but node.
//
// Every run is one `nanobox-runc sandbox --options FILE --report FILE --
// CMD ARGS` process; the options and report files live in a private
// temporary directory that is removed afterwards.

import { spawn as spawnProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";

/** The version of the sandbox contract this package speaks. */
export const CONTRACT_VERSION = 1;

/** Sizes in bytes, for limits and tmpfs: `128 * MB`. */
export const KB = 1024;
export const MB = 1024 * KB;
export const GB = 1024 * MB;

/** How a bind mount may be used inside the sandbox. */
export const Permission = Object.freeze({ ReadOnly: "ro", ReadWrite: "rw" });

/** The limits' names, as allowDegraded and the report spell them. */
export const Limit = Object.freeze({
  Memory: "memory",
  CPUs: "cpus",
  Pids: "pids",
  WallTime: "wallTime",
  CPUTime: "cpuTime",
  OpenFiles: "openFiles",
  FileSize: "fileSize",
  Output: "output",
  Namespaces: "namespaces",
});

/**
 * What a run keeps of stdout and stderr together when no output limit is
 * set (libbox.DefaultOutputCap): the rest is dropped, never buffered
 * without bound, and the result says outputTruncated.
 */
export const DEFAULT_OUTPUT_CAP = 64 * MB;

/**
 * When a run has a timeout, how long past it (seconds) the runtime itself
 * may take (set-up, teardown) before the package ends the run (the report
 * then says cancelled).
 */
export const TIMEOUT_GRACE = 30;

const PREFIX = "nanobox-runc sandbox: ";

// ---- Errors

/** The base of every error this package throws. */
export class NanoboxError extends Error {
  constructor(message) {
    super(message);
    this.name = new.target.name;
  }
}

/** nanobox-runc is neither at $NANOBOX_RUNC nor on PATH. */
export class BinaryNotFoundError extends NanoboxError {}

/**
 * nanobox-runc answered with something this package cannot read: no
 * report, an unreadable one, or another version of the contract.
 */
export class ContractError extends NanoboxError {}

/**
 * The sandbox could not be set up, so nothing ran. The message is the
 * runtime's one-line error; report is the execution report (status
 * setup-error), kind its errorKind, problems every cause with the option
 * or limit at fault and the fix.
 */
export class SandboxSetupError extends NanoboxError {
  constructor(message, report = null) {
    super(message);
    this.report = report;
  }
  get kind() {
    return this.report?.errorKind ?? "setup-failed";
  }
  get problems() {
    return this.report?.problems ?? [];
  }
  get fix() {
    return this.problems.find((p) => p.fix)?.fix ?? "";
  }
}

/** An option is malformed, contradicts another, or names a missing path. */
export class InvalidOptionsError extends SandboxSetupError {
  get fields() {
    return this.problems.filter((p) => p.field).map((p) => p.field);
  }
  get field() {
    return this.fields[0] ?? "";
  }
}

/**
 * A limit cannot be enforced for this caller on this host and its
 * degradation was not allowed: limit names it, fix says what to do.
 */
export class LimitUnavailableError extends SandboxSetupError {
  get limits() {
    return this.problems.filter((p) => p.kind === "limit-unavailable" && p.limit).map((p) => p.limit);
  }
  get limit() {
    return this.limits[0] ?? "";
  }
  get fix() {
    return this.problems.find((p) => p.kind === "limit-unavailable" && p.fix)?.fix ?? super.fix;
  }
}

/** The program was not found inside the sandbox (exit code 127). */
export class ProgramNotFoundError extends SandboxSetupError {}

/** The program is not executable inside the sandbox (exit code 126). */
export class ProgramNotExecutableError extends SandboxSetupError {}

const BY_KIND = {
  "invalid-options": InvalidOptionsError,
  "limit-unavailable": LimitUnavailableError,
  "program-not-found": ProgramNotFoundError,
  "program-not-executable": ProgramNotExecutableError,
};

function setupError(message, report) {
  const Cls = BY_KIND[report.errorKind] ?? SandboxSetupError;
  return new Cls(message, report);
}

// ---- The binary

function isExecutableFile(p) {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The nanobox-runc to run: explicit, $NANOBOX_RUNC, or the one on PATH. */
export function findBinary(explicit) {
  const path = explicit || process.env.NANOBOX_RUNC;
  if (path) {
    if (!isExecutableFile(path)) {
      const where = explicit ? "binary()" : "NANOBOX_RUNC";
      throw new BinaryNotFoundError(
        `${where}: ${JSON.stringify(path)} is not an executable file: point it at nanobox-runc` +
          (explicit ? "" : ", or unset NANOBOX_RUNC to use the one on PATH"),
      );
    }
    return resolve(path);
  }
  for (const dir of (process.env.PATH || "").split(delimiter)) {
    if (dir && isExecutableFile(join(dir, "nanobox-runc"))) {
      return join(dir, "nanobox-runc");
    }
  }
  throw new BinaryNotFoundError(
    "nanobox-runc was not found on PATH: install it (make build && install -m 0755 nanobox-runc /usr/local/bin/) or set NANOBOX_RUNC to its path",
  );
}

function runtimeMessage(stderr, fallback) {
  const lines = stderr.toString("utf8").split("\n").reverse();
  const line = lines.find((l) => l.startsWith(PREFIX));
  return line ? line.slice(PREFIX.length) : fallback;
}

function tail(buf, n = 2000) {
  const s = buf.toString("utf8").trim();
  return s.length <= n ? s : "..." + s.slice(-n);
}

/** Read a report object; another contract version is a ContractError. */
export function parseReport(obj) {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    throw new ContractError(`report: want a JSON object, got ${JSON.stringify(obj)}`);
  }
  if (obj.version !== CONTRACT_VERSION) {
    throw new ContractError(
      `report: contract version ${JSON.stringify(obj.version)}: this nanobox package speaks version ${CONTRACT_VERSION} (install the nanobox package that matches nanobox-runc)`,
    );
  }
  const defaults = {
    signal: 0, signalName: "", killed: false, error: "", errorKind: "", problems: [],
    wallTime: 0, cpuUser: 0, cpuSystem: 0, cpuSource: "", peakMemory: 0, peakMemorySource: "",
    oomKilled: false, outputBytes: 0, outputTruncated: false, limits: {},
  };
  const rep = { ...defaults, ...obj };
  rep.isolation = { rootless: false, namespaces: "", network: "", seccomp: "", landlock: "", cgroup: "", degraded: [], ...(obj.isolation ?? {}) };
  for (const [name, l] of Object.entries(rep.limits)) {
    rep.limits[name] = { mechanism: "", reason: "", hit: false, ...l };
  }
  rep.problems = rep.problems.map((p) => ({ field: "", limit: "", fix: "", ...p }));
  return rep;
}

/** One `nanobox-runc sandbox` command line with its options and report files. */
class Invocation {
  constructor(binary, options, argv, flags = []) {
    this.dir = mkdtempSync(join(tmpdir(), "nanobox-"));
    try {
      const opts = join(this.dir, "options.json");
      writeFileSync(opts, JSON.stringify(options), { mode: 0o600, flag: "wx" });
      this.reportPath = join(this.dir, "report.json");
      this.argv = ["sandbox", "--options", opts, "--report", this.reportPath, ...flags];
      // A run ends with this process, however it ends: no sandbox is
      // left behind by a program that dies.
      if (argv.length > 0) this.argv.push("--die-with-parent", "--", ...argv);
      this.binary = binary;
    } catch (e) {
      this.cleanup();
      throw e;
    }
  }

  cleanup() {
    rmSync(this.dir, { recursive: true, force: true });
  }

  report(code, signal, stderr) {
    let data = "";
    try {
      data = readFileSync(this.reportPath, "utf8");
    } catch {
      // No report: said below.
    }
    if (data.trim() === "") {
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      const said = stderr.length > 0 && stderr.toString().trim() ? `: ${runtimeMessage(stderr, tail(stderr))}` : "";
      throw new ContractError(`nanobox-runc ${how} and wrote no report${said}`);
    }
    let obj;
    try {
      obj = JSON.parse(data);
    } catch (e) {
      throw new ContractError(`nanobox-runc wrote a report that is not JSON: ${e.message}`);
    }
    return parseReport(obj);
  }

  check(report, stderr) {
    if (report.status === "setup-error") {
      throw setupError(runtimeMessage(stderr, report.error), report);
    }
  }
}

/** Run the binary with args, collecting stdout and stderr (small outputs). */
function runCollect(binary, args) {
  return new Promise((res, rej) => {
    const p = spawnProcess(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    const out = [];
    const err = [];
    p.stdout.on("data", (d) => out.push(d));
    p.stderr.on("data", (d) => err.push(d));
    p.on("error", rej);
    p.on("close", (code, signal) => res({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
  });
}

async function presetOptions(binary, preset) {
  const [name, ...dirs] = preset;
  const arg = name + (dirs.length ? "=" + dirs.map((d) => resolve(d)).join(",") : "");
  const p = await runCollect(binary, ["sandbox", "--preset", arg, "--print-options"]);
  if (p.code !== 0) {
    throw new SandboxSetupError(runtimeMessage(p.stderr, `nanobox-runc exited with status ${p.code}: ${tail(p.stderr)}`));
  }
  let o;
  try {
    o = JSON.parse(p.stdout.toString("utf8"));
  } catch (e) {
    throw new ContractError(`preset ${name}: nanobox-runc printed options that are not JSON: ${e.message}`);
  }
  return o;
}

async function validate(binary, options) {
  const inv = new Invocation(binary, options, [], ["--validate"]);
  try {
    const p = await runCollect(inv.binary, inv.argv);
    if (p.code === 0) return;
    inv.check(inv.report(p.code, p.signal, p.stderr), p.stderr);
    throw new ContractError(`nanobox-runc --validate exited with status ${p.code}: ${tail(p.stderr)}`);
  } finally {
    inv.cleanup();
  }
}

// ---- Options

function seconds(v, what) {
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new TypeError(`${what}: want a number of seconds, got ${typeof v}`);
  }
  return v;
}

function int(v, what) {
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    throw new TypeError(`${what}: want an integer, got ${typeof v === "number" ? v : typeof v}`);
  }
  return v;
}

function num(v, what) {
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new TypeError(`${what}: want a number, got ${typeof v}`);
  }
  return v;
}

function strs(v, what) {
  if (typeof v === "string" || !v || typeof v[Symbol.iterator] !== "function") {
    throw new TypeError(`${what}: want an array of strings`);
  }
  const out = [...v];
  for (const s of out) {
    if (typeof s !== "string") throw new TypeError(`${what}: want strings, got ${typeof s}`);
  }
  return out;
}

function setEnv(o, key, value) {
  o.env = (o.env ?? []).filter((kv) => kv.split("=", 1)[0] !== key);
  o.env.push(`${key}=${value}`);
}

/** o's network, made an allowlist (the other modes' fields dropped). */
function allowlist(o) {
  if (o.network?.mode !== "allowlist") o.network = { mode: "allowlist" };
  return o.network;
}

function clone(v) {
  return JSON.parse(JSON.stringify(v));
}

/**
 * Builds a Sandbox from options. Every method returns the builder;
 * build() checks the options against this host (as nanobox-runc would for
 * a run). A builder made from a preset starts from the runtime's own preset
 * options, read at build() time.
 */
export class SandboxBuilder {
  #preset;
  #base;
  #ops = [];
  #binary;

  constructor({ preset = null, options = null } = {}) {
    this.#preset = preset ? [...preset] : null;
    this.#base = options ? clone(options) : { version: CONTRACT_VERSION };
  }

  #op(f) {
    this.#ops.push(f);
    return this;
  }

  // ---- Filesystem

  /** Use the host directory path as the root (read-only). */
  rootfs(path) {
    const p = resolve(path);
    return this.#op((o) => { o.rootfs = p; });
  }

  /** Bind the host path source at target, Permission.ReadOnly or ReadWrite. */
  mount(source, target, permission) {
    if (permission !== Permission.ReadOnly && permission !== Permission.ReadWrite) {
      throw new TypeError("mount: permission must be Permission.ReadOnly or Permission.ReadWrite");
    }
    const m = { source: resolve(source), target };
    if (permission === Permission.ReadOnly) m.readOnly = true;
    return this.#op((o) => { (o.mounts ??= []).push({ ...m }); });
  }

  /** A private tmpfs at target of size bytes (default 64 MiB). */
  tmpfs(target, { size, readOnly = false } = {}) {
    const t = { target };
    if (size !== undefined) t.size = int(size, "tmpfs size");
    if (readOnly) t.readOnly = true;
    return this.#op((o) => { (o.tmpfs ??= []).push({ ...t }); });
  }

  /** The program's working directory inside the sandbox (default /tmp). */
  workingDir(path) {
    return this.#op((o) => { o.workDir = path; });
  }

  // ---- Environment

  /** Set key in the program's environment (nothing of the caller's is passed). */
  env(key, value) {
    if (!key || key.includes("=")) throw new TypeError(`env: ${JSON.stringify(key)} is not a variable name`);
    return this.#op((o) => setEnv(o, key, String(value)));
  }

  /** Set several variables. */
  envs(vars) {
    for (const [k, v] of Object.entries(vars)) this.env(k, v);
    return this;
  }

  /** Pass the caller's value of each of keys (those that are set). */
  inheritEnv(...keys) {
    for (const k of keys) {
      if (process.env[k] !== undefined) this.env(k, process.env[k]);
    }
    return this;
  }

  /** Start from an empty environment (a preset sets PATH, HOME, LANG). */
  clearEnv() {
    return this.#op((o) => { delete o.env; });
  }

  /** The hostname inside the sandbox (default "sandbox"). */
  hostname(name) {
    return this.#op((o) => { o.hostname = name; });
  }

  /** The uid and gid inside the sandbox (0:0 by default, no capabilities). */
  user(uid, gid = 0, { umask } = {}) {
    const u = { uid: int(uid, "user uid"), gid: int(gid, "user gid") };
    if (umask !== undefined) u.umask = int(umask, "user umask");
    return this.#op((o) => { o.user = { ...u }; });
  }

  // ---- Resources

  #limit(name, v) {
    return this.#op((o) => { (o.limits ??= {})[name] = v; });
  }

  /** Memory of the whole sandbox, in bytes. */
  memoryLimit(bytes) { return this.#limit("memory", int(bytes, "memoryLimit")); }
  /** CPU bandwidth, in CPUs (1.5). */
  cpuLimit(cpus) { return this.#limit("cpus", num(cpus, "cpuLimit")); }
  /** Processes and threads at once. */
  pidsLimit(n) { return this.#limit("pids", int(n, "pidsLimit")); }
  /** Real time from the program's start, in seconds. */
  wallTimeLimit(secs) { return this.#limit("wallTime", seconds(secs, "wallTimeLimit")); }
  /** User plus system CPU time, in seconds. */
  cpuTimeLimit(secs) { return this.#limit("cpuTime", seconds(secs, "cpuTimeLimit")); }
  /** Open file descriptors per process. */
  openFilesLimit(n) { return this.#limit("openFiles", int(n, "openFilesLimit")); }
  /** Size of any file a process writes, in bytes. */
  fileSizeLimit(bytes) { return this.#limit("fileSize", int(bytes, "fileSizeLimit")); }
  /** stdout and stderr together, in bytes (past it the sandbox is killed). */
  outputLimit(bytes) { return this.#limit("output", int(bytes, "outputLimit")); }

  /** Let these limits be enforced by a weaker mechanism, or not at all, where the host cannot enforce them. */
  allowDegraded(...limits) {
    const names = strs(limits, "allowDegraded");
    return this.#op((o) => {
      const have = (o.allowDegraded ??= []);
      for (const n of names) if (!have.includes(n)) have.push(n);
    });
  }

  // ---- Network

  /** No network: loopback only (the default). */
  noNetwork() { return this.#op((o) => { o.network = { mode: "none" }; }); }
  /** The caller's network (the report says so). */
  hostNetwork() { return this.#op((o) => { o.network = { mode: "host" }; }); }

  /** Reach only these domains: the allowlist mode. */
  allowNetwork(domains) {
    const names = strs(domains, "allowNetwork");
    return this.#op((o) => { (allowlist(o).allow ??= []).push(...names); });
  }

  /** Deny rules of the allowlist mode (they win over allow rules). */
  denyNetwork(domains) {
    const names = strs(domains, "denyNetwork");
    return this.#op((o) => { (allowlist(o).deny ??= []).push(...names); });
  }

  /** Let allowed names lead to loopback, private, link-local and this host's addresses: the allowlist mode. */
  allowPrivateTargets() {
    return this.#op((o) => { allowlist(o).allowPrivateTargets = true; });
  }

  /** Resolve name to address on the host's side instead of looking it up (allowlist mode). */
  addHost(name, address) {
    return this.#op((o) => { (allowlist(o).hosts ??= {})[name] = address; });
  }

  // ---- Security

  /** "default", "strict", "none", or a custom filter in libbox's form. */
  seccomp(profile) {
    let v;
    if (typeof profile === "string") v = profile;
    else if (profile && typeof profile === "object") v = "profile" in profile ? clone(profile) : { profile: clone(profile) };
    else throw new TypeError("seccomp: want a profile name or a filter object");
    return this.#op((o) => { o.seccomp = clone(v); });
  }

  /** A Landlock policy over sandbox paths, on top of the mounts. */
  landlock({ readOnly = [], readWrite = [], restrictNetwork = false, allowBind = [], allowConnect = [], required = false } = {}) {
    const ll = {};
    if (readOnly.length) ll.readOnly = strs(readOnly, "landlock readOnly");
    if (readWrite.length) ll.readWrite = strs(readWrite, "landlock readWrite");
    if (restrictNetwork) ll.restrictNetwork = true;
    if (allowBind.length) ll.allowBind = allowBind.map((p) => int(p, "landlock allowBind"));
    if (allowConnect.length) ll.allowConnect = allowConnect.map((p) => int(p, "landlock allowConnect"));
    if (required) ll.required = true;
    return this.#op((o) => { o.landlock = clone(ll); });
  }

  /** Map the sandbox's user to these host ids (root only). */
  hostIds(uid, gid) {
    const ns = { hostUID: int(uid, "host uid"), hostGID: int(gid, "host gid") };
    return this.#op((o) => { o.namespaces = { ...(o.namespaces ?? {}), ...ns }; });
  }

  // ---- Runtime

  /** Where the sandboxes' state directories live while they run. */
  stateRoot(path) {
    const p = resolve(path);
    return this.#op((o) => { o.stateRoot = p; });
  }

  /** Use this nanobox-runc (default: $NANOBOX_RUNC, then PATH). */
  binary(path) {
    this.#binary = path;
    return this;
  }

  /** The options object these calls describe (the contract's JSON form). */
  async options() {
    const o = this.#preset ? await presetOptions(findBinary(this.#binary), this.#preset) : clone(this.#base);
    for (const f of this.#ops) f(o);
    return o;
  }

  /**
   * Check the options against this host, as a run would, and return the
   * sandbox; rejects with a SandboxSetupError subclass naming the option
   * or limit and the fix.
   */
  async build() {
    const binary = findBinary(this.#binary);
    const o = await this.options();
    await validate(binary, o);
    return new Sandbox(o, { binary });
  }
}

// ---- Running

function inputBuffer(input) {
  if (input === undefined || input === null) return null;
  if (typeof input === "string") return Buffer.from(input, "utf8");
  if (input instanceof Uint8Array) return Buffer.from(input);
  throw new TypeError("input: want a string or a Buffer");
}

function argvOf(cmd, args) {
  if (typeof cmd !== "string" || cmd === "") throw new TypeError("the program to run must be a non-empty string");
  if (typeof args === "string") throw new TypeError("args: want an array of strings, not one string");
  return [cmd, ...strs(args ?? [], "args")];
}

function outputCap(options) {
  const limit = options.limits?.output;
  return limit ? limit : DEFAULT_OUTPUT_CAP;
}

function runOptions(options, timeout) {
  if (timeout === undefined || timeout === null) return options;
  seconds(timeout, "timeout");
  if (timeout <= 0) throw new RangeError(`timeout must be positive, got ${timeout}`);
  const o = clone(options);
  const wall = o.limits?.wallTime;
  o.limits = { ...(o.limits ?? {}), wallTime: wall ? Math.min(wall, timeout) : timeout };
  return o;
}

/** stdout and stderr of a run, together at most cap bytes. */
class OutputBuffer {
  constructor(cap) {
    this.cap = cap;
    this.kept = 0;
    this.truncated = false;
    this.parts = { 1: [], 2: [] };
  }
  add(stream, chunk) {
    const room = this.cap - this.kept;
    if (chunk.length > room) {
      chunk = chunk.subarray(0, Math.max(room, 0));
      this.truncated = true;
    }
    if (chunk.length) {
      this.parts[stream].push(chunk);
      this.kept += chunk.length;
    }
  }
  get(stream) {
    return Buffer.concat(this.parts[stream]);
  }
}

export { OutputBuffer as _OutputBuffer };

function makeResult(report, out = Buffer.alloc(0), err = Buffer.alloc(0), truncated = false) {
  return Object.freeze({
    stdoutBytes: out,
    stderrBytes: err,
    stdout: out.toString("utf8"),
    stderr: err.toString("utf8"),
    exitCode: report.exitCode,
    signal: report.signal || null,
    success: report.status === "ok",
    status: report.status,
    outputTruncated: truncated || report.outputTruncated,
    report,
  });
}

function stdioOf(v, name) {
  if (v === undefined || v === "pipe") return "pipe";
  if (v === "ignore" || v === "inherit") return v;
  if (typeof v === "number" || (v && typeof v === "object")) return v;
  throw new TypeError(`${name}: want "pipe", "ignore", "inherit", a file descriptor or a stream`);
}

/** Read a child's piped output into buf; resolves when both streams end. */
function drain(proc, buf) {
  const ends = [];
  for (const [n, s] of [[1, proc.stdout], [2, proc.stderr]]) {
    if (!s) continue;
    ends.push(new Promise((res) => {
      s.on("data", (d) => buf.add(n, d));
      s.on("end", res);
      s.on("close", res);
      s.on("error", res);
    }));
  }
  return Promise.all(ends);
}

function feed(stdin, data) {
  if (!stdin) return;
  stdin.on("error", () => {}); // EPIPE: the program did not read it all
  if (data && data.length) stdin.end(data);
  else stdin.end();
}

function exited(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) {
    return Promise.resolve({ code: proc.exitCode, signal: proc.signalCode });
  }
  return new Promise((res) => proc.once("exit", (code, signal) => res({ code, signal })));
}

function terminate(proc) {
  if (proc.exitCode === null && proc.signalCode === null) {
    try {
      proc.kill("SIGTERM");
    } catch {
      // Already gone.
    }
  }
}

/**
 * A set of sandbox options; every run gets a fresh sandbox made from them,
 * and nothing carries over from one run to the next.
 */
export class Sandbox {
  #options;
  #binary;

  constructor(options, { binary } = {}) {
    this.#options = clone(options);
    this.#binary = findBinary(binary);
  }

  /** A builder from the default options (system directories read-only, no network, no limits). */
  static builder() {
    return new SandboxBuilder();
  }

  /** The agent-executor preset: workspace read-write at /workspace, its .git read-only (history and diffs, no commits). */
  static agentExecutor(workspace = ".") {
    return new SandboxBuilder({ preset: ["agent-executor", workspace] });
  }

  /** The code-judge preset: submission read-only at /submission, strict limits that fail closed. */
  static codeJudge(submission = ".") {
    return new SandboxBuilder({ preset: ["code-judge", submission] });
  }

  /** The data-analysis preset: input read-only at /input, output read-write at /output. */
  static dataAnalysis(input, output) {
    return new SandboxBuilder({ preset: ["data-analysis", input, output] });
  }

  /** A sandbox from options in the contract's JSON form, checked like build(). */
  static async fromOptions(options, { binary } = {}) {
    const b = new SandboxBuilder({ options });
    if (binary) b.binary(binary);
    return b.build();
  }

  /** The options, in the contract's JSON form (a copy). */
  get options() {
    return clone(this.#options);
  }

  /** The nanobox-runc this sandbox runs. */
  get binary() {
    return this.#binary;
  }

  /**
   * Run cmd with args in a fresh sandbox and wait for it. input (string
   * or Buffer) is its stdin (/dev/null without it); timeout (seconds)
   * tightens the wall-time limit for this run (status wall-timeout past
   * it). A program that fails resolves (success false); a sandbox that
   * could not be set up rejects with a SandboxSetupError subclass.
   */
  async run(cmd, args = [], { input, timeout } = {}) {
    const argv = argvOf(cmd, args);
    const data = inputBuffer(input);
    const opts = runOptions(this.#options, timeout);
    const inv = new Invocation(this.#binary, opts, argv);
    try {
      const proc = spawnProcess(inv.binary, inv.argv, { stdio: [data ? "pipe" : "ignore", "pipe", "pipe"] });
      const started = new Promise((res, rej) => {
        proc.once("spawn", res);
        proc.once("error", rej);
      });
      await started;
      const buf = new OutputBuffer(outputCap(opts));
      feed(proc.stdin, data);
      let backstop;
      if (timeout) {
        // Past the timeout and the grace the run is ended (report:
        // cancelled), and the runtime killed if it does not end either.
        backstop = setTimeout(() => {
          terminate(proc);
          backstop = setTimeout(() => proc.kill("SIGKILL"), TIMEOUT_GRACE * 1000);
        }, (timeout + TIMEOUT_GRACE) * 1000);
      }
      let st;
      try {
        [, st] = await Promise.all([drain(proc, buf), exited(proc)]);
      } finally {
        clearTimeout(backstop);
      }
      const err = buf.get(2);
      const report = inv.report(st.code, st.signal, err);
      inv.check(report, err);
      return makeResult(report, buf.get(1), err, buf.truncated);
    } finally {
      inv.cleanup();
    }
  }

  /**
   * Start cmd in a fresh sandbox and return at once. stdin, stdout and
   * stderr are each "pipe" (the default: the Child's streams), "ignore",
   * "inherit", a file descriptor or a stream. A sandbox that cannot be set
   * up rejects child.wait() with its SandboxSetupError.
   */
  spawn(cmd, args = [], { stdin = "pipe", stdout = "pipe", stderr = "pipe", pty = false } = {}) {
    const argv = argvOf(cmd, args);
    if (pty && (stdin !== "pipe" || stdout !== "pipe" || stderr !== "pipe")) {
      throw new TypeError("spawn: pty gives the program its stdin, stdout and stderr: drop the stdio options");
    }
    // pty: the runtime (-t) makes the program a terminal in the sandbox and
    // relays it to the pipes; stdout is what the terminal shows.
    const inv = new Invocation(this.#binary, this.#options, argv, pty ? ["--tty", "--tty-size", ptySize(pty)] : []);
    let proc;
    try {
      proc = spawnProcess(inv.binary, inv.argv, {
        stdio: [stdioOf(stdin, "stdin"), stdioOf(stdout, "stdout"), stdioOf(stderr, "stderr")],
      });
    } catch (e) {
      inv.cleanup();
      throw e;
    }
    return new Child(proc, inv, outputCap(this.#options));
  }
}

/** spawn's pty option as --tty-size's ROWSxCOLS. */
function ptySize(pty) {
  const { rows, cols } = pty === true ? { rows: 24, cols: 80 } : pty;
  for (const [what, n] of [["rows", rows], ["cols", cols]]) {
    if (!Number.isInteger(n) || n < 1 || n > 65535) {
      throw new TypeError(`spawn: pty.${what} must be an integer from 1 to 65535, got ${n}`);
    }
  }
  return `${rows}x${cols}`;
}

/**
 * A program running in a sandbox of its own, from Sandbox.spawn: stdin,
 * stdout and stderr are the streams spawned with "pipe" (null otherwise).
 */
export class Child {
  #proc;
  #inv;
  #cap;
  #result = null;
  #exit;
  #spawned;

  constructor(proc, inv, cap) {
    this.#proc = proc;
    this.#inv = inv;
    this.#cap = cap;
    this.stdin = proc.stdin;
    this.stdout = proc.stdout;
    this.stderr = proc.stderr;
    this.stdin?.on("error", () => {}); // EPIPE once the sandbox is gone
    this.#spawned = new Promise((res, rej) => {
      proc.once("spawn", res);
      proc.once("error", rej);
    });
    this.#spawned.catch(() => {});
    this.#exit = exited(proc);
  }

  /** The pid of the runtime process that supervises the sandbox. */
  get pid() {
    return this.#proc.pid;
  }

  /** The exit status once known. */
  get exitCode() {
    return this.#proc.exitCode;
  }

  /**
   * Wait for the sandbox to end; the result's stdout and stderr are empty
   * (the streams are the caller's: read them, or a program that fills a
   * pipe never ends; or use waitWithOutput).
   */
  async wait() {
    if (this.#result) return this.#result;
    await this.#spawned.catch((e) => {
      this.#inv.cleanup();
      throw e;
    });
    const st = await this.#exit;
    return this.#finish(st, Buffer.alloc(0), Buffer.alloc(0), false);
  }

  /**
   * Write input to stdin (then end it), read stdout and stderr to their
   * end (at most the output limit, or 64 MiB, together), wait, and return
   * the result with the output.
   */
  async waitWithOutput(input) {
    if (this.#result) return this.#result;
    const data = inputBuffer(input);
    if (data && !this.stdin) throw new NanoboxError("waitWithOutput: input given, but stdin was not spawned with \"pipe\"");
    await this.#spawned.catch((e) => {
      this.#inv.cleanup();
      throw e;
    });
    const buf = new OutputBuffer(this.#cap);
    if (this.stdin) feed(this.stdin, data);
    const [, st] = await Promise.all([drain(this.#proc, buf), this.#exit]);
    return this.#finish(st, buf.get(1), buf.get(2), buf.truncated);
  }

  /** End the whole sandbox now: every process in it is killed (status cancelled). */
  kill() {
    terminate(this.#proc);
  }

  /**
   * Not available from Node: the runtime takes a new size from a terminal
   * of the caller's, and Node has no pty to give it. A program spawned with
   * pty keeps the size it started with (pty: { rows, cols }, or 24x80).
   */
  resize() {
    throw new NanoboxError("resize: Node has no pty of its own to carry a new size to the runtime: the program's terminal keeps the size it started with (spawn's pty: { rows, cols }; Python's nanobox can resize)");
  }

  /** Kill the sandbox if it still runs, and wait for it to be gone. */
  async close() {
    this.kill();
    await this.#exit;
    this.stdin?.destroy();
    this.stdout?.destroy();
    this.stderr?.destroy();
    this.#inv.cleanup();
  }

  #finish(st, out, err, truncated) {
    try {
      const report = this.#inv.report(st.code, st.signal, err);
      this.#inv.check(report, err);
      this.#result = makeResult(report, out, err, truncated);
      return this.#result;
    } finally {
      this.#inv.cleanup();
    }
  }
}
