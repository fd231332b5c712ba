package devcg

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	devices "github.com/opencontainers/cgroups/devices/config"
)

// run interprets a device program (the instructions Program emits, and
// only those) on a request, as the kernel would run it.
func run(t *testing.T, code []byte, typ devices.Type, major, minor int64, a Access) bool {
	t.Helper()
	if len(code)%insnSize != 0 {
		t.Fatalf("program of %d bytes", len(code))
	}
	devType := uint64(devcgChar)
	if typ == devices.BlockDevice {
		devType = devcgBlock
	}
	ctx := [3]uint64{uint64(a)<<16 | devType, uint64(major), uint64(minor)}
	var reg [11]uint64
	bigEndian := binary.NativeEndian.Uint16([]byte{0, 1}) == 1
	n := len(code) / insnSize
	for pc, steps := 0, 0; ; pc++ {
		if pc < 0 || pc >= n {
			t.Fatalf("pc %d outside the program of %d instructions", pc, n)
		}
		if steps++; steps > n {
			t.Fatal("the program loops")
		}
		in := code[pc*insnSize:]
		dst, src := in[1]&0xf, in[1]>>4
		if bigEndian {
			dst, src = in[1]>>4, in[1]&0xf
		}
		off := int16(binary.NativeEndian.Uint16(in[2:]))
		imm := uint64(int64(int32(binary.NativeEndian.Uint32(in[4:]))))
		switch in[0] {
		case opLoadWord:
			if src != r1 || off%4 != 0 || off < 0 || off > 8 {
				t.Fatalf("load from r%d%+d", src, off)
			}
			reg[dst] = ctx[off/4]
		case opMovImm:
			reg[dst] = imm
		case opMovReg:
			reg[dst] = reg[src]
		case opAndImm:
			reg[dst] &= imm
		case opRshImm:
			reg[dst] >>= imm
		case opJeqImm:
			if reg[dst] == imm {
				pc += int(off)
			}
		case opJneImm:
			if reg[dst] != imm {
				pc += int(off)
			}
		case opExit:
			return reg[r0] != 0
		default:
			t.Fatalf("unknown instruction %#x", in[0])
		}
	}
}

// A program decides every request as the v1 devices cgroup in the same
// state would.
func TestProgramDecidesAsTheCgroup(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	states := []*State{{}, {AllowByDefault: true}}
	for range 500 {
		states = append(states, randomState(t, r))
	}
	for _, s := range states {
		code, err := Program(s)
		if err != nil {
			t.Fatal(err)
		}
		probes(func(typ devices.Type, major, minor int64, a Access) {
			if got, want := run(t, code, typ, major, minor, a), s.Allows(typ, major, minor, a); got != want {
				t.Fatalf("%+v: %c %d:%d %s: program says %v, cgroup %v", *s, typ, major, minor, a, got, want)
			}
		})
	}
}

func TestProgramRefuses(t *testing.T) {
	if _, err := Program(&State{Exceptions: map[Key]Access{{'c', 1 << 31, 1}: Read}}); err == nil {
		t.Fatal("a major beyond 32 bits was accepted")
	}
	if _, err := Program(&State{Exceptions: map[Key]Access{{'p', 1, 1}: Read}}); err == nil {
		t.Fatal("a fifo exception was accepted")
	}
}
