package api

// The devices' descriptions, kept beside their handlers' file.
func init() {
	fields := []string{
		opt("hostname", "string", "The host name: one DNS label, unique among all nodes; generated when not given on creation."),
		opt("domain", "string", "The DNS domain (name or id); the parent's, else the default one, when not given on creation."),
		opt("description", "string", "Free text."),
		opt("parent", "string", "The system_id of the machine the device belongs to: its release or deletion deletes the device. Empty for none."),
		opt("zone", "string", "The zone's name."),
	}
	who := "Its owner, the owner of its parent machine, or an administrator."
	addDocs(map[string]string{
		"DevicesHandler": "Devices: nodes Anvil never deploys (containers, appliances), with interfaces, addresses and DNS names.",
		"DevicesHandler read": doc("List the devices the caller may see.",
			"Administrators see every device, others the devices they created and those of the machines they own. A device must match every filter given; a filter given several times matches any of its values.",
			opt("hostname", "string", "Only devices of this host name."),
			opt("mac_address", "string", "Only the device with this MAC address."),
			opt("id", "string", "Only the devices of these system_ids."),
			opt("domain", "string", "Only devices in this domain."),
			opt("zone", "string", "Only devices in this zone."),
			opt("owner", "string", "Only devices of this owner.")),
		"DevicesHandler create": doc("Create a device, owned by the caller.", append([]string{"Its interfaces are eth0, eth1, ... in the order of the MACs, on the default fabric's untagged VLAN until linked to a subnet.",
			req("mac_addresses", "string", "One or more MAC addresses (repeat the parameter); none may be any node's already.")}, fields...)...),

		"DeviceHandler":        "One device.",
		"DeviceHandler read":   doc("Read a device.", who),
		"DeviceHandler update": doc("Change a device.", append([]string{who + " Only the fields given change."}, fields...)...),
		"DeviceHandler delete": doc("Delete a device.", who+" Its interfaces go with it and their addresses are free again."),
		"DeviceHandler details": doc("Read what commissioning found on the device.",
			"A device is never commissioned: lshw and lldp are null."),
		"DeviceHandler set_workload_annotations": doc("Set key=value data on the device (its owner only).",
			"Every parameter is a key; an empty value removes it."),
		"DeviceHandler set_owner_data": doc("The older name of set_workload_annotations."),
		"DeviceHandler restore_networking_configuration": doc("Reset the device's links (administrators).",
			"Every link goes; the first interface gets an AUTO address on the first subnet of its VLAN, or DHCP when its VLAN has none; the others are LINK_UP."),
		"DeviceHandler restore_default_configuration": doc("As restore_networking_configuration (administrators)."),
	})
}
