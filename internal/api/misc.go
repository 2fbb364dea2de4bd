package api

import (
	"net/http"
)

// maasVersion is the MAAS release whose API Anvil speaks: clients gate
// features on version/'s version (python-libmaas, terraform-provider-maas).
const maasVersion = "3.5.0"

// capabilities are those of MAAS 3.x's list (maasserver/api/version.py)
// that Anvil really has, and Anvil's own. Of MAAS's nine only
// authenticate-api holds. Left out, because a client seeing them would
// call APIs Anvil lacks: networks-management (fabrics, VLANs, spaces:
// Anvil has subnets and ranges only), static-ipaddresses (no address
// allocation API), devices-management (no devices), ipv6-deployment-ubuntu,
// storage-deployment-ubuntu, network-deployment-ubuntu,
// bridging-interface-ubuntu and bridging-automatic-ubuntu (a deployment
// takes no storage or network configuration). Anvil's own: the event
// stream (events/?op=watch) and the serialised power queue
// (op=power_queue).
var capabilities = []string{"authenticate-api", "anvil-event-watch", "anvil-power-queue"}

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
