package scripts

import (
	"strings"
	"testing"
	"time"
)

const upload = `#!/bin/sh
# --- Start MAAS 1.0 script metadata ---
# name: disk-check
# title: Disk check
# tags: [storage, quick]
# script_type: testing
# hardware_type: storage
# parallel: instance
# timeout: 120
# destructive: false
# parameters:
#   disk: {type: storage, argument_format: '{path}'}
# results:
#   speed: {title: Speed}
# --- End MAAS 1.0 script metadata ---
echo hi
`

func TestApplyNew(t *testing.T) {
	s, errs := Apply(nil, false, Form{Fields: map[string]string{}, Script: []byte(upload), HasScript: true})
	if errs.Err() != nil {
		t.Fatal(errs)
	}
	if s.Name != "disk-check" || s.Type != Testing || s.HardwareType != Storage || s.Parallel != ParallelInstance || s.Timeout != 2*time.Minute {
		t.Fatalf("%+v", s)
	}
	if strings.Join(s.Tags, ",") != "quick,storage" && strings.Join(s.Tags, ",") != "storage,quick,storage" {
		if !s.HasTag("quick") || !s.HasTag("storage") {
			t.Fatalf("tags %v", s.Tags)
		}
	}
	if _, ok := s.Parameters["disk"]; !ok {
		t.Fatalf("parameters %v", s.Parameters)
	}
}

func TestApplyErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		fields map[string]string
		script string
		field  string
		msg    string
	}{
		{"no shebang", map[string]string{"name": "x"}, "echo hi\n", "script", "Must start with shebang."},
		{"bad yaml", map[string]string{"name": "x"}, "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# name: [x\n# --- End MAAS 1.0 script metadata ---\n", "script", "Invalid YAML"},
		{"missing hash", map[string]string{"name": "x"}, "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\nname: x\n# --- End MAAS 1.0 script metadata ---\n", "script", `Missing "#"`},
		{"hardware", map[string]string{"name": "x", "hardware_type": "toaster"}, "#!/bin/sh\n", "hardware_type", "Hardware type must be node, cpu, memory, storage, or gpu"},
		{"type", map[string]string{"name": "x", "type": "later"}, "#!/bin/sh\n", "script_type", "Script type must be"},
		{"parallel", map[string]string{"name": "x", "parallel": "9"}, "#!/bin/sh\n", "parallel", "Invalid script parallel numeric value."},
		{"override", map[string]string{"name": "other"}, upload, "name", "May not override values defined in embedded YAML."},
		{"none", map[string]string{"name": "none"}, "#!/bin/sh\n", "name", `"none" is a reserved name.`},
		{"digits", map[string]string{"name": "12"}, "#!/bin/sh\n", "name", "Cannot be a number."},
		{"quotes", map[string]string{"name": "a b"}, "#!/bin/sh\n", "name", "disallowed characters"},
		{"no name", map[string]string{}, "#!/bin/sh\n", "name", "This field is required."},
		{"timeout", map[string]string{"name": "x", "timeout": "soon"}, "#!/bin/sh\n", "timeout", "Enter a valid duration."},
		{"param type", map[string]string{"name": "x"}, "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# parameters: {p: {type: disk}}\n# --- End MAAS 1.0 script metadata ---\n", "parameters", "disk: type must be one of"},
		{"results", map[string]string{"name": "x"}, "#!/bin/sh\n# --- Start MAAS 1.0 script metadata ---\n# results: {r: {description: d}}\n# --- End MAAS 1.0 script metadata ---\n", "results", "title must be included"},
		{"for_hardware", map[string]string{"name": "x", "for_hardware": "toaster:1"}, "#!/bin/sh\n", "for_hardware", "must be a modalias"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs := Apply(nil, false, Form{Fields: c.fields, Script: []byte(c.script), HasScript: true})
			msgs := strings.Join(errs[c.field], "|")
			if !strings.Contains(msgs, c.msg) {
				t.Fatalf("errors %v, want %s: %q", errs, c.field, c.msg)
			}
		})
	}
}

func TestApplyUpdateKeepsTagsAndTimeout(t *testing.T) {
	old, _ := Apply(nil, false, Form{Fields: map[string]string{"tags": "mine", "timeout": "30"}, Script: []byte(upload), HasScript: true})
	s, errs := Apply(&old, false, Form{Fields: map[string]string{}, Script: []byte(upload), HasScript: true})
	if errs.Err() != nil {
		t.Fatal(errs)
	}
	if !s.HasTag("mine") || s.HasTag("quick") || s.Timeout != 30*time.Second {
		t.Fatalf("%v %v", s.Tags, s.Timeout)
	}
	if _, errs := Apply(&old, true, Form{Fields: map[string]string{"title": "x"}}); len(errs["title"]) == 0 {
		t.Fatal("a default script's title changed")
	}
	if _, errs := Apply(&old, true, Form{Fields: map[string]string{"tags": "x"}}); errs.Err() != nil {
		t.Fatal(errs)
	}
}

func TestTimeoutText(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0:00:00", 5 * time.Minute: "0:05:00", 26 * time.Hour: "1 day, 2:00:00", 50 * time.Hour: "2 days, 2:00:00"} {
		if got := FormatTimeout(d); got != want {
			t.Errorf("%v: %s, want %s", d, got, want)
		}
	}
	for in, want := range map[string]time.Duration{"60": time.Minute, "00:05:00": 5 * time.Minute, "1:30": 90 * time.Second} {
		if got, err := ParseTimeout(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
}

func TestBuiltins(t *testing.T) {
	names := map[string]bool{}
	for _, b := range Builtins() {
		names[b.Name] = true
	}
	for _, n := range []string{LSHW, Inventory, "smartctl-validate", "memtester", "fio", "badblocks",
		"stress-ng-cpu-short", "stress-ng-cpu-long", "stress-ng-memory-short", "stress-ng-memory-long"} {
		if !names[n] {
			t.Errorf("no built-in %s", n)
		}
	}
	// MAAS's metadata for the tests that come from it.
	for _, b := range Builtins() {
		switch b.Name {
		case "fio", "badblocks":
			if b.Type != Testing || b.HardwareType != Storage || b.Parallel != ParallelInstance || b.Destructive != (b.Name == "fio") {
				t.Errorf("%s: %+v", b.Name, b.Script)
			}
			if p, _ := b.Parameters["storage"].(map[string]any); p["type"] != "storage" {
				t.Errorf("%s parameters %v", b.Name, b.Parameters)
			}
			if r, _ := b.Results.(map[string]any); len(r) != map[string]int{"fio": 8, "badblocks": 4}[b.Name] {
				t.Errorf("%s results %v", b.Name, b.Results)
			}
		case "stress-ng-cpu-short", "stress-ng-memory-short", "stress-ng-cpu-long", "stress-ng-memory-long":
			want := 5 * time.Minute
			if strings.HasSuffix(b.Name, "-long") {
				want = 14 * time.Hour
			}
			hw := CPU
			if strings.Contains(b.Name, "memory") {
				hw = Memory
			}
			if b.Type != Testing || b.HardwareType != hw || b.Timeout != want || b.Parallel != ParallelDisabled || len(b.Packages) != 0 {
				t.Errorf("%s: %+v", b.Name, b.Script)
			}
		}
	}
}
