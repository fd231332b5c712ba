package libbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

const (
	stateFile = "state.json"
	fifoName  = "exec.fifo"
	// stateReadSize is a buffer state.json fits in, most of the time
	// (a few KiB); a larger one is read in more calls.
	stateReadSize = 16 << 10
	// maxIDLen bounds container ids: they name a directory (NAME_MAX).
	maxIDLen = 255
)

// Status is the OCI status of a container.
type Status string

const (
	Creating Status = "creating"
	Created  Status = "created"
	Running  Status = "running"
	Stopped  Status = "stopped"
	Paused   Status = "paused"
)

// persisted is what state.json holds. The status is never stored: it is
// derived from the init process and the exec fifo each time (as runc does),
// so a crash can never leave a stale "running" behind.
type persisted struct {
	ID string `json:"id"`
	// InitPid is init's pid in the runtime's pid namespace, and
	// InitStartTime its start time (field 22 of /proc/PID/stat) so that a
	// recycled pid is never mistaken for init.
	InitPid       int       `json:"initPid"`
	InitStartTime uint64    `json:"initStartTime"`
	Created       time.Time `json:"created"`
	Owner         string    `json:"owner"`
	Config        *Config   `json:"config"`
	// CgroupPaths locate the container's cgroup (per v1 controller, or ""
	// for the v2 directory); none when it runs without one.
	CgroupPaths map[string]string `json:"cgroupPaths,omitempty"`
}

// stateHead is state.json as LoadLight reads it: persisted's fields, but
// of the config only configHead's. A new process pays for every type it
// first decodes (encoding/json builds a decoder for each, by reflection):
// for the ~100 types under Config that was 1 million of the 3.5 million
// instructions `state` ran, to read seven fields. The file is the same
// (persisted writes it); TestStateHeadMatchesPersisted keeps the two
// structs' fields alike.
type stateHead struct {
	ID            string            `json:"id"`
	InitPid       int               `json:"initPid"`
	InitStartTime uint64            `json:"initStartTime"`
	Created       time.Time         `json:"created"`
	Owner         string            `json:"owner"`
	Config        *configHead       `json:"config"`
	CgroupPaths   map[string]string `json:"cgroupPaths,omitempty"`
}

// configHead is what Status, State and Signal read of a container's
// config: the OCI state's fields, the pid namespace, and what reopens the
// cgroup. Each field is Config's of the same name, type and tag
// (TestConfigHeadMatchesConfig), so that it decodes from the same JSON
// to the same value.
type configHead struct {
	OCIVersion  string             `json:"ociVersion,omitempty"`
	Bundle      string             `json:"bundle,omitempty"`
	Rootfs      string             `json:"rootfs"`
	Namespaces  []Namespace        `json:"namespaces,omitempty"`
	Annotations map[string]string  `json:"annotations,omitempty"`
	CgroupsPath string             `json:"cgroupsPath,omitempty"`
	Resources   *cgroups.Resources `json:"resources,omitempty"`
}

// config is a Config holding the head's fields and nothing else: for the
// functions that read no others (ociState, cgroupSpec, NamespaceOf).
func (h *configHead) config() *Config {
	return &Config{
		OCIVersion: h.OCIVersion, Bundle: h.Bundle, Rootfs: h.Rootfs, Namespaces: h.Namespaces,
		Annotations: h.Annotations, CgroupsPath: h.CgroupsPath, Resources: h.Resources,
	}
}

// ValidateID accepts the ids runc accepts: one or more ASCII letters,
// digits and the characters _ + , - . (runc's pattern [\w+-\.] has the
// range "+-." in it, which takes in the comma), other than "." and "..";
// so an id is always one plain directory name, never a path, a space or a
// shell character. At most maxIDLen bytes: a longer name is not a
// directory name (NAME_MAX).
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: id is empty", ErrInvalidID)
	case len(id) > maxIDLen:
		return fmt.Errorf("%w: id is longer than %d bytes", ErrInvalidID, maxIDLen)
	case id == "." || id == "..":
		return fmt.Errorf("%w %q: it names a directory", ErrInvalidID, id)
	}
	for i := 0; i < len(id); i++ {
		if !idChar(id[i]) {
			return fmt.Errorf("%w %q: an id is made of letters, digits and _ + - . , (as in runc)", ErrInvalidID, id)
		}
	}
	return nil
}

func idChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= '+' && c <= '.'
}

// writeState stores st atomically (see writeFileAtomic), durable or not.
func writeState(dir string, st *persisted, durable bool) error {
	pf, err := prepareState(dir, st, durable)
	if err != nil {
		return err
	}
	return pf.commit()
}

// prepareState is the first half of writeState: the state encoded and
// written (fsynced when durable) to a temp file, which only commit puts
// in place. Create prepares it while init sets the container up.
func prepareState(dir string, st *persisted, durable bool) (*pendingFile, error) {
	b, err := marshalPersisted(st)
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	pf, err := prepareFile(dir, stateFile, b, durable)
	if err != nil {
		return nil, fmt.Errorf("write state: %w", err)
	}
	return pf, nil
}

// pendingFile is a file written beside the one it is to replace.
type pendingFile struct {
	dir, name, tmp string
	durable        bool
}

// prepareFile writes b to a temp file in dir, fsynced when durable.
func prepareFile(dir, name string, b []byte, durable bool) (*pendingFile, error) {
	f, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	if _, err = f.Write(b); err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return nil, err
	}
	return &pendingFile{dir: dir, name: name, tmp: tmp, durable: durable}, nil
}

