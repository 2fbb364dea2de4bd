package api

import "strings"

// docs are the descriptions describe/ serves: one per resource (keyed by
// its handler name) and one per action ("Handler action"). The first
// paragraph is the one-line help the maas CLI lists; ":param" lines are
// what it prints for --help, and an action without them takes no
// key=value arguments there. A test fails when a route has no doc here
// or a doc has no route.
var docs = map[string]string{
	"VersionHandler":      "What this server is and what it can do.",
	"VersionHandler read": doc("Read the API version and capabilities.", "Needs no credentials. version is the MAAS API level Anvil speaks, subversion names Anvil's own version, and capabilities lists what clients may rely on."),

	"MaasHandler":            "Server-wide settings.",
	"MaasHandler get_config": doc("Read a setting.", "", req("name", "string", "The setting: power_poll_interval (seconds between two power readings of one machine).")),
	"MaasHandler set_config": doc("Change a setting (administrators).", "An unknown name is refused rather than ignored.",
		req("name", "string", "The setting: power_poll_interval."),
		req("value", "string", "The new value: seconds, or a duration such as 5m.")),

	"UsersHandler":        "The accounts that may use the API.",
	"UsersHandler read":   doc("List every user (administrators)."),
	"UsersHandler whoami": doc("Read the user whose key signs the request."),
	"UsersHandler create": doc("Create a user (administrators).", "Every parameter but key is required, as in MAAS. The password is for the web pages (at least 8 characters, stored as a PBKDF2 hash, never logged); give the user an API key with anvil apikey.",
		req("username", "string", "Letters, digits and @.+-_; at most 150."),
		req("email", "string", "The user's email address."),
		req("password", "string", "The user's password for the web pages."),
		req("is_superuser", "boolean", "1 (or true) makes the user an administrator, 0 (or false) does not."),
		opt("key", "string", "An SSH public key for a new administrator.")),

	"UserHandler":      "One user account.",
	"UserHandler read": doc("Read a user.", "Administrators read anyone; other users only themselves (anyone else is not found)."),
	"UserHandler delete": doc("Delete a user (administrators).", "An administrator cannot delete themselves, and the last administrator stays. A user who still owns machines is refused unless transfer_resources_to names who gets them. The user's API keys, sessions and SSH keys go with it.",
		opt("transfer_resources_to", "string", "A user who becomes the owner of the deleted user's machines.")),

	"SSHKeysHandler":        "The SSH public keys of the calling user, installed on the machines they deploy.",
	"SSHKeysHandler read":   doc("List the calling user's SSH keys."),
	"SSHKeysHandler create": doc("Add an SSH public key.", "", req("key", "string", "A public key in OpenSSH's one-line format.")),

	"SSHKeyHandler":        "One of the calling user's SSH keys.",
	"SSHKeyHandler read":   doc("Read an SSH key."),
	"SSHKeyHandler delete": doc("Delete an SSH key."),

	"NodesHandler":               "Every node, whatever its type. Anvil's nodes are machines.",
	"NodesHandler read":          doc("List the nodes the caller may see.", with("Takes the filters of machines read.", machineFilters)...),
	"NodesHandler is_registered": doc("Say whether a MAC address belongs to a node.", "Needs no credentials.", req("mac_address", "string", "The MAC address.")),

	"NodeHandler":                  "One node, whatever its type.",
	"NodeHandler read":             doc("Read a node: a machine, or a device."),
	"NodeHandler delete":           doc("Delete a node (administrators)."),
	"NodeHandler details":          doc("Read what commissioning found on the node.", detailsDoc),
	"NodeHandler power_parameters": doc("Read the node's power parameters, secrets included (administrators)."),

	"MachinesHandler":      "Machines: physical servers Anvil enlists, commissions, deploys and powers.",
	"MachinesHandler read": doc("List the machines the caller may see.", with("Administrators see every machine, others free machines and their own. A machine must match every filter given; a filter given several times (or as a comma-separated list) matches any of its values.", machineFilters)...),
	"MachinesHandler create": doc("Add a machine (administrators).", "By its MAC addresses, or by its BMC alone (power_type and power_parameters without a MAC): Anvil then powers it on to learn its MACs and commissions it.",
		opt("mac_addresses", "string", "One or more MAC addresses of its network cards (repeat the parameter)."),
		opt("hostname", "string", "The host name; generated when not given."),
		opt("architecture", "string", "Such as amd64/generic."),
		opt("description", "string", "Free text."),
		opt("domain", "string", "The DNS domain."),
		opt("zone", "string", "The zone's name."),
		opt("pool", "string", "The resource pool's name."),
		opt("power_type", "string", "ipmi, redfish, webhook or manual."),
		opt("power_parameters", "string", "A JSON object of MAAS's power parameter names, or give each as power_parameters_NAME."),
		opt("commission", "boolean", "Commission the machine at once.")),
	"MachinesHandler accept": doc("Accept the held boot of machines added by their BMC alone (administrators).", "A boot Anvil could not corroborate (no power-on it asked for, no boot the rack saw, or an SMBIOS UUID that is not the BMC's system GUID) is held; accepting makes its MACs and UUID the machine's and reboots a machine in a netbooting phase into its own boot.",
		req("machines", "string", "The system ID of a machine whose boot is held (repeat the parameter).")),
	"MachinesHandler accept_all":     doc("Accept every held boot (administrators; others accept none).", "As accept, for every machine with a held boot; a locked machine's boot stays held. Answers the machines accepted."),
	"MachinesHandler list_allocated": doc("List the caller's allocated machines: allocated to them and not yet deployed.", "", opt("id", "string", "Only these system IDs (repeat the parameter).")),
	"MachinesHandler set_zone": doc("Move machines to a zone (administrators).", "Every machine named moves, or none does: a system ID that does not exist or names a locked machine refuses the whole request.",
		req("zone", "string", "The zone's name."),
		req("nodes", "string", "A system ID (repeat the parameter).")),
	"MachinesHandler is_registered": doc("Say whether a MAC address belongs to a machine.", "Needs no credentials.", req("mac_address", "string", "The MAC address.")),
	"MachinesHandler allocate": doc("Allocate a Ready machine to the caller.", "The machine found is the caller's until it is released.",
		opt("name", "string", "The machine's host name (a domain after it is ignored)."),
		opt("system_id", "string", "The machine's system ID."),
		opt("arch", "string", "An architecture such as amd64."),
		opt("cpu_count", "integer", "At least this many CPUs."),
		opt("mem", "integer", "At least this much memory, in MiB."),
		opt("tags", "string", "Tags the machine must have."),
		opt("not_tags", "string", "Tags the machine must not have."),
		opt("zone", "string", "The zone it must be in."),
		opt("not_in_zone", "string", "Zones it must not be in."),
		opt("pool", "string", "The pool it must be in."),
		opt("not_in_pool", "string", "Pools it must not be in."),
		opt("storage", "string", "Disks the machine must have, as MAAS and Juju write them: [label:]size[(tag,...)],... with sizes in GB; the first is the disk / is on (or with the partition tag the partition), the others unused disks or partitions. constraints_by_type's storage maps each label to the block device ids (\"partition:ID\" for partitions) matched."),
		opt("interfaces", "string", "Interfaces the machine must have, as MAAS writes them: label:key=value[,key=value];label2:... with keys id, fabric, fabric_class, ip, mode, name, hostname, subnet, subnet_cidr, space, type, vlan, vid, tag, link_speed and their not_ forms. constraints_by_type's interfaces maps each label to the interface ids matched."),
		opt("subnets", "string", "Subnet specifiers (cidr:, ip:, space:, vlan:, vid:, fabric:, id:, name:, or an id, CIDR or name): the machine must be linked to every subnet they name."),
		opt("not_subnets", "string", "Subnet specifiers: the machine must be linked to none of them."),
		opt("vlans", "string", "VLAN specifiers: an interface must be on one of them."),
		opt("not_vlans", "string", "VLAN specifiers: no interface may be on one of them."),
		opt("fabrics", "string", "Fabric names: an interface must be on one of them."),
		opt("not_fabrics", "string", "Fabric names: no interface may be on one of them."),
		opt("fabric_classes", "string", "Fabric classes: an interface must be on a fabric of one of them."),
		opt("not_fabric_classes", "string", "Fabric classes: no interface may be on a fabric of one of them."),
		opt("spaces", "string", "Space names: an interface must be on a VLAN of one of them."),
		opt("not_spaces", "string", "Space names: no interface may be on a VLAN of one of them."),
		opt("dry_run", "boolean", "Only say which machine would be allocated."),
		opt("comment", "string", "Recorded on the machine's timeline.")),
	"MachinesHandler release":          doc("Release several machines.", "", req("machines", "string", "The system IDs (repeat the parameter)."), opt("comment", "string", "Recorded on each machine's timeline.")),
	"MachinesHandler power_parameters": doc("Read the power parameters of many machines, secrets included (administrators).", "", opt("id", "string", "Only these system IDs (repeat the parameter); all machines when not given.")),

	"MachineHandler":      "One machine.",
	"MachineHandler read": doc("Read a machine."),
	"MachineHandler update": doc("Change a machine.", "Owners may change hostname, domain and description of their machines; everything else is for administrators. A change of BMC drops the stored credentials unless they are given again or keep_credentials is true.",
		opt("hostname", "string", "The host name."),
		opt("domain", "string", "The DNS domain."),
		opt("description", "string", "Free text."),
		opt("architecture", "string", "Such as amd64/generic."),
		opt("cpu_count", "integer", "The number of CPUs."),
		opt("memory", "integer", "Memory in MiB."),
		opt("zone", "string", "The zone's name."),
		opt("pool", "string", "The resource pool's name."),
		opt("power_type", "string", "ipmi, redfish, webhook or manual."),
		opt("power_parameters", "string", "A JSON object, or give each as power_parameters_NAME."),
		opt("keep_credentials", "boolean", "Keep the stored BMC user and password when the BMC moves."),
		opt("drift_policy", "string", "enforce or warn: what Anvil does when the machine's power differs from what it expects.")),
	"MachineHandler delete":                           doc("Delete a machine (administrators)."),
	"MachineHandler query_power_state":                doc("Ask the machine's BMC for its power state.", "The query goes through the machine's power queue; a power type that cannot be queried answers unknown."),
	"MachineHandler power_parameters":                 doc("Read the machine's power parameters, secrets included (administrators)."),
	"MachineHandler details":                          doc("Read what commissioning found on the machine.", detailsDoc),
	"MachineHandler get_token":                        doc("Read which metadata token the machine holds (administrators).", "Answers token_key and consumer_key of the token the machine's environment uses now, issued_for (the status it is valid in) and created; null when the machine has none. token_secret is always null: Anvil keeps only a hash of it, so a token is never read back."),
	"MachineHandler restore_networking_configuration": doc("Restore the machine's networking configuration (administrators).", "Administrators; only in Ready or Failed testing, and not on a locked machine. Anvil has no editable network configuration yet (a machine's interfaces are those enlistment and commissioning found), so nothing changes; the machine is answered."),
	"MachineHandler restore_storage_configuration":    doc("Restore the machine's storage configuration (administrators).", "Administrators; only in Ready or Failed testing, and not on a locked machine. The default_storage_layout is laid out afresh over the disks commissioning found (disks keep their ids)."),
	"MachineHandler restore_default_configuration":    doc("Restore the machine's default networking and storage configuration (administrators).", "Administrators; only in Ready or Failed testing, and not on a locked machine. The storage as restore_storage_configuration; the network configuration has nothing to reset in Anvil yet."),
	"MachineHandler power_queue":                      doc("Read the machine's power queue: the command running and those waiting."),
	"MachineHandler commission":                       doc("Commission the machine: boot it into the ephemeral environment and take its inventory.", "", comment),
	"MachineHandler abort":                            doc("Abort the machine's current operation.", "", comment),
	"MachineHandler deploy": doc("Deploy an image to the machine the caller allocated.", "",
		opt("osystem", "string", "The operating system; custom for uploaded images."),
		opt("distro_series", "string", "The image's name, such as the NAME of custom/NAME."),
		opt("user_data", "string", "Base64-encoded cloud-init user data."),
		opt("hostname", "string", "A new host name for the machine."),
		opt("ephemeral_deploy", "boolean", "Run a root filesystem tarball from memory; the disks are not written, and each boot deploys it again."),
		comment),
	"MachineHandler release": doc("Release the machine, erasing its disks first when asked.", "",
		opt("erase", "boolean", "Erase the disks before the machine is Ready again."),
		opt("quick_erase", "boolean", "With erase: wipe only the first and last 2 MiB of each disk."),
		opt("secure_erase", "boolean", "With erase: use the disks' own secure erase."),
		comment),
	"MachineHandler mark_broken":             doc("Mark the machine broken.", "", opt("error_description", "string", "Why; recorded on the timeline."), comment),
	"MachineHandler mark_fixed":              doc("Mark a broken machine fixed.", "", comment),
	"MachineHandler rescue_mode":             doc("Boot the machine into the ephemeral environment for rescue.", "Administrators. The environment runs an SSH server on port 22 for the owner's SSH keys (public keys only), with the disks under /dev; its host key's fingerprint is on the timeline.", comment),
	"MachineHandler exit_rescue_mode":        doc("Leave rescue mode.", "Administrators. A deployed machine boots its disk again; any other is powered off and returns to its previous status.", comment),
	"MachineHandler test":                    doc("Test the machine's hardware in the ephemeral environment.", "", comment),
	"MachineHandler power_on":                doc("Power the machine on through its BMC.", "A running machine is never cycled.", comment),
	"MachineHandler power_off":               doc("Power the machine off through its BMC.", "", comment),
	"MachineHandler lock":                    doc("Lock a deployed or deploying machine against changes.", "Owners and administrators. A locked machine refuses every change people ask for (update, delete, deploy, release, commission, test, abort, rescue mode, mark broken or fixed, power on or off, workload annotations, override failed testing) with 403 until it is unlocked; Anvil's own steps (a deployment finishing, a timeout, the power drift policy) still run. The machine's timeline records who locked it and why.", comment),
	"MachineHandler unlock":                  doc("Unlock a locked machine.", "Owners and administrators.", comment),
	"MachineHandler override_failed_testing": doc("Put a machine whose tests failed back in use (administrators).", "A Failed testing machine goes to Deployed when it still carries its deployment, else to Ready; any other status is refused.", comment),
	"MachineHandler set_workload_annotations": doc("Set key=value workload annotations (the machine's owner only).", "Every parameter is a key and its value; an empty value removes the key, and keys not given stay. They are removed when the machine is released. Shown as workload_annotations and owner_data.",
		req("key", "string", "Any key=value pair (at most 256 keys per machine, keys of at most 255 bytes, values of at most 16 KiB).")),
	"MachineHandler set_owner_data": doc("Set key=value owner data (the older name of set_workload_annotations).", "",
		req("key", "string", "Any key=value pair; an empty value removes the key.")),

	"ZonesHandler":        "Physical zones: where machines are (a rack, a room).",
	"ZonesHandler read":   doc("List the zones."),
	"ZonesHandler create": doc("Create a zone (administrators).", "", req("name", "string", "Letters, digits and @.+-_."), opt("description", "string", "Free text.")),
	"ZoneHandler":         "One zone.",
	"ZoneHandler read":    doc("Read a zone."),
	"ZoneHandler update":  doc("Change a zone (administrators).", "", opt("name", "string", "A new name."), opt("description", "string", "Free text.")),
	"ZoneHandler delete":  doc("Delete a zone that holds no machines (administrators)."),

	"ResourcePoolsHandler":        "Resource pools: groups of machines allocated together.",
	"ResourcePoolsHandler read":   doc("List the resource pools."),
	"ResourcePoolsHandler create": doc("Create a resource pool (administrators).", "", req("name", "string", "Letters, digits and @.+-_."), opt("description", "string", "Free text."), driftPolicy),
	"ResourcePoolHandler":         "One resource pool, by its id or name.",
	"ResourcePoolHandler read":    doc("Read a resource pool."),
	"ResourcePoolHandler update":  doc("Change a resource pool (administrators).", "", opt("name", "string", "A new name."), opt("description", "string", "Free text."), driftPolicy),
	"ResourcePoolHandler delete":  doc("Delete a resource pool that holds no machines (administrators)."),

	"TagsHandler":      "Tags: names machines carry, to select them by.",
	"TagsHandler read": doc("List the tags."),
	"TagsHandler create": doc("Create a tag (administrators).", "A tag without a definition is manual: add machines with update_nodes. One with an XPath definition is applied to the machines whose lshw details it matches, now and whenever a machine is commissioned.",
		req("name", "string", "The tag's name."),
		opt("comment", "string", "Free text."),
		opt("kernel_opts", "string", "Kernel options for machines with the tag."),
		opt("definition", "string", "An XPath expression over lshw's XML, such as //node[@id=\"memory\"]/size[@units=\"bytes\"] > 500000000.")),
	"TagHandler":      "One tag.",
	"TagHandler read": doc("Read a tag."),
	"TagHandler update": doc("Change a tag (administrators).", "A new definition is applied to every machine at once.", opt("name", "string", "A new name."), opt("comment", "string", "Free text."),
		opt("kernel_opts", "string", "Kernel options."), opt("definition", "string", "An XPath expression over lshw's XML.")),
	"TagHandler delete":   doc("Delete a tag (administrators)."),
	"TagHandler machines": doc("List the machines with the tag that the caller may see."),
	"TagHandler update_nodes": doc("Add machines to the tag and remove others (administrators).", "",
		opt("add", "string", "System IDs to tag (repeat the parameter)."),
		opt("remove", "string", "System IDs to untag (repeat the parameter).")),

	"EventsHandler": "Events: what happened to machines, newest first.",
	"EventsHandler query": doc("Read events.", "Administrators read every event, others those of their machines. prev_uri and next_uri page through older and newer events.",
		opt("hostname", "string", "Only these machines (repeat the parameter)."),
		opt("id", "string", "Only these system IDs."),
		opt("zone", "string", "Only machines in these zones."),
		opt("level", "string", "The lowest level: DEBUG, INFO, WARNING, ERROR, CRITICAL or AUDIT."),
		opt("limit", "integer", "At most this many (1000 at most)."),
		opt("before", "integer", "Only events older than this event id."),
		opt("after", "integer", "Only events newer than this event id.")),
	"EventsHandler watch": doc("Follow events as they happen (a Server-Sent Events stream).", "Resumable with the Last-Event-ID header. Takes the filters of query.",
		opt("hostname", "string", "Only these machines."),
		opt("level", "string", "The lowest level."),
		opt("after", "integer", "Start after this event id instead of now.")),

	"AnvilRackHandler":             "Anvil's racks: what they need to answer boots, and what they saw of them (administrators; a rack's own key).",
	"AnvilRackHandler boot_stream": doc("Follow the boot data racks cache (a stream of machines, MACs and DHCP subnets)."),
	"AnvilRackHandler boot_events": doc("Record what a rack saw of boots.", "", req("events", "string", "A JSON array of boot events.")),
	"AnvilRackHandler dhcp_leases": doc("Record the DHCP leases a rack holds on subnets whose VLAN names a primary rack, replacing its last report; the other rack of the VLAN is streamed them.", "",
		req("leases", "string", "A JSON array of leases: mac, ip, subnet (CIDR), expires (RFC 3339)."), opt("hostname", "string", "The rack's host name, as on the boot stream.")),
	"AnvilRackHandler power_claim": doc("Claim, waiting up to wait seconds, a power request for a BMC in the rack's networks (204: none).", "",
		req("rack_id", "string", "The rack's id."), opt("networks", "string", "A BMC network (CIDR) the rack reaches; repeated."),
		opt("unreachable", "string", "A BMC host the rack's probe failed on; repeated."), opt("wait", "int", "Seconds to wait (0-60).")),
	"AnvilRackHandler power_renew":   doc("Renew the rack's lease on a power request.", "", req("rack_id", "string", "The rack's id."), req("id", "string", "The request.")),
	"AnvilRackHandler power_sent":    doc("Record that a power request's command may reach the BMC.", "", req("rack_id", "string", "The rack's id."), req("id", "string", "The request.")),
	"AnvilRackHandler power_release": doc("Give back an unsent power request whose BMC the rack cannot reach.", "", req("rack_id", "string", "The rack's id."), req("id", "string", "The request.")),
	"AnvilRackHandler power_result": doc("Report how a power request ended.", "", req("rack_id", "string", "The rack's id."), req("id", "string", "The request."),
		req("state", "string", "on, off, unknown or error."), opt("error", "string", "The failure."), opt("error_kind", "string", "The failure's kind."),
		req("duration", "float", "Seconds it took."), opt("resumed", "string", "The step a re-run took.")),

	"AnvilDiscoveriesHandler":      "Network cards that asked the rack for an address or a boot and belong to no machine.",
	"AnvilDiscoveriesHandler read": doc("List the discovered network cards."),

	"DomainsHandler":            "DNS domains: the zones Anvil's racks answer for. The default, maas, is domain 0.",
	"DomainsHandler read":       doc("List the domains."),
	"DomainsHandler create":     doc("Create a domain (administrators).", "", req("name", "string", "The domain's name."), opt("authoritative", "boolean", "Whether Anvil answers for it (default true)."), opt("ttl", "integer", "The TTL of its records (default: default_dns_ttl).")),
	"DomainsHandler set_serial": doc("Refused: Anvil numbers its zones itself, one more on every change.", "", req("serial", "integer", "The serial.")),
	"DomainHandler":             "One domain, by its id.",
	"DomainHandler read":        doc("Read a domain."),
	"DomainHandler update":      doc("Change a domain (administrators).", "", opt("name", "string", "A new name."), opt("authoritative", "boolean", "Whether Anvil answers for it."), opt("ttl", "integer", "The TTL of its records; empty inherits default_dns_ttl.")),
	"DomainHandler delete":      doc("Delete a domain that holds no records or machines and is not the default (administrators)."),
	"DomainHandler set_default": doc("Make this the default domain (administrators)."),
	"DNSResourcesHandler":       "DNS resources: names in domains, with addresses and records.",
	"DNSResourcesHandler read":  doc("List the DNS resources.", "", opt("domain", "string", "Only this domain (name or id)."), opt("name", "string", "Only this name."), opt("fqdn", "string", "Only this name.")),
	"DNSResourcesHandler create": doc("Create a DNS resource (administrators).", "", opt("fqdn", "string", "The name with its domain."), opt("name", "string", "The name without its domain."),
		opt("domain", "string", "The domain (name or id)."), opt("address_ttl", "integer", "The TTL of its addresses."), opt("ip_addresses", "string", "Its addresses, separated by spaces.")),
	"DNSResourceHandler":      "One DNS resource, by its id.",
	"DNSResourceHandler read": doc("Read a DNS resource."),
	"DNSResourceHandler update": doc("Change a DNS resource (administrators).", "", opt("fqdn", "string", "The name with its domain."), opt("name", "string", "The name."),
		opt("domain", "string", "The domain."), opt("address_ttl", "integer", "The TTL of its addresses."), opt("ip_addresses", "string", "Its addresses, separated by spaces.")),
	"DNSResourceHandler delete":      doc("Delete a DNS resource and its records (administrators)."),
	"DNSResourceRecordsHandler":      "DNS resource records (CNAME, MX, NS, SRV, SSHFP, TXT).",
	"DNSResourceRecordsHandler read": doc("List the records.", "", opt("domain", "string", "Only this domain."), opt("name", "string", "Only this name."), opt("rrtype", "string", "Only this type.")),
	"DNSResourceRecordsHandler create": doc("Create a record (administrators).", "", opt("fqdn", "string", "The name with its domain."), opt("name", "string", "The name without its domain."),
		opt("domain", "string", "The domain (name or id)."), req("rrtype", "string", "CNAME, MX, NS, SRV, SSHFP or TXT."), req("rrdata", "string", "The record's data, as in a zone file."), opt("ttl", "integer", "Its TTL.")),
	"DNSResourceRecordHandler":        "One record, by its id.",
	"DNSResourceRecordHandler read":   doc("Read a record."),
	"DNSResourceRecordHandler update": doc("Change a record (administrators).", "", opt("rrtype", "string", "The type."), opt("rrdata", "string", "The data."), opt("ttl", "integer", "Its TTL.")),
	"DNSResourceRecordHandler delete": doc("Delete a record; a name left with nothing goes too (administrators)."),

	"SubnetsHandler":        "Subnets, each on a VLAN, and where Anvil serves DHCP.",
	"SubnetsHandler read":   doc("List the subnets."),
	"SubnetsHandler create": doc("Create a subnet (administrators).", with("", append([]string{req("cidr", "string", "A network such as 192.0.2.0/24 or 2001:db8::/64.")}, subnetFields...))...),
	"SubnetHandler":         "One subnet, by its id.",
	"SubnetHandler read":    doc("Read a subnet."),
	"SubnetHandler update":  doc("Change a subnet (administrators).", with("", append([]string{opt("cidr", "string", "The network.")}, subnetFields...))...),
	"SubnetHandler delete":  doc("Delete a subnet with its ranges and static routes (administrators): not while addresses are assigned or reserved on it."),

	"IPRangesHandler":      "Address ranges within subnets: dynamic ones Anvil's DHCP leases from, and reserved ones it leaves alone.",
	"IPRangesHandler read": doc("List the ranges."),
	"IPRangesHandler create": doc("Create a range: a reserved one, or (administrators) a dynamic one.", "",
		req("type", "string", "dynamic or reserved."),
		req("start_ip", "string", "The first address."),
		req("end_ip", "string", "The last address."),
		opt("subnet", "string", "The subnet's id or CIDR; found from the addresses when not given."),
		opt("comment", "string", "Free text.")),
	"IPRangeHandler":      "One address range, by its id.",
	"IPRangeHandler read": doc("Read a range, with its subnet."),
	"IPRangeHandler update": doc("Change a range (its maker or administrators; dynamic ones administrators).", "",
		opt("type", "string", "dynamic or reserved."),
		opt("start_ip", "string", "The first address."),
		opt("end_ip", "string", "The last address."),
		opt("subnet", "string", "The subnet's id or CIDR."),
		opt("comment", "string", "Free text.")),
	"IPRangeHandler delete": doc("Delete a range (its maker or administrators)."),

	"BootResourcesHandler":      "Boot resources: the images machines are deployed with.",
	"BootResourcesHandler read": doc("List the boot resources.", "", opt("type", "string", "all, uploaded or synced (Anvil has no synced images).")),
	"BootResourcesHandler create": doc("Upload an image (administrators).", "Either with its bytes in content, or declaring sha256 and size and then sending the bytes in chunks with PUT to the file's upload_uri. An image is served only once its size and checksum match.",
		req("name", "string", "custom/NAME."),
		opt("architecture", "string", "Such as amd64/generic."),
		opt("filetype", "string", "tgz, tbz, txz, ddraw, ddgz, ddxz and the other names MAAS takes."),
		opt("title", "string", "A title to show."),
		opt("base_image", "string", "The operating system the image is based on, such as ubuntu/noble."),
		opt("sha256", "string", "The image's SHA-256, when content is sent later."),
		opt("size", "integer", "The image's size in bytes, when content is sent later."),
		opt("content", "file", "The image's bytes."),
		deployedAtParam),
	"BootResourcesHandler is_importing": doc("Say whether images are being imported (never: Anvil imports nothing)."),
	"BootResourceHandler":               "One boot resource, by its id.",
	"BootResourceHandler read":          doc("Read a boot resource with its files."),
	"BootResourceHandler update":        doc("Change what makes a deployment of the image DEPLOYED (administrators).", deployedAtParam),
	"BootResourceHandler delete":        doc("Delete a boot resource and the image bytes nothing else uses (administrators)."),
}

