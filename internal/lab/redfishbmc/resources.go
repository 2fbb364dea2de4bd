package redfishbmc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/anvilmetal/anvil/internal/lab"
)

const (
	root            = "/redfish/v1"
	systemsPath     = root + "/Systems"
	sessionSvcPath  = root + "/SessionService"
	sessionsPath    = sessionSvcPath + "/Sessions"
	managerPath     = root + "/Managers/BMC"
	chassisPath     = root + "/Chassis/Chassis"
	resetActionName = "ComputerSystem.Reset"
)

type obj = map[string]any

func link(path string) obj { return obj{"@odata.id": path} }

// route serves the resource tree. Paths are matched without trailing
// slashes, which Redfish clients use both with and without.
func (s *Service) route(w http.ResponseWriter, r *http.Request, wrongPassword bool) {
	p := cleanPath(r.URL.Path)
	switch p {
	case "/redfish":
		s.only(w, r, http.MethodGet, func() { writeJSON(w, http.StatusOK, obj{"v1": root + "/"}) })
	case root:
		s.only(w, r, http.MethodGet, func() { writeJSON(w, http.StatusOK, s.serviceRoot()) })
	case systemsPath:
		s.only(w, r, http.MethodGet, func() {
			writeJSON(w, http.StatusOK, s.collection(systemsPath, "ComputerSystemCollection", s.systemIDs()))
		})
	case root + "/Managers":
		s.only(w, r, http.MethodGet, func() {
			writeJSON(w, http.StatusOK, s.collection(root+"/Managers", "ManagerCollection", []string{"BMC"}))
		})
	case managerPath:
		s.only(w, r, http.MethodGet, func() { writeJSON(w, http.StatusOK, s.manager()) })
	case root + "/Chassis":
		s.only(w, r, http.MethodGet, func() {
			writeJSON(w, http.StatusOK, s.collection(root+"/Chassis", "ChassisCollection", []string{"Chassis"}))
		})
	case chassisPath:
		s.only(w, r, http.MethodGet, func() { writeJSON(w, http.StatusOK, s.chassis()) })
	case sessionSvcPath:
		s.only(w, r, http.MethodGet, func() {
			writeJSON(w, http.StatusOK, obj{
				"@odata.id": sessionSvcPath, "@odata.type": "#SessionService.v1_1_8.SessionService",
				"Id": "SessionService", "Name": "Session Service", "ServiceEnabled": true,
				"SessionTimeout": 600, "Sessions": link(sessionsPath),
			})
		})
	case sessionsPath:
		s.sessionsCollection(w, r, wrongPassword)
	default:
		switch {
		case strings.HasPrefix(p, sessionsPath+"/"):
			s.session(w, r, strings.TrimPrefix(p, sessionsPath+"/"))
		case strings.HasPrefix(p, systemsPath+"/"):
			s.system(w, r, strings.Split(strings.TrimPrefix(p, systemsPath+"/"), "/"))
		default:
			notFound(w, r)
		}
	}
}

// only serves f for method and answers 405 for any other.
func (s *Service) only(w http.ResponseWriter, r *http.Request, method string, f func()) {
	if r.Method != method {
		methodNotAllowed(w, method)
		return
	}
	f()
}

func (s *Service) serviceRoot() obj {
	return obj{
		"@odata.id": root + "/", "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
		"Id": "RootService", "Name": "Anvil lab Redfish service", "RedfishVersion": "1.8.0",
		"UUID":    "00000000-0000-4000-8000-00000000a4f1",
		"Systems": link(systemsPath), "Managers": link(root + "/Managers"),
		"Chassis": link(root + "/Chassis"), "SessionService": link(sessionSvcPath),
		"Links": obj{"Sessions": link(sessionsPath)},
	}
}

func (s *Service) systemIDs() []string {
	ids := make([]string, 0, len(s.opts.Systems))
	for _, m := range s.opts.Systems {
		ids = append(ids, m.ID())
	}
	return ids
}

func (s *Service) collection(path, typ string, ids []string) obj {
	members := make([]obj, 0, len(ids))
	for _, id := range ids {
		members = append(members, link(path+"/"+id))
	}
	return obj{
		"@odata.id": path, "@odata.type": "#" + typ + "." + typ, "Name": typ,
		"Members": members, "Members@odata.count": len(members),
	}
}

func (s *Service) manager() obj {
	systems := make([]obj, 0, len(s.opts.Systems))
	for _, id := range s.systemIDs() {
		systems = append(systems, link(systemsPath+"/"+id))
	}
	return obj{
		"@odata.id": managerPath, "@odata.type": "#Manager.v1_10_0.Manager", "Id": "BMC",
		"Name": "Lab manager", "ManagerType": "BMC", "Status": obj{"State": "Enabled", "Health": "OK"},
		"Links": obj{"ManagerForServers": systems, "ManagerForChassis": []obj{link(chassisPath)}},
	}
}

