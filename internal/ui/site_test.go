package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anvilmetal/anvil/internal/store"
)

func TestSiteGaps(t *testing.T) {
	dhcp := []store.Subnet{{ID: 1, CIDR: "192.0.2.0/24", DHCP: true}}
	off := []store.Subnet{{ID: 1, CIDR: "192.0.2.0/24"}}
	pool := []store.IPRange{{SubnetID: 1, Type: "dynamic", Start: "192.0.2.100", End: "192.0.2.199"}}
	reserved := []store.IPRange{{SubnetID: 1, Type: "reserved", Start: "192.0.2.1", End: "192.0.2.9"}}
	for _, tc := range []struct {
		name string
		f    siteFacts
		want []string // the start of each gap's What
	}{
		{"empty, no rack here", siteFacts{}, []string{"No subnet with DHCP on", "No images"}},
		{"empty, rack here", siteFacts{BootDir: "/d/boot", MissingLoaders: bootLoaders, MissingEnv: ephemeralFiles},
			[]string{"No boot loaders", "No ephemeral environment", "No subnet with DHCP on", "No images"}},
		{"subnet without DHCP", siteFacts{Subnets: off, Ranges: pool, Images: []string{"custom/x"}}, []string{"No subnet with DHCP on"}},
		{"DHCP without a pool", siteFacts{Subnets: dhcp, Ranges: reserved, Images: []string{"custom/x"}}, []string{"No dynamic range"}},
		{"pool on a subnet without DHCP", siteFacts{Subnets: append(slices.Clone(dhcp), store.Subnet{ID: 2}),
			Ranges: []store.IPRange{{SubnetID: 2, Type: "dynamic"}}, Images: []string{"custom/x"}}, []string{"No dynamic range"}},
		{"complete", siteFacts{BootDir: "/d/boot", Subnets: dhcp, Ranges: pool, Images: []string{"custom/x"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := siteGaps(tc.f)
			var got []string
			for i, g := range gs {
				got = append(got, g.What)
				if i < len(tc.want) && !strings.HasPrefix(g.What, tc.want[i]) {
					t.Errorf("gap %d is %q; want it to start %q", i, g.What, tc.want[i])
				}
				if g.Command == "" && g.Page == "" {
					t.Errorf("gap %q says neither a command nor a page", g.What)
				}
			}
			if len(gs) != len(tc.want) {
				t.Fatalf("gaps %q; want %d", got, len(tc.want))
			}
		})
	}
	// The commands name the site's own directories.
	gs := siteGaps(siteFacts{BootDir: "/srv/anvil/boot", MissingLoaders: []string{"lpxelinux.0"}, MissingEnv: ephemeralFiles,
		Subnets: dhcp, Ranges: pool, Images: []string{"x"}})
	if !strings.HasSuffix(gs[0].Command, "anvil import-loaders --data /srv/anvil") || !strings.Contains(gs[0].What, "lpxelinux.0") ||
		!strings.HasSuffix(gs[1].Command, "-out /srv/anvil/boot/ephemeral") {
		t.Fatalf("gaps %+v", gs)
	}
}

func TestMissingFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lpxelinux.0"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ldlinux.c32"), nil, 0o644); err != nil { // empty: as good as missing
		t.Fatal(err)
	}
	if got := missingFiles(dir, bootLoaders); !slices.Equal(got, []string{"ldlinux.c32", "bootx64.efi", "grubx64.efi"}) {
		t.Fatalf("missing %v", got)
	}
}
