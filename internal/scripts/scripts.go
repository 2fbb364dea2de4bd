// Package scripts is MAAS's commissioning and testing scripts as data: the
// metadata a script carries (embedded YAML between "Start MAAS 1.0 script
// metadata" and "End MAAS 1.0 script metadata" comment lines, or given as
// form fields), the names and numbers of its types, and the rules a script
// must follow to be stored. It is pure: no I/O, no clock.
package scripts

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Type is when a script runs (MAAS's SCRIPT_TYPE).
type Type int

const (
	Commissioning Type = 0
	Testing       Type = 2
	Release       Type = 3
	Deployment    Type = 4
)

var typeNames = map[Type]string{Commissioning: "commissioning", Testing: "testing", Release: "release", Deployment: "deployment"}

func (t Type) String() string { return typeNames[t] }

// ParseType reads a script type as MAAS's API takes it: a name, an alias
// or the number.
func ParseType(s string) (Type, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if _, ok := typeNames[Type(n)]; ok {
			return Type(n), nil
		}
		return 0, fmt.Errorf("Invalid script type numeric value.")
	}
	switch strings.ToLower(s) {
	case "test", "testing":
		return Testing, nil
	case "commission", "commissioning":
		return Commissioning, nil
	case "release":
		return Release, nil
	case "deployment":
		return Deployment, nil
	}
	return 0, fmt.Errorf("Script type must be commissioning, testing, release or deployment")
}

// HardwareType is what a script examines (MAAS's HARDWARE_TYPE).
type HardwareType int

const (
	Node HardwareType = iota
	CPU
	Memory
	Storage
	Network
	GPU
)

var hardwareNames = []string{"Node", "CPU", "Memory", "Storage", "Network", "GPU"}

func (h HardwareType) String() string {
	if h < 0 || int(h) >= len(hardwareNames) {
		return ""
	}
	return hardwareNames[h]
}

// ParseHardwareType reads a hardware type with MAAS's aliases.
func ParseHardwareType(s string) (HardwareType, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 0 && n < len(hardwareNames) {
			return HardwareType(n), nil
		}
		return 0, fmt.Errorf("Invalid hardware type numeric value.")
	}
	switch strings.ToLower(s) {
	case "node", "machine", "controller", "other", "generic":
		return Node, nil
	case "cpu", "processor":
		return CPU, nil
	case "memory", "ram":
		return Memory, nil
	case "storage", "disk", "ssd":
		return Storage, nil
	case "network", "net", "interface":
		return Network, nil
	case "gpu", "graphics":
		return GPU, nil
	}
	return 0, fmt.Errorf("Hardware type must be node, cpu, memory, storage, or gpu")
}

// Parallel says what a script may run alongside (MAAS's SCRIPT_PARALLEL).
type Parallel int

const (
	ParallelDisabled Parallel = iota // alone
	ParallelInstance                 // with other instances of itself
	ParallelAny                      // with anything
)

var parallelNames = []string{"Disabled", "Run along other instances of this script", "Run along any other script."}

func (p Parallel) String() string {
	if p < 0 || int(p) >= len(parallelNames) {
		return ""
	}
	return parallelNames[p]
}

// ParseParallel reads a parallel setting with MAAS's aliases.
func ParseParallel(s string) (Parallel, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 0 && n < len(parallelNames) {
			return Parallel(n), nil
		}
		return 0, fmt.Errorf("Invalid script parallel numeric value.")
	}
	switch strings.ToLower(s) {
	case "disabled", "none":
		return ParallelDisabled, nil
	case "instance", "name":
		return ParallelInstance, nil
	case "any", "enabled":
		return ParallelAny, nil
	}
	return 0, fmt.Errorf("Script parallel must be disabled, instance, or any.")
}

// Script is a script's metadata; its text is kept apart, in revisions.
type Script struct {
	Name         string         `json:"name"`
	Title        string         `json:"title"`
	Description  string         `json:"description"`
	Tags         []string       `json:"tags"`
	Type         Type           `json:"type"`
	HardwareType HardwareType   `json:"hardware_type"`
	Parallel     Parallel       `json:"parallel"`
	Timeout      time.Duration  `json:"timeout"` // 0: no limit
	Destructive  bool           `json:"destructive"`
	MayReboot    bool           `json:"may_reboot"`
	Recommission bool           `json:"recommission"`
	ApplyNetwork bool           `json:"apply_configured_networking"`
	ForHardware  []string       `json:"for_hardware"`
	Packages     map[string]any `json:"packages"`   // apt, snap, url
	Parameters   map[string]any `json:"parameters"` // name → {type, ...}
	Results      any            `json:"results"`    // a list of names, or name → {title, description}
}

// FormatTimeout renders a duration as Python's str(timedelta), which is
// how MAAS's API shows a script's timeout ("0:05:00", "1 day, 2:00:00").
func FormatTimeout(d time.Duration) string {
	s := int64(d / time.Second)
	days, s := s/86400, s%86400
	out := fmt.Sprintf("%d:%02d:%02d", s/3600, s%3600/60, s%60)
	switch {
	case days == 1:
		out = "1 day, " + out
	case days > 1:
		out = fmt.Sprintf("%d days, %s", days, out)
	}
	return out
}

// ParseTimeout reads a timeout as MAAS's form does: seconds, or
// [[HH:]MM:]SS.
func ParseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	parts := strings.Split(s, ":")
	if s == "" || len(parts) > 3 {
		return 0, fmt.Errorf("Enter a valid duration.")
	}
	var total float64
	for _, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("Enter a valid duration.")
		}
		total = total*60 + v
	}
	return time.Duration(total * float64(time.Second)), nil
}

// HasTag says whether the script carries tag.
func (s Script) HasTag(tag string) bool {
	for _, t := range s.Tags {
		if t == tag {
			return true
		}
	}
	return false
}
