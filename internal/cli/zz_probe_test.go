package cli_test

import "testing"

func TestZZProbe(t *testing.T) {
	e := startE2E(t, "")
	e.login()
	for _, args := range [][]string{
		{"machine", "add", "--hostname", "dup", "--mac", "52:54:00:00:00:01", "--arch", "amd64"},
		{"machine", "add", "--hostname", "dup", "--mac", "52:54:00:00:00:02", "--arch", "amd64"},
		{"machine", "add", "--hostname", "other", "--mac", "52:54:00:00:00:01", "--arch", "amd64"},
		{"machine", "add", "--mac", "52:54:00:00:00:03", "--arch", "amd64"},
		{"machine", "add", "--mac", "52:54:00:00:00:04"},
		{"machine", "add", "--hostname", "bad_name!", "--mac", "52:54:00:00:00:05", "--arch", "amd64"},
		{"machines", "list"},
		{"machine", "show", "dup.maas"},
		{"machines", "list", "--status", "Ready"},
		{"machines", "list", "--status", "bogus"},
		{"machines", "list", "--mac", "nonsense"},
		{"machines", "list", "--zone", "nosuch"},
		{"machine", "power-state", "dup", "--json"},
		{"events", "--level", "error"},
		{"events", "--level", "bogus"},
		{"events", "--id", "nosuch"},
		{"events", "--limit", "2"},
		{"machine", "release", "nosuch"},
		{"machine", "deploy", "dup", "--distro-series", "nope"},
	} {
		out, errOut, code := e.run(args...)
		t.Logf("%q -> %d\n%s%s", args, code, out, errOut)
	}
}