func (s *Service) chassis() obj {
	systems := make([]obj, 0, len(s.opts.Systems))
	for _, id := range s.systemIDs() {
		systems = append(systems, link(systemsPath+"/"+id))
	}
	return obj{
		"@odata.id": chassisPath, "@odata.type": "#Chassis.v1_14_0.Chassis", "Id": "Chassis",
		"Name": "Lab chassis", "ChassisType": "Enclosure",
		"Links": obj{"ComputerSystems": systems, "ManagedBy": []obj{link(managerPath)}},
	}
}

// system serves /Systems/{id}[/...].
func (s *Service) system(w http.ResponseWriter, r *http.Request, parts []string) {
	m, ok := s.systems[parts[0]]
	if !ok {
		notFound(w, r)
		return
	}
	switch {
	case len(parts) == 1 && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.systemResource(m))
		s.record(r, m.ID(), "status")
	case len(parts) == 1 && r.Method == http.MethodPatch:
		cmd := s.patchSystem(w, r, m)
		s.record(r, m.ID(), cmd)
	case len(parts) == 1:
		methodNotAllowed(w, "GET, PATCH")
	case len(parts) == 3 && parts[1] == "Actions" && parts[2] == resetActionName:
		if r.Method != http.MethodPost {
			methodNotAllowed(w, http.MethodPost)
			return
		}
		cmd := s.reset(w, r, m)
		s.record(r, m.ID(), cmd)
	case parts[1] == "EthernetInterfaces" && r.Method == http.MethodGet && len(parts) <= 3:
		s.nics(w, r, m, parts[2:])
		s.record(r, m.ID(), "nics")
	default:
		notFound(w, r)
	}
}

func (s *Service) systemResource(m lab.Machine) obj {
	path := systemsPath + "/" + m.ID()
	power := "Off"
	if m.IsOn() {
		power = "On"
	}
	device, persistent, efi := m.BootDevice()
	target, enabled, mode := "Hdd", "Once", "Legacy"
	if device == "network" {
		target = "Pxe"
	}
	if persistent {
		enabled = "Continuous"
	}
	if efi {
		mode = "UEFI"
	}
	return obj{
		"@odata.id": path, "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
		"Id": m.ID(), "Name": m.ID(), "UUID": m.UUID(), "SystemType": "Physical",
		"PowerState": power, "Status": obj{"State": "Enabled", "Health": "OK"},
		"Boot": obj{
			"BootSourceOverrideTarget":                          target,
			"BootSourceOverrideTarget@Redfish.AllowableValues":  []string{"None", "Pxe", "Hdd"},
			"BootSourceOverrideEnabled":                         enabled,
			"BootSourceOverrideEnabled@Redfish.AllowableValues": []string{"Disabled", "Once", "Continuous"},
			"BootSourceOverrideMode":                            mode,
			"BootSourceOverrideMode@Redfish.AllowableValues":    []string{"UEFI", "Legacy"},
		},
		"Actions": obj{"#" + resetActionName: obj{
			"target":                            path + "/Actions/" + resetActionName,
			"ResetType@Redfish.AllowableValues": s.opts.ResetTypes,
		}},
		"EthernetInterfaces": link(path + "/EthernetInterfaces"),
		"Links": obj{
			"Chassis": []obj{link(chassisPath)}, "ManagedBy": []obj{link(managerPath)},
		},
	}
}

// reset carries out a ComputerSystem.Reset and returns the command for the
// log.
func (s *Service) reset(w http.ResponseWriter, r *http.Request, m lab.Machine) string {
	var body struct{ ResetType string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "the request body is not valid JSON")
		return "reset ?"
	}
	cmd := "reset " + body.ResetType
	if !slices.Contains(s.opts.ResetTypes, body.ResetType) {
		writeError(w, http.StatusBadRequest, "Base.1.8.ActionParameterValueNotInList",
			fmt.Sprintf("ResetType %q is not one of %s", body.ResetType, strings.Join(s.opts.ResetTypes, ", ")))
		return cmd
	}
	var err error
	switch body.ResetType {
	case "On", "ForceOn":
		err = m.PowerOn()
	case "ForceOff":
		err = m.PowerOff(false)
	case "GracefulShutdown":
		err = m.PowerOff(true)
	case "ForceRestart", "GracefulRestart", "PowerCycle":
		err = m.PowerCycle()
	case "PushPowerButton":
		if m.IsOn() {
			err = m.PowerOff(true)
		} else {
			err = m.PowerOn()
		}
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Base.1.8.InternalError", err.Error())
		return cmd
	}
	w.WriteHeader(http.StatusNoContent)
	return cmd
}

