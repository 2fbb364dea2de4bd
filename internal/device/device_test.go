package device

import (
	"testing"

	"github.com/anvilmetal/anvil/internal/machine"
)

func TestCanView(t *testing.T) {
	for _, c := range []struct {
		actor         machine.Actor
		owner, parent string
		want          bool
	}{
		{machine.Actor{Name: "admin", Admin: true}, "alice", "", true},
		{machine.Actor{Name: "alice"}, "alice", "", true},
		{machine.Actor{Name: "bob"}, "alice", "", false},
		{machine.Actor{Name: "bob"}, "alice", "bob", true},
		{machine.Actor{Name: "bob"}, "alice", "carol", false},
		{machine.Actor{}, "", "", false},
		{machine.Actor{System: true}, "alice", "", true},
	} {
		if got := CanView(c.actor, c.owner, c.parent); got != c.want {
			t.Errorf("CanView(%+v, %q, %q) = %v, want %v", c.actor, c.owner, c.parent, got, c.want)
		}
	}
}

func TestGoWithRelease(t *testing.T) {
	for _, c := range []struct {
		from, to machine.Status
		want     bool
	}{
		{machine.Deployed, machine.Releasing, true},
		{machine.Allocated, machine.Releasing, true},
		{machine.Deployed, machine.DiskErasing, true},
		{machine.FailedDiskErasing, machine.DiskErasing, false},
		{machine.Releasing, machine.Releasing, false},
		{machine.Releasing, machine.Ready, false},
		{machine.Deploying, machine.Deployed, false},
		{machine.Deploying, machine.FailedDeployment, false},
	} {
		if got := GoWithRelease(c.from, c.to); got != c.want {
			t.Errorf("GoWithRelease(%v, %v) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
