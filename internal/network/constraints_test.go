package network

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// constraintSite: fabric "f1" (class 10g) with its untagged VLAN in space
// "db" and VLAN 100 "storage" in space "web"; fabric "f2" (class 1g) with
// an untagged VLAN in no space.
func constraintSite() *Network {
	return &Network{
		Fabrics: []Fabric{{ID: 1, Name: "f1", ClassType: "10g"}, {ID: 2, Name: "f2", ClassType: "1g"}},
		Spaces:  []Space{{ID: 1, Name: "db"}, {ID: 2, Name: "web"}},
		VLANs: []VLAN{
			{ID: 1, FabricID: 1, VID: 0, Name: "untagged", SpaceID: 1},
			{ID: 2, FabricID: 1, VID: 100, Name: "storage", SpaceID: 2},
			{ID: 3, FabricID: 2, VID: 0, Name: "untagged"},
		},
		Subnets: []Subnet{
			{ID: 1, VLANID: 1, Name: "db-net", CIDR: pfx("192.0.2.0/24")},
			{ID: 2, VLANID: 2, Name: "web-net", CIDR: pfx("198.51.100.0/24")},
			{ID: 3, VLANID: 3, Name: "other", CIDR: pfx("198.18.0.0/24")},
		},
	}
}

// nodeA: eth0 (10) on f1's untagged VLAN with a STATIC address, tagged;
// eth1 (11) on VLAN 100 with an AUTO link not yet given an address.
func nodeA() *Node {
	eth0 := nic(10, "eth0", mac1, 1, static(1, 1, "192.0.2.10"))
	eth0.Tags = []string{"sriov", "e1000"}
	eth1 := nic(11, "eth1", mac2, 2, Link{ID: 2, Mode: LinkAuto, SubnetID: 2})
	return &Node{Hostname: "alpha", Net: &Machine{Interfaces: []Interface{eth0, eth1}}, Speeds: map[int]int{10: 10000, 11: 1000}}
}

// nodeB: a bond (22) of two NICs on f2 with a DHCP link.
func nodeB() *Node {
	return &Node{Hostname: "bravo", Net: &Machine{Interfaces: []Interface{
		nic(20, "eth0", mac1, 3), nic(21, "eth1", mac2, 3),
		child(22, Bond, "bond0", 3, []int{20, 21}, Link{ID: 3, Mode: LinkDHCP, SubnetID: 3}),
	}}}
}

