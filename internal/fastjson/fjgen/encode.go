package fjgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// Encoder adds an encoder of root and of every type under it, as
// func fjeNAME(b []byte, v T) ([]byte, error) (v *T for a struct), and
// returns its name. What it writes is json.Marshal's output, byte for
// byte; a value with a method of its own (MarshalJSON, MarshalText), an
// interface, a float is written by json.Marshal itself. An error (of
// such a method, or a value encoding/json refuses) is not encoding/json's:
// the caller is to fall back to json.Marshal of the whole, for its own.
func (g *Gen) Encoder(root reflect.Type) string {
	if err := checkAcyclic(root, nil, map[reflect.Type]bool{}); err != nil {
		g.fail("%w", err)
	}
	return g.encoder(root)
}

func (g *Gen) encoder(t reflect.Type) string {
	name := "fje" + g.funcName(t)
	return g.queueFunc(name, func() { g.encodeFunc(name, t) })
}

// delegated: encoding/json writes a value of t with a method of t's, or
// by rules not generated here.
func delegated(t reflect.Type) bool {
	if hasOwnJSON(t, marshalerType, textMarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Struct, reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return false
	}
	return true
}

// checkMethods refuses a marshaling method on the pointer only: whether
// encoding/json calls it depends on the value's being addressable.
func (g *Gen) checkMethods(t reflect.Type) {
	for _, i := range []reflect.Type{marshalerType, textMarshalerType} {
		if t.Kind() != reflect.Pointer && !t.Implements(i) && reflect.PointerTo(t).Implements(i) {
			g.fail("fjgen: %v: %v on the pointer only is not handled", t, i)
		}
	}
}

