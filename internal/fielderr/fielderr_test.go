package fielderr

import "testing"

func TestErrors(t *testing.T) {
	var e Errors
	if e.Err() != nil {
		t.Fatal("empty errors are an error")
	}
	e.Add("mtu", "MTU %d is too small.", 500)
	e.Add("mtu", "MTU %d is too small.", 500) // once
	e.Add(All, "Nothing to boot.")
	var other Errors
	other.Add("ip_address", "100%% used")
	e.Merge("links.0", other)
	if got, want := e.Err().Error(), "Nothing to boot.; links.0.ip_address: 100% used; mtu: MTU 500 is too small."; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if len(e["mtu"]) != 1 {
		t.Fatalf("the same message twice: %v", e["mtu"])
	}
}
