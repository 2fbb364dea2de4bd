package api

import (
	"net/http"
)

// maasVersion is the MAAS release whose API Anvil speaks: clients gate
// features on version/'s version (python-libmaas, terraform-provider-maas).
const maasVersion = "3.5.0"

// capabilities are those of MAAS 3.x's list (maasserver/api/version.py)
// that Anvil really has, and Anvil's own: networks-management (fabrics,
// VLANs, spaces), static-ipaddresses (ipaddresses/ op=reserve),
// storage-deployment-ubuntu (partitions, RAID, LVM and bcache laid out at
// deployment), network-deployment-ubuntu (bonds, VLANs and links written
// to the deployed system's network configuration), bridging-interface-
// ubuntu (create_bridge), devices-management (devices/) and
// authenticate-api. Left out, because a client seeing them would call what
// Anvil lacks: bridging-automatic-ubuntu (deploy takes no bridge_all) and
// ipv6-deployment-ubuntu (not proven end to end). Anvil's own: the event
// stream (events/?op=watch) and the serialised power queue
// (op=power_queue).
var capabilities = []string{"networks-management", "static-ipaddresses", "storage-deployment-ubuntu",
	"network-deployment-ubuntu", "bridging-interface-ubuntu", "devices-management", "authenticate-api",
	"anvil-event-watch", "anvil-power-queue"}

func (s *Server) versionRoutes() []route {
	return []route{get("", anonymous, func(w http.ResponseWriter, r *request) error {
		// MAAS keeps subversion, empty, "for API compatibility"; Anvil
		// names itself there, which no client reads.
		writeJSONType(w, http.StatusOK, jsonUTF8, map[string]any{
			"version":      maasVersion,
			"subversion":   "anvil " + s.opts.Version,
			"capabilities": capabilities,
		})
		return nil
	})}
}
