package libbox

// The presets: each one is an Options value, listed here and nowhere else.
// The CLI (`sandbox --preset`), `spec --preset` and the bindings all get
// them from this file; a caller adjusts the returned Options before New.
// README.md documents every default below.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// presetEnv is the environment of the presets' programs: a PATH for tools
// that start others, a writable HOME, a UTF-8 locale that needs no locale
// files.
var presetEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/tmp",
	"LANG=C.UTF-8",
}

// The presets' mount points inside the sandbox.
const (
	WorkspaceDir  = "/workspace"
	SubmissionDir = "/submission"
	InputDir      = "/input"
	OutputDir     = "/output"
)

// AgentExecutor is for running commands an AI agent wrote, in a workspace:
// the workspace read-write at /workspace (the working directory), the rest
// of the system read-only, no network, generous limits (memory 4 GiB,
// 1024 processes, 30 minutes of wall time, 64 MiB of output, 4096 open
// files; memory and processes may degrade to rlimits where the host has no
// cgroup for the caller), a 1 GiB /tmp, the default seccomp profile.
//
// The workspace's .git (a directory, or a worktree's .git file) is
// read-only as a whole, and a mount point, which cannot be renamed or
// removed to put another in its place: the program cannot plant anything
// that a git command run later outside the sandbox would execute. Making
// only config and hooks read-only is not enough: git takes its config and
// hooks from wherever a commondir file in .git names, a submodule's from
// .git/modules, and a gitlink the program adds to the index makes git
// status run in a repository of the program's own. So the program can
// read the history, diff and status, but not commit: commit outside, once
// the change is reviewed (or drop the .git bind from Mounts, and treat the
// repository as untrusted). When the workspace has no .git when the preset
// is made, nothing protects a repository the program creates: run git init
// first, or treat such a .git as untrusted; the same for a repository the
// program makes in a subdirectory.
func AgentExecutor(workspace string) Options {
	o := Options{
		Mounts:  append([]Bind{{Source: workspace, Target: WorkspaceDir}}, gitProtection(workspace)...),
		Tmpfs:   []Tmpfs{{Target: "/tmp", Size: GB}},
		WorkDir: WorkspaceDir,
		Env:     append([]string(nil), presetEnv...),
		Limits: Limits{
			Memory:    4 * GB,
			Pids:      1024,
			WallTime:  30 * time.Minute,
			Output:    64 * MB,
			OpenFiles: 4096,
		},
		AllowDegraded: []LimitName{LimitMemory, LimitPids},
		Network:       NoNetwork(),
		Seccomp:       SeccompDefault(),
	}
	return o
}

// gitProtection is the read-only bind over the workspace's .git.
func gitProtection(workspace string) []Bind {
	git := filepath.Join(workspace, ".git")
	if _, err := os.Lstat(git); err != nil {
		return nil
	}
	return []Bind{{Source: git, Target: filepath.Join(WorkspaceDir, ".git"), ReadOnly: true}}
}

// CodeJudge is for running untrusted submissions, many at once: the
// submission read-only at /submission, a 64 MiB scratch /tmp (the working
// directory), no network, strict limits that fail closed (memory 256 MiB,
// 64 processes, 1 CPU, 10 s of wall time, 5 s of CPU time, 16 MiB per
// file, 64 open files, 16 MiB of output), the strict seccomp profile, and
// the isolation between concurrent boxes that judges need: each has its
// own IPC namespace (SysV IPC, POSIX message queues), network namespace
// (abstract unix sockets), /dev/shm and session keyring, and io_uring,
// keyctl, add_key, request_key, ptrace and flock are denied.
func CodeJudge(submission string) Options {
	return Options{
		Mounts:   []Bind{{Source: submission, Target: SubmissionDir, ReadOnly: true}},
		Tmpfs:    []Tmpfs{{Target: "/tmp", Size: 64 * MB}},
		WorkDir:  "/tmp",
		Env:      append([]string(nil), presetEnv...),
		Hostname: "judge",
		Limits: Limits{
			Memory:    256 * MB,
			Pids:      64,
			CPUs:      1,
			WallTime:  10 * time.Second,
			CPUTime:   5 * time.Second,
			FileSize:  16 * MB,
			OpenFiles: 64,
			Output:    16 * MB,
		},
		Network: NoNetwork(),
		Seccomp: SeccompStrict(),
	}
}

// DataAnalysis is for running analysis code over data: the input read-only
// at /input, the output read-write at /output (the working directory), no
// network, memory 8 GiB, 512 processes, 2 hours of wall time, 64 MiB of
// output (memory and processes may degrade to rlimits where the host has
// no cgroup for the caller), a 1 GiB /tmp, the default seccomp profile.
func DataAnalysis(input, output string) Options {
	return Options{
		Mounts: []Bind{
			{Source: input, Target: InputDir, ReadOnly: true},
			{Source: output, Target: OutputDir},
		},
		Tmpfs:   []Tmpfs{{Target: "/tmp", Size: GB}},
		WorkDir: OutputDir,
		Env:     append([]string(nil), presetEnv...),
		Limits: Limits{
			Memory:   8 * GB,
			Pids:     512,
			WallTime: 2 * time.Hour,
			Output:   64 * MB,
		},
		AllowDegraded: []LimitName{LimitMemory, LimitPids},
		Network:       NoNetwork(),
		Seccomp:       SeccompDefault(),
	}
}

// PresetNames are the presets by their CLI names.
var PresetNames = []string{"agent-executor", "code-judge", "data-analysis"}

// Preset returns the preset named name (a CLI name) for the given host
// directories: agent-executor takes the workspace, code-judge the
// submission (both default to "."), data-analysis the input and the
// output.
func Preset(name string, dirs ...string) (Options, error) {
	want := map[string]int{"agent-executor": 1, "code-judge": 1, "data-analysis": 2}
	n, ok := want[name]
	if !ok {
		return Options{}, fmt.Errorf("unknown preset %q: use one of %s", name, strings.Join(PresetNames, ", "))
	}
	if len(dirs) == 0 && n == 1 {
		dirs = []string{"."}
	}
	if len(dirs) != n {
		return Options{}, fmt.Errorf("preset %s takes %d director%s (%s), got %d", name, n, map[bool]string{true: "y", false: "ies"}[n == 1], presetUsage[name], len(dirs))
	}
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return Options{}, fmt.Errorf("preset %s: %w", name, err)
		}
		dirs[i] = abs
	}
	switch name {
	case "agent-executor":
		return AgentExecutor(dirs[0]), nil
	case "code-judge":
		return CodeJudge(dirs[0]), nil
	default:
		return DataAnalysis(dirs[0], dirs[1]), nil
	}
}

var presetUsage = map[string]string{
	"agent-executor": "WORKSPACE",
	"code-judge":     "SUBMISSION",
	"data-analysis":  "INPUT,OUTPUT",
}
