package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// IPRange is a dynamic or reserved range of a subnet (ipranges/).
type IPRange struct {
	ID      int64  `json:"id"`
	Type    string `json:"type"`
	StartIP string `json:"start_ip"`
	EndIP   string `json:"end_ip"`
	Subnet  int64  `json:"subnet"`
	Comment string `json:"comment"`

	Raw json.RawMessage `json:"-"`
}

// ListSubnets returns every subnet.
func (c *Client) ListSubnets(ctx context.Context) ([]Subnet, error) {
	return list[Subnet](ctx, c, "subnets/", "list subnets", func(s *Subnet, raw json.RawMessage) { s.Raw = raw })
}

// CreateSubnet adds a subnet; form holds cidr, name, gateway_ip,
// dns_servers, domain, dhcp_on, lease_seconds.
func (c *Client) CreateSubnet(ctx context.Context, form url.Values) (Subnet, error) {
	return create[Subnet](ctx, c, "subnets/", form, "create subnet", func(s *Subnet, raw json.RawMessage) { s.Raw = raw })
}

// DeleteSubnet removes a subnet by id.
func (c *Client) DeleteSubnet(ctx context.Context, id int64) error {
	if _, err := c.Do(ctx, http.MethodDelete, "subnets/"+strconv.FormatInt(id, 10)+"/", nil, nil); err != nil {
		return fmt.Errorf("delete subnet %d: %w", id, err)
	}
	return nil
}

// ListIPRanges returns every range.
func (c *Client) ListIPRanges(ctx context.Context) ([]IPRange, error) {
	return list[IPRange](ctx, c, "ipranges/", "list IP ranges", func(r *IPRange, raw json.RawMessage) { r.Raw = raw })
}

// CreateIPRange adds a range; form holds type, start_ip, end_ip, subnet
// (id or CIDR) and comment.
func (c *Client) CreateIPRange(ctx context.Context, form url.Values) (IPRange, error) {
	return create[IPRange](ctx, c, "ipranges/", form, "create IP range", func(r *IPRange, raw json.RawMessage) { r.Raw = raw })
}

// DeleteIPRange removes a range by id.
func (c *Client) DeleteIPRange(ctx context.Context, id int64) error {
	if _, err := c.Do(ctx, http.MethodDelete, "ipranges/"+strconv.FormatInt(id, 10)+"/", nil, nil); err != nil {
		return fmt.Errorf("delete IP range %d: %w", id, err)
	}
	return nil
}

// list GETs a collection and decodes each element, keeping its JSON.
func list[T any](ctx context.Context, c *Client, path, what string, keep func(*T, json.RawMessage)) ([]T, error) {
	body, err := c.Do(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, fmt.Errorf("%s: decoding answer: %w", what, err)
	}
	out := make([]T, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("%s: decoding answer: %w", what, err)
		}
		keep(&out[i], raw)
	}
	return out, nil
}

// create POSTs form to a collection and decodes the new element.
func create[T any](ctx context.Context, c *Client, path string, form url.Values, what string, keep func(*T, json.RawMessage)) (T, error) {
	var v T
	body, err := c.Do(ctx, http.MethodPost, path, nil, nonNil(form))
	if err != nil {
		return v, fmt.Errorf("%s: %w", what, err)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return v, fmt.Errorf("%s: decoding answer: %w", what, err)
	}
	keep(&v, body)
	return v, nil
}

// UnmarshalJSON reads the range's subnet as MAAS gives it (an object with
// its id) or as a bare id.
func (r *IPRange) UnmarshalJSON(b []byte) error {
	type plain IPRange
	var aux struct {
		plain
		Subnet json.RawMessage `json:"subnet"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*r = IPRange(aux.plain)
	if len(aux.Subnet) == 0 || string(aux.Subnet) == "null" {
		return nil
	}
	if err := json.Unmarshal(aux.Subnet, &r.Subnet); err == nil {
		return nil
	}
	var obj struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(aux.Subnet, &obj); err != nil {
		return fmt.Errorf("ip range subnet: %w", err)
	}
	r.Subnet = obj.ID
	return nil
}
