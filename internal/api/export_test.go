package api

// DocProblems lets the external tests check the route table against the
// docs describe/ serves.
func DocProblems(s *Server) []string { return s.docProblems() }

// HashAfterDocChange returns the description's hash, and the hash it has
// once one action's doc is changed (restored before returning).
func HashAfterDocChange(s *Server) (before, after string) {
	key := "ZonesHandler read"
	old := docs[key]
	defer func() { docs[key] = old }()
	before = s.descriptionHash()
	docs[key] = old + " Changed."
	return before, s.descriptionHash()
}
