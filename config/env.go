package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// EnvPrefix starts every override variable: PGRANGER_<SECTION>__<KEY>, with
// "__" between levels and "_" standing for "-" inside a key
// (PGRANGER_POLICY__RANGER__ADMIN_PASSWORD sets policy.ranger.admin-password).
const EnvPrefix = "PGRANGER_"

// ApplyEnv applies overrides from environ (os.Environ() form). A variable with
// the prefix that names no key is an error, like an unknown key in the file.
// Lists take comma-separated values; arrays of tables (identity.users) and
// maps cannot be overridden.
func ApplyEnv(c *Config, environ []string) error {
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		path := strings.Split(strings.ToLower(strings.TrimPrefix(name, EnvPrefix)), "__")
		for i := range path {
			path[i] = strings.ReplaceAll(path[i], "_", "-")
		}
		key := strings.Join(path, ".")
		if why, ok := removedKeys[key]; ok {
			return fmt.Errorf("%s: %s: %s", name, key, why)
		}
		field, err := lookupField(reflect.ValueOf(c).Elem(), path)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", name, key, err)
		}
		if err := setField(field, value); err != nil {
			return fmt.Errorf("%s: %s: %w", name, key, err)
		}
	}
	return nil
}

func lookupField(v reflect.Value, path []string) (reflect.Value, error) {
	for _, part := range path {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, fmt.Errorf("not a section")
		}
		found := false
		for i := 0; i < v.NumField(); i++ {
			if strings.Split(v.Type().Field(i).Tag.Get("toml"), ",")[0] == part {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return reflect.Value{}, fmt.Errorf("no such key")
		}
	}
	return v, nil
}

func setField(f reflect.Value, value string) error {
	switch f.Kind() {
	case reflect.String:
		f.SetString(value)
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", value)
		}
		f.SetBool(b)
	case reflect.Int:
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("want an integer, got %q", value)
		}
		f.SetInt(int64(n))
	case reflect.Slice:
		if f.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("cannot be set from the environment")
		}
		items := splitList(value)
		out := reflect.MakeSlice(f.Type(), len(items), len(items))
		for i, s := range items {
			out.Index(i).SetString(s)
		}
		f.Set(out)
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}
