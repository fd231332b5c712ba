// Types of the nanobox package (src/index.js). The options and the report
// are the sandbox contract's JSON objects (docs/sandbox-contract.md in the
// nanobox-runc repository), field for field.

/// <reference types="node" />

import type { Readable, Writable } from "node:stream";

/** The version of the sandbox contract this package speaks. */
export declare const CONTRACT_VERSION: 1;

/** Sizes in bytes: `128 * MB`. */
export declare const KB: number;
export declare const MB: number;
export declare const GB: number;

/** What a run keeps of stdout and stderr together without an output limit. */
export declare const DEFAULT_OUTPUT_CAP: number;
/** Seconds past a run's timeout before the package ends the run itself. */
export declare const TIMEOUT_GRACE: number;

export declare const Permission: {
  readonly ReadOnly: "ro";
  readonly ReadWrite: "rw";
};
export type Permission = (typeof Permission)[keyof typeof Permission];

export declare const Limit: {
  readonly Memory: "memory";
  readonly CPUs: "cpus";
  readonly Pids: "pids";
  readonly WallTime: "wallTime";
  readonly CPUTime: "cpuTime";
  readonly OpenFiles: "openFiles";
  readonly FileSize: "fileSize";
  readonly Output: "output";
  readonly Namespaces: "namespaces";
};
/** A limit's JSON name. */
export type LimitName = "memory" | "cpus" | "pids" | "wallTime" | "cpuTime" | "openFiles" | "fileSize" | "output";

// ---- The contract's options object

export interface BindJSON {
  source: string;
  target: string;
  readOnly?: boolean;
}

export interface TmpfsJSON {
  target: string;
  /** Bytes; 64 MiB when absent. */
  size?: number;
  readOnly?: boolean;
}

export interface LimitsJSON {
  /** Bytes. */
  memory?: number;
  cpus?: number;
  pids?: number;
  /** Seconds. */
  wallTime?: number;
  /** Seconds. */
  cpuTime?: number;
  openFiles?: number;
  /** Bytes. */
  fileSize?: number;
  /** Bytes. */
  output?: number;
}

export interface NetworkJSON {
  mode?: "none" | "host" | "allowlist";
  allow?: string[];
  deny?: string[];
  allowPrivateTargets?: boolean;
  hosts?: Record<string, string>;
}

export interface LandlockJSON {
  readOnly?: string[];
  readWrite?: string[];
  restrictNetwork?: boolean;
  allowBind?: number[];
  allowConnect?: number[];
  required?: boolean;
}

/** libbox's seccomp filter form (see the contract). */
export interface SeccompFilterJSON {
  defaultAction: string;
  defaultErrno?: number;
  architectures?: string[];
  syscalls?: Array<{
    names: string[];
    action: string;
    errno?: number;
    args?: Array<{ index: number; value: number; valueTwo?: number; op: string }>;
  }>;
  [key: string]: unknown;
}

export interface OptionsJSON {
  version: 1;
  rootfs?: string;
  mounts?: BindJSON[];
  tmpfs?: TmpfsJSON[];
  workDir?: string;
  env?: string[];
  hostname?: string;
  user?: { uid: number; gid: number; umask?: number };
  limits?: LimitsJSON;
  allowDegraded?: string[];
  network?: NetworkJSON;
  seccomp?: "default" | "strict" | "none" | { profile: SeccompFilterJSON };
  landlock?: LandlockJSON;
  namespaces?: { none?: boolean; hostUID?: number; hostGID?: number };
  stateRoot?: string;
}

// ---- The contract's report object

export type RunStatus =
  | "ok"
  | "exited"
  | "signaled"
  | "oom"
  | "wall-timeout"
  | "cpu-timeout"
  | "output-limit"
  | "cancelled"
  | "setup-error";

export type ErrorKind =
  | "invalid-options"
  | "limit-unavailable"
  | "program-not-found"
  | "program-not-executable"
  | "setup-failed";

export interface Problem {
  kind: ErrorKind;
  /** This cause's one-line error. */
  message: string;
  /** The option at fault, by its JSON path ("limits.memory"), or "". */
  field: string;
  /** The limit that cannot be enforced, or "". */
  limit: string;
  /** What to do about it, or "". */
  fix: string;
}

export interface LimitReport {
  /** The value asked for, in unit. */
  requested: number;
  unit: "bytes" | "seconds" | "count" | "cpus";
  status: "enforced" | "degraded" | "unavailable";
  mechanism: string;
  reason: string;
  hit: boolean;
}

export interface Denial {
  /** RFC 3339. */
  time: string;
  name: string;
  port?: number;
  via: "dns" | "proxy" | "connect" | string;
  rule?: string;
  reason: string;
  count: number;
}

export interface NetworkReport {
  allow?: string[];
  deny?: string[];
  denied?: Denial[];
  deniedTotal: number;
  connections?: Record<string, number>;
}

export interface Isolation {
  rootless: boolean;
  namespaces: string;
  network: string;
  seccomp: string;
  landlock: string;
  cgroup: string;
  degraded: string[];
}

