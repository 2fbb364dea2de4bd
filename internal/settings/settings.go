// Package settings is the table of run-time settings Anvil keeps under
// MAAS's configuration names (maas/?op=get_config and set_config): each
// one's kind, default and rule. It is pure: it parses what an operator
// sends into the typed value MAAS answers with, and says why a value is
// refused. The region stores the values and wires the ones that change
// behaviour.
package settings

import (
	"encoding/json"
	"fmt"
	"github.com/anvilmetal/anvil/internal/dnsname"
	"math"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Kind is how a setting's value is read and answered.
type Kind int

const (
	String   Kind = iota // any text ("" allowed unless Required)
	Bool                 // true or false
	Int                  // an integer within Min..Max; "" is null unless Required
	Port                 // a TCP/UDP port not reserved for the system or MAAS's services
	Choice               // one of Choices
	Choices              // a list of Choices, comma- or space-separated
	URL                  // an http(s) URL, or ""
	IPList               // IP addresses, comma- or space-separated, answered space-separated
	HostList             // host names or IP addresses, likewise
	NetList              // CIDRs, IP addresses or host names, likewise
	Interval             // a systemd-style time span: "15m", "1h 30m"
	HostPort             // host or host:port, or ""
	Seconds              // whole seconds or a Go duration ("5m") within Min..Max seconds, answered in seconds
)

// Item is one setting.
type Item struct {
	Name     string
	Kind     Kind
	Default  any // as answered: bool, int, string, []string or nil
	Required bool
	Min, Max int // for Int; Max 0 means no upper bound
	Options  []string
	// Secret values are shown and logged to nobody but administrators.
	Secret bool
	// Doc says what the setting is, in Anvil's words; Effect says what
	// Anvil does with it ("" when it is kept for MAAS clients only).
	Doc, Effect string
}

// Lookup finds a setting by name. MAAS's old name ntp_server is taken for
// ntp_servers, as MAAS does.
func Lookup(name string) (Item, bool) {
	if name == "ntp_server" {
		name = "ntp_servers"
	}
	i, ok := index[name]
	if !ok {
		return Item{}, false
	}
	return items[i], true
}

// All lists the settings by name.
func All() []Item {
	out := slices.Clone(items)
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// Names lists every setting's name, sorted, for error messages.
func Names() []string {
	var out []string
	for _, it := range All() {
		out = append(out, it.Name)
	}
	return out
}

var index = func() map[string]int {
	m := make(map[string]int, len(items))
	for i, it := range items {
		if _, dup := m[it.Name]; dup {
			panic("settings: " + it.Name + " twice")
		}
		m[it.Name] = i
	}
	return m
}()

// UnknownError is the refusal of a name no setting has.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return fmt.Sprintf("%s is not a valid config setting (valid settings are: %s).", e.Name, strings.Join(Names(), ", "))
}

// Parse reads an operator's value for the setting into its answered form.
func (it Item) Parse(raw string) (any, error) {
	v := strings.TrimSpace(raw)
	switch it.Kind {
	case String:
		if it.Required && v == "" {
			return nil, fmt.Errorf("This field is required.")
		}
		if len(v) > 1024 {
			return nil, fmt.Errorf("at most 1024 characters")
		}
		return v, nil
	case Bool:
		switch strings.ToLower(v) {
		case "true", "1", "yes", "on":
			return true, nil
		case "false", "0", "no", "off", "":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean (true or false)", raw)
	case Int, Port:
		if v == "" && !it.Required {
			return nil, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("Enter a whole number.")
		}
		if it.Kind == Port {
			return n, checkPort(n, it.Default)
		}
		if n < it.Min {
			return nil, fmt.Errorf("Ensure this value is greater than or equal to %d.", it.Min)
		}
		if hi := it.maxInt(); n > hi {
			return nil, fmt.Errorf("Ensure this value is less than or equal to %d.", hi)
		}
		return n, nil
	case Seconds:
		d, err := time.ParseDuration(v)
		if err != nil {
			n, nerr := strconv.Atoi(v)
			if nerr != nil || n < 0 || n > maxIntervalSeconds {
				return nil, fmt.Errorf("%q is neither seconds nor a duration like 5m", raw)
			}
			d = time.Duration(n) * time.Second
		}
		if d < time.Duration(it.Min)*time.Second || (it.Max != 0 && d > time.Duration(it.Max)*time.Second) {
			return nil, fmt.Errorf("%s is outside %s to %s", d, time.Duration(it.Min)*time.Second, time.Duration(it.Max)*time.Second)
		}
		return int(d / time.Second), nil
	case Choice:
		if !slices.Contains(it.Options, v) {
			return nil, fmt.Errorf("Select a valid choice. %s is not one of the available choices (%s).", v, strings.Join(quoted(it.Options), ", "))
		}
		if n, err := strconv.Atoi(v); err == nil && isIntDefault(it.Default) {
			return n, nil
		}
		return v, nil
	case Choices:
		out := []string{}
		for _, f := range fields(v) {
			if !slices.Contains(it.Options, f) {
				return nil, fmt.Errorf("Select a valid choice. %s is not one of the available choices.", f)
			}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
		return out, nil
	case URL:
		if v == "" {
			return nil, nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("Enter a valid URL.")
		}
		return v, nil
	case IPList:
		fs := fields(v)
		for _, f := range fs {
			if net.ParseIP(f) == nil {
				return nil, fmt.Errorf("Invalid IP address: %s.", f)
			}
		}
		return joinOrNil(fs), nil
	case HostList, NetList:
		fs := fields(v)
		for _, f := range fs {
			ok := net.ParseIP(f) != nil || dnsname.Valid(f)
			if it.Kind == NetList {
				_, _, err := net.ParseCIDR(f)
				ok = ok || err == nil
			}
			if !ok {
				return nil, fmt.Errorf("Invalid IP address, network or hostname: %s.", f)
			}
		}
		return joinOrNil(fs), nil
	case Interval:
		if _, err := ParseInterval(v); err != nil {
			return nil, err
		}
		return v, nil
	case HostPort:
		if v == "" {
			return nil, nil
		}
		host, port := v, ""
		if h, p, err := net.SplitHostPort(v); err == nil {
			host, port = h, p
		}
		if port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("invalid port in %q", v)
			}
		}
		if net.ParseIP(host) == nil && !dnsname.Valid(host) {
			return nil, fmt.Errorf("invalid host in %q", v)
		}
		return v, nil
	}
	return nil, fmt.Errorf("setting %s has no parser", it.Name)
}

// Encode is the stored (JSON) form of a parsed value.
func Encode(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Decode reads a stored value back for the setting. A value that no
// longer reads (stored by an older Anvil) gives the default.
func (it Item) Decode(stored string) any {
	var v any
	if err := json.Unmarshal([]byte(stored), &v); err != nil {
		return it.Default
	}
	switch x := v.(type) {
	case float64:
		return int(x)
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return v
}

// maxInt is the largest value of a whole-number setting: its own Max, or
// the largest 32-bit number (what every consumer of a setting can hold).
func (it Item) maxInt() int {
	if it.Max != 0 {
		return it.Max
	}
	return math.MaxInt32
}

// maxIntervalSeconds bounds an interval or a number of seconds (ten
// years): far past any setting's use, far from time.Duration's limit.
const maxIntervalSeconds = 10 * 365 * 24 * 3600

// ParseInterval reads a systemd-style time span: numbers with units
// (s, m or min, h, d, w), optionally separated by spaces.
func ParseInterval(v string) (time.Duration, error) {
	s := strings.ReplaceAll(strings.TrimSpace(v), " ", "")
	if s == "" {
		return 0, fmt.Errorf("an interval is required, e.g. 15m or 1h 30m")
	}
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		j := i
		for j < len(s) && (s[j] < '0' || s[j] > '9') {
			j++
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, fmt.Errorf("%q is not an interval like 15m or 1h 30m", v)
		}
		unit, ok := map[string]time.Duration{"s": time.Second, "m": time.Minute, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[s[i:j]]
		if !ok {
			return 0, fmt.Errorf("%q is not an interval like 15m or 1h 30m", v)
		}
		// Bounded before multiplying: n*unit overflows past 292 years,
		// and a wrapped total could land back in range.
		if n > maxIntervalSeconds || total+time.Duration(n)*unit > maxIntervalSeconds*time.Second {
			return 0, fmt.Errorf("%q is longer than %d days", v, maxIntervalSeconds/86400)
		}
		total += time.Duration(n) * unit
		s = s[j:]
	}
	if total <= 0 {
		return 0, fmt.Errorf("%q is not a positive interval", v)
	}
	return total, nil
}

func checkPort(n int, def any) error {
	if d, ok := def.(int); ok && n == d {
		return nil
	}
	switch {
	case n <= 0 || n > 65535:
		return fmt.Errorf("Unable to change port number. Port number is not between 0 - 65535.")
	case n <= 1023:
		return fmt.Errorf("Unable to change port number. Port number is reserved for system services.")
	case n >= 5239 && n <= 5284:
		return fmt.Errorf("Unable to change port number. Port number is reserved for MAAS services.")
	}
	return nil
}

func fields(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

func joinOrNil(fs []string) any {
	if len(fs) == 0 {
		return nil
	}
	return strings.Join(fs, " ")
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func isIntDefault(d any) bool { _, ok := d.(int); return ok }
