package api

import (
	"errors"
	"net/http"

	"github.com/anvilmetal/anvil/internal/store"
)

// nodes/ is MAAS's collection of every node type. It serves the machine
// handlers' answers under MAAS's node signatures (no op here is one
// nodes/ lacks in MAAS); one node read by its system_id may also be a
// device.

func (s *Server) nodesRoutes() []route {
	return []route{
		get("", authenticated, s.listMachines),
		get("is_registered", anonymous, s.isRegistered),
	}
}

func (s *Server) nodeRoutes() []route {
	return []route{
		get("", authenticated, s.readNode),
		del(adminOnly, s.deleteMachine),
		get("details", authenticated, s.details),
		get("power_parameters", adminOnly, s.powerParameters),
	}
}

// readNode is NodeHandler's read: the machine, or the device, of the id.
func (s *Server) readNode(w http.ResponseWriter, r *request) error {
	err := s.readMachine(w, r)
	if errors.Is(err, store.ErrNotFound) {
		if d, derr := s.visibleDevice(r); derr == nil {
			return s.writeDevice(w, r, &d)
		}
	}
	return err
}
