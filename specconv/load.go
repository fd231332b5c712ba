package specconv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// ConfigName is the file name of the spec in a bundle.
const ConfigName = "config.json"

// LoadSpec reads bundleDir/config.json. Unknown properties are ignored, as
// the runtime-spec requires, each with a warning through warnf (nil: none)
// naming its path (see UnknownKeys), so that a typo shows; a missing
// process, process.args or root is an error, as are malformed JSON
// (reported with its line and column).
func LoadSpec(bundleDir string, warnf func(format string, args ...any)) (*specs.Spec, error) {
	if bundleDir == "" {
		bundleDir = "."
	}
	path := filepath.Join(bundleDir, ConfigName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s not found in bundle %s (run `nanobox-runc spec` to create one): %w", ConfigName, bundleDir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ParseSpec(data, path, warnf)
}

// ParseSpec decodes config.json data read from path (which names the file in
// errors) with LoadSpec's checks and warnings.
func ParseSpec(data []byte, path string, warnf func(format string, args ...any)) (*specs.Spec, error) {
	// The fast path decodes only documents with no unknown key: when
	// it gives up, encoding/json decides, and unknown keys are looked for.
	spec, err := fastSpec(data)
	if err != nil {
		spec = new(specs.Spec)
		if err := json.Unmarshal(data, spec); err != nil {
			return nil, fmt.Errorf("parse %s: %s%w", path, jsonPosition(data, err), err)
		}
		if warnf != nil {
			for _, k := range UnknownKeys(data) {
				warnf("%s: unknown key %s ignored (not in runtime-spec %s: a typo?)", path, k, specs.Version)
			}
		}
	}
	switch {
	case spec.Process == nil:
		return nil, fmt.Errorf("%s: process is required", path)
	case len(spec.Process.Args) == 0:
		return nil, fmt.Errorf("%s: process.args must not be empty", path)
	case spec.Root == nil:
		return nil, fmt.Errorf("%s: root is required", path)
	case spec.Root.Path == "":
		return nil, fmt.Errorf("%s: root.path is required", path)
	}
	return spec, nil
}

// jsonPosition returns "line L, column C: " for the byte offset a JSON error
// carries, or "" when it carries none.
func jsonPosition(data []byte, err error) string {
	var offset int64
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntaxErr):
		// The column is the offending byte's, whichever encoding/json
		// implementation reported it.
		offset = max(syntaxErr.Offset-syntaxOffsetPast, 0)
	case errors.As(err, &typeErr):
		offset = typeErr.Offset
	default:
		return ""
	}
	if offset < 0 || offset > int64(len(data)) {
		return ""
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d: ", line, col)
}

// marshalSpec is spec as indented JSON, an empty linux.seccomp.flags list
// written as [] where specs-go would leave it out: no flags field at all
// means SPEC_ALLOW (defaultSeccompFlags), an empty list means none. The
// list goes out as one placeholder flag, replaced in the compact JSON, so
// that every field keeps its place.
func marshalSpec(spec *specs.Spec) ([]byte, error) {
	if spec.Linux == nil || spec.Linux.Seccomp == nil || spec.Linux.Seccomp.Flags == nil || len(spec.Linux.Seccomp.Flags) > 0 {
		return json.MarshalIndent(spec, "", "\t")
	}
	const placeholder = "\x00no flags"
	sp, linux, sc := *spec, *spec.Linux, *spec.Linux.Seccomp
	sc.Flags = []specs.LinuxSeccompFlag{placeholder}
	linux.Seccomp = &sc
	sp.Linux = &linux
	data, err := json.Marshal(&sp)
	if err != nil {
		return nil, err
	}
	quoted, _ := json.Marshal([]string{placeholder})
	if bytes.Count(data, quoted) != 1 {
		return nil, errors.New("an empty linux.seccomp.flags list could not be written")
	}
	data = bytes.Replace(data, quoted, []byte("[]"), 1)
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "\t"); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// WriteSpec writes spec as bundleDir/config.json, indented with tabs like
// runc's. It never replaces an existing file.
func WriteSpec(bundleDir string, spec *specs.Spec) error {
	if bundleDir == "" {
		bundleDir = "."
	}
	data, err := marshalSpec(spec)
	if err != nil {
		return fmt.Errorf("encode spec: %w", err)
	}
	data = append(data, '\n')
	path := filepath.Join(bundleDir, ConfigName)
	// O_EXCL: no check-then-create race, and no following a planted
	// symlink (CVE-2024-45310 is the same mistake elsewhere).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("file %s exists in %s: remove it first", ConfigName, bundleDir)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
