package dnszone

import (
	"errors"
	"strings"
)

// Names belong to their owners. A DNS name made by a user's address
// reservation (ipaddresses/ op=reserve with a hostname) is that user's;
// one made through dnsresources/ is administrators' (owner ""), and a
// machine's or device's hostname holds that node's addresses. A user adds
// to, takes from, or names a node after only names of its own; these
// rules decide it, and the store applies them under the name's lock.

// Actor is who asks: a user's name, and whether it is an administrator.
type Actor struct {
	User  string
	Admin bool
}

// Name is what a DNS name is, as far as who may use it goes: whether a
// DNS resource of that name exists and whose it is, the system_id of the
// machine or device of that hostname in the same domain ("" none), and
// whether it is the domain's own (its apex "@", its wildcard "*", or the
// apex of another domain below it), which answers for the whole domain.
type Name struct {
	Resource  bool
	Owner     string
	Node      string
	DomainOwn bool
}

// DomainOwn says whether label in domain is a domain's own name: "@",
// "*", or label.domain is one of domains.
func DomainOwn(label, domain string, domains []string) bool {
	if label == "@" || label == "*" {
		return true
	}
	for _, d := range domains {
		if strings.EqualFold(strings.TrimSuffix(d, "."), label+"."+strings.TrimSuffix(domain, ".")) {
			return true
		}
	}
	return false
}

// ErrNameTaken is MAAS's word for a label someone else holds.
var ErrNameTaken = errors.New(MsgLabelInUse)

// MayAddAddress says whether a may put an address it reserved on the
// name n: never on a node's name (its addresses come from its
// interfaces), and for a user only on a new name or one of its own, and
// never on a domain's own name (domains are administrators').
func MayAddAddress(a Actor, n Name) error {
	if n.Node != "" || n.DomainOwn && !a.Admin {
		return ErrNameTaken
	}
	if n.Resource && !a.Admin && n.Owner != a.User {
		return ErrNameTaken
	}
	return nil
}

// MayNameNode says whether a may give its machine or device the hostname
// n: a user may not take a DNS name someone else holds, as the node's
// addresses would then answer for it.
func MayNameNode(a Actor, n Name) error {
	if n.Resource && !a.Admin && n.Owner != a.User {
		return ErrNameTaken
	}
	return nil
}

// Unnames says whether releasing an address takes it off a name owned by
// owner: a user's release touches only its own names; an administrator's
// (who may release anyone's address) every name the address is on.
func Unnames(a Actor, owner string) bool {
	return a.Admin || owner == a.User
}

// OwnerFor is whose a name made by a's reservation is: the user's, or
// administrators' when an administrator makes it.
func OwnerFor(a Actor) string {
	if a.Admin {
		return ""
	}
	return a.User
}
