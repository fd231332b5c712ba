package devcg

import (
	"encoding/binary"
	"fmt"
	"math"

	devices "github.com/opencontainers/cgroups/devices/config"
)

// The eBPF instructions the device program uses (linux/bpf_common.h,
// linux/bpf.h): class | operation | source.
const (
	opLoadWord  = 0x61 // BPF_LDX | BPF_MEM | BPF_W: dst = *(u32 *)(src + off)
	opMovImm    = 0xb7 // BPF_ALU64 | BPF_MOV | BPF_K: dst = imm
	opMovReg    = 0xbf // BPF_ALU64 | BPF_MOV | BPF_X: dst = src
	opAndImm    = 0x57 // BPF_ALU64 | BPF_AND | BPF_K: dst &= imm
	opRshImm    = 0x77 // BPF_ALU64 | BPF_RSH | BPF_K: dst >>= imm
	opJeqImm    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K: if dst == imm goto pc+1+off
	opJneImm    = 0x55 // BPF_JMP | BPF_JNE | BPF_K: if dst != imm goto pc+1+off
	opExit      = 0x95 // BPF_JMP | BPF_EXIT: return r0
	insnSize    = 8
	devcgBlock  = 1 // BPF_DEVCG_DEV_BLOCK
	devcgChar   = 2 // BPF_DEVCG_DEV_CHAR
	maxJumpInsn = math.MaxInt16
)

// Registers: r1 holds the context (struct bpf_cgroup_dev_ctx: u32
// access_type, whose low 16 bits are the device type and high 16 the
// access; u32 major; u32 minor) on entry and is scratch afterwards.
const (
	r0 = iota
	r1
	rType
	rAccess
	rMajor
	rMinor
)

type insn struct {
	op       uint8
	dst, src uint8
	off      int16
	imm      int32
}

// Program is the cgroup v2 device program (BPF_PROG_TYPE_CGROUP_DEVICE)
// that decides as a v1 devices cgroup in state s would: 1 lets the access
// through, 0 refuses it. Each exception is a block that jumps to the next
// one as soon as the device or the access does not match it, and returns
// the exception's verdict when everything does; after the last block the
// default is returned. With a deny default an exception must cover every
// access asked for at once (an open for reading and writing asks for
// both); with an allow default an exception refuses an access that shares
// any with it, as the kernel's v1 controller decides.
func Program(s *State) ([]byte, error) {
	prog := []insn{
		{op: opLoadWord, dst: rType, src: r1, off: 0},
		{op: opLoadWord, dst: rAccess, src: r1, off: 0},
		{op: opLoadWord, dst: rMajor, src: r1, off: 4},
		{op: opLoadWord, dst: rMinor, src: r1, off: 8},
		{op: opAndImm, dst: rType, imm: 0xffff},
		{op: opRshImm, dst: rAccess, imm: 16},
	}
	verdict := int32(1)
	if s.AllowByDefault {
		verdict = 0
	}
	for _, k := range sortedKeys(s.Exceptions) {
		a := s.Exceptions[k]
		var block []insn
		switch k.Type {
		case devices.CharDevice:
			block = append(block, insn{op: opJneImm, dst: rType, imm: devcgChar})
		case devices.BlockDevice:
			block = append(block, insn{op: opJneImm, dst: rType, imm: devcgBlock})
		default:
			return nil, fmt.Errorf("device exception %s: type is not c or b", k)
		}
		block = append(block, insn{op: opMovReg, dst: r1, src: rAccess})
		if s.AllowByDefault {
			// Skip unless the access asked for shares a bit with a.
			block = append(block, insn{op: opAndImm, dst: r1, imm: int32(a)},
				insn{op: opJeqImm, dst: r1, imm: 0})
		} else {
			// Skip if anything asked for is outside a.
			block = append(block, insn{op: opAndImm, dst: r1, imm: int32(allAccess &^ a)},
				insn{op: opJneImm, dst: r1, imm: 0})
		}
		for _, n := range []struct {
			reg uint8
			num int64
		}{{rMajor, k.Major}, {rMinor, k.Minor}} {
			if n.num == devices.Wildcard {
				continue
			}
			if n.num < 0 || n.num > math.MaxInt32 {
				return nil, fmt.Errorf("device exception %s: number out of range", k)
			}
			block = append(block, insn{op: opJneImm, dst: n.reg, imm: int32(n.num)})
		}
		block = append(block, insn{op: opMovImm, dst: r0, imm: verdict}, insn{op: opExit})
		// Every jump in the block goes to the instruction after it.
		for i := range block {
			if block[i].op == opJneImm || block[i].op == opJeqImm {
				block[i].off = int16(len(block) - 1 - i)
			}
		}
		prog = append(prog, block...)
		if len(prog) > maxJumpInsn {
			return nil, fmt.Errorf("%d device exceptions make a device program too long; use fewer, wider rules", len(s.Exceptions))
		}
	}
	prog = append(prog, insn{op: opMovImm, dst: r0, imm: 1 - verdict}, insn{op: opExit})
	return encode(prog), nil
}

// encode lays instructions out as struct bpf_insn: code, the registers
// (a bit field whose first member, dst_reg, takes the low nibble on a
// little-endian machine and the high one on a big-endian one), off, imm,
// in the machine's byte order.
func encode(prog []insn) []byte {
	bigEndian := binary.NativeEndian.Uint16([]byte{0, 1}) == 1
	b := make([]byte, 0, len(prog)*insnSize)
	for _, in := range prog {
		regs := in.src<<4 | in.dst
		if bigEndian {
			regs = in.dst<<4 | in.src
		}
		b = append(b, in.op, regs)
		b = binary.NativeEndian.AppendUint16(b, uint16(in.off))
		b = binary.NativeEndian.AppendUint32(b, uint32(in.imm))
	}
	return b
}
