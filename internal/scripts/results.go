package scripts

import (
	"fmt"
	"sort"
	"strings"
)

// Status is a script result's status (MAAS's SCRIPT_STATUS).
type Status int

const (
	Pending Status = iota
	Running
	Passed
	Failed
	TimedOut
	Aborted
	Degraded
	Installing
	FailedInstalling
	Skipped
	ApplyingNetconf
	FailedApplyingNetconf
)

var statusNames = []string{"Pending", "Running", "Passed", "Failed", "Timed out", "Aborted", "Degraded",
	"Installing dependencies", "Failed installing dependencies", "Skipped", "Applying custom network configuration",
	"Failed to apply custom network configuration"}

func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return "Unknown"
	}
	return statusNames[s]
}

// Done says the script ended, one way or another.
func (s Status) Done() bool {
	switch s {
	case Pending, Running, Installing, ApplyingNetconf:
		return false
	}
	return true
}

// Bad says the result counts as a failure.
func (s Status) Bad() bool {
	return s == Failed || s == TimedOut || s == FailedInstalling || s == FailedApplyingNetconf
}

// None is the summary of no results at all (MAAS's -1).
const None Status = -1

// Summary is MAAS's status of a group of results: what is running first,
// then pending, aborted, failed, degraded, and passed only when every
// result passed or was skipped.
func Summary(statuses []Status) Status {
	if len(statuses) == 0 {
		return None
	}
	has := map[Status]bool{}
	for _, s := range statuses {
		has[s] = true
	}
	for _, group := range [][]Status{{Running, Installing, ApplyingNetconf}, {Pending}, {Aborted},
		{Failed, TimedOut, FailedInstalling, FailedApplyingNetconf}, {Degraded}} {
		for _, s := range group {
			if has[s] {
				if s == TimedOut || s == FailedInstalling || s == FailedApplyingNetconf {
					return Failed
				}
				if s == Installing || s == ApplyingNetconf {
					return Running
				}
				return s
			}
		}
	}
	return Passed
}

// ParseResultStatus reads the status a script's result YAML may set.
func ParseResultStatus(s string) (Status, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "passed":
		return Passed, true
	case "failed":
		return Failed, true
	case "degraded":
		return Degraded, true
	case "timedout":
		return TimedOut, true
	case "skipped":
		return Skipped, true
	}
	return 0, false
}

// Device is a disk or NIC a per-instance parameter runs a script on.
type Device struct {
	Name, Path, Model, Serial string // disks
	MAC, Vendor, Product      string // NICs
}

// Instance is one run of a script: on one device for a storage or
// interface parameter, or once.
type Instance struct {
	Name       string         // the device's name, "" for a single run
	Args       []string       // the command line the parameters make
	Parameters map[string]any // the parameters with their values, as MAAS shows them
}

// Instances expands a script's parameters over the machine's devices: a
// storage parameter makes one run per disk, an interface parameter one
// per NIC. Other parameters take their defaults. A machine whose devices
// are not known yet runs the script once without the device argument.
func Instances(s Script, disks, nics []Device) []Instance {
	names := make([]string, 0, len(s.Parameters))
	for n := range s.Parameters {
		names = append(names, n)
	}
	sort.Strings(names)
	var perDevice string
	var devices []Device
	for _, n := range names {
		p, _ := s.Parameters[n].(map[string]any)
		switch p["type"] {
		case "storage":
			perDevice, devices = n, disks
		case "interface":
			perDevice, devices = n, nics
		}
	}
	one := func(d *Device) Instance {
		in := Instance{Parameters: map[string]any{}}
		for _, n := range names {
			p, _ := s.Parameters[n].(map[string]any)
			q := map[string]any{}
			for k, v := range p {
				q[k] = v
			}
			format, _ := p["argument_format"].(string)
			if n == perDevice && d != nil {
				in.Name = d.Name
				q["value"] = deviceValue(p["type"], *d)
				if format == "" {
					format = "{path}"
					if p["type"] == "interface" {
						format = "{name}"
					}
				}
				in.Args = append(in.Args, strings.Fields(expand(format, *d, ""))...)
			} else if def, ok := p["default"]; ok && n != perDevice {
				q["value"] = def
				if format == "" {
					format = "--" + n + "={input}"
				}
				in.Args = append(in.Args, strings.Fields(expand(format, Device{}, fmt.Sprint(def)))...)
			}
			in.Parameters[n] = q
		}
		return in
	}
	if perDevice == "" || len(devices) == 0 {
		return []Instance{one(nil)}
	}
	out := make([]Instance, 0, len(devices))
	for i := range devices {
		out = append(out, one(&devices[i]))
	}
	return out
}

func deviceValue(typ any, d Device) map[string]any {
	if typ == "interface" {
		return map[string]any{"name": d.Name, "mac_address": d.MAC, "vendor": d.Vendor, "product": d.Product}
	}
	return map[string]any{"name": d.Name, "path": d.Path, "model": d.Model, "serial": d.Serial}
}

func expand(format string, d Device, input string) string {
	if input == "" {
		input = d.Path
		if d.Path == "" {
			input = d.Name
		}
	}
	return strings.NewReplacer("{input}", input, "{name}", d.Name, "{path}", d.Path, "{model}", d.Model,
		"{serial}", d.Serial, "{mac}", d.MAC, "{vendor}", d.Vendor, "{product}", d.Product).Replace(format)
}

// Select picks, of the scripts of one type, those a request names by name
// or tag ("none" picks nothing); an unknown name or tag is an error in
// MAAS's words. Scripts are returned in name order, each once.
func Select(all []Script, typ Type, request []string) ([]Script, error) {
	var out []Script
	seen := map[string]bool{}
	for _, want := range request {
		if strings.EqualFold(want, "none") {
			continue
		}
		found := false
		for _, s := range all {
			if s.Type == typ && (s.Name == want || s.HasTag(want)) {
				found = true
				if !seen[s.Name] {
					seen[s.Name] = true
					out = append(out, s)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("Unknown %s script or tag %q.", typ, want)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
