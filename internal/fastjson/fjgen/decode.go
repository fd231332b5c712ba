package fjgen

import (
	"fmt"
	"reflect"
)

// Decoder adds a decoder of root and of every type under it, as
// func fjNAME(s *fastjson.Scanner, v *T) error, and returns its name.
// skipUnknown: a key that names no field (and that encoding/json would
// not match to one without regard to case) is skipped, as encoding/json
// skips it; otherwise it is left to encoding/json (ErrSlow), for callers
// that tell of unknown keys.
func (g *Gen) Decoder(root reflect.Type, skipUnknown bool) string {
	if err := checkAcyclic(root, nil, map[reflect.Type]bool{}); err != nil {
		g.fail("%w", err)
	}
	return g.decoder(root, skipUnknown)
}

func (g *Gen) decoder(t reflect.Type, skipUnknown bool) string {
	name := "fj" + g.funcName(t)
	if skipUnknown {
		name = "fjs" + g.funcName(t)
	}
	return g.queueFunc(name, func() { g.decodeFunc(name, t, skipUnknown) })
}

func (g *Gen) decodeFunc(name string, t reflect.Type, skipUnknown bool) {
	g.printf("\nfunc %s(s %s, v *%s) error {\n", name, scannerType, g.typeName(t))
	defer g.printf("}\n")
	switch {
	case t == timeType:
		// encoding/json hands the string as it is in the document,
		// quotes and escapes included, to Time.UnmarshalJSON; null
		// (a no-op) and other kinds (errors) are left to it.
		g.printf("raw, err := s.RawStr()\nif err != nil {\nreturn err\n}\nreturn v.UnmarshalJSON(raw)\n")
		return
	case hasOwnJSON(t, unmarshalerType, textUnmarshalerType):
		g.printf("return %s\n", errSlow)
		return
	}
	tn := g.typeName(t)
	switch t.Kind() {
	case reflect.Pointer:
		g.printf("if s.Null() {\n*v = nil\nreturn nil\n}\n")
		g.printf("if *v == nil {\n*v = new(%s)\n}\n", g.typeName(t.Elem()))
		g.printf("return %s(s, *v)\n", g.decoder(t.Elem(), skipUnknown))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			// base64, or an array of numbers: left to encoding/json.
			g.printf("return %s\n", errSlow)
			return
		}
		g.printf("if s.Null() {\n*v = nil\nreturn nil\n}\n")
		g.printf("out := %s{}\n", tn)
		g.printf("err := s.Array(func() error {\nvar e %s\nif err := %s(s, &e); err != nil {\nreturn err\n}\nout = append(out, e)\nreturn nil\n})\n", g.typeName(t.Elem()), g.decoder(t.Elem(), skipUnknown))
		g.printf("*v = out\nreturn err\n")
	case reflect.Map:
		if t.Key().Kind() != reflect.String || hasOwnJSON(t.Key(), textUnmarshalerType) {
			g.printf("return %s\n", errSlow)
			return
		}
		key := "k"
		if t.Key().Name() != "string" || t.Key().PkgPath() != "" {
			key = g.typeName(t.Key()) + "(k)"
		}
		g.printf("if s.Null() {\n*v = nil\nreturn nil\n}\n")
		g.printf("out := %s{}\n", tn)
		g.printf("err := s.Object(func(k string) error {\nvar e %s\nif err := %s(s, &e); err != nil {\nreturn err\n}\nout[%s] = e\nreturn nil\n})\n", g.typeName(t.Elem()), g.decoder(t.Elem(), skipUnknown), key)
		g.printf("*v = out\nreturn err\n")
	case reflect.Struct:
		g.decodeStruct(t, skipUnknown)
	case reflect.String:
		g.printf("if s.Null() {\nreturn nil\n}\nx, err := s.Str()\n*v = %s(x)\nreturn err\n", tn)
	case reflect.Bool:
		g.printf("if s.Null() {\nreturn nil\n}\nx, err := s.Bool()\n*v = %s(x)\nreturn err\n", tn)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		g.printf("if s.Null() {\nreturn nil\n}\nx, err := s.Int(%d)\n*v = %s(x)\nreturn err\n", t.Bits(), tn)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		g.printf("if s.Null() {\nreturn nil\n}\nx, err := s.Uint(%d)\n*v = %s(x)\nreturn err\n", t.Bits(), tn)
	default:
		// Interfaces (encoding/json decodes into any by what the value
		// is), floats and the rest: left to encoding/json.
		g.printf("return %s\n", errSlow)
	}
}

func (g *Gen) decodeStruct(t reflect.Type, skipUnknown bool) {
	fs, err := fields(t, "")
	if err != nil {
		g.fail("%w", err)
		g.printf("return %s\n", errSlow)
		return
	}
	if len(fs) > 64 {
		g.fail("fjgen: %v: more than 64 fields", t)
	}
	g.printf("if s.Null() {\nreturn nil\n}\n")
	unknown := "return " + errSlow
	if skipUnknown {
		names := "fjNames" + g.funcName(t)
		g.queueFunc(names, func() {
			g.printf("\nvar %s = []string{", names)
			for i, f := range fs {
				if i > 0 {
					g.printf(", ")
				}
				g.printf("%q", f.key)
			}
			g.printf("}\n")
		})
		unknown = fmt.Sprintf("if err := fastjson.Unknown(k, %s); err != nil {\nreturn err\n}\nreturn s.Skip()", names)
	}
	if len(fs) == 0 {
		g.printf("return s.Object(func(k string) error {\n%s\n})\n", unknown)
		return
	}
	g.printf("var mask uint64\n")
	g.printf("return s.Object(func(k string) error {\nswitch k {\n")
	for i, f := range fs {
		g.printf("case %q:\nif err := fastjson.Seen(&mask, %d); err != nil {\nreturn err\n}\nreturn %s(s, &v.%s)\n", f.key, i, g.decoder(f.t, skipUnknown), f.expr)
	}
	g.printf("}\n%s\n})\n", unknown)
}
