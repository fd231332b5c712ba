package specconv

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// UnknownKeys lists the keys of a config.json that no field of the
// runtime-spec (specs-go, the version this runtime is built with) has, by
// their path: "process.terminall", "mounts[2].optionz". They are what
// encoding/json drops without a word, so that a typo would go unnoticed;
// the runtime-spec says a runtime must ignore them, and this runtime warns.
// Object keys are matched as encoding/json matches them (case-insensitively);
// the keys of maps (annotations, sysctl, linux.resources.unified, ...) are
// data, never unknown. data that is not valid JSON yields nothing (the
// decoder reports that).
func UnknownKeys(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	var out []string
	walkKeys(v, reflect.TypeOf(specs.Spec{}), "", &out)
	return out
}

func walkKeys(v any, t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				ft, ok = foldField(fields, k)
			}
			p := join(path, k)
			if !ok {
				*out = append(*out, p)
				continue
			}
			walkKeys(obj[k], ft, p, out)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, e := range obj {
			walkKeys(e, t.Elem(), join(path, k), out)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			walkKeys(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonFields maps the JSON names of t's fields (embedded structs' included,
// as encoding/json flattens them) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, dup := out[k]; !dup {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// foldField finds a field the way encoding/json falls back to: a
// case-insensitive match of the name.
func foldField(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}
