package specconv

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

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

// mountFlags maps the mount options of config.json to the MS_* flag each
// sets (or, clear, clears). Built on first use, as the other large
// tables: package initialisation runs in every process of the runtime,
// the container's init included.
var mountFlags = sync.OnceValue(func() map[string]mountFlag {
	return map[string]mountFlag{
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
})

// mountPropagation are the propagation options, applied after the mount.
var mountPropagation = rootPropagation

// recursiveMountAttrs are the options applied to a mount and every mount
// below it with mount_setattr(2) (runc 1.1 and later): each sets, or
// (clear) clears, one MOUNT_ATTR_* bit. ("rro" and "rrw" are
// Mount.RecursiveReadonly.) The atime options all clear the
// whole atime mode first (the kernel insists), so "ratime", "rnorelatime"
// and "rnostrictatime" leave the default, relatime.
// Built on first use, as the other large tables: package initialisation
// runs in every process of the runtime, the container's init included.
var recursiveMountAttrs = sync.OnceValue(func() map[string]mountFlag {
	return map[string]mountFlag{
		"rnosuid":        {false, unix.MOUNT_ATTR_NOSUID},
		"rsuid":          {true, unix.MOUNT_ATTR_NOSUID},
		"rnodev":         {false, unix.MOUNT_ATTR_NODEV},
		"rdev":           {true, unix.MOUNT_ATTR_NODEV},
		"rnoexec":        {false, unix.MOUNT_ATTR_NOEXEC},
		"rexec":          {true, unix.MOUNT_ATTR_NOEXEC},
		"rnodiratime":    {false, unix.MOUNT_ATTR_NODIRATIME},
		"rdiratime":      {true, unix.MOUNT_ATTR_NODIRATIME},
		"rrelatime":      {false, unix.MOUNT_ATTR_RELATIME},
		"rnorelatime":    {true, unix.MOUNT_ATTR_RELATIME},
		"rnoatime":       {false, unix.MOUNT_ATTR_NOATIME},
		"ratime":         {true, unix.MOUNT_ATTR_NOATIME},
		"rstrictatime":   {false, unix.MOUNT_ATTR_STRICTATIME},
		"rnostrictatime": {true, unix.MOUNT_ATTR_STRICTATIME},
		"rnosymfollow":   {false, unix.MOUNT_ATTR_NOSYMFOLLOW}, // Linux 5.14+
		"rsymfollow":     {true, unix.MOUNT_ATTR_NOSYMFOLLOW},
	}
})

// atimeAttrs are the recursive options that name an atime mode.
var atimeAttrs = map[string]bool{
	"rrelatime": true, "rnorelatime": true, "rnoatime": true, "ratime": true,
	"rstrictatime": true, "rnostrictatime": true,
}

// unsupportedMountOptions are options other runtimes give a meaning to but
// this one does not implement. Passing them to the kernel as data would fail
// obscurely or mount something other than what was asked, so they are
// refused by name: "idmap=uids=...;gids=..." is crun's own spelling of a
// mount's mappings (runtime-spec puts them in uidMappings/gidMappings).
var unsupportedMountOptions = map[string]bool{
	"idmap=": true, "ridmap=": true,
}

// KnownMountOptions returns the mount options FromSpec interprets itself
// (flags, propagation, the recursive attributes, idmap, ridmap, tmpcopyup
// and "defaults"), sorted. Anything else is passed to the filesystem as
// data, except the options refused as unsupported.
func KnownMountOptions() []string {
	res := []string{"defaults", "rro", "rrw"}
	for o := range mountFlags() {
		res = append(res, o)
	}
	for o := range mountPropagation {
		res = append(res, o)
	}
	for o := range recursiveMountAttrs() {
		res = append(res, o)
	}
	res = append(res, "idmap", "ridmap", "tmpcopyup")
	sort.Strings(res)
	return res
}

// parseMountOptions sets m's Flags, ClearedFlags, PropagationFlags and Data
// from OCI mount options. Later options win over earlier ones, as in mount(8).
func parseMountOptions(m *libbox.Mount, options []string) error {
	var data []string
	for _, o := range options {
		if f, ok := mountFlags()[o]; ok {
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
		if a, ok := recursiveMountAttrs()[o]; ok {
			bit := uint64(a.flag)
			if atimeAttrs[o] {
				m.RecAttrClr |= unix.MOUNT_ATTR__ATIME
				m.RecAttrSet &^= unix.MOUNT_ATTR__ATIME
			}
			if a.clear {
				m.RecAttrSet &^= bit
				m.RecAttrClr |= bit
			} else {
				m.RecAttrSet |= bit
				if !atimeAttrs[o] {
					m.RecAttrClr &^= bit
				}
			}
			continue
		}
		name, _, hasValue := strings.Cut(o, "=")
		if hasValue {
			name += "="
		}
		switch {
		case o == "tmpcopyup":
			m.CopyUp = true
		case o == "rro":
			// Recursive read-only (runc 1.1): this mount and every
			// mount beneath it.
			m.RecursiveReadonly = true
			m.RecAttrClr &^= unix.MOUNT_ATTR_RDONLY
		case o == "rrw":
			m.RecursiveReadonly = false
			m.RecAttrClr |= unix.MOUNT_ATTR_RDONLY
		case o == "idmap" || o == "ridmap":
			if m.IDMap == nil {
				m.IDMap = &libbox.MountIDMap{}
			}
			m.IDMap.Recursive = o == "ridmap"
		case o == "", o == "defaults":
			// "defaults" is fstab's placeholder for "no options"; the
			// kernel would reject it as filesystem data.
		case unsupportedMountOptions[name]:
			return fmt.Errorf("mount option %s is not supported: give the mount's mappings as uidMappings and gidMappings", o)
		default:
			data = append(data, o)
		}
	}
	m.Data = strings.Join(data, ",")
	return nil
}

// convertMount turns one OCI mount into a libbox.Mount. bundle is the
// absolute bundle directory, against which relative bind sources resolve;
// rootfs the rootfs's real host path (see stripRootfs).
func convertMount(sm specs.Mount, bundle, rootfs string, warnf func(string, ...any)) (libbox.Mount, error) {
	var m libbox.Mount
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
	m.Destination = stripRootfs(filepath.Clean(dest), rootfs)
	m.Source = sm.Source
	m.Type = sm.Type

	if err := parseMountOptions(&m, sm.Options); err != nil {
		return m, err
	}
	// Mappings make the mount idmapped, with or without the idmap option
	// (runtime-spec: it SHOULD be there, so that older runtimes fail).
	if len(sm.UIDMappings) > 0 || len(sm.GIDMappings) > 0 {
		if len(sm.UIDMappings) == 0 || len(sm.GIDMappings) == 0 {
			return m, errors.New("uidMappings and gidMappings of an idmapped mount go together")
		}
		if err := checkIDMaps("uidMappings", sm.UIDMappings); err != nil {
			return m, err
		}
		if err := checkIDMaps("gidMappings", sm.GIDMappings); err != nil {
			return m, err
		}
		if m.IDMap == nil {
			m.IDMap = &libbox.MountIDMap{}
		}
		m.IDMap.UIDMappings = toIDMaps(sm.UIDMappings)
		m.IDMap.GIDMappings = toIDMaps(sm.GIDMappings)
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
	if m.IDMap != nil && !m.IsBind() {
		return m, fmt.Errorf("an idmapped mount must be a bind mount, not %s", m.Type)
	}
	if m.CopyUp && m.Type != "tmpfs" {
		return m, fmt.Errorf("mount option tmpcopyup applies only to tmpfs, not %s", m.Type)
	}
	return m, nil
}

// stripRootfs returns dest, a clean absolute path, as a path inside the
// container: one that names the rootfs's host path, or lies lexically
// beneath it, is taken relative to the rootfs, as runc does (stripRoot in
// utils.WithProcfd, for every mount), so a config written with host paths
// into the rootfs mounts where it means and not on a copy of that path
// inside the rootfs. The result is still resolved inside the rootfs, like
// any destination.
func stripRootfs(dest, rootfs string) string {
	if rootfs == "/" {
		return dest
	}
	if dest == rootfs {
		return "/"
	}
	if rest, ok := strings.CutPrefix(dest, rootfs+"/"); ok {
		return "/" + rest
	}
	return dest
}
