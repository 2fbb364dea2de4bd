package agent

import (
	"strings"
	"testing"
	"time"
)

func TestParseCmdline(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Cmdline
		err      string
	}{
		{name: "full", in: `BOOT_IMAGE=/vmlinuz console=ttyS0 anvil.url=http://192.0.2.1:5240/MAAS/metadata/ anvil.purpose=ephemeral anvil.enrol=s3cret BOOTIF=01-AA-bb-cc-dd-ee-ff anvil.heartbeat=5 quiet`,
			want: Cmdline{URL: "http://192.0.2.1:5240/MAAS/metadata/", Purpose: "ephemeral", Enrol: "s3cret", BootMAC: "aa:bb:cc:dd:ee:ff", Heartbeat: 5 * time.Second}},
		{name: "defaults", in: "anvil.url=http://r/MAAS\n",
			want: Cmdline{URL: "http://r/MAAS", Purpose: "enlist", Heartbeat: DefaultHeartbeat}},
		{name: "quoted and bad values", in: `"anvil.url=http://r/MAAS" anvil.purpose=install BOOTIF=garbage anvil.heartbeat=-3`,
			want: Cmdline{URL: "http://r/MAAS", Purpose: "install", Heartbeat: DefaultHeartbeat}},
		{name: "BOOTIF without type", in: "anvil.url=u BOOTIF=52-54-00-12-34-56",
			want: Cmdline{URL: "u", Purpose: "enlist", BootMAC: "52:54:00:12:34:56", Heartbeat: DefaultHeartbeat}},
		{name: "no url", in: "console=ttyS0 anvil.purpose=enlist", err: "anvil.url"},
		{name: "bad purpose", in: "anvil.url=u anvil.purpose=dance", err: "dance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCmdline(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestCmdlineStringHidesSecret(t *testing.T) {
	c, _ := ParseCmdline("anvil.url=u anvil.enrol=topsecret")
	if s := c.String(); strings.Contains(s, "topsecret") {
		t.Fatalf("String() shows the secret: %s", s)
	}
}