// detailsDoc says what op=details answers, for nodes and machines alike.
const detailsDoc = "A BSON document (application/bson), as MAAS's: lshw and lldp, the XML dumps as bytes (null unless uploaded: Anvil's environment reports its inventory on the machine object), and anvil_results, the raw files the inventory was read from, by name."

// deployedAtParam is the image setting that decides when a deployment
// ends.
var deployedAtParam = opt("deployed_at", "string", "os (the default): DEPLOYED when the installed OS reports that it is up through cloud-init's phone_home; local_boot: DEPLOYED at its first boot from disk, for images without cloud-init. An upload that does not give it keeps the image's setting.")

// machineFilters are the filters of machines read and nodes read.
var machineFilters = []string{
	opt("hostname", "string", "Only these host names."),
	opt("id", "string", "Only these system IDs."),
	opt("mac_address", "string", "Only machines with these MAC addresses."),
	opt("status", "string", "Only these statuses, such as ready or deployed."),
	opt("arch", "string", "Only this architecture."),
	opt("zone", "string", "Only these zones."),
	opt("pool", "string", "Only these pools."),
	opt("owner", "string", "Only machines these users own."),
	opt("tags", "string", "Only machines with all these tags."),
	opt("not_tags", "string", "Only machines without these tags."),
	opt("limit", "integer", "At most this many."),
}

