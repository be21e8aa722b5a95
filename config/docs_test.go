package config

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// docKey is one key as the configuration's Go types define it.
type docKey struct {
	section, name string        // "policy.ranger", "url"
	value         reflect.Value // its default (zero for the entries of an array of tables)
	envSettable   bool
}

func (k docKey) full() string { return k.section + "." + k.name }

// envName is the variable ApplyEnv reads for the key.
func (k docKey) envName() string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(strings.ReplaceAll(k.full(), ".", "__"), "-", "_"))
}

// configKeys walks the TOML keys of v. An array of tables
// (identity.users) is a section of its own whose keys cannot come from
// the environment; a struct is a section; everything else is a key.
func configKeys(section string, v reflect.Value, env bool, out *[]docKey) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		path := name
		if section != "" {
			path = section + "." + name
		}
		switch {
		case f.Kind() == reflect.Struct:
			configKeys(path, f, env, out)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			configKeys(path, reflect.New(f.Type().Elem()).Elem(), false, out)
		default:
			settable := env && (f.Kind() == reflect.String || f.Kind() == reflect.Bool || f.Kind() == reflect.Int ||
				f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String)
			*out = append(*out, docKey{section: section, name: name, value: f, envSettable: settable})
		}
	}
}

// docRow is a key's row in docs/configuration.md.
type docRow struct {
	line         int
	def, env     string
	hasDef, hasE bool
}

var (
	sectionHeading = regexp.MustCompile("^### `\\[([a-z.-]+)\\]`")
	arrayHeading   = regexp.MustCompile("^`\\[\\[([a-z.-]+)\\]\\]`")
	keyCell        = regexp.MustCompile("`([a-z-]+)`")
)

// docTables reads the key tables of docs/configuration.md: the first
// table under each "### `[section]`" heading (or a "`[[section]]`" line),
// by section and key.
func docTables(t *testing.T, text string) map[string]map[string]docRow {
	out := map[string]map[string]docRow{}
	section := ""
	var header []string
	for i, line := range strings.Split(text, "\n") {
		switch {
		case sectionHeading.MatchString(line):
			section, header = sectionHeading.FindStringSubmatch(line)[1], nil
			continue
		case arrayHeading.MatchString(line):
			section, header = arrayHeading.FindStringSubmatch(line)[1], nil
			continue
		case strings.HasPrefix(line, "#"):
			section = ""
			continue
		case section == "" || !strings.HasPrefix(line, "|"):
			if header != nil && !strings.HasPrefix(line, "|") {
				section = "" // one table per section
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if header == nil {
			header = cells
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		col := func(name string) (string, bool) {
			for j, h := range header {
				if h == name && j < len(cells) {
					return cells[j], true
				}
			}
			return "", false
		}
		def, hasDef := col("default")
		env, hasEnv := col("environment")
		if out[section] == nil {
			out[section] = map[string]docRow{}
		}
		for _, m := range keyCell.FindAllStringSubmatch(cells[0], -1) {
			if _, dup := out[section][m[1]]; dup {
				t.Errorf("docs/configuration.md:%d: %s.%s is listed twice", i+1, section, m[1])
			}
			out[section][m[1]] = docRow{line: i + 1, def: def, env: env, hasDef: hasDef, hasE: hasEnv}
		}
	}
	return out
}

// tokens is a default as words: `"a"`, `["a", "b"]`, `{}` and `""` become
// [a], [a b], [] and [].
func tokens(s string) []string {
	return strings.Fields(strings.NewReplacer("`", " ", `"`, " ", "[", " ", "]", " ", "{", " ", "}", " ", ",", " ").Replace(s))
}

func defaultTokens(v reflect.Value) []string {
	switch v.Kind() {
	case reflect.String:
		return tokens(v.String())
	case reflect.Int:
		return []string{strconv.FormatInt(v.Int(), 10)}
	case reflect.Bool:
		return []string{strconv.FormatBool(v.Bool())}
	case reflect.Slice:
		var out []string
		for i := 0; i < v.Len(); i++ {
			out = append(out, v.Index(i).String())
		}
		return out
	case reflect.Map:
		keys := v.MapKeys()
		out := make([]string, 0, len(keys))
		for _, k := range keys {
			out = append(out, fmt.Sprint(k.Interface(), "=", v.MapIndex(k).Interface()))
		}
		sort.Strings(out)
		return out
	}
	panic("unhandled kind " + v.Kind().String())
}

// docs/configuration.md is the operator's reference: every key the
// configuration types define is in its section's table, with the default
// Default() gives it and the environment variable that sets it (or "—"
// where none can), and the table lists no key that does not exist.
func TestConfigurationDocListsEveryKey(t *testing.T) {
	text, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	tables := docTables(t, string(text))
	var keys []docKey
	configKeys("", reflect.ValueOf(*Default()), true, &keys)
	if len(keys) < 80 {
		t.Fatalf("found only %d keys in Config; the walk is broken", len(keys))
	}
	known := map[string]bool{}
	for _, k := range keys {
		known[k.full()] = true
		row, ok := tables[k.section][k.name]
		if !ok {
			t.Errorf("%s is not in docs/configuration.md (a row in the table under `[%s]`)", k.full(), k.section)
			continue
		}
		at := fmt.Sprintf("docs/configuration.md:%d: %s", row.line, k.full())
		if row.hasDef && !strings.HasPrefix(row.def, "—") {
			if got, want := tokens(row.def), defaultTokens(k.value); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: default %q, but Default() has %q", at, row.def, strings.Join(want, " "))
			}
		} else if row.hasDef && k.value.IsValid() && !k.value.IsZero() {
			t.Errorf("%s: default %q, but Default() has %q", at, row.def, strings.Join(defaultTokens(k.value), " "))
		}
		switch {
		case !k.envSettable:
			if row.hasE && row.env != "—" {
				t.Errorf("%s: environment %q, but the key cannot be set from the environment (want —)", at, row.env)
			}
		case !row.hasE:
			t.Errorf("%s: the table has no environment column; want `%s`", at, k.envName())
		case !strings.Contains(row.env, "`"+k.envName()+"`"):
			t.Errorf("%s: environment %q, want `%s`", at, row.env, k.envName())
		default:
			// The name the doc gives is one ApplyEnv takes.
			value := "1"
			if k.value.Kind() == reflect.Bool {
				value = "true"
			}
			if err := ApplyEnv(Default(), []string{k.envName() + "=" + value}); err != nil {
				t.Errorf("%s: %v", at, err)
			}
		}
	}
	for section, rows := range tables {
		for name, row := range rows {
			if !known[section+"."+name] {
				t.Errorf("docs/configuration.md:%d: %s.%s is documented but is no configuration key", row.line, section, name)
			}
		}
	}
}