// commit renames the temp file over the file (and, durable, fsyncs the
// directory, so that the rename survives a crash of the host).
func (pf *pendingFile) commit() error {
	if err := os.Rename(pf.tmp, filepath.Join(pf.dir, pf.name)); err != nil {
		_ = os.Remove(pf.tmp)
		return fmt.Errorf("write %s: %w", pf.name, err)
	}
	if !pf.durable {
		return nil
	}
	return syncDir(pf.dir)
}

// writeFileAtomic stores b as dir/name: a temp file in the same directory,
// renamed over name (never rewritten in place). durable: the file is
// fsynced before the rename, and the directory after it, so that the
// rename itself survives a crash of the host.
func writeFileAtomic(dir, name string, b []byte, durable bool) error {
	pf, err := prepareFile(dir, name, b, durable)
	if err != nil {
		return err
	}
	return pf.commit()
}

// syncDir fsyncs a directory: what makes a rename in it durable. A
// variable so that a test can see it happen.
var syncDir = func(dir string) error {
	d, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readState loads and checks state.json from a container directory.
func readState(dir string) (*persisted, error) { return readStateAs(dir, parseState) }

// readStateHead is readState for LoadLight: the config's head only.
func readStateHead(dir string) (*stateHead, error) { return readStateAs(dir, parseStateHead) }

func readStateAs[T any](dir string, parse func([]byte) (*T, error)) (*T, error) {
	b, err := readFileSized(filepath.Join(dir, stateFile), stateReadSize)
	if err != nil {
		return nil, err
	}
	return parse(b)
}

func parseState(b []byte) (*persisted, error) {
	return parseStateAs(b, func(st *persisted) (string, int, bool) { return st.ID, st.InitPid, st.Config != nil })
}

// parseStateHead is parseState for LoadLight. It accepts whatever
// parseState accepts, with the same values (FuzzParseState); it may also
// accept a state.json whose config is damaged outside the head, which it
// does not read.
func parseStateHead(b []byte) (*stateHead, error) {
	return parseStateAs(b, func(st *stateHead) (string, int, bool) { return st.ID, st.InitPid, st.Config != nil })
}

// parseStateAs decodes state.json into T and checks what head says of it:
// the id, init's pid, whether it has a config.
func parseStateAs[T any](b []byte, head func(*T) (string, int, bool)) (*T, error) {
	var st T
	if err := decodeState(b, &st); err != nil {
		return nil, err
	}
	if err := checkState(head(&st)); err != nil {
		return nil, err
	}
	return &st, nil
}

// decodeState decodes state.json into st (a *persisted or *stateHead) as
// encoding/json's Decoder does, on the generated fast path when it can
// (statejson.go).
func decodeState(b []byte, st any) error {
	if fastDecodeState(b, st) == nil {
		return nil
	}
	return slowDecodeState(b, st)
}

// slowDecodeState is decodeState by encoding/json alone.
func slowDecodeState(b []byte, st any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(st); err != nil {
		return fmt.Errorf("%w: decode state.json: %w", ErrInvalidState, err)
	}
	return nil
}

func checkState(id string, initPid int, hasConfig bool) error {
	if err := ValidateID(id); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidState, err)
	}
	if initPid <= 0 || !hasConfig {
		return fmt.Errorf("%w: state.json has no init pid or config", ErrInvalidState)
	}
	return nil
}

// lockDir takes an exclusive flock on a container directory; every command
// that changes a container holds it. The lock is on the directory itself:
// once it is held, the path is checked to still name the locked directory,
// so a directory removed (and perhaps made again for a new container of
// the same id) while we waited is reported as gone (fs.ErrNotExist), never
// locked by mistake.
func lockDir(dir string) (*os.File, error) {
	f, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	return lockOpenDir(f, dir)
}

// lockOpenDir takes the flock on f, the directory opened at path dir, and
// checks that dir still names it (see lockDir). It consumes f.
func lockOpenDir(f *os.File, dir string) (*os.File, error) {
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	var locked, now unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &locked); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := unix.Lstat(dir, &now); err != nil || now.Dev != locked.Dev || now.Ino != locked.Ino {
		f.Close()
		return nil, &fs.PathError{Op: "lock", Path: dir, Err: fs.ErrNotExist}
	}
	return f, nil
}

func openDir(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// lockRoot takes the state root's own lock. A container directory appears
// (mkdir) and gets its lock under it, and stale-state clean-up opens a
// directory only under it: no one can see a new directory before its
// creator has locked it.
func (r *Runtime) lockRoot() (*os.File, error) {
	f, err := openDir(r.Root)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", r.Root, err)
	}
	return f, nil
}

// procStat is the part of /proc/PID/stat the runtime needs.
type procStat struct {
	State     byte
	Ppid      int
	StartTime uint64
	// Utime, Stime, Cutime and Cstime are in clock ticks (cputime_linux.go).
	Utime, Stime, Cutime, Cstime uint64
}

// readProcStat parses /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from the last ')'.
func readProcStat(pid int) (procStat, error) {
	b, err := readCgroupFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, errors.New("malformed /proc/PID/stat")
	}
	// After ") ": field 3 (state) is index 0, field 4 (ppid) index 1,
	// fields 14 to 17 (utime, stime, cutime, cstime) 11 to 14, field 22
	// (starttime) index 19.
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, errors.New("malformed /proc/PID/stat")
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc/PID/stat start time: %w", err)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc/PID/stat ppid: %w", err)
	}
	var times [4]uint64
	for j := range times {
		// cutime and cstime are signed longs, never negative in practice.
		n, err := strconv.ParseInt(f[11+j], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("malformed /proc/PID/stat CPU times: %w", err)
		}
		times[j] = uint64(max(n, 0))
	}
	return procStat{State: f[0][0], Ppid: ppid, StartTime: start,
		Utime: times[0], Stime: times[1], Cutime: times[2], Cstime: times[3]}, nil
}
