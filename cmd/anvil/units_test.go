package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSystemdUnits: the units in contrib/systemd pass systemd-analyze
// verify, and the command each starts is one this build accepts (its
// flags parse: run with --help, with the environment's values filled in).
func TestSystemdUnits(t *testing.T) {
	bin := anvilBinary(t)
	units, err := filepath.Glob("../../contrib/systemd/*.service")
	if err != nil || len(units) != 2 {
		t.Fatalf("units: %v %v", units, err)
	}
	sample := map[string]string{"ANVIL_ADVERTISE_URL": "http://10.0.0.2:5240/MAAS/", "ANVIL_REGION_URL": "http://10.0.0.2:5240/MAAS/",
		"ANVIL_DHCP_INTERFACE": "eno2", "ANVIL_BMC_NETWORK": "10.20.0.0/24"}
	vars := regexp.MustCompile(`\$\{(\w+)\}`)
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), "\\\n", " ")
		var exe string
		for _, line := range strings.Split(text, "\n") {
			if cmd, ok := strings.CutPrefix(line, "ExecStart="); ok {
				exe = cmd
			}
		}
		if exe == "" {
			t.Fatalf("%s has no ExecStart", u)
		}
		args := strings.Fields(vars.ReplaceAllStringFunc(exe, func(v string) string { return sample[v[2:len(v)-1]] }))
		if args[0] != "/usr/local/bin/anvil" {
			t.Fatalf("%s starts %s", u, args[0])
		}
		if out, err := exec.Command(bin, append(args[1:], "--help")...).CombinedOutput(); err != nil {
			t.Errorf("%s: %s: %v\n%s", u, strings.Join(args, " "), err, out)
		}
		if _, err := exec.LookPath("systemd-analyze"); err != nil {
			continue
		}
		// verify wants the program and the environment file to exist.
		dir := t.TempDir()
		env := filepath.Join(dir, "anvil.env")
		if err := os.WriteFile(env, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		local := strings.ReplaceAll(string(b), "/usr/local/bin/anvil", bin)
		local = regexp.MustCompile(`EnvironmentFile=\S+`).ReplaceAllString(local, "EnvironmentFile="+env)
		copyPath := filepath.Join(dir, filepath.Base(u))
		if err := os.WriteFile(copyPath, []byte(local), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("systemd-analyze", "verify", copyPath).CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", filepath.Base(u), err, out)
		}
	}
}
