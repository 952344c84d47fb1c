package idempotency

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
)

// headerFormat is the first byte of MarshalHeader's encoding. It is not
// '{' nor 'n', the first bytes of the JSON that stores wrote before it,
// which UnmarshalHeader still reads.
const headerFormat = 0x01

// MarshalHeader encodes h exactly, for a store: every name and every
// value as the bytes they are (a header value need not be UTF-8; a
// Content-Disposition filename is often Latin-1), each name's values in
// their order, names sorted so the encoding of a header is always the
// same. UnmarshalHeader reads it back. A nil or empty header encodes to
// two bytes.
//
// JSON, which stores used before, is not exact: encoding/json replaces
// every byte that is not UTF-8 with U+FFFD.
func MarshalHeader(h http.Header) []byte {
	n := 2
	for k, vs := range h {
		n += 2*binary.MaxVarintLen64 + len(k)
		for _, v := range vs {
			n += binary.MaxVarintLen64 + len(v)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, headerFormat)
	b = binary.AppendUvarint(b, uint64(len(h)))
	for _, k := range slices.Sorted(maps.Keys(h)) {
		b = appendBytes(b, k)
		b = binary.AppendUvarint(b, uint64(len(h[k])))
		for _, v := range h[k] {
			b = appendBytes(b, v)
		}
	}
	return b
}

func appendBytes(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ErrHeaderEncoding is matched (errors.Is) by UnmarshalHeader's errors:
// the stored bytes are not a header MarshalHeader wrote, nor the JSON
// stores wrote before it.
var ErrHeaderEncoding = errors.New("idempotency: stored header malformed")

// UnmarshalHeader decodes what MarshalHeader encoded. It also reads the
// JSON object (or null) that stores wrote before MarshalHeader existed,
// so that keys stored by an earlier version replay. Nil or empty data is
// a nil header. Anything else is an error matching ErrHeaderEncoding; no
// input makes it allocate more than a small multiple of len(data).
func UnmarshalHeader(data []byte) (http.Header, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if data[0] != headerFormat {
		var h http.Header
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, errors.Join(ErrHeaderEncoding, err)
		}
		return h, nil
	}
	d := decoder{b: data[1:]}
	names := d.count()
	var h http.Header
	if names > 0 {
		h = make(http.Header, names)
	}
	for range names {
		k := d.str()
		vs := make([]string, d.count())
		for i := range vs {
			vs[i] = d.str()
		}
		if _, dup := h[k]; dup && d.err == nil {
			d.err = errors.New("a name twice")
		}
		h[k] = vs
	}
	switch {
	case d.err != nil:
		return nil, errors.Join(ErrHeaderEncoding, d.err)
	case len(d.b) > 0:
		return nil, errors.Join(ErrHeaderEncoding, errors.New("bytes after the last value"))
	}
	return h, nil
}

// decoder reads MarshalHeader's encoding; after its first error every
// read returns zero.
type decoder struct {
	b   []byte
	err error
}

// uvarint reads a length or a count.
func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errors.New("a length that does not decode")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of items, each at least one byte long, so a count
// larger than the bytes left is an error before anything is allocated.
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.b)) && d.err == nil {
		d.err = errors.New("a count longer than the data")
		return 0
	}
	return int(v)
}

// str reads a length and that many bytes.
func (d *decoder) str() string {
	v := d.uvarint()
	if v > uint64(len(d.b)) && d.err == nil {
		d.err = errors.New("a string longer than the data")
	}
	if d.err != nil {
		return ""
	}
	s := string(d.b[:v])
	d.b = d.b[v:]
	return s
}
