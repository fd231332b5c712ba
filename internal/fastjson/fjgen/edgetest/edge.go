// Package edgetest holds types with what encoding/json treats specially
// but the runtime's state does not use (floats, []byte, interfaces,
// integer and TextMarshaler map keys, omitzero with IsZero, methods of
// their own, embedded structs), and their generated code (edge_gen.go),
// so that fjgen's output for them is held to encoding/json too.
package edgetest

import (
	"encoding/json"
	"strings"
	"time"
)

// Edge is one of everything.
type Edge struct {
	S   string           `json:"s"`
	SE  string           `json:"se,omitempty"`
	SZ  string           `json:"sz,omitzero"`
	B   []byte           `json:"b"`
	BE  []byte           `json:"be,omitempty"`
	F   float64          `json:"f"`
	FE  float64          `json:"fe,omitempty"`
	FZ  float32          `json:"fz,omitzero"`
	I   any              `json:"i"`
	IE  any              `json:"ie,omitempty"`
	MI  map[int]string   `json:"mi"`
	MU  map[uint8]bool   `json:"mu,omitempty"`
	MK  map[Key]Inner    `json:"mk"`
	MT  map[Text]int     `json:"mt"`
	T   time.Time        `json:"t"`
	TP  *time.Time       `json:"tp"`
	TZ  time.Time        `json:"tz,omitzero"`
	Z   Inner            `json:"z,omitzero"`
	P   *Inner           `json:"p,omitempty"`
	PS  []*Inner         `json:"ps"`
	M   Marsh            `json:"m"`
	MP  *Marsh           `json:"mp"`
	N   Named            `json:"n"`
	NE  Named            `json:"ne,omitempty"`
	Arr [2]int           `json:"arr"`
	Raw json.RawMessage  `json:"raw,omitempty"`
	SS  []string         `json:"ss"`
	SB  []Named          `json:"sb,omitempty"`
	MS  map[string]*bool `json:"ms"`
	Embedded
	Skip  func() `json:"-"`
	unexp int
	NoTag int8
	U8    uint8
	B2    bool `json:"b2,omitempty"`
}

// Embedded's fields are Edge's, after Edge's own up to it.
type Embedded struct {
	E1 string `json:"e1"`
	E2 uint64 `json:"e2,omitempty"`
}

// Inner is comparable (omitzero compares it with its zero value).
type Inner struct {
	A string `json:"a"`
	N int    `json:"n,omitempty"`
}

// Key is a map key of a named string type.
type Key string

// Text is a map key with a MarshalText of its own.
type Text struct{ X, Y int }

func (t Text) MarshalText() ([]byte, error) {
	return []byte(strings.Repeat("t", t.X) + "<" + strings.Repeat("y", t.Y)), nil
}

func (t *Text) UnmarshalText(b []byte) error {
	t.X = strings.Count(string(b), "t")
	t.Y = strings.Count(string(b), "y")
	return nil
}

// Marsh writes itself, with spaces that json.Marshal compacts.
type Marsh struct{ V string }

func (m Marsh) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"v ": m.V, "<": []int{1, 2}})
}

// Named is an integer of a named type.
type Named int16
