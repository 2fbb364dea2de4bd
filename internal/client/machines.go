package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// machinePath is the resource of one machine. IDs are escaped because the
// CLI passes through whatever the user typed, hostnames included.
func machinePath(id string) string { return "machines/" + url.PathEscape(id) + "/" }

// opQuery returns the query string of an op= request.
func opQuery(op string) url.Values { return url.Values{"op": {op}} }

// ListMachines returns the machines matching filter (MAAS's read filters:
// hostname, status, zone, pool, mac_address, ... each may repeat).
func (c *Client) ListMachines(ctx context.Context, filter url.Values) ([]Machine, error) {
	body, err := c.Do(ctx, http.MethodGet, "machines/", filter, nil)
	if err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	return decodeMachines(body, "list machines")
}

// decodeMachines decodes a list of machines, each keeping its JSON.
func decodeMachines(body []byte, what string) ([]Machine, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, fmt.Errorf("%s: decoding answer: %w", what, err)
	}
	ms := make([]Machine, len(raws))
	for i, r := range raws {
		var err error
		if ms[i], err = decodeMachine(r); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return ms, nil
}

// GetMachine returns one machine by system_id.
func (c *Client) GetMachine(ctx context.Context, id string) (Machine, error) {
	body, err := c.Do(ctx, http.MethodGet, machinePath(id), nil, nil)
	if err != nil {
		return Machine{}, fmt.Errorf("get machine %s: %w", id, err)
	}
	return decodeMachine(body)
}

// CreateMachine enlists a machine. form holds MAAS's create fields:
// architecture, mac_addresses (repeated), hostname, power_type,
// power_parameters_<key>, zone, pool, description, ...
func (c *Client) CreateMachine(ctx context.Context, form url.Values) (Machine, error) {
	body, err := c.Do(ctx, http.MethodPost, "machines/", nil, nonNil(form))
	if err != nil {
		return Machine{}, fmt.Errorf("create machine: %w", err)
	}
	return decodeMachine(body)
}

// DeleteMachine removes a machine.
func (c *Client) DeleteMachine(ctx context.Context, id string) error {
	if _, err := c.Do(ctx, http.MethodDelete, machinePath(id), nil, nil); err != nil {
		return fmt.Errorf("delete machine %s: %w", id, err)
	}
	return nil
}

// MachineOp runs an action on a machine — POST machines/<id>/?op=<op> with
// params as the form (deploy, release, commission, abort, mark_broken,
// mark_fixed, power_on, power_off, ...) — and returns the machine as the
// server left it.
func (c *Client) MachineOp(ctx context.Context, id, op string, params url.Values) (Machine, error) {
	body, err := c.Do(ctx, http.MethodPost, machinePath(id), opQuery(op), nonNil(params))
	if err != nil {
		return Machine{}, fmt.Errorf("%s %s: %w", op, id, err)
	}
	return decodeMachine(body)
}

// AllocateMachine claims a Ready machine for the caller, which MAAS requires
// before deploy. Allocation is an op on the collection, naming the machine.
func (c *Client) AllocateMachine(ctx context.Context, id string, params url.Values) (Machine, error) {
	form := url.Values{}
	for k, v := range params {
		form[k] = v
	}
	form.Set("system_id", id)
	body, err := c.Do(ctx, http.MethodPost, "machines/", opQuery("allocate"), form)
	if err != nil {
		return Machine{}, fmt.Errorf("allocate %s: %w", id, err)
	}
	return decodeMachine(body)
}

// PowerState is the answer to op=query_power_state.
type PowerState struct {
	State string          `json:"state"`
	Raw   json.RawMessage `json:"-"`
}

// QueryPowerState asks the server to check the machine's power now (GET
// machines/<id>/?op=query_power_state) and returns what it found.
func (c *Client) QueryPowerState(ctx context.Context, id string) (PowerState, error) {
	body, err := c.Do(ctx, http.MethodGet, machinePath(id), opQuery("query_power_state"), nil)
	if err != nil {
		return PowerState{}, fmt.Errorf("query power state of %s: %w", id, err)
	}
	var ps PowerState
	if err := json.Unmarshal(body, &ps); err != nil {
		return PowerState{}, fmt.Errorf("query power state of %s: decoding answer: %w", id, err)
	}
	ps.Raw = body
	return ps, nil
}

func decodeMachine(b []byte) (Machine, error) {
	var m Machine
	if err := json.Unmarshal(b, &m); err != nil {
		return Machine{}, fmt.Errorf("decoding machine: %w", err)
	}
	m.Raw = json.RawMessage(b)
	return m, nil
}

// nonNil makes sure POSTs carry a (possibly empty) form body.
func nonNil(v url.Values) url.Values {
	if v == nil {
		return url.Values{}
	}
	return v
}

// AcceptMachines takes the boot last held for each machine (one added by
// its BMC alone) as that machine's (POST machines/?op=accept), and
// returns the machines as the server left them. The server accepts none
// unless every one has a held boot.
func (c *Client) AcceptMachines(ctx context.Context, ids []string) ([]Machine, error) {
	body, err := c.Do(ctx, http.MethodPost, "machines/", opQuery("accept"), url.Values{"machines": ids})
	if err != nil {
		return nil, fmt.Errorf("accept: %w", err)
	}
	return decodeMachines(body, "accept")
}
