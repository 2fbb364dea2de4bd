package settings

// Names of the settings Anvil acts on.
const (
	MAASName             = "maas_name"
	PowerPollInterval    = "power_poll_interval"
	EnlistCommissioning  = "enlist_commissioning"
	AutoIPMIUser         = "maas_auto_ipmi_user"
	DefaultOSystem       = "default_osystem"
	DefaultDistroSeries  = "default_distro_series"
	NodeTimeout          = "node_timeout"
	EraseOnRelease       = "enable_disk_erasing_on_release"
	EraseSecure          = "disk_erase_with_secure_erase"
	EraseQuick           = "disk_erase_with_quick_erase"
	NetworkDiscovery     = "network_discovery"
	SessionLength        = "session_length"
	DefaultStorageLayout = "default_storage_layout"
)

var (
	onOff          = []string{"enabled", "disabled"}
	storageLayouts = []string{"bcache", "blank", "custom", "flat", "lvm", "vmfs6", "vmfs7"}
	ipmiFlags      = []string{"opensesspriv", "authcap", "idzero", "unexpectedauth", "forcepermsg", "endianseq", "intel20", "supermicro20", "sun20", "nochecksumcheck", "integritycheckvalue", "ipmiping"}
)

// items are MAAS's configuration names with MAAS's defaults, and Anvil's
// own. Effect is empty for those kept only so that MAAS clients can read
// and set them.
var items = []Item{
	// Anvil's own.
	{Name: PowerPollInterval, Kind: Seconds, Default: 300, Min: 10, Max: 86400, Doc: "Seconds between two polls of each machine's BMC by the power monitor.",
		Effect: "the power monitor's interval (--power-poll-interval is the default)"},

	// Identity and the web pages.
	{Name: MAASName, Kind: String, Default: "anvil", Required: true, Doc: "The site's name, shown on the web pages.", Effect: "the web pages' title"},
	{Name: "theme", Kind: String, Default: "", Doc: "The web pages' colour theme (MAAS's UI)."},
	{Name: "completed_intro", Kind: Bool, Default: false, Doc: "Whether the first-run introduction was completed (MAAS's UI)."},
	{Name: "release_notifications", Kind: Bool, Default: true, Doc: "Show notifications of new releases (MAAS's UI)."},
	{Name: "enable_analytics", Kind: Bool, Default: true, Doc: "Usage analytics in MAAS's UI; Anvil sends none."},
	{Name: SessionLength, Kind: Int, Default: 43200, Min: 10, Max: 1209600, Doc: "Seconds a web login lasts (Anvil's default is 12 hours; MAAS's two weeks).", Effect: "web logins made after the change"},
	{Name: "refresh_token_duration", Kind: Int, Default: 2592000, Min: 600, Max: 5184000, Doc: "Seconds a refresh token lasts (MAAS's external authentication)."},

	// Lifecycle.
	{Name: EnlistCommissioning, Kind: Bool, Default: true, Doc: "Commission machines as soon as they enlist.", Effect: "what an enlisting machine does next (--enlist-commission is the default)"},
	{Name: AutoIPMIUser, Kind: String, Default: "maas", Doc: "The IPMI user an enlisting machine creates on its BMC, with a fresh password; empty leaves BMCs alone.",
		Effect: "enlistment's in-band BMC user (--enlist-bmc-user is the default)"},
	{Name: "maas_auto_ipmi_user_privilege_level", Kind: Choice, Default: "ADMIN", Options: []string{"USER", "OPERATOR", "ADMIN"}, Doc: "Privilege of the IPMI user enlistment creates."},
	{Name: "maas_auto_ipmi_k_g_bmc_key", Kind: String, Default: "", Secret: true, Doc: "IPMI K_g key to set on BMCs at enlistment."},
	{Name: "maas_auto_ipmi_cipher_suite_id", Kind: Choice, Default: "3", Options: []string{"17", "3", "", "8", "12"}, Doc: "IPMI cipher suite for BMCs added at enlistment."},
	{Name: "maas_auto_ipmi_workaround_flags", Kind: Choices, Default: []string{"opensesspriv"}, Options: ipmiFlags, Doc: "ipmitool workaround flags for BMCs added at enlistment."},
	{Name: NodeTimeout, Kind: Int, Default: 30, Min: 1, Max: 7 * 24 * 60, Doc: "Minutes a machine may spend in a phase without progress before it is failed (deploying twice this).",
		Effect: "phases started after the change (--status-timeout is the default)"},
	{Name: DefaultOSystem, Kind: String, Default: "ubuntu", Required: true, Doc: "The operating system deployed when a deploy names none.", Effect: "deploys that name no image"},
	{Name: DefaultDistroSeries, Kind: String, Default: "noble", Required: true, Doc: "The release deployed when a deploy names none.", Effect: "deploys that name no image"},
	{Name: "default_min_hwe_kernel", Kind: String, Default: "", Doc: "Minimum kernel for deployments."},
	{Name: "commissioning_osystem", Kind: String, Default: "ubuntu", Doc: "The OS commissioning runs (Anvil commissions in its own environment)."},
	{Name: "commissioning_distro_series", Kind: String, Default: "noble", Doc: "The release commissioning runs (Anvil commissions in its own environment)."},
	{Name: DefaultStorageLayout, Kind: Choice, Default: "flat", Options: storageLayouts, Doc: "Storage layout applied after commissioning.", Effect: "the layout a machine gets after commissioning (vmfs6, vmfs7 and custom leave it with none)"},
	{Name: "enable_kernel_crash_dump", Kind: Bool, Default: false, Doc: "Configure kernel crash dumps on deployed machines."},
	{Name: "enable_third_party_drivers", Kind: Bool, Default: true, Doc: "Install third-party drivers at deployment."},
	{Name: "kernel_opts", Kind: String, Default: nil, Doc: "Extra kernel parameters for every boot."},
	{Name: EraseOnRelease, Kind: Bool, Default: false, Doc: "Erase disks on release when the release does not say.", Effect: "releases that do not pass erase"},
	{Name: EraseSecure, Kind: Bool, Default: true, Doc: "Use the disks' secure erase when erasing on release.", Effect: "releases that erase without saying how"},
	{Name: EraseQuick, Kind: Bool, Default: false, Doc: "Erase only the start and end of each disk on release.", Effect: "releases that erase without saying how"},
	{Name: "curtin_verbose", Kind: Bool, Default: true, Doc: "Verbose installer output (MAAS's curtin)."},
	{Name: "force_v1_network_yaml", Kind: Bool, Default: false, Doc: "Send network configuration in version 1 format."},
	{Name: "hardware_sync_interval", Kind: Interval, Default: "15m", Doc: "How often deployed machines report their hardware."},
	{Name: "windows_kms_host", Kind: String, Default: nil, Doc: "Windows KMS activation host."},
	{Name: "max_node_commissioning_results", Kind: Int, Default: 10, Min: 1, Max: 1000, Doc: "Commissioning results kept per machine."},
	{Name: "max_node_testing_results", Kind: Int, Default: 10, Min: 1, Max: 1000, Doc: "Testing results kept per machine."},
	{Name: "max_node_installation_results", Kind: Int, Default: 3, Min: 1, Max: 1000, Doc: "Installation results kept per machine."},
	{Name: "max_node_release_results", Kind: Int, Default: 3, Min: 1, Max: 1000, Doc: "Release results kept per machine."},
	{Name: "boot_images_auto_import", Kind: Bool, Default: true, Doc: "Import boot images from their source automatically."},
	{Name: "boot_images_no_proxy", Kind: Bool, Default: false, Doc: "Fetch boot images without the proxy."},

	// Network.
	{Name: NetworkDiscovery, Kind: Choice, Default: "enabled", Options: onOff, Doc: "Record devices seen on the networks the racks serve.", Effect: "whether boot requests from unknown MACs are kept as discoveries"},
	{Name: "active_discovery_interval", Kind: Choice, Default: 10800, Options: []string{"0", "604800", "86400", "43200", "21600", "10800", "3600", "1800", "600"}, Doc: "Seconds between active scans of the networks (0: never)."},
	{Name: "default_boot_interface_link_type", Kind: Choice, Default: "auto", Options: []string{"auto", "dhcp", "static", "link_up"}, Doc: "How a commissioned machine's boot interface is linked to its subnet."},
	{Name: "auto_vlan_creation", Kind: Bool, Default: true, Doc: "Create VLANs seen on the racks' interfaces."},
	{Name: "subnet_ip_exhaustion_threshold_count", Kind: Int, Default: 16, Min: 0, Max: 1 << 24, Doc: "Free addresses below which a subnet is flagged."},
	{Name: "enable_http_proxy", Kind: Bool, Default: true, Doc: "Offer an HTTP proxy to machines."},
	{Name: "http_proxy", Kind: URL, Default: nil, Doc: "Upstream HTTP proxy for the proxy machines use."},
	{Name: "use_peer_proxy", Kind: Bool, Default: false, Doc: "Use http_proxy as a peer of the built-in proxy."},
	{Name: "prefer_v4_proxy", Kind: Bool, Default: false, Doc: "Prefer IPv4 for the proxy."},
	{Name: "maas_proxy_port", Kind: Port, Default: 8000, Doc: "Port of the built-in proxy."},
	{Name: "use_rack_proxy", Kind: Bool, Default: true, Doc: "Machines reach the proxy through their rack."},
	{Name: "ntp_servers", Kind: HostList, Default: "ntp.ubuntu.com", Doc: "NTP servers machines are given."},
	{Name: "ntp_external_only", Kind: Bool, Default: false, Doc: "Machines use the external NTP servers only."},
	{Name: "remote_syslog", Kind: HostPort, Default: nil, Doc: "Where machines send syslog."},
	{Name: "maas_syslog_port", Kind: Port, Default: 5247, Doc: "Port of the built-in syslog."},

	// DNS.
	{Name: "upstream_dns", Kind: IPList, Default: nil, Doc: "Resolvers Anvil's DNS forwards to."},
	{Name: "dnssec_validation", Kind: Choice, Default: "auto", Options: []string{"auto", "yes", "no"}, Doc: "DNSSEC validation of forwarded answers."},
	{Name: "default_dns_ttl", Kind: Int, Default: 30, Min: 1, Max: 2147483647, Doc: "TTL of the records Anvil serves when nothing else sets one."},
	{Name: "maas_internal_domain", Kind: String, Default: "maas-internal", Doc: "Domain for the racks' internal names."},
	{Name: "dns_trusted_acl", Kind: NetList, Default: nil, Doc: "Networks and hosts allowed to use Anvil's DNS beyond its own subnets."},
	{Name: "allow_only_trusted_transfers", Kind: Bool, Default: true, Doc: "Zone transfers only to trusted addresses."},

	// Monitoring and other integrations.
	{Name: "prometheus_enabled", Kind: Bool, Default: false, Doc: "Push metrics to a Prometheus push gateway (Anvil serves /metrics regardless)."},
	{Name: "prometheus_push_gateway", Kind: String, Default: nil, Doc: "The Prometheus push gateway."},
	{Name: "prometheus_push_interval", Kind: Int, Default: 60, Min: 1, Max: 7 * 24 * 60, Doc: "Minutes between pushes."},
	{Name: "promtail_enabled", Kind: Bool, Default: false, Doc: "Send logs to Promtail."},
	{Name: "promtail_port", Kind: Int, Default: 5238, Min: 1, Max: 65535, Doc: "Promtail's port."},
	{Name: "tls_cert_expiration_notification_enabled", Kind: Bool, Default: false, Doc: "Warn before the TLS certificate expires."},
	{Name: "tls_cert_expiration_notification_interval", Kind: Int, Default: 30, Min: 1, Max: 90, Doc: "Days before expiry to warn."},
	{Name: "vcenter_server", Kind: String, Default: "", Doc: "VMware vCenter server for VMware images."},
	{Name: "vcenter_username", Kind: String, Default: "", Doc: "VMware vCenter user."},
	{Name: "vcenter_password", Kind: String, Default: "", Secret: true, Doc: "VMware vCenter password."},
	{Name: "vcenter_datacenter", Kind: String, Default: "", Doc: "VMware vCenter datacenter."},
	{Name: "experimental_switch_provisioning", Kind: Bool, Default: false, Doc: "MAAS's experimental switch provisioning."},
}
