package e2e

import (
	"encoding/base64"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/anvilmetal/anvil/internal/lab/ipmisim"
)

const (
	// diskSizeScript reads each disk's size: a storage parameter, so it
	// runs once per disk, as MAAS runs such scripts.
	diskSizeScript = `#!/bin/sh
# --- Start MAAS 1.0 script metadata ---
# name: e2e-disk-size
# script_type: commissioning
# hardware_type: storage
# parameters:
#   disk: {type: storage, argument_format: '{path}'}
# --- End MAAS 1.0 script metadata ---
echo "disk $1 has $(cat /sys/class/block/$(basename $1)/size) sectors"
`
	failingTest = `#!/bin/sh
# --- Start MAAS 1.0 script metadata ---
# name: e2e-fails
# script_type: testing
# --- End MAAS 1.0 script metadata ---
echo "checking the widget"
echo "widget missing" >&2
exit 1
`
)

// scriptsAndTags runs scripts and XPath tags on the Ready machine id
// behind b: a tag whose definition matches its lshw memory gets the
// machine (and its kernel options reach the next boot's command line),
// one that does not match does not; commissioning with an uploaded
// script gives one result per disk (this machine has one, of 64 MiB);
// op=test with a testing script that exits 1 ends Failed testing with
// its output; override_failed_testing makes the machine Ready again.
func (s *site) scriptsAndTags(id string, b *ipmisim.BMC) {
	t := s.t
	t.Helper()
	s.api("POST", "scripts/", url.Values{"name": {"e2e-disk-size"}, "script": {diskSizeScript}}, nil)
	s.api("POST", "scripts/", url.Values{"name": {"e2e-fails"}, "script": {failingTest}}, nil)
	s.api("POST", "tags/", url.Values{"name": {"bigmem"}, "definition": {`//node[@id="memory"]/size[@units="bytes"] > 500000000`},
		"kernel_opts": {"anvil_e2e_tagged=1"}}, nil)
	s.api("POST", "tags/", url.Values{"name": {"hugemem"}, "definition": {`//node[@id="memory"]/size[@units="bytes"] > 64000000000`}}, nil)
	tags := s.machine(id).TagNames
	if !slices.Contains(tags, "bigmem") || slices.Contains(tags, "hugemem") {
		t.Fatalf("tags after the definitions were evaluated over the machine's lshw: %v", tags)
	}

	serialBefore, _ := os.ReadFile(b.Serial())
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"commission"}, "commissioning_scripts": {"e2e-disk-size"}}, nil)
	s.waitStatus(id, "Ready", 6*time.Minute, b)
	s.waitFor("the commissioned machine to be off", 2*time.Minute, func() bool { return !b.Running() })
	serialCommissioned, _ := os.ReadFile(b.Serial())
	s.api("POST", "machines/"+id+"/", url.Values{"op": {"test"}, "testing_scripts": {"e2e-fails"}}, nil)
	s.waitStatus(id, "Failed testing", 6*time.Minute, b)

	type result struct {
		Name       string  `json:"name"`
		StatusName string  `json:"status_name"`
		ExitStatus *int    `json:"exit_status"`
		Device     *string `json:"physical_blockdevice"`
		Stdout     string  `json:"stdout"`
		Stderr     string  `json:"stderr"`
	}
	var set struct {
		Results []result `json:"results"`
	}
	dec := func(b64 string) string {
		out, _ := base64.StdEncoding.DecodeString(b64)
		return string(out)
	}
	s.api("GET", "nodes/"+id+"/results/current-commissioning/", url.Values{"include_output": {"1"}, "filters": {"e2e-disk-size"}}, &set)
	disks := map[string]string{}
	for _, r := range set.Results {
		if r.StatusName != "Passed" || r.Device == nil {
			t.Fatalf("e2e-disk-size result %+v", r)
		}
		disks[*r.Device] = dec(r.Stdout)
	}
	if len(disks) != 1 || !strings.Contains(disks["vda"], "disk /dev/vda has 131072 sectors") {
		t.Fatalf("e2e-disk-size per disk: %v", disks)
	}
	s.api("GET", "nodes/"+id+"/results/current-testing/", url.Values{"include_output": {"1"}, "filters": {"e2e-fails"}}, &set)
	if len(set.Results) != 1 || set.Results[0].StatusName != "Failed" || set.Results[0].ExitStatus == nil || *set.Results[0].ExitStatus != 1 ||
		dec(set.Results[0].Stdout) != "checking the widget\n" || dec(set.Results[0].Stderr) != "widget missing\n" {
		t.Fatalf("e2e-fails result: %+v", set.Results)
	}
	// The tag's kernel options were on the command line the machine booted.
	// (Named so that no "mem=" is inside: iPXE's bzImage loader reads one
	// anywhere in the command line as a memory limit.)
	if booted := string(serialCommissioned[min(len(serialBefore), len(serialCommissioned)):]); !strings.Contains(booted, "anvil_e2e_tagged=1") {
		t.Fatalf("the tag's kernel_opts are not on the booted command line:\n%s", tail([]byte(booted), 3000))
	}

	s.api("POST", "machines/"+id+"/", url.Values{"op": {"override_failed_testing"}}, nil)
	if st := s.machine(id).StatusName; st != "Ready" {
		t.Fatalf("after override_failed_testing the machine is %s", st)
	}
}
