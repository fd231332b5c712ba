package specconv

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/nanobox-sandbox/nanobox-runc/libbox"
)

// mountFlag is what one mount option does to the MS_* flags: set flag, or
// (clear) turn it off and remember that it was turned off explicitly.
type mountFlag struct {
	clear bool
	flag  int
}

var mountFlags = map[string]mountFlag{
	"ro":            {false, unix.MS_RDONLY},
	"rw":            {true, unix.MS_RDONLY},
	"nosuid":        {false, unix.MS_NOSUID},
	"suid":          {true, unix.MS_NOSUID},
	"nodev":         {false, unix.MS_NODEV},
	"dev":           {true, unix.MS_NODEV},
	"noexec":        {false, unix.MS_NOEXEC},
	"exec":          {true, unix.MS_NOEXEC},
	"sync":          {false, unix.MS_SYNCHRONOUS},
	"async":         {true, unix.MS_SYNCHRONOUS},
	"dirsync":       {false, unix.MS_DIRSYNC},
	"remount":       {false, unix.MS_REMOUNT},
	"mand":          {false, unix.MS_MANDLOCK},
	"nomand":        {true, unix.MS_MANDLOCK},
	"noatime":       {false, unix.MS_NOATIME},
	"atime":         {true, unix.MS_NOATIME},
	"nodiratime":    {false, unix.MS_NODIRATIME},
	"diratime":      {true, unix.MS_NODIRATIME},
	"relatime":      {false, unix.MS_RELATIME},
	"norelatime":    {true, unix.MS_RELATIME},
	"strictatime":   {false, unix.MS_STRICTATIME},
	"nostrictatime": {true, unix.MS_STRICTATIME},
	"bind":          {false, unix.MS_BIND},
	"rbind":         {false, unix.MS_BIND | unix.MS_REC},
	"silent":        {false, unix.MS_SILENT},
	"loud":          {true, unix.MS_SILENT},
	"iversion":      {false, unix.MS_I_VERSION},
	"noiversion":    {true, unix.MS_I_VERSION},
	"lazytime":      {false, unix.MS_LAZYTIME},
	"nolazytime":    {true, unix.MS_LAZYTIME},
	"nosymfollow":   {false, unix.MS_NOSYMFOLLOW}, // kernel 5.10+
	"symfollow":     {true, unix.MS_NOSYMFOLLOW},
}

// mountPropagation are the propagation options, applied after the mount.
var mountPropagation = rootPropagation

// unsupportedMountOptions are options other runtimes give a meaning to but
// this one does not implement. Passing them to the kernel as data would fail
// obscurely or, worse, mount something other than what was asked (an idmap
// mount without the mapping leaves files owned by the wrong ids), so they are
// refused by name.
var unsupportedMountOptions = map[string]bool{
	"idmap": true, "ridmap": true,
	// mount_setattr(2) recursive attributes (runc 1.1+).
	"rrw": true, "rnosuid": true, "rsuid": true, "rnodev": true, "rdev": true,
	"rnoexec": true, "rexec": true, "rnodiratime": true, "rdiratime": true,
	"rrelatime": true, "rnorelatime": true, "rnoatime": true, "ratime": true,
	"rstrictatime": true, "rnostrictatime": true, "rnosymfollow": true, "rsymfollow": true,
}

// KnownMountOptions returns the mount options FromSpec interprets itself
// (flags, propagation and "defaults"), sorted. Anything else is passed to the
// filesystem as data, except the options refused as unsupported.
func KnownMountOptions() []string {
	res := []string{"defaults", "rro"}
	for o := range mountFlags {
		res = append(res, o)
	}
	for o := range mountPropagation {
		res = append(res, o)
	}
	sort.Strings(res)
	return res
}

// parseMountOptions sets m's Flags, ClearedFlags, PropagationFlags and Data
// from OCI mount options. Later options win over earlier ones, as in mount(8).
func parseMountOptions(m *libbox.Mount, options []string) error {
	var data []string
	for _, o := range options {
		if f, ok := mountFlags[o]; ok {
			if f.clear {
				m.Flags &^= f.flag
				m.ClearedFlags |= f.flag
			} else {
				m.Flags |= f.flag
				m.ClearedFlags &^= f.flag
			}
			continue
		}
		if p, ok := mountPropagation[o]; ok {
			m.PropagationFlags = append(m.PropagationFlags, p)
			continue
		}
		name, _, _ := strings.Cut(o, "=")
		switch {
		case o == "tmpcopyup":
			m.CopyUp = true
		case o == "rro":
			// Recursive read-only (runc 1.1): this mount and every
			// mount beneath it.
			m.RecursiveReadonly = true
		case o == "", o == "defaults":
			// "defaults" is fstab's placeholder for "no options"; the
			// kernel would reject it as filesystem data.
		case unsupportedMountOptions[name]:
			return fmt.Errorf("mount option %s is not supported", o)
		default:
			data = append(data, o)
		}
	}
	m.Data = strings.Join(data, ",")
	return nil
}

// convertMount turns one OCI mount into a libbox.Mount. bundle is the
// absolute bundle directory, against which relative bind sources resolve.
func convertMount(sm specs.Mount, bundle string, warnf func(string, ...any)) (libbox.Mount, error) {
	var m libbox.Mount
	if len(sm.UIDMappings) > 0 {
		return m, unsupported("uidMappings (idmapped mounts)")
	}
	if len(sm.GIDMappings) > 0 {
		return m, unsupported("gidMappings (idmapped mounts)")
	}
	// Mount arguments are C strings: a NUL would silently truncate them.
	for _, s := range []string{sm.Destination, sm.Source, sm.Type} {
		if strings.IndexByte(s, 0) >= 0 {
			return m, errors.New("mount field contains a NUL byte")
		}
	}
	dest := sm.Destination
	if dest == "" {
		return m, errors.New("destination is required")
	}
	if !filepath.IsAbs(dest) {
		// runc accepts these with a deprecation warning; keep configs
		// written for it working.
		warnf("mount destination %q is not absolute: resolving it against /", dest)
		dest = "/" + dest
	}
	m.Destination = filepath.Clean(dest)
	m.Source = sm.Source
	m.Type = sm.Type

	if err := parseMountOptions(&m, sm.Options); err != nil {
		return m, err
	}
	if m.Type == "bind" {
		m.Flags |= unix.MS_BIND
	}
	if m.IsBind() {
		// Any type given with a bind option means nothing to the kernel.
		m.Type = "bind"
		if m.Source == "" {
			return m, errors.New("bind mount needs a source")
		}
		if !filepath.IsAbs(m.Source) {
			m.Source = filepath.Join(bundle, m.Source)
		}
		m.Source = filepath.Clean(m.Source)
	} else if m.Type == "" && m.Flags&unix.MS_REMOUNT == 0 {
		return m, errors.New("type is required unless the mount is a bind mount")
	}
	if m.CopyUp && m.Type != "tmpfs" {
		return m, fmt.Errorf("mount option tmpcopyup applies only to tmpfs, not %s", m.Type)
	}
	return m, nil
}