var subnetFields = []string{
	opt("name", "string", "A name; the CIDR when not given."),
	opt("gateway_ip", "string", "The gateway, an address in the subnet."),
	opt("dns_servers", "string", "DNS servers handed out by DHCP (comma-separated)."),
	opt("domain", "string", "The domain handed out by DHCP."),
	opt("dhcp_on", "boolean", "Serve DHCP on this subnet (IPv4), whatever its VLAN's dhcp_on."),
	opt("lease_seconds", "integer", "The DHCP lease time (at least 60)."),
	opt("description", "string", "Free text."),
	opt("vlan", "integer", "The VLAN's id."),
	opt("fabric", "integer", "The fabric, when vlan is not given: its VLAN with vid, or its untagged VLAN."),
	opt("vid", "integer", "The VID of the VLAN on fabric (the default fabric when not given)."),
	opt("managed", "boolean", "MAAS manages the subnet's addresses (true when not given): AUTO addresses come from all of it, not only its reserved ranges."),
	opt("allow_dns", "boolean", "Let DNS resolution use the subnet."),
	opt("allow_proxy", "boolean", "Let the proxy serve the subnet."),
	opt("rdns_mode", "integer", "Reverse DNS: 0 disabled, 1 enabled, 2 enabled with RFC 2317 delegation (the default)."),
	opt("active_discovery", "boolean", "Scan the subnet for hosts."),
	opt("disabled_boot_architectures", "string", "Boot architectures not answered on the subnet (comma-separated)."),
}

