package api

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// MAAS answers op=details in BSON, not JSON, so that the XML dumps travel
// as bytes; gomaasclient decodes it with mgo's bson. Anvil writes only the
// few types that answer needs.

// bsonField is one element of a document: Value is nil (BSON null),
// []byte (binary, generic subtype), string, int64, bool or bsonDoc.
type bsonField struct {
	Key   string
	Value any
}

type bsonDoc []bsonField

// encodeBSON writes d as a BSON document.
func encodeBSON(d bsonDoc) ([]byte, error) {
	b := make([]byte, 4, 64)
	for _, f := range d {
		if strings.IndexByte(f.Key, 0) >= 0 {
			return nil, fmt.Errorf("bson: key %q holds a NUL", f.Key)
		}
		var err error
		if b, err = appendElement(b, f); err != nil {
			return nil, err
		}
	}
	b = append(b, 0)
	if len(b) > 1<<31-1 {
		return nil, fmt.Errorf("bson: document of %d bytes is too large", len(b))
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b, nil
}

func appendElement(b []byte, f bsonField) ([]byte, error) {
	key := func(t byte) []byte { return append(append(append(b, t), f.Key...), 0) }
	switch v := f.Value.(type) {
	case nil:
		return key(0x0A), nil
	case []byte:
		b = binary.LittleEndian.AppendUint32(key(0x05), uint32(len(v)))
		return append(append(b, 0x00), v...), nil
	case string:
		b = binary.LittleEndian.AppendUint32(key(0x02), uint32(len(v)+1))
		return append(append(b, v...), 0), nil
	case int64:
		return binary.LittleEndian.AppendUint64(key(0x12), uint64(v)), nil
	case bool:
		if v {
			return append(key(0x08), 1), nil
		}
		return append(key(0x08), 0), nil
	case bsonDoc:
		sub, err := encodeBSON(v)
		if err != nil {
			return nil, err
		}
		return append(key(0x03), sub...), nil
	}
	return nil, fmt.Errorf("bson: %s: cannot encode %T", f.Key, f.Value)
}