// value is the statement that appends the expression x of type t to b.
// A struct is passed by its address (x must be addressable).
func (g *Gen) value(t reflect.Type, x string) string {
	g.checkMethods(t)
	// as converts x to the predeclared type prim unless it is one.
	as := func(prim string) string {
		if t.PkgPath() == "" && t.Name() == prim {
			return x
		}
		return prim + "(" + x + ")"
	}
	switch {
	case t == timeType:
		return fmt.Sprintf("if b, err = fastjson.AppendTime(b, %s); err != nil {\nreturn b, err\n}", x)
	case delegated(t):
		return fmt.Sprintf("if b, err = fastjson.AppendMarshal(b, %s); err != nil {\nreturn b, err\n}", x)
	}
	switch t.Kind() {
	case reflect.String:
		return fmt.Sprintf("b = fastjson.AppendString(b, %s)", as("string"))
	case reflect.Bool:
		g.use("strconv")
		return fmt.Sprintf("b = strconv.AppendBool(b, %s)", as("bool"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		g.use("strconv")
		return fmt.Sprintf("b = strconv.AppendInt(b, %s, 10)", as("int64"))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		g.use("strconv")
		return fmt.Sprintf("b = strconv.AppendUint(b, %s, 10)", as("uint64"))
	case reflect.Struct:
		return fmt.Sprintf("if b, err = %s(b, &%s); err != nil {\nreturn b, err\n}", g.encoder(t), x)
	}
	return fmt.Sprintf("if b, err = %s(b, %s); err != nil {\nreturn b, err\n}", g.encoder(t), x)
}

func (g *Gen) encodeFunc(name string, t reflect.Type) {
	tn := g.typeName(t)
	if t.Kind() == reflect.Struct {
		tn = "*" + tn
	}
	g.printf("\nfunc %s(b []byte, v %s) ([]byte, error) {\n", name, tn)
	var body bytes.Buffer
	out := g.out
	g.out = body
	returned := g.encodeBody(t)
	body, g.out = g.out, out
	if bytes.Contains(body.Bytes(), []byte("err")) && !returned {
		g.printf("var err error\n")
	}
	g.out.Write(body.Bytes())
	switch {
	case returned:
	case bytes.Contains(body.Bytes(), []byte("err")):
		g.printf("return b, err\n")
	default:
		g.printf("return b, nil\n")
	}
	g.printf("}\n")
}

// encodeBody writes the body of t's encoder, and says whether it ends
// with a return.
func (g *Gen) encodeBody(t reflect.Type) (returned bool) {
	switch t.Kind() {
	case reflect.Pointer:
		g.printf("if v == nil {\nreturn append(b, \"null\"...), nil\n}\n")
		if t.Elem().Kind() == reflect.Struct && !delegated(t.Elem()) && t.Elem() != timeType {
			g.checkMethods(t.Elem())
			g.printf("return %s(b, v)\n", g.encoder(t.Elem()))
			return true
		}
		g.printf("%s\n", g.value(t.Elem(), "*v"))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !hasOwnJSON(t.Elem(), marshalerType, textMarshalerType) {
			if t.Elem() == reflect.TypeFor[byte]() {
				g.printf("b = fastjson.AppendBytes(b, []byte(v))\n")
			} else {
				g.printf("return fastjson.AppendMarshal(b, v)\n")
				return true
			}
			return false
		}
		g.printf("if v == nil {\nreturn append(b, \"null\"...), nil\n}\n")
		g.printf("b = append(b, '[')\nfor i := range v {\nif i > 0 {\nb = append(b, ',')\n}\n%s\n}\nb = append(b, ']')\n", g.value(t.Elem(), "v[i]"))
	case reflect.Map:
		if t.Key().Kind() != reflect.String || hasOwnJSON(t.Key(), marshalerType, textMarshalerType) {
			// Integer and TextMarshaler keys: encoding/json's way.
			g.printf("return fastjson.AppendMarshal(b, v)\n")
			return true
		}
		g.use("slices")
		kt := g.typeName(t.Key())
		key := "k"
		if kt != "string" {
			key = "string(k)"
		}
		g.printf("if v == nil {\nreturn append(b, \"null\"...), nil\n}\n")
		g.printf("keys := make([]%s, 0, len(v))\nfor k := range v {\nkeys = append(keys, k)\n}\nslices.Sort(keys)\n", kt)
		x := "v[k]"
		if t.Elem().Kind() == reflect.Struct && !delegated(t.Elem()) && t.Elem() != timeType {
			// A map's value is not addressable: its copy is.
			x = "x"
		}
		g.printf("b = append(b, '{')\nfor i, k := range keys {\nif i > 0 {\nb = append(b, ',')\n}\nb = fastjson.AppendString(b, %s)\nb = append(b, ':')\n", key)
		if x == "x" {
			g.printf("x := v[k]\n")
		}
		g.printf("%s\n}\nb = append(b, '}')\n", g.value(t.Elem(), x))
	case reflect.Struct:
		g.encodeStruct(t)
	default:
		g.fail("fjgen: %v: kind %v has no encoder function", t, t.Kind())
	}
	return false
}

func (g *Gen) encodeStruct(t reflect.Type) {
	fs, err := fields(t, "")
	if err != nil {
		g.fail("%w", err)
		return
	}
	// first: no field has been written yet for certain (one that is
	// always written ends that).
	first, maybeFirst := true, true
	if len(fs) > 0 && g.keep(fs[0]) != "" {
		g.printf("start := len(b)\n")
	}
	for _, f := range fs {
		key, err := json.Marshal(f.key) // escaped as encoding/json escapes names
		if err != nil {
			g.fail("fjgen: %v", err)
		}
		key = append(key, ':')
		omit := g.keep(f)
		if omit != "" {
			g.printf("if %s {\n", omit)
		}
		switch {
		case first:
			g.printf("b = append(b, %s...)\n", strconv.Quote("{"+string(key)))
		case maybeFirst:
			g.printf("if len(b) > start {\nb = append(b, ',')\n} else {\nb = append(b, '{')\n}\nb = append(b, %s...)\n", strconv.Quote(string(key)))
		default:
			g.printf("b = append(b, %s...)\n", strconv.Quote(","+string(key)))
		}
		g.printf("%s\n", g.value(f.t, "v."+f.expr))
		if omit != "" {
			g.printf("}\n")
		}
		if first && omit != "" {
			// From here on a field may or may not have been written:
			// start marks where the object began.
			first = false
		} else if omit == "" {
			first, maybeFirst = false, false
		}
	}
	switch {
	case len(fs) == 0:
		g.printf("b = append(b, \"{}\"...)\n")
	case maybeFirst:
		g.printf("if len(b) == start {\nb = append(b, '{')\n}\nb = append(b, '}')\n")
	default:
		g.printf("b = append(b, '}')\n")
	}
}

// keep is the condition under which encoding/json writes f, or "" for
// always.
func (g *Gen) keep(f field) string {
	x := "v." + f.expr
	var conds []string
	if f.omitEmpty {
		switch f.t.Kind() {
		case reflect.Slice, reflect.Map, reflect.String, reflect.Array:
			conds = append(conds, "len("+x+") != 0")
		case reflect.Bool:
			conds = append(conds, x)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			conds = append(conds, x+" != 0")
		case reflect.Pointer, reflect.Interface:
			conds = append(conds, x+" != nil")
		case reflect.Float32, reflect.Float64:
			// reflect's IsZero, which encoding/json asks: -0 is empty too.
			conds = append(conds, x+" != 0")
		case reflect.Struct:
			// Never empty.
		default:
			g.fail("fjgen: %v: omitempty of kind %v is not handled", f.t, f.t.Kind())
		}
	}
	if f.omitZero {
		switch {
		case f.t.Kind() == reflect.Pointer && f.t.Implements(isZeroerType):
			conds = append(conds, x+" != nil && !"+"!"+x+".IsZero()")
		case f.t.Kind() == reflect.Interface && f.t.Implements(isZeroerType):
			g.fail("fjgen: %v: omitzero of an interface with IsZero is not handled", f.t)
		case f.t.Implements(isZeroerType):
			conds = append(conds, "!"+x+".IsZero()")
		case reflect.PointerTo(f.t).Implements(isZeroerType):
			g.fail("fjgen: %v: omitzero with IsZero on the pointer is not handled", f.t)
		default:
			switch f.t.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
				conds = append(conds, x+" != nil")
			case reflect.String:
				conds = append(conds, x+` != ""`)
			case reflect.Bool:
				conds = append(conds, x)
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				conds = append(conds, x+" != 0")
			case reflect.Float32, reflect.Float64:
				conds = append(conds, x+" != 0")
			case reflect.Struct:
				if !f.t.Comparable() {
					g.fail("fjgen: %v: omitzero of an incomparable struct is not handled", f.t)
				}
				conds = append(conds, x+" != ("+g.typeName(f.t)+"{})")
			default:
				g.fail("fjgen: %v: omitzero of kind %v is not handled", f.t, f.t.Kind())
			}
		}
	}
	out := ""
	for i, c := range conds {
		if i > 0 {
			out += " && "
		}
		if len(conds) > 1 {
			c = "(" + c + ")"
		}
		out += c
	}
	return out
}
