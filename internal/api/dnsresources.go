package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/anvilmetal/anvil/internal/dnszone"
	"github.com/anvilmetal/anvil/internal/store"
)

type ipJSON struct {
	IP            string `json:"ip"`
	AllocType     int    `json:"alloc_type"`
	AllocTypeName string `json:"alloc_type_name"`
}

type dnsResourceJSON struct {
	ID              int64           `json:"id"`
	FQDN            string          `json:"fqdn"`
	AddressTTL      *int            `json:"address_ttl"`
	IPAddresses     []ipJSON        `json:"ip_addresses"`
	ResourceRecords []dnsRecordJSON `json:"resource_records"`
	ResourceURI     string          `json:"resource_uri"`
}

type dnsRecordJSON struct {
	ID          int64  `json:"id"`
	FQDN        string `json:"fqdn"`
	TTL         *int   `json:"ttl"`
	RRType      string `json:"rrtype"`
	RRData      string `json:"rrdata"`
	ResourceURI string `json:"resource_uri"`
}

func (st dnsState) renderResource(r store.DNSResource) dnsResourceJSON {
	out := dnsResourceJSON{ID: r.ID, FQDN: st.fqdn(r), AddressTTL: r.AddressTTL, IPAddresses: []ipJSON{}, ResourceRecords: []dnsRecordJSON{},
		ResourceURI: Prefix + "dnsresources/" + itoa(r.ID) + "/"}
	for _, ip := range r.IPs {
		out.IPAddresses = append(out.IPAddresses, ipJSON{IP: ip, AllocType: 4, AllocTypeName: "User reserved"})
	}
	for _, d := range st.data {
		if d.ResourceID == r.ID {
			out.ResourceRecords = append(out.ResourceRecords, st.renderRecord(d))
		}
	}
	return out
}

func (st dnsState) renderRecord(d store.DNSData) dnsRecordJSON {
	r, _ := st.resource(d.ResourceID)
	return dnsRecordJSON{ID: d.ID, FQDN: st.fqdn(r), TTL: d.TTL, RRType: d.Type, RRData: d.Data,
		ResourceURI: Prefix + "dnsresourcerecords/" + itoa(d.ID) + "/"}
}

// matches applies the read filters MAAS's DNS lists take: domain, name,
// fqdn and rrtype.
func (st dnsState) matches(r *request, res store.DNSResource, rrtype string) bool {
	if v := r.form.Get("domain"); v != "" {
		if d, ok := st.domainByRef(v); !ok || d.ID != res.DomainID {
			return false
		}
	}
	if v := r.form.Get("name"); v != "" && !strings.EqualFold(v, res.Name) {
		return false
	}
	if v := r.form.Get("fqdn"); v != "" && !strings.EqualFold(strings.TrimSuffix(v, "."), st.fqdn(res)) {
		return false
	}
	if v := r.form.Get("rrtype"); v != "" && rrtype != "" && !strings.EqualFold(v, rrtype) {
		return false
	}
	return true
}

func (s *Server) dnsResourcesRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			st, err := s.loadDNS(r.Context())
			if err != nil {
				return err
			}
			out := []dnsResourceJSON{}
			for _, res := range st.resources {
				if st.matches(r, res, "") {
					out = append(out, st.renderResource(res))
				}
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			st, err := s.loadDNS(r.Context())
			if err != nil {
				return err
			}
			name, d, err := st.nameAndDomain(r, st.defaultDomain())
			if err != nil {
				return err
			}
			res := store.DNSResource{Name: name, DomainID: d.ID}
			if err := s.applyResourceForm(r, st, &res, d); err != nil {
				return err
			}
			if _, taken := st.resourceNamed(d.ID, name); taken {
				return badField("__all__", dnszone.MsgLabelInUse)
			}
			if res, err = s.store.CreateDNSResource(r.Context(), res); err != nil {
				return dnsConflict(err, "__all__", dnszone.MsgLabelInUse)
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, st.renderResource(res))
			return nil
		}),
	}
}

