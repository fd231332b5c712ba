package libbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// Compiled seccomp filters are kept in the state root, one file per
// profile: libseccomp's compile of a large profile (Docker's default, the
// sandbox presets) costs milliseconds of every create, and its result
// depends only on what the key below holds. The runtime compiles (or
// finds) the filter before init starts and sends init the instructions;
// init still validates the profile and checks the kernel's support for it
// (cheap), and installs exactly what compileSeccomp produced.
//
// The files are trusted as the rest of the state root is (state.json
// holds the whole config, seccomp profile included, that exec applies):
// the root is the runtime's own directory, mode 0700 or 0711, and a file
// is used only when its checksum (over its key and its instructions)
// matches and the program tests this machine's architecture first, so a
// torn write, a file moved under another profile's name or one made for
// another architecture is recompiled.

// seccompCachePrefix names the cache files in the state root: files, so
// that List and the sandbox sweep (which look at directories) skip them.
const seccompCachePrefix = ".seccomp-"

// seccompCacheMax bounds the files kept: a new one beyond it clears them.
const seccompCacheMax = 32

// seccompCacheKey is the SHA-256 of everything the compiled program
// depends on: the profile, libseccomp's version and API level (which the
// kernel's features decide), the kernel, and the binary that compiles it
// (its device, inode, size and mtime: a rebuilt or upgraded runtime, whose
// compileSeccomp may differ, never reads an older binary's files).
func seccompCacheKey(s *Seccomp) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return "", err
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", err
	}
	api, err := libseccomp.GetAPI()
	if err != nil {
		return "", err
	}
	major, minor, micro := libseccomp.GetLibraryVersion()
	h := sha256.New()
	fmt.Fprintf(h, "nanobox seccomp cache 2\nexe %d %d %d %d.%d\nlibseccomp %d.%d.%d api %d\nkernel %s %s %s\n",
		st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, major, minor, micro, api,
		unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:]))
	h.Write(appendSeccompKey(nil, s))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// appendSeccompKey appends every field of s, each one length- or
// presence-prefixed so that no two profiles give the same bytes. It
// stands in for json.Marshal, whose first use of the profile's types and
// the quoting of a few hundred syscall names cost a third of a millisecond
// of every create (TestSeccompKeyFields keeps it in step with the types).
func appendSeccompKey(b []byte, s *Seccomp) []byte {
	str := func(b []byte, v string) []byte {
		b = binary.AppendUvarint(b, uint64(len(v)))
		return append(b, v...)
	}
	opt := func(b []byte, v *uint) []byte {
		if v == nil {
			return append(b, 0)
		}
		return binary.AppendUvarint(append(b, 1), uint64(*v))
	}
	b = str(b, string(s.DefaultAction))
	b = opt(b, s.DefaultErrno)
	b = binary.AppendUvarint(b, uint64(len(s.Architectures)))
	for _, a := range s.Architectures {
		b = str(b, a)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Flags)))
	for _, f := range s.Flags {
		b = str(b, string(f))
	}
	b = str(b, s.ListenerPath)
	b = str(b, s.ListenerMetadata)
	b = binary.AppendUvarint(b, uint64(len(s.Syscalls)))
	for _, r := range s.Syscalls {
		b = binary.AppendUvarint(b, uint64(len(r.Names)))
		for _, n := range r.Names {
			b = str(b, n)
		}
		b = str(b, string(r.Action))
		b = opt(b, r.Errno)
		b = binary.AppendUvarint(b, uint64(len(r.Args)))
		for _, a := range r.Args {
			b = binary.AppendUvarint(b, uint64(a.Index))
			b = binary.AppendUvarint(b, a.Value)
			b = binary.AppendUvarint(b, a.ValueTwo)
			b = str(b, string(a.Op))
		}
	}
	return b
}

// seccompCompiles counts compileSeccomp calls made by compileSeccompCached,
// for the tests.
var seccompCompiles int

