package api

// The interfaces' descriptions, kept beside their handlers' file.
func init() {
	common := []string{
		opt("name", "string", "The interface's name."),
		opt("mac_address", "string", "Its MAC address."),
		opt("tags", "string", "Comma-separated tags."),
		opt("vlan", "int", "The VLAN id it is connected to."),
		opt("mtu", "int", "Its MTU; otherwise its VLAN's."),
	}
	bond := []string{
		opt("parents", "int", "The ids of the bond's members (repeat the parameter)."),
		opt("bond_mode", "string", "balance-rr (the default), active-backup, balance-xor, broadcast, 802.3ad, balance-tlb or balance-alb."),
		opt("bond_miimon", "int", "Link monitoring, in milliseconds (100)."),
		opt("bond_updelay", "int", "Milliseconds to wait before enabling a member whose link came up (0)."),
		opt("bond_downdelay", "int", "Milliseconds to wait before disabling a member whose link went down (0)."),
		opt("bond_lacp_rate", "string", "fast or slow, for 802.3ad."),
		opt("bond_xmit_hash_policy", "string", "layer2, layer2+3, layer3+4, encap2+3 or encap3+4."),
	}
	bridge := []string{
		opt("parent", "int", "The id of the bridged interface (parents for several)."),
		opt("bridge_type", "string", "standard (the default) or ovs."),
		opt("bridge_stp", "boolean", "Spanning tree on or off (off)."),
		opt("bridge_fd", "int", "Forward delay in seconds (15)."),
	}
	d := func(title, text string, ps ...string) string { return doc(title, append([]string{text}, ps...)...) }
	edit := "Administrators, while the machine is New, Ready, Failed testing, Allocated or Broken; a device's, whoever may change the device, at any time (an AUTO link on a device gets its address at once)."
	for k, v := range map[string]string{
		"InterfacesHandler":      "A node's network interfaces.",
		"InterfacesHandler read": doc("List the node's interfaces, with their VLANs, parents, children and links."),
		"InterfacesHandler create_physical": d("Add a physical interface.", edit,
			append([]string{req("mac_address", "string", "Its MAC address.")}, common[0], common[2], common[3], common[4])...),
		"InterfacesHandler create_bond": d("Bond physical interfaces.", edit+" The members must be on one VLAN; their links move to the bond.",
			append(append([]string{req("name", "string", "The bond's name.")}, common[1:]...), bond...)...),
		"InterfacesHandler create_vlan": doc("Add a VLAN interface on a parent.", edit+" Named parent.vid unless a name is given.",
			req("vlan", "int", "The tagged VLAN's id, on the parent's fabric."), req("parent", "int", "The parent interface's id."),
			common[2], common[4]),
		"InterfacesHandler create_bridge": d("Bridge an interface.", edit,
			append(append([]string{req("name", "string", "The bridge's name.")}, common[1:]...), bridge...)...),

		"InterfaceHandler":      "One of a node's network interfaces.",
		"InterfaceHandler read": doc("Read an interface."),
		"InterfaceHandler update": d("Change an interface.", "Administrators, in the statuses above or Deployed. The fields of its create operation.",
			append(append(append([]string{opt("enabled", "boolean", "Whether it is brought up.")}, common...), bond...), bridge...)...),
		"InterfaceHandler delete": doc("Delete an interface.", edit+" Its VLAN interfaces go with it; a bond's or bridge's member is refused while the bond or bridge exists."),
		"InterfaceHandler link_subnet": doc("Link the interface to a subnet.", edit+" AUTO gets an address from the subnet when deployment starts, STATIC the one given (or, without one, none: give ip_address), DHCP asks a DHCP server, LINK_UP brings it up with no address.",
			req("mode", "string", "AUTO, DHCP, STATIC or LINK_UP."),
			opt("subnet", "int", "The subnet's id; required for AUTO and STATIC."),
			opt("ip_address", "string", "The STATIC address: in the subnet, outside its dynamic ranges, not in use."),
			opt("default_gateway", "boolean", "Make this link's subnet gateway the machine's default (AUTO and STATIC)."),
			opt("force", "boolean", "Remove the interface's other links first.")),
		"InterfaceHandler unlink_subnet": doc("Remove one of the interface's links.", edit, req("id", "int", "The link's id.")),
		"InterfaceHandler set_default_gateway": doc("Take the machine's default gateway from this interface.", edit,
			opt("link_id", "int", "The link whose subnet's gateway to use; required when the interface has several gateways of one family.")),
		"InterfaceHandler disconnect": doc("Remove the interface's links and take it off its VLAN.", edit),
		"InterfaceHandler add_tag":    doc("Tag the interface (administrators).", "", req("tag", "string", "The tag.")),
		"InterfaceHandler remove_tag": doc("Untag the interface (administrators).", "", req("tag", "string", "The tag.")),

		"MachineHandler clear_default_gateways": doc("Forget the default gateways chosen for the machine.", edit+" The gateways are then chosen as MAAS chooses them."),
	} {
		docs[k] = v
	}
}