func TestParseInterfaces(t *testing.T) {
	got, err := ParseInterfaces("a:space=db,not_fabric=f2,space=web;b-2:name=eth0")
	if err != nil {
		t.Fatal(err)
	}
	want := []LabelConstraint{
		{Label: "a", Keys: []string{"space", "not_fabric"}, Values: map[string][]string{"space": {"db", "web"}, "not_fabric": {"f2"}}},
		{Label: "b-2", Keys: []string{"name"}, Values: map[string][]string{"name": {"eth0"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got, err := ParseInterfaces("x"); err != nil || got != nil {
		t.Fatalf("one character: %v, %v; want no constraint", got, err)
	}
	for in, msg := range map[string]string{
		"a=b":                   "Malformed constraint: 'a=b'",
		"_a:name=x":             "Invalid label name: '_a'",
		"a:name=x;a:name=y":     "Constraint label defined more than once: 'a'",
		"a:name":                "Malformed key/value pair in constraint: 'name'",
		"a:colour=red":          "Unknown interfaces constraint: 'colour'",
		"a:name=x;b:not_mode=x": "Unknown interfaces constraint: 'not_mode'",
	} {
		if _, err := ParseInterfaces(in); err == nil || !strings.HasPrefix(err.Error(), msg) {
			t.Errorf("%q: got %v, want %q", in, err, msg)
		}
	}
}

func TestInterfaceConstraintKeys(t *testing.T) {
	n := constraintSite()
	for _, tc := range []struct {
		spec string
		a, b []int // what matched on each node; nil: the node does not match
	}{
		{"l:id=10", []int{10}, nil},
		{"l:id=0x0a", []int{10}, nil},
		{"l:not_id=10", []int{11}, []int{20, 21, 22}},
		{"l:fabric=f1", []int{10, 11}, nil},
		{"l:fabric=fabric-2", nil, []int{20, 21, 22}},
		{"l:fabric=class:1g", nil, []int{20, 21, 22}},
		{"l:not_fabric=f1", nil, []int{20, 21, 22}},
		{"l:fabric_class=10g", []int{10, 11}, nil},
		{"l:not_fabric_class=10g", nil, []int{20, 21, 22}},
		{"l:ip=192.0.2.10", []int{10}, nil},
		{"l:not_ip=192.0.2.10", []int{11}, []int{20, 21, 22}},
		{"l:mode=unconfigured", []int{11}, []int{20, 21, 22}},
		{"l:name=eth1", []int{11}, []int{21}},
		{"l:name=eth0,name=bond0", []int{10}, []int{20, 22}},
		{"l:not_name=eth0", []int{11}, []int{21, 22}},
		{"l:hostname=bravo", nil, []int{20, 21, 22}},
		{"l:not_hostname=bravo", []int{10, 11}, nil},
		{"l:subnet=db-net", []int{10}, nil},
		{"l:subnet=cidr:198.51.100.0/24", []int{11}, nil},
		{"l:subnet=space:web", []int{11}, nil},
		{"l:subnet=vlan:100", []int{11}, nil},
		{"l:subnet=ip:198.18.0.7", nil, []int{22}},
		{"l:subnet=id:3", nil, []int{22}},
		{"l:not_subnet=db-net", []int{11}, []int{20, 21, 22}},
		{"l:subnet_cidr=192.0.2.0/24", []int{10}, nil},
		{"l:not_subnet_cidr=192.0.2.0/24", []int{11}, []int{20, 21, 22}},
		{"l:space=db", []int{10}, nil},
		{"l:space=space-2", []int{11}, nil},
		{"l:space=undefined", nil, []int{20, 21, 22}},
		{"l:not_space=db", []int{11}, []int{20, 21, 22}},
		{"l:type=bond", nil, []int{22}},
		{"l:vlan=storage", []int{11}, nil},
		{"l:vlan=untagged", []int{10}, []int{20, 21, 22}},
		{"l:vlan=fabric:f2", nil, []int{20, 21, 22}},
		{"l:not_vlan=vid:100", []int{10}, []int{20, 21, 22}},
		{"l:vid=100", []int{11}, nil},
		{"l:not_vid=untagged", []int{11}, nil},
		{"l:tag=sriov&&e1000", []int{10}, nil},
		{"l:tag=sriov&&other", nil, nil},
		{"l:not_tag=sriov", []int{11}, []int{20, 21, 22}},
		{"l:link_speed=5000", []int{10}, nil},
		{"l:space=db,name=eth1", nil, nil},
		{"a:space=db;b:space=web", []int{10}, nil}, // label a's; b's is below
	} {
		cs, err := ParseInterfaces(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		m, err := CompileInterfaces(n, cs)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		for k, node := range []*Node{nodeA(), nodeB()} {
			want := [][]int{tc.a, tc.b}[k]
			got, ok := m.Match(node)
			if ok != (want != nil) || (ok && !slices.Equal(got[cs[0].Label], want)) {
				t.Errorf("%s on %s: got %v %v, want %v", tc.spec, node.Hostname, got, ok, want)
			}
		}
	}
	cs, _ := ParseInterfaces("a:space=db;b:space=web")
	m, _ := CompileInterfaces(n, cs)
	if got, ok := m.Match(nodeA()); !ok || !reflect.DeepEqual(got, map[string][]int{"a": {10}, "b": {11}}) {
		t.Errorf("two labels: got %v %v", got, ok)
	}
}

func TestInterfaceConstraintRefusals(t *testing.T) {
	n := constraintSite()
	for spec, want := range map[string]SpecError{
		"l:space=nosuch":        {Msg: "No Space matches the given query.", NotFound: true},
		"l:subnet=space:nosuch": {Msg: "No Space matches the given query.", NotFound: true},
		"l:id=eth0":             {Msg: "Interface ID must be numeric."},
		"l:mode=static":         {Msg: "The only valid value for 'mode' is 'unconfigured'."},
		"l:vid=5000":            {Msg: "VLAN tag (VID) out of range (0-4094; 0 for untagged.)"},
		"l:subnet=id:x":         {Msg: "Subnet ID must be numeric."},
		"l:subnet_cidr=10.0.0":  {Msg: "invalid IPNetwork 10.0.0"},
		"l:link_speed=fast":     {Msg: "Invalid link speed: number required."},
	} {
		cs, err := ParseInterfaces(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		_, err = CompileInterfaces(n, cs)
		se, ok := err.(*SpecError)
		if !ok || *se != want {
			t.Errorf("%s: got %#v, want %#v", spec, err, want)
		}
	}
}

func TestMachineConstraints(t *testing.T) {
	n := constraintSite()
	for _, tc := range []struct {
		name string
		c    MachineConstraints
		a, b bool
	}{
		{"fabrics", MachineConstraints{Fabrics: []string{"f2", "nosuch"}}, false, true},
		{"not_fabrics", MachineConstraints{NotFabrics: []string{"f2"}}, true, false},
		{"fabric_classes", MachineConstraints{FabricClasses: []string{"10g"}}, true, false},
		{"not_fabric_classes", MachineConstraints{NotFabricClasses: []string{"10g"}}, false, true},
		{"subnets all", MachineConstraints{Subnets: []string{"db-net", "198.51.100.0/24"}}, true, false},
		{"subnets space", MachineConstraints{Subnets: []string{"space:db"}}, true, false},
		{"subnets every one named", MachineConstraints{Subnets: []string{"fabric:f1"}}, true, false},
		{"subnets not all", MachineConstraints{Subnets: []string{"db-net", "other"}}, false, false},
		{"not_subnets space", MachineConstraints{NotSubnets: []string{"space:web"}}, false, true},
		{"not_subnets any", MachineConstraints{NotSubnets: []string{"other", "db-net"}}, false, false},
		{"vlans", MachineConstraints{VLANs: []string{"storage"}}, true, false},
		{"not_vlans", MachineConstraints{NotVLANs: []string{"fabric:f2"}}, true, false},
		{"spaces", MachineConstraints{Spaces: []string{"web"}}, true, false},
		{"not_spaces", MachineConstraints{NotSpaces: []string{"web"}}, false, true},
		{"none", MachineConstraints{}, true, true},
	} {
		m, err := CompileMachine(n, tc.c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := m.Match(nodeA().Net); got != tc.a {
			t.Errorf("%s on alpha: got %v, want %v", tc.name, got, tc.a)
		}
		if got := m.Match(nodeB().Net); got != tc.b {
			t.Errorf("%s on bravo: got %v, want %v", tc.name, got, tc.b)
		}
	}
	for _, tc := range []struct {
		c    MachineConstraints
		want error
	}{
		{MachineConstraints{Subnets: []string{"nosuch"}}, &ConstraintError{Field: "subnets", Msg: "No matching subnets found."}},
		{MachineConstraints{NotSubnets: []string{"10.9.0.0/16"}}, &ConstraintError{Field: "not_subnets", Msg: "No matching subnets found."}},
		{MachineConstraints{VLANs: []string{"nosuch"}}, &ConstraintError{Field: "vlans", Msg: "No matching vlans found."}},
		{MachineConstraints{NotVLANs: []string{"vid:9999"}}, &ConstraintError{Field: "not_vlans", Msg: "VLAN tag (VID) out of range (0-4094; 0 for untagged.)"}},
		{MachineConstraints{NotSubnets: []string{"space:nosuch"}}, &SpecError{Msg: "No Space matches the given query.", NotFound: true}},
	} {
		if _, err := CompileMachine(n, tc.c); !reflect.DeepEqual(err, tc.want) {
			t.Errorf("%+v: got %v, want %v", tc.c, err, tc.want)
		}
	}
}
