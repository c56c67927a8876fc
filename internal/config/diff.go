package config

import (
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Changed lists the keys whose values differ between a and b, dotted and
// sorted as Keys lists them. An open key (library, bundles…) is one key:
// any change below it names it.
func Changed(a, b Config) []string {
	var out []string
	bv := reflect.ValueOf(b)
	eachKey(reflect.ValueOf(a), "", func(key string, x reflect.Value, path []int) {
		if !equalValue(x, bv.FieldByIndex(path)) {
			out = append(out, key)
		}
	})
	sort.Strings(out)
	return out
}

// Apply sets the keys of dst to their values in src: the leaf keys as
// Changed names them.
func Apply(dst *Config, src Config, keys []string) {
	sv := reflect.ValueOf(src)
	eachKey(reflect.ValueOf(dst).Elem(), "", func(key string, x reflect.Value, path []int) {
		if slices.Contains(keys, key) {
			x.Set(sv.FieldByIndex(path))
		}
	})
}

// eachKey calls fn with every leaf key of the struct v (a Config, or a
// section of one), its field and the field's index path from v, walking
// the koanf tags as Keys does.
func eachKey(v reflect.Value, prefix string, fn func(key string, field reflect.Value, path []int)) {
	var walk func(v reflect.Value, prefix string, path []int)
	walk = func(v reflect.Value, prefix string, path []int) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("koanf")
			name, opts, _ := strings.Cut(tag, ",")
			if tag == "-" || !f.IsExported() {
				continue
			}
			p := append(slices.Clip(path), i)
			if opts == "squash" {
				walk(v.Field(i), prefix, p)
				continue
			}
			if name == "" {
				continue
			}
			key := prefix + name
			if f.Type.Kind() == reflect.Struct && f.Type.String() != "time.Time" {
				walk(v.Field(i), key+".", p)
				continue
			}
			fn(key, v.Field(i), p)
		}
	}
	walk(v, prefix, nil)
}

// equalValue compares two values of one key; an empty slice or map equals
// a nil one, as both mean "none".
func equalValue(x, y reflect.Value) bool {
	switch x.Kind() {
	case reflect.Slice, reflect.Map:
		if x.Len() == 0 && y.Len() == 0 {
			return true
		}
	case reflect.Func:
		return x.IsNil() == y.IsNil() // not configuration; set only by code
	}
	return reflect.DeepEqual(x.Interface(), y.Interface())
}
