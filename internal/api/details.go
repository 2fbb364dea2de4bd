package api

import (
	"net/http"
	"sort"
)

// details answers op=details as MAAS does: a BSON document whose lshw and
// lldp are the XML dumps of commissioning as bytes, or null. Anvil's
// environment reports a structured inventory (on the machine object)
// instead of running lshw and lldpd, so those are null unless results of
// those names were uploaded; anvil_results holds, as bytes by name, the
// raw files it read the inventory from.
func (s *Server) details(w http.ResponseWriter, r *request) error {
	m, err := s.visibleMachine(r)
	if err != nil {
		return err
	}
	results, err := s.store.ListResults(r.Context(), m.SystemID)
	if err != nil {
		return err
	}
	doc := bsonDoc{{Key: "lshw"}, {Key: "lldp"}}
	var raw bsonDoc
	for _, res := range results {
		switch res.Name {
		case "lshw":
			doc[0].Value = res.Data
		case "lldp":
			doc[1].Value = res.Data
		default:
			raw = append(raw, bsonField{Key: res.Name, Value: res.Data})
		}
	}
	sort.Slice(raw, func(i, j int) bool { return raw[i].Key < raw[j].Key })
	return writeBSON(w, append(doc, bsonField{Key: "anvil_results", Value: raw}))
}

func writeBSON(w http.ResponseWriter, d bsonDoc) error {
	b, err := encodeBSON(d)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/bson")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}