// compileSeccompCached is compileSeccomp(s) through the cache in root
// (the state root). The cache is best effort: when it cannot be read or
// written the filter is compiled as without it.
func compileSeccompCached(root string, s *Seccomp) (*seccompProgram, error) {
	key, err := seccompCacheKey(s)
	if err != nil {
		seccompCompiles++
		return compileSeccomp(s)
	}
	path := filepath.Join(root, seccompCachePrefix+key)
	if b, err := os.ReadFile(path); err == nil {
		if filter, ok := decodeSeccompCache(key, b); ok {
			return seccompFromFilter(s, filter)
		}
	}
	seccompCompiles++
	p, err := compileSeccomp(s)
	if err != nil {
		return nil, err
	}
	writeSeccompCache(root, key, p.filter)
	return p, nil
}

// seccompFromFilter is the program compileSeccomp(s) returns when it
// produces filter: the same checks of s first, the flags from s.
func seccompFromFilter(s *Seccomp, filter []unix.SockFilter) (*seccompProgram, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := checkSeccompKernel(s); err != nil {
		return nil, err
	}
	return newSeccompProgram(s, filter), nil
}

// encodeSeccompFilter is the instructions as the kernel reads them
// (struct sock_filter, native byte order), decodeSeccompFilter the reverse;
// that is how init receives them (initConfig.SeccompFilter).
func encodeSeccompFilter(filter []unix.SockFilter) []byte {
	b := make([]byte, 0, 8*len(filter))
	for _, in := range filter {
		b = binary.NativeEndian.AppendUint16(b, in.Code)
		b = append(b, in.Jt, in.Jf)
		b = binary.NativeEndian.AppendUint32(b, in.K)
	}
	return b
}

func decodeSeccompFilter(b []byte) ([]unix.SockFilter, error) {
	if len(b) == 0 || len(b)%8 != 0 || len(b)/8 > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: a compiled filter of %d bytes is not a program", len(b))
	}
	filter := make([]unix.SockFilter, len(b)/8)
	for i := range filter {
		in := b[8*i:]
		filter[i] = unix.SockFilter{
			Code: binary.NativeEndian.Uint16(in[0:2]),
			Jt:   in[2],
			Jf:   in[3],
			K:    binary.NativeEndian.Uint32(in[4:8]),
		}
	}
	return filter, nil
}

// seccompCacheSum is the checksum a cache file starts with: the SHA-256
// of its key and its instructions, so that a file is good only under the
// name it was written to.
func seccompCacheSum(key string, prog []byte) []byte {
	h := sha256.New()
	h.Write([]byte(key))
	h.Write(prog)
	return h.Sum(nil)
}

// A cache file is seccompCacheSum, then the instructions.
func decodeSeccompCache(key string, b []byte) ([]unix.SockFilter, bool) {
	if len(b) < sha256.Size || !bytes.Equal(seccompCacheSum(key, b[sha256.Size:]), b[:sha256.Size]) {
		return nil, false
	}
	filter, err := decodeSeccompFilter(b[sha256.Size:])
	return filter, err == nil && testsNativeArch(filter)
}

// testsNativeArch reports whether filter starts as every program of
// libseccomp does: seccomp_data.arch loaded, then compared with this
// machine's architecture among the first tests. A program made for
// another architecture fails it (its syscall numbers are not this one's).
func testsNativeArch(filter []unix.SockFilter) bool {
	native, err := libseccomp.GetNativeArch()
	if err != nil {
		return false
	}
	audit, ok := auditArches()[native]
	if !ok {
		// An architecture the table lacks: the key (uname's machine)
		// is then the only check.
		return true
	}
	if len(filter) < 2 || filter[0] != (unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4}) {
		return false
	}
	for _, in := range filter[1:] {
		if in.Code != unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K {
			return false
		}
		if in.K == audit {
			return true
		}
	}
	return false
}

func writeSeccompCache(root, key string, filter []unix.SockFilter) {
	if ents, err := os.ReadDir(root); err == nil {
		var old []string
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), seccompCachePrefix) && e.Type().IsRegular() {
				old = append(old, e.Name())
			}
		}
		if len(old) >= seccompCacheMax {
			for _, n := range old {
				_ = os.Remove(filepath.Join(root, n))
			}
		}
	}
	prog := encodeSeccompFilter(filter)
	sum := seccompCacheSum(key, prog)
	f, err := os.CreateTemp(root, ".seccomp-tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(append(sum, prog...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(root, seccompCachePrefix+key))
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
}
