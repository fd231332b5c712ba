package libbox

import (
	"os"

	"golang.org/x/sys/unix"
)

// statReader reads the cgroup files of a report (measureCgroup,
// cgroupCPU). A pooled sandbox opens them ahead (prefetchStats, off the
// critical path), so that its report only preads each one: pread at
// offset 0 makes a cgroup file (a seq_file) anew, as an open and a read
// would, without the path walk through the cgroup tree. A nil reader, or
// a file it did not open, is read the plain way (readCgroupFile).
type statReader struct {
	fds map[string]int
	// opening: a prefetch, which opens (and reads) every file asked for.
	opening bool
}

// prefetchStats opens the files measureCgroup reads for h's report; nil
// when h is nil.
func prefetchStats(h *cgroupHandle) *statReader {
	if h == nil {
		return nil
	}
	r := &statReader{fds: map[string]int{}, opening: true}
	_ = measureCgroupWith(h, r)
	r.opening = false
	return r
}

func (r *statReader) read(path string) ([]byte, error) {
	if r == nil {
		return readCgroupFile(path)
	}
	fd, ok := r.fds[path]
	if !ok {
		if !r.opening {
			return readCgroupFile(path)
		}
		var err error
		if fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		r.fds[path] = fd
	}
	return readWhole(fd, path, true, 512)
}

func (r *statReader) readUint(path string) (uint64, error) {
	b, err := r.read(path)
	if err != nil {
		return 0, err
	}
	return parseUint(b, path)
}

func (r *statReader) statField(path, key string) (uint64, error) {
	b, err := r.read(path)
	if err != nil {
		return 0, err
	}
	return parseStatField(b, path, key)
}

// close closes what the reader opened; it may be called on nil.
func (r *statReader) close() {
	if r == nil {
		return
	}
	for _, fd := range r.fds {
		unix.Close(fd)
	}
	r.fds = nil
}
