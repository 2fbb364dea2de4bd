package api

import (
	"net/http"
)

// capabilities are MAAS's capability names for what Anvil really does
// (only API authentication of MAAS's list: Anvil has no VLAN, static IP,
// device, storage or network deployment model yet), and Anvil's own.
var capabilities = []string{"authenticate-api", "anvil-event-watch", "anvil-power-queue"}

func (s *Server) versionRoutes() []route {
	return []route{get("", anonymous, func(w http.ResponseWriter, r *request) error {
		// version is the MAAS API level Anvil speaks; clients gate
		// features on it. subversion names Anvil itself.
		writeJSONType(w, http.StatusOK, "application/json; charset=utf-8", map[string]any{
			"version":      "3.5.0",
			"subversion":   "anvil " + s.opts.Version,
			"capabilities": capabilities,
		})
		return nil
	})}
}
