package serve

import (
	"net"
	"testing"
)

func TestMetadataURLFollowsTheBootURL(t *testing.T) {
	api := &net.TCPAddr{IP: net.IPv4zero, Port: 5240}
	for boot, want := range map[string]string{
		"http://192.0.2.1:5248":     "http://192.0.2.1:5240/MAAS/metadata/",
		"http://[2001:db8::1]:5248": "http://[2001:db8::1]:5240/MAAS/metadata/",
		"":                          "",
		"::nonsense":                "",
	} {
		if got := metadataURL(boot, api); got != want {
			t.Errorf("%q: %q, want %q", boot, got, want)
		}
	}
}