// patchSystem sets the boot override; other properties are refused.
func (s *Service) patchSystem(w http.ResponseWriter, r *http.Request, m lab.Machine) string {
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "the request body is not valid JSON")
		return "patch ?"
	}
	for k := range body {
		if k != "Boot" {
			writeError(w, http.StatusBadRequest, "Base.1.8.PropertyNotWritable", fmt.Sprintf("property %s is read-only here", k))
			return "patch " + k
		}
	}
	var boot struct{ BootSourceOverrideTarget, BootSourceOverrideEnabled, BootSourceOverrideMode string }
	if err := json.Unmarshal(body["Boot"], &boot); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.8.PropertyValueTypeError", "Boot must be an object")
		return "boot ?"
	}
	cmd := strings.TrimSpace(strings.Join([]string{"boot", boot.BootSourceOverrideTarget, boot.BootSourceOverrideEnabled, boot.BootSourceOverrideMode}, " "))
	device, persistent, efi := m.BootDevice()
	switch boot.BootSourceOverrideTarget {
	case "":
	case "Pxe":
		device = "network"
	case "Hdd", "None":
		device = "disk"
	default:
		return badValue(w, cmd, "BootSourceOverrideTarget", boot.BootSourceOverrideTarget)
	}
	switch boot.BootSourceOverrideEnabled {
	case "":
	case "Once":
		persistent = false
	case "Continuous":
		persistent = true
	case "Disabled":
		device, persistent = "disk", true
	default:
		return badValue(w, cmd, "BootSourceOverrideEnabled", boot.BootSourceOverrideEnabled)
	}
	switch boot.BootSourceOverrideMode {
	case "":
	case "UEFI":
		efi = true
	case "Legacy":
		efi = false
	default:
		return badValue(w, cmd, "BootSourceOverrideMode", boot.BootSourceOverrideMode)
	}
	if err := m.SetBootDevice(device, persistent, efi); err != nil {
		writeError(w, http.StatusInternalServerError, "Base.1.8.InternalError", err.Error())
		return cmd
	}
	w.WriteHeader(http.StatusNoContent)
	return cmd
}

func badValue(w http.ResponseWriter, cmd, prop, value string) string {
	writeError(w, http.StatusBadRequest, "Base.1.8.PropertyValueNotInList", fmt.Sprintf("%q is not a valid value for %s", value, prop))
	return cmd
}

// nics serves the EthernetInterfaces collection and its members, numbered
// from 1 in the machine's MAC order.
func (s *Service) nics(w http.ResponseWriter, r *http.Request, m lab.Machine, rest []string) {
	path := systemsPath + "/" + m.ID() + "/EthernetInterfaces"
	macs := m.MACs()
	if len(rest) == 0 {
		ids := make([]string, len(macs))
		for i := range macs {
			ids[i] = strconv.Itoa(i + 1)
		}
		writeJSON(w, http.StatusOK, s.collection(path, "EthernetInterfaceCollection", ids))
		return
	}
	n, err := strconv.Atoi(rest[0])
	if err != nil || n < 1 || n > len(macs) {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id": path + "/" + rest[0], "@odata.type": "#EthernetInterface.v1_6_0.EthernetInterface",
		"Id": rest[0], "Name": "NIC " + rest[0], "MACAddress": macs[n-1], "PermanentMACAddress": macs[n-1],
		"InterfaceEnabled": true, "Status": obj{"State": "Enabled", "Health": "OK"},
	})
}

// sessionsCollection lists sessions (GET) or logs in (POST).
func (s *Service) sessionsCollection(w http.ResponseWriter, r *http.Request, wrongPassword bool) {
	switch r.Method {
	case http.MethodGet:
		s.mu.Lock()
		ids := make([]string, 0, len(s.sessions))
		for id := range s.sessions {
			ids = append(ids, id)
		}
		s.mu.Unlock()
		sort.Strings(ids)
		writeJSON(w, http.StatusOK, s.collection(sessionsPath, "SessionCollection", ids))
	case http.MethodPost:
		var body struct{ UserName, Password string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeError(w, http.StatusBadRequest, "Base.1.8.MalformedJSON", "the request body is not valid JSON")
			return
		}
		if !s.credentialsOK(body.UserName, body.Password, wrongPassword) {
			writeError(w, http.StatusUnauthorized, "Base.1.8.NoValidSession", "the credentials were refused")
			return
		}
		s.mu.Lock()
		s.nextID++
		id := strconv.Itoa(s.nextID)
		tok := newToken()
		s.sessions[id] = tok
		s.mu.Unlock()
		w.Header().Set("X-Auth-Token", tok)
		w.Header().Set("Location", sessionsPath+"/"+id)
		writeJSON(w, http.StatusCreated, s.sessionResource(id, body.UserName))
	default:
		methodNotAllowed(w, "GET, POST")
	}
}

// session reads (GET) or logs out (DELETE) one session.
func (s *Service) session(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	_, ok := s.sessions[id]
	if ok && r.Method == http.MethodDelete {
		delete(s.sessions, id)
	}
	s.mu.Unlock()
	switch {
	case !ok:
		notFound(w, r)
	case r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.sessionResource(id, s.opts.User))
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		methodNotAllowed(w, "GET, DELETE")
	}
}

func (s *Service) sessionResource(id, user string) obj {
	return obj{
		"@odata.id": sessionsPath + "/" + id, "@odata.type": "#Session.v1_3_0.Session",
		"Id": id, "Name": "Session " + id, "UserName": user,
	}
}