var (
	comment     = opt("comment", "string", "Recorded on the machine's timeline.")
	driftPolicy = opt("drift_policy", "string", "enforce or warn: the default for the pool's machines.")
)

// doc puts a title, a body and parameter docs together as MAAS's CLI
// reads them: paragraphs apart, ":param" and ":type" lines last.
func doc(title string, rest ...string) string {
	var b strings.Builder
	b.WriteString(title)
	for i, part := range rest {
		if part == "" {
			continue
		}
		if i == 0 || !strings.HasPrefix(part, ":param") || !strings.HasPrefix(rest[i-1], ":param") {
			b.WriteString("\n")
		}
		b.WriteString("\n" + strings.TrimSuffix(part, "\n"))
	}
	return b.String()
}

func with(body string, params []string) []string { return append([]string{body}, params...) }

func param(name, typ, required, text string) string {
	return ":param " + name + ": " + required + " " + text + "\n:type " + name + ": " + typ
}

func req(name, typ, text string) string { return param(name, typ, "Required.", text) }
func opt(name, typ, text string) string { return param(name, typ, "Optional.", text) }

// addDocs adds the descriptions of resources kept beside their handlers.
func addDocs(m map[string]string) {
	for k, v := range m {
		if _, dup := docs[k]; dup {
			panic("api: two docs for " + k)
		}
		docs[k] = v
	}
}