// applyResourceForm validates a resource's address_ttl and ip_addresses,
// and its name against what the name already holds.
func (s *Server) applyResourceForm(r *request, st dnsState, res *store.DNSResource, d store.Domain) error {
	if ttl, ok, err := ttlParam(r, "address_ttl"); err != nil {
		return err
	} else if ok {
		res.AddressTTL = ttl
	}
	if _, ok := r.form["ip_addresses"]; ok {
		ips, err := parseIPs(r)
		if err != nil {
			return err
		}
		if len(ips) > dnszone.MaxRecordsPerName {
			return badField("ip_addresses", "A name holds at most %d addresses.", dnszone.MaxRecordsPerName)
		}
		res.IPs = ips
	}
	rrtype := ""
	if len(res.IPs) > 0 {
		rrtype = "A"
	}
	if err := dnszone.ValidResourceName(res.Name, rrtype); err != nil {
		return badField("name", "%v", err)
	}
	if len(res.IPs) == 0 {
		return nil
	}
	var held []store.DNSData
	for _, x := range st.data {
		if x.ResourceID == res.ID && res.ID != 0 {
			held = append(held, x)
		}
	}
	if err := addressesBeside(*res, held); err != nil {
		return err
	}
	if id, err := s.machineNamed(r.Context(), res.Name, d.Name); err != nil {
		return err
	} else if id != "" {
		return badField("name", "%s.%s is the name of machine %s: its addresses come from its interfaces.", res.Name, d.Name, id)
	}
	return nil
}

func (s *Server) dnsResourceRoutes() []route {
	load := func(r *request) (dnsState, store.DNSResource, error) {
		return loadOne(s, r, "DNSResource", dnsState.resource)
	}
	return []route{
		readOne(load, dnsState.renderResource),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			st, res, err := load(r)
			if err != nil {
				return err
			}
			d, _ := st.domain(res.DomainID)
			if r.form.Get("fqdn") != "" || r.form.Get("name") != "" || r.form.Get("domain") != "" {
				if r.form.Get("name") == "" && r.form.Get("fqdn") == "" {
					r.form.Set("name", res.Name)
				}
				if res.Name, d, err = st.nameAndDomain(r, d); err != nil {
					return err
				}
				res.DomainID = d.ID
			}
			if err := s.applyResourceForm(r, st, &res, d); err != nil {
				return err
			}
			if other, taken := st.resourceNamed(d.ID, res.Name); taken && other.ID != res.ID {
				return badField("__all__", dnszone.MsgLabelInUse)
			}
			if res, err = s.store.UpdateDNSResource(r.Context(), res, func(_ store.DNSResource, held []store.DNSData) error {
				return addressesBeside(res, held)
			}); err != nil {
				return dnsConflict(err, "__all__", dnszone.MsgLabelInUse)
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, st.renderResource(res))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			_, res, err := load(r)
			if err != nil {
				return err
			}
			if err := s.store.DeleteDNSResource(r.Context(), res.ID); err != nil {
				return err
			}
			s.svc.Hub.Notify()
			writeNoContent(w)
			return nil
		}),
	}
}

func (s *Server) dnsRecordsRoutes() []route {
	return []route{
		get("", authenticated, func(w http.ResponseWriter, r *request) error {
			st, err := s.loadDNS(r.Context())
			if err != nil {
				return err
			}
			out := []dnsRecordJSON{}
			for _, d := range st.data {
				res, _ := st.resource(d.ResourceID)
				if st.matches(r, res, d.Type) {
					out = append(out, st.renderRecord(d))
				}
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		}),
		post("", adminOnly, func(w http.ResponseWriter, r *request) error {
			st, err := s.loadDNS(r.Context())
			if err != nil {
				return err
			}
			name, dom, err := st.nameAndDomain(r, st.defaultDomain())
			if err != nil {
				return err
			}
			rec := store.DNSData{}
			res, exists := st.resourceNamed(dom.ID, name)
			if !exists {
				res = store.DNSResource{Name: name, DomainID: dom.ID}
			}
			if err := applyRecordForm(r, &rec, res, true); err != nil {
				return err
			}
			machine, err := s.cnameOnMachine(r, rec, res, dom)
			if err != nil {
				return err
			}
			// The check beside what the name holds runs in the store's
			// transaction: of two conflicting records sent at once, one
			// is refused.
			res, rec, err = s.store.AddDNSData(r.Context(), res, rec, func(res store.DNSResource, held []store.DNSData) error {
				return recordBeside(rec, res, held, machine)
			})
			if err != nil {
				return dnsConflict(err, "__all__", dnszone.MsgLabelInUse)
			}
			if !exists {
				st.resources = append(st.resources, res)
			}
			st.data = append(st.data, rec)
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, st.renderRecord(rec))
			return nil
		}),
	}
}

