package dnszone

import (
	"errors"
	"testing"
)

func TestNameOwnership(t *testing.T) {
	alice, bob, admin := Actor{User: "alice"}, Actor{User: "bob"}, Actor{User: "root", Admin: true}
	for _, c := range []struct {
		what     string
		a        Actor
		n        Name
		add, use bool // MayAddAddress, MayNameNode allow it
	}{
		{"a new name", alice, Name{}, true, true},
		{"its own name", alice, Name{Resource: true, Owner: "alice"}, true, true},
		{"another user's name", alice, Name{Resource: true, Owner: "bob"}, false, false},
		{"an administrators' name", alice, Name{Resource: true}, false, false},
		{"a node's name", alice, Name{Node: "abc123"}, false, true},
		{"its own name that is a node's", alice, Name{Resource: true, Owner: "alice", Node: "abc123"}, false, true},
		{"an administrator, a user's name", admin, Name{Resource: true, Owner: "bob"}, true, true},
		{"an administrator, a node's name", admin, Name{Node: "abc123"}, false, true},
		{"a user named like no one", Actor{}, Name{Resource: true, Owner: "bob"}, false, false},
		{"bob, bob's name", bob, Name{Resource: true, Owner: "bob"}, true, true},
		{"a domain's own name", alice, Name{DomainOwn: true}, false, true},
		{"an administrator, a domain's own name", admin, Name{DomainOwn: true}, true, true},
	} {
		if err := MayAddAddress(c.a, c.n); (err == nil) != c.add || err != nil && !errors.Is(err, ErrNameTaken) {
			t.Errorf("%s: MayAddAddress = %v, want allowed %v", c.what, err, c.add)
		}
		if err := MayNameNode(c.a, c.n); (err == nil) != c.use {
			t.Errorf("%s: MayNameNode = %v, want allowed %v", c.what, err, c.use)
		}
	}
	for _, c := range []struct {
		a     Actor
		owner string
		want  bool
	}{
		{alice, "alice", true}, {alice, "bob", false}, {alice, "", false}, {admin, "bob", true}, {admin, "", true},
	} {
		if got := Unnames(c.a, c.owner); got != c.want {
			t.Errorf("Unnames(%+v, %q) = %v, want %v", c.a, c.owner, got, c.want)
		}
	}
	doms := []string{"maas", "example.test", "sub.example.test."}
	for _, c := range []struct {
		label, domain string
		want          bool
	}{
		{"@", "maas", true}, {"*", "example.test", true}, {"sub", "example.test", true}, {"SUB", "example.test.", true},
		{"www", "example.test", false}, {"sub", "maas", false},
	} {
		if got := DomainOwn(c.label, c.domain, doms); got != c.want {
			t.Errorf("DomainOwn(%q, %q) = %v, want %v", c.label, c.domain, got, c.want)
		}
	}
	if OwnerFor(alice) != "alice" || OwnerFor(admin) != "" {
		t.Errorf("OwnerFor: %q %q", OwnerFor(alice), OwnerFor(admin))
	}
}
