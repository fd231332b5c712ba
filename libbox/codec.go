package libbox

// A binary codec for the init config and the exec config, which the
// runtime sends init on every container start and every exec (sync.go). encoding/json, like every
// reflection-based codec, builds its per-type encoders the first time a
// process meets a type, and init is a new process each time: decoding the
// ~100 types under Config cost a sandbox's init 0.6 ms, four times what
// the decoding itself takes. The functions in codec_gen.go are generated
// from the types (codec_gen_test.go; `go test ./libbox -run
// TestCodecGenerated -update` after a change to one), so no field can be
// forgotten, and TestCodecMatchesJSON holds the result to what a JSON
// round trip of the same value gives.
//
// The format: unsigned integers and lengths as uvarints, signed integers
// as zig-zag varints, a bool as one byte, a string as its length and
// bytes; a slice or map as 0 for nil or its length plus one, then its
// elements (a map's in key, value pairs); a pointer as one byte, 0 for
// nil, then what it points to; a struct as its exported fields in order,
// except those JSON skips (`json:"-"`). A slice or map under an omitempty
// tag is sent as nil when empty, as JSON would leave it out. Both ends are
// the same binary (init is the runtime re-executed), so there is no schema
// evolution; the version byte only turns a mix-up into an error.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// codecVersion is the first byte of every encoded value; a value of
// another version is refused, never misread. The second says what the
// value is.
const (
	codecVersion    = 1
	codecInitConfig = 'c'
	codecExecConfig = 'e'
	codecSyncMsg    = 'm'
)

var errCodecShort = errors.New("truncated")

type binEncoder struct{ b []byte }

func (e *binEncoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *binEncoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }

func (e *binEncoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *binEncoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// len writes a slice's or map's length: 0 for nil, n+1 otherwise.
func (e *binEncoder) len(n int, isNil bool) {
	if isNil {
		e.uint(0)
		return
	}
	e.uint(uint64(n) + 1)
}

func (e *binEncoder) bytes(b []byte, omitEmpty bool) {
	e.len(len(b), b == nil || omitEmpty && len(b) == 0)
	e.b = append(e.b, b...)
}

// time writes t with its zone's offset (time.MarshalBinary), so that a
// UTC time comes back UTC, as from JSON's "Z": init prints it into the
// state hooks receive, after pivot_root, where the local zone is the
// container's. An offset that is not whole minutes, which MarshalBinary
// refuses, is sent as UTC: the same instant.
func (e *binEncoder) time(t time.Time) {
	b, err := t.MarshalBinary()
	if err != nil {
		b, _ = t.UTC().MarshalBinary()
	}
	e.bytes(b, false)
}

// binDecoder reads what binEncoder wrote. The first error sticks: every
// later read returns a zero value, and err says what went wrong where.
type binDecoder struct {
	b   []byte
	off int
	err error
}

func (d *binDecoder) fail(err error) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %w", d.off, err)
	}
}

func (d *binDecoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail(errCodecShort)
		return 0
	}
	d.off += n
	return v
}

// int undoes binary.AppendVarint: a uvarint of the zig-zag encoding.
func (d *binDecoder) int() int64 {
	u := d.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *binDecoder) bool() bool {
	if d.err != nil {
		return false
	}
	if d.off >= len(d.b) || d.b[d.off] > 1 {
		d.fail(errors.New("not a bool"))
		return false
	}
	d.off++
	return d.b[d.off-1] == 1
}

// count reads a length of at most what is left of the input (every
// element takes at least one byte), so a corrupt length never allocates
// more than the input's size; plus is what the encoder added to it.
func (d *binDecoder) count(plus uint64) uint64 {
	v := d.uint()
	if v >= plus && v-plus > uint64(len(d.b)-d.off) {
		d.fail(errCodecShort)
		return 0
	}
	return v
}

func (d *binDecoder) str() string {
	n := int(d.count(0))
	if d.err != nil {
		return ""
	}
	d.off += n
	return string(d.b[d.off-n : d.off])
}

// len reads a slice's or map's length; nil reports a nil one.
func (d *binDecoder) len() (n int, isNil bool) {
	v := d.count(1)
	if v == 0 || d.err != nil {
		return 0, true
	}
	return int(v - 1), false
}

func (d *binDecoder) bytes() []byte {
	n, isNil := d.len()
	if isNil || d.err != nil {
		return nil
	}
	d.off += n
	return append([]byte{}, d.b[d.off-n:d.off]...)
}

func (d *binDecoder) time() time.Time {
	var t time.Time
	if b := d.bytes(); d.err == nil {
		if err := t.UnmarshalBinary(b); err != nil {
			d.fail(fmt.Errorf("time: %w", err))
		}
	}
	return t
}

// encodeBinary prefixes what enc writes with the codec's version and kind,
// in a buffer of size bytes to start with.
func encodeBinary(kind byte, size int, enc func(*binEncoder)) []byte {
	e := binEncoder{b: make([]byte, 0, size)}
	e.b = append(e.b, codecVersion, kind)
	enc(&e)
	return e.b
}

// decodeBinary checks the version and kind, runs dec, and fails on
// anything left over or read past.
func decodeBinary(b []byte, kind byte, dec func(*binDecoder)) error {
	if len(b) < 2 || b[0] != codecVersion || b[1] != kind {
		return fmt.Errorf("not a version %d encoding of a %q value", codecVersion, kind)
	}
	d := binDecoder{b: b, off: 2}
	dec(&d)
	if d.err == nil && d.off != len(d.b) {
		d.fail(errors.New("trailing bytes"))
	}
	return d.err
}

func encodeInitConfig(ic *initConfig) []byte {
	return encodeBinary(codecInitConfig, 4096, func(e *binEncoder) { e.encInitConfig(ic) })
}

func decodeInitConfig(b []byte) (*initConfig, error) {
	ic := new(initConfig)
	if err := decodeBinary(b, codecInitConfig, func(d *binDecoder) { d.decInitConfig(ic) }); err != nil {
		return nil, fmt.Errorf("decode init config: %w", err)
	}
	return ic, nil
}

func encodeExecConfig(ec *execConfig) []byte {
	return encodeBinary(codecExecConfig, 4096, func(e *binEncoder) { e.encExecConfig(ec) })
}

func decodeExecConfig(b []byte) (*execConfig, error) {
	ec := new(execConfig)
	if err := decodeBinary(b, codecExecConfig, func(d *binDecoder) { d.decExecConfig(ec) }); err != nil {
		return nil, fmt.Errorf("decode exec config: %w", err)
	}
	return ec, nil
}

func encodeSyncMsg(m *syncMsg) []byte {
	// Most messages are a type and a few fields (a config or an exec
	// has its own kind): a log message under --debug took 4 KB each.
	return encodeBinary(codecSyncMsg, 128, func(e *binEncoder) { e.encSyncMsg(m) })
}

// decodeSyncBinary is the sync message a packet carries: a config, an
// exec, or any other message.
func decodeSyncBinary(b []byte) (syncMsg, error) {
	var kind byte
	if len(b) >= 2 {
		kind = b[1]
	}
	switch kind {
	case codecExecConfig:
		ec, err := decodeExecConfig(b)
		return syncMsg{Type: syncExec, Exec: ec}, err
	case codecInitConfig:
		ic, err := decodeInitConfig(b)
		return syncMsg{Type: syncConfig, Config: ic}, err
	}
	var m syncMsg
	err := decodeBinary(b, codecSyncMsg, func(d *binDecoder) { d.decSyncMsg(&m) })
	return m, err
}
