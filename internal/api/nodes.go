package api

// nodes/ is MAAS's collection of every node type. Anvil's only nodes are
// machines, so it serves the machine handlers' answers under MAAS's node
// signatures: no op here is one nodes/ lacks in MAAS.

func (s *Server) nodesRoutes() []route {
	return []route{
		get("", authenticated, s.listMachines),
		get("is_registered", anonymous, s.isRegistered),
	}
}

func (s *Server) nodeRoutes() []route {
	return []route{
		get("", authenticated, s.readMachine),
		del(adminOnly, s.deleteMachine),
		get("details", authenticated, s.details),
		get("power_parameters", adminOnly, s.powerParameters),
	}
}