// applyRecordForm validates rrtype, rrdata, ttl and the name for the
// record's type; what the name holds is checked as the record is stored.
func applyRecordForm(r *request, rec *store.DNSData, res store.DNSResource, create bool) error {
	if v, ok := r.form["rrtype"]; ok || create {
		if strings.TrimSpace(first(v)) == "" {
			return badField("rrtype", "This field is required.")
		}
		rec.Type = strings.ToUpper(strings.TrimSpace(first(v)))
	}
	if v, ok := r.form["rrdata"]; ok || create {
		if strings.TrimSpace(first(v)) == "" {
			return badField("rrdata", "This field is required.")
		}
		rec.Data = strings.TrimSpace(first(v))
	}
	if !slices.Contains(dnszone.Types, rec.Type) {
		return badField("rrtype", "%s is not one of %s.", rec.Type, strings.Join(dnszone.Types, " "))
	}
	if _, err := dnszone.ValidRecord(rec.Type, rec.Data); err != nil {
		return badField("rrdata", "%v", err)
	}
	if ttl, ok, err := ttlParam(r, "ttl"); err != nil {
		return err
	} else if ok {
		rec.TTL = ttl
	}
	if err := dnszone.ValidResourceName(res.Name, rec.Type); err != nil {
		return badField("name", "%v", err)
	}
	// What the name holds is checked in the transaction that stores
	// the record (recordBeside).
	return nil
}

// addressesBeside refuses addresses on res beside the records it holds
// (a CNAME stands alone); the update checks again under the name's lock.
func addressesBeside(res store.DNSResource, held []store.DNSData) error {
	if len(res.IPs) == 0 {
		return nil
	}
	if err := addressBeside(held); err != nil {
		return badField("ip_addresses", "%v", err)
	}
	return nil
}

// addressBeside is dnszone's rule for an address on a name that holds the
// records held.
func addressBeside(held []store.DNSData) error {
	var types []string
	for _, x := range held {
		types = append(types, x.Type)
	}
	return dnszone.CheckAdd(dnszone.Existing{Types: types}, "A")
}

// cnameOnMachine says whether rec is a CNAME on a machine's name, which
// holds the machine's addresses.
func (s *Server) cnameOnMachine(r *request, rec store.DNSData, res store.DNSResource, dom store.Domain) (bool, error) {
	if rec.Type != "CNAME" {
		return false, nil
	}
	id, err := s.machineNamed(r.Context(), res.Name, dom.Name)
	return id != "", err
}

// recordBeside refuses rec beside what its name holds (its addresses,
// its other records): a CNAME stands alone.
func recordBeside(rec store.DNSData, res store.DNSResource, held []store.DNSData, machine bool) error {
	ex := dnszone.Existing{Addresses: len(res.IPs) > 0 || machine}
	for _, x := range held {
		if x.ID != rec.ID {
			ex.Types = append(ex.Types, x.Type)
		}
	}
	if err := dnszone.CheckAdd(ex, rec.Type); err != nil {
		return badField("__all__", "%v", err)
	}
	return nil
}

func (s *Server) dnsRecordRoutes() []route {
	load := func(r *request) (dnsState, store.DNSData, error) {
		return loadOne(s, r, "DNSData", dnsState.record)
	}
	return []route{
		readOne(load, dnsState.renderRecord),
		put(adminOnly, func(w http.ResponseWriter, r *request) error {
			st, d, err := load(r)
			if err != nil {
				return err
			}
			res, _ := st.resource(d.ResourceID)
			dom, _ := st.domain(res.DomainID)
			if err := applyRecordForm(r, &d, res, false); err != nil {
				return err
			}
			machine, err := s.cnameOnMachine(r, d, res, dom)
			if err != nil {
				return err
			}
			if d, err = s.store.UpdateDNSData(r.Context(), d, func(res store.DNSResource, held []store.DNSData) error {
				return recordBeside(d, res, held, machine)
			}); err != nil {
				return err
			}
			for i := range st.data {
				if st.data[i].ID == d.ID {
					st.data[i] = d
				}
			}
			s.svc.Hub.Notify()
			writeJSON(w, http.StatusOK, st.renderRecord(d))
			return nil
		}),
		del(adminOnly, func(w http.ResponseWriter, r *request) error {
			st, d, err := load(r)
			if err != nil {
				return err
			}
			if err := s.store.DeleteDNSData(r.Context(), d.ID); err != nil {
				return err
			}
			// As MAAS: a name left with no records and no addresses goes.
			res, _ := st.resource(d.ResourceID)
			left := len(res.IPs)
			for _, x := range st.data {
				if x.ResourceID == res.ID && x.ID != d.ID {
					left++
				}
			}
			if left == 0 {
				if err := s.store.DeleteDNSResource(r.Context(), res.ID); err != nil {
					return err
				}
			}
			s.svc.Hub.Notify()
			writeNoContent(w)
			return nil
		}),
	}
}