export interface Report {
  version: 1;
  id: string;
  status: RunStatus;
  exitCode: number;
  signal: number;
  signalName: string;
  killed: boolean;
  error: string;
  errorKind: ErrorKind | "";
  problems: Problem[];
  /** Seconds from the program's execve to its exit. */
  wallTime: number;
  cpuUser: number;
  cpuSystem: number;
  cpuSource: string;
  /** Bytes. */
  peakMemory: number;
  peakMemorySource: string;
  oomKilled: boolean;
  voluntaryContextSwitches: number;
  involuntaryContextSwitches: number;
  outputBytes: number;
  outputTruncated: boolean;
  /** The network allowlist's account (allowlist mode only). */
  network?: NetworkReport;
  /** One entry per limit asked for, by its JSON name. */
  limits: Partial<Record<LimitName, LimitReport>>;
  isolation: Isolation;
  /** Fields newer than this package, as the runtime wrote them. */
  [key: string]: unknown;
}

/** Read a report object; another contract version is a ContractError. */
export declare function parseReport(obj: unknown): Report;

/** The nanobox-runc to run: explicit, $NANOBOX_RUNC, or the one on PATH. */
export declare function findBinary(explicit?: string): string;

// ---- Errors

export declare class NanoboxError extends Error {}
export declare class BinaryNotFoundError extends NanoboxError {}
export declare class ContractError extends NanoboxError {}
export declare class SandboxSetupError extends NanoboxError {
  constructor(message: string, report?: Report | null);
  readonly report: Report | null;
  readonly kind: ErrorKind;
  readonly problems: Problem[];
  readonly fix: string;
}
export declare class InvalidOptionsError extends SandboxSetupError {
  readonly fields: string[];
  readonly field: string;
}
export declare class LimitUnavailableError extends SandboxSetupError {
  readonly limits: string[];
  readonly limit: string;
}
export declare class ProgramNotFoundError extends SandboxSetupError {}
export declare class ProgramNotExecutableError extends SandboxSetupError {}

// ---- Builder, sandbox, result, child

export declare class SandboxBuilder {
  constructor(init?: { preset?: string[] | null; options?: OptionsJSON | null });
  rootfs(path: string): this;
  mount(source: string, target: string, permission: Permission): this;
  tmpfs(target: string, opts?: { size?: number; readOnly?: boolean }): this;
  workingDir(path: string): this;
  env(key: string, value: string): this;
  envs(vars: Record<string, string>): this;
  inheritEnv(...keys: string[]): this;
  clearEnv(): this;
  hostname(name: string): this;
  user(uid: number, gid?: number, opts?: { umask?: number }): this;
  memoryLimit(bytes: number): this;
  cpuLimit(cpus: number): this;
  pidsLimit(n: number): this;
  /** Seconds. */
  wallTimeLimit(seconds: number): this;
  /** Seconds. */
  cpuTimeLimit(seconds: number): this;
  openFilesLimit(n: number): this;
  fileSizeLimit(bytes: number): this;
  outputLimit(bytes: number): this;
  allowDegraded(...limits: string[]): this;
  noNetwork(): this;
  hostNetwork(): this;
  allowNetwork(domains: Iterable<string>): this;
  denyNetwork(domains: Iterable<string>): this;
  allowPrivateTargets(): this;
  addHost(name: string, address: string): this;
  seccomp(profile: "default" | "strict" | "none" | SeccompFilterJSON | { profile: SeccompFilterJSON }): this;
  landlock(policy?: LandlockJSON): this;
  hostIds(uid: number, gid: number): this;
  stateRoot(path: string): this;
  binary(path: string): this;
  options(): Promise<OptionsJSON>;
  build(): Promise<Sandbox>;
}

export interface Result {
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutBytes: Buffer;
  readonly stderrBytes: Buffer;
  /** 128+N when signal N killed the program. */
  readonly exitCode: number;
  readonly signal: number | null;
  /** The program exited 0. */
  readonly success: boolean;
  readonly status: RunStatus;
  readonly outputTruncated: boolean;
  readonly report: Report;
}

export interface RunOptions {
  /** The program's stdin; /dev/null without it. */
  input?: string | Uint8Array;
  /** Seconds: tightens the wall-time limit for this run. */
  timeout?: number;
}

export type StdioChoice = "pipe" | "ignore" | "inherit" | number | Readable | Writable;

export interface SpawnOptions {
  stdin?: StdioChoice;
  stdout?: StdioChoice;
  stderr?: StdioChoice;
  /**
   * A terminal of the program's own, in the sandbox (true: 24x80, or the
   * size given): stdin is typed into it, stdout is what it shows (raw
   * bytes, "\r\n" line ends).
   */
  pty?: boolean | { rows: number; cols: number };
}

export declare class Sandbox {
  constructor(options: OptionsJSON, init?: { binary?: string });
  static builder(): SandboxBuilder;
  static agentExecutor(workspace?: string): SandboxBuilder;
  static codeJudge(submission?: string): SandboxBuilder;
  static dataAnalysis(input: string, output: string): SandboxBuilder;
  static fromOptions(options: OptionsJSON, init?: { binary?: string }): Promise<Sandbox>;
  readonly options: OptionsJSON;
  readonly binary: string;
  run(cmd: string, args?: string[], opts?: RunOptions): Promise<Result>;
  spawn(cmd: string, args?: string[], opts?: SpawnOptions): Child;
}

export declare class Child {
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** The pid of the runtime process that supervises the sandbox. */
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  wait(): Promise<Result>;
  waitWithOutput(input?: string | Uint8Array): Promise<Result>;
  kill(): void;
  /** Throws: Node cannot carry a new terminal size to the runtime. */
  resize(rows: number, cols: number): never;
  close(): Promise<void>;
}
