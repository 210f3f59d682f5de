package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// samSettings is what sam deploy takes from samconfig.toml's default
// environment: the stack, the Region and the parameter overrides.
type samSettings struct {
	StackName string
	Region    string
	// Parameters are the parameter overrides by name.
	Parameters map[string]string
}

// samconfigFile is the part of samconfig.toml the command reads.
type samconfigFile struct {
	Default struct {
		Global struct {
			Parameters struct {
				StackName string `toml:"stack_name"`
			} `toml:"parameters"`
		} `toml:"global"`
		Deploy struct {
			Parameters struct {
				StackName string `toml:"stack_name"`
				Region    string `toml:"region"`
				// ParameterOverrides is a string ("A=1 B=2") or a list
				// of "A=1", as sam accepts both.
				ParameterOverrides any `toml:"parameter_overrides"`
			} `toml:"parameters"`
		} `toml:"deploy"`
	} `toml:"default"`
}

// readSamconfig reads root/samconfig.toml; a missing file is no settings.
func readSamconfig(root string) (samSettings, error) {
	var f samconfigFile
	s := samSettings{Parameters: map[string]string{}}
	path := filepath.Join(root, "samconfig.toml")
	if _, err := toml.DecodeFile(path, &f); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return s, nil
		}
		return s, fmt.Errorf("%s: %w", path, err)
	}
	d := f.Default.Deploy.Parameters
	s.StackName, s.Region = f.Default.Global.Parameters.StackName, d.Region
	if d.StackName != "" {
		s.StackName = d.StackName
	}
	var err error
	switch v := d.ParameterOverrides.(type) {
	case nil:
	case string:
		s.Parameters, err = parseOverrides(v)
	case []any:
		for _, x := range v {
			k, val, ok := strings.Cut(fmt.Sprint(x), "=")
			if !ok || k == "" {
				return s, fmt.Errorf("%s: parameter override %q is not NAME=VALUE", path, x)
			}
			s.Parameters[k] = val
		}
	default:
		return s, fmt.Errorf("%s: parameter_overrides is neither a string nor a list", path)
	}
	if err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// parseOverrides parses sam's string form of parameter overrides:
// NAME=VALUE pairs separated by spaces, a value in double quotes when it
// has spaces.
func parseOverrides(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range overridePair.FindAllStringSubmatch(s, -1) {
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			v = strings.Trim(v, `"`)
		}
		out[m[1]] = v
	}
	if rest := strings.TrimSpace(overridePair.ReplaceAllString(s, "")); rest != "" {
		return nil, fmt.Errorf("%q is not NAME=VALUE", rest)
	}
	return out, nil
}

var overridePair = regexp.MustCompile(`([A-Za-z0-9]+)=("[^"]*"|\S*)`)

// overridesArg writes parameters back in sam's string form, sorted.
func overridesArg(p map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		v := p[k]
		if strings.ContainsAny(v, " \t") {
			v = `"` + v + `"`
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

// placeholder matches the example values samconfig.toml and the template
// ship with: a user pool ID ending in EXAMPLE, a host under example.com,
// .org or .net.
var placeholder = regexp.MustCompile(`EXAMPLE|(?i)\bexample\.(com|org|net)\b`)

// authParameters are the parameters without which every request is
// refused: a placeholder there blocks the deploy; elsewhere it warns.
var authParameters = []string{"JwtIssuer", "JwtAudience"}

// placeholders checks the parameter overrides for example values.
func placeholders(p map[string]string) Result {
	var block, warn []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !placeholder.MatchString(p[k]) {
			continue
		}
		if slices.Contains(authParameters, k) {
			block = append(block, k+"="+p[k])
		} else {
			warn = append(warn, k+"="+p[k])
		}
	}
	switch {
	case len(block) > 0:
		return Result{Block, "samconfig", "example values left in the parameters: " + strings.Join(append(block, warn...), ", "),
			"replace them in samconfig.toml's parameter_overrides by your identity provider's, or remove JwtIssuer and JwtAudience to let the stack create its user pool"}
	case len(warn) > 0:
		return Result{Warn, "samconfig", "example values left in the parameters: " + strings.Join(warn, ", "),
			"replace them in samconfig.toml's parameter_overrides (the origins of your own web apps), or remove them"}
	}
	return Result{Pass, "samconfig", "no example values in the parameter overrides", ""}
}
