package dnszone

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The limits and names MAAS uses.
const (
	// DefaultTTL is MAAS's default_dns_ttl.
	DefaultTTL = 30
	// MaxTTL is the largest TTL RFC 2181 allows.
	MaxTTL = 1<<31 - 1
	// DefaultDomain is the domain that exists from the first start.
	DefaultDomain = "maas"
)

// RDNS is a subnet's rdns_mode: which reverse zones it gets.
type RDNS int

const (
	RDNSDisabled RDNS = 0 // no reverse records
	RDNSEnabled  RDNS = 1 // PTRs in the enclosing octet or nibble zone
	RDNS2317     RDNS = 2 // and, for IPv4 prefixes longer than /24, RFC 2317 delegation
)

var (
	label     = `[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?`
	srvLabel  = `_[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?`
	anyLabel  = `[_a-zA-Z0-9]([-_a-zA-Z0-9]{0,61}[_a-zA-Z0-9])?`
	domainRE  = regexp.MustCompile(`^(` + label + `\.)*` + label + `\.?$`)
	labelRE   = regexp.MustCompile(`^` + label + `$`)
	srvNameRE = regexp.MustCompile(`^` + srvLabel + `\.` + srvLabel + `(\.` + label + `)?$`)
	targetRE  = regexp.MustCompile(`^(` + anyLabel + `\.)*` + anyLabel + `\.?$`)
	badChars  = regexp.MustCompile(`[a-zA-Z0-9.-]`)
	mxRE      = regexp.MustCompile(`^([0-9]+)\s+(.+)$`)
	srvRE     = regexp.MustCompile(`^([0-9]+)\s+([0-9]+)\s+([0-9]+)\s+(.*)$`)
	sshfpRE   = regexp.MustCompile(`^([0-9]+)\s+([0-9]+)\s+([0-9a-fA-F]+)$`)
)

// Types are the record types dnsresourcerecords/ takes; addresses (A,
// AAAA) belong to dnsresources/ ip_addresses.
var Types = []string{"CNAME", "MX", "NS", "SRV", "SSHFP", "TXT"}

// The messages MAAS gives.
const (
	msgCNAME        = "Invalid CNAME: Should be '<server>'."
	msgMX           = "Invalid MX: Should be '<preference> <server>'. Range for preference is 0-65535."
	msgSRV          = "Invalid SRV: Should be '<priority> <weight> <port> <server>'. Range for priority, weight, and port are 0-65536."
	msgSSHFP        = "Invalid SSHFP: Should be '<algorithm> <fptype> <fingerprint>'."
	MsgCNAMEOther   = "CNAME records for a name cannot coexist with non-CNAME records."
	MsgMultiCNAME   = "Only one CNAME can be associated with a name."
	MsgLabelInUse   = "Labels must be unique within their zone."
	MsgAddressCNAME = "Cannot add address: CNAME present."
)

// ValidDomainName checks a domain's name as MAAS does.
func ValidDomainName(name string) error {
	if len(name) > 255 {
		return fmt.Errorf("Domain name length cannot exceed 255 characters.")
	}
	if !domainRE.MatchString(name) || len(strings.TrimSuffix(name, ".")) > 253 {
		if badChars.ReplaceAllString(name, "") != "" {
			return fmt.Errorf("Domain name contains invalid characters.")
		}
		return fmt.Errorf("Invalid domain name: %s.", name)
	}
	return nil
}

// ValidResourceName checks a DNS resource's name (the labels left of its
// domain): one label, "@" for the apex, or _service._proto[.label] for
// SRV.
func ValidResourceName(name, rrtype string) error {
	if name == "@" || name == "*" {
		return nil
	}
	if labelRE.MatchString(name) || strings.EqualFold(rrtype, "SRV") && srvNameRE.MatchString(name) {
		return nil
	}
	if strings.HasPrefix(name, "_") && srvNameRE.MatchString(name) {
		return nil // SRV owners hold their other records too (TXT)
	}
	return fmt.Errorf("Invalid dnsresource name: %s.", name)
}

// ValidTTL checks a TTL given by hand.
func ValidTTL(ttl int) error {
	if ttl < 0 {
		return fmt.Errorf("Ensure this value is greater than or equal to 0.")
	}
	if ttl > MaxTTL {
		return fmt.Errorf("Ensure this value is less than or equal to %d.", MaxTTL)
	}
	return nil
}

// ValidRecord checks one record's data for its type and returns the type
// upper-cased, as MAAS stores it.
func ValidRecord(rrtype, data string) (string, error) {
	t := strings.ToUpper(rrtype)
	switch t {
	case "CNAME":
		if !targetRE.MatchString(data) {
			return t, fmt.Errorf(msgCNAME)
		}
	case "SSHFP":
		m := sshfpRE.FindStringSubmatch(data)
		if m == nil || !fitsUint8(m[1]) || !fitsUint8(m[2]) || len(m[3])%2 != 0 {
			return t, fmt.Errorf(msgSSHFP)
		}
	case "TXT":
		if len(data) > 2048 {
			return t, fmt.Errorf("TXT data is longer than 2048 characters.")
		}
		if strings.ContainsAny(data, "\x00\n\r") {
			return t, fmt.Errorf("TXT data may not contain NUL or line breaks.")
		}
	case "MX":
		m := mxRE.FindStringSubmatch(data)
		if m == nil || !fitsUint16(m[1]) {
			return t, fmt.Errorf(msgMX)
		}
		return t, ValidDomainName(m[2])
	case "NS":
		return t, ValidDomainName(data)
	case "SRV":
		m := srvRE.FindStringSubmatch(data)
		if m == nil || !fitsUint16(m[1]) || !fitsUint16(m[2]) || !fitsUint16(m[3]) {
			return t, fmt.Errorf(msgSRV)
		}
		if m[4] != "." {
			return t, ValidDomainName(m[4])
		}
	default:
		return t, fmt.Errorf("%s is not one of %s.", t, strings.Join(Types, " "))
	}
	return t, nil
}

func fitsUint16(s string) bool { n, err := strconv.Atoi(s); return err == nil && n <= 65535 }
func fitsUint8(s string) bool  { n, err := strconv.Atoi(s); return err == nil && n <= 255 }

// Existing is what a name already holds, for CheckAdd.
type Existing struct {
	Types     []string // the record types on the name
	Addresses bool     // the name has addresses (its own or a machine's)
}

// MaxRecordsPerName bounds the records one name holds, and its
// addresses: an answer stays a size a client can take over TCP, and
// what a forged UDP query draws is small (see package dns).
const MaxRecordsPerName = 64

// MsgTooManyRecords is the refusal of a record past MaxRecordsPerName.
var MsgTooManyRecords = fmt.Sprintf("A name holds at most %d records.", MaxRecordsPerName)

// CheckAdd says whether a record of type t may join what a name holds:
// a CNAME stands alone, and a name holds at most MaxRecordsPerName.
func CheckAdd(ex Existing, t string) error {
	if len(ex.Types) >= MaxRecordsPerName {
		return errors.New(MsgTooManyRecords)
	}
	cname := false
	other := ex.Addresses
	for _, x := range ex.Types {
		if x == "CNAME" {
			cname = true
		} else {
			other = true
		}
	}
	switch {
	case t == "CNAME" && other:
		return fmt.Errorf(MsgCNAMEOther)
	case t == "CNAME" && cname:
		return fmt.Errorf(MsgMultiCNAME)
	case t != "CNAME" && cname:
		if t == "A" || t == "AAAA" {
			return fmt.Errorf(MsgAddressCNAME)
		}
		return fmt.Errorf(MsgCNAMEOther)
	}
	return nil
}
