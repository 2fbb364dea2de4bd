package client

import "encoding/json"

// The types below mirror the JSON MAAS 2.0 returns, field for field, so that
// the same client works against Anvil and MAAS. Each top-level value keeps
// the bytes it was decoded from in Raw, for output that must show the
// server's answer as-is (--json) rather than our re-encoding of it.

// Machine is one machine as GET machines/<id>/ returns it.
type Machine struct {
	SystemID      string          `json:"system_id"`
	Hostname      string          `json:"hostname"`
	FQDN          string          `json:"fqdn"`
	Domain        Ref             `json:"domain"`
	Architecture  string          `json:"architecture"`
	Status        int             `json:"status"`
	StatusName    string          `json:"status_name"`
	StatusMessage string          `json:"status_message"`
	PowerState    string          `json:"power_state"`
	PowerType     string          `json:"power_type"`
	Owner         string          `json:"owner"` // null (free) decodes as ""
	Zone          Ref             `json:"zone"`
	Pool          Ref             `json:"pool"`
	CPUCount      int             `json:"cpu_count"`
	Memory        int64           `json:"memory"`  // MiB
	Storage       float64         `json:"storage"` // MB
	TagNames      []string        `json:"tag_names"`
	Interfaces    []Interface     `json:"interface_set"`
	BootInterface *Interface      `json:"boot_interface"`
	IPAddresses   []string        `json:"ip_addresses"`
	HardwareUUID  string          `json:"hardware_uuid"`
	OSystem       string          `json:"osystem"`
	DistroSeries  string          `json:"distro_series"`
	Netboot       bool            `json:"netboot"`
	Description   string          `json:"description"`
	ResourceURI   string          `json:"resource_uri"`
	Raw           json.RawMessage `json:"-"`
}

// Ref is a named object embedded in another: domain, zone, pool.
type Ref struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Interface is a network interface in interface_set or boot_interface.
type Interface struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	MACAddress string `json:"mac_address"`
	Enabled    bool   `json:"enabled"`
	Links      []Link `json:"links"`
}

// Link is an interface's address configuration.
type Link struct {
	ID        int64   `json:"id"`
	Mode      string  `json:"mode"`
	IPAddress string  `json:"ip_address"`
	Subnet    *Subnet `json:"subnet"`
}

// Subnet is a subnet (subnets/), or the part of one a link embeds.
type Subnet struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	CIDR         string   `json:"cidr"`
	GatewayIP    *string  `json:"gateway_ip"`
	DNSServers   []string `json:"dns_servers"`
	Domain       string   `json:"domain"`
	DHCPOn       bool     `json:"dhcp_on"`
	LeaseSeconds int      `json:"lease_seconds"`

	Raw json.RawMessage `json:"-"`
}

// Event is one entry of the event log.
type Event struct {
	ID          int64  `json:"id"`
	Node        string `json:"node"` // the machine's system_id
	Hostname    string `json:"hostname"`
	Username    string `json:"username"`
	Level       string `json:"level"`
	Type        string `json:"type"`
	Description string `json:"description"`
	// Created is kept as the server's text: MAAS writes "Thu, 27 Jun. 2019
	// 08:25:31", other servers RFC 3339; callers format what they can parse.
	Created string          `json:"created"`
	Raw     json.RawMessage `json:"-"`
}

// EventPage is the answer to events/?op=query.
type EventPage struct {
	Count   int             `json:"count"`
	Events  []Event         `json:"events"`
	NextURI string          `json:"next_uri"`
	PrevURI string          `json:"prev_uri"`
	Raw     json.RawMessage `json:"-"`
}

// User is the answer to users/?op=whoami.
type User struct {
	Username    string          `json:"username"`
	Email       string          `json:"email"`
	IsSuperuser bool            `json:"is_superuser"`
	Raw         json.RawMessage `json:"-"`
}

// VersionInfo is the answer to version/.
type VersionInfo struct {
	Version      string          `json:"version"`
	Subversion   string          `json:"subversion"`
	Capabilities []string        `json:"capabilities"`
	Raw          json.RawMessage `json:"-"`
}
