package archetype

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A small JSON reader for [ImportJSON]: it keeps the order of object keys, refuses a key twice,
// keeps numbers as their text (so that 64-bit integers and floats come back exact), and knows
// the byte offset of every value, for errors that name the JSON path and the offset. Below the
// parser, the importer reads single values (objects with known keys, integers in a range,
// floats, base64) and keeps the JSON path it is at.

// jkind is the kind of a JSON value.
type jkind uint8

const (
	jNull jkind = iota + 1
	jBool
	jNumber
	jString
	jArray
	jObject
)

var jkindNames = [...]string{jNull: "null", jBool: "a bool", jNumber: "a number", jString: "a string", jArray: "an array", jObject: "an object"}

func (k jkind) String() string { return jkindNames[k] }

// jval is one JSON value. Objects hold their keys and values in kids, key then value.
type jval struct {
	kind jkind
	off  int    // byte offset of the value in the input
	s    string // string value, number text, "true" or "false"
	kids []jval // array elements; object keys (jString) and values, alternating
}

// maxJSONDepth bounds the nesting of the JSON import reads: the values of a file nest at most
// maxValueDepth levels, each of which takes at most two JSON levels, plus the envelope.
const maxJSONDepth = 2*maxValueDepth + 16

type jparser struct {
	b   []byte
	pos int
}

// parseJSON reads one JSON value, with nothing but white space after it.
func parseJSON(b []byte) (jval, error) {
	p := &jparser{b: b}
	v, err := p.value(0)
	if err != nil {
		return jval{}, err
	}
	p.space()
	if p.pos != len(p.b) {
		return jval{}, p.fail("data after the JSON value")
	}
	return v, nil
}

func (p *jparser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: malformed JSON at offset %d: %s", ErrBadJSON, p.pos, fmt.Sprintf(format, args...))
}

func (p *jparser) space() {
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jparser) value(depth int) (jval, error) {
	p.space()
	if p.pos >= len(p.b) {
		return jval{}, p.fail("input ends where a value should be")
	}
	if depth > maxJSONDepth {
		return jval{}, p.fail("values nest deeper than %d levels", maxJSONDepth)
	}
	v := jval{off: p.pos}
	switch c := p.b[p.pos]; {
	case c == '{':
		return p.object(v, depth)
	case c == '[':
		v.kind = jArray
		if p.open(']') {
			return v, nil
		}
		for {
			e, err := p.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.kids = append(v.kids, e)
			if done, err := p.next(']'); done || err != nil {
				return v, err
			}
		}
	case c == '"':
		s, err := p.str()
		v.kind, v.s = jString, s
		return v, err
	case c == '-' || c >= '0' && c <= '9':
		v.kind = jNumber
		v.s = p.number()
		if v.s == "" {
			return v, p.fail("malformed number")
		}
		return v, nil
	default:
		for _, lit := range [...]struct {
			text string
			kind jkind
		}{{"true", jBool}, {"false", jBool}, {"null", jNull}} {
			if bytes.HasPrefix(p.b[p.pos:], []byte(lit.text)) {
				p.pos += len(lit.text)
				v.kind, v.s = lit.kind, lit.text
				return v, nil
			}
		}
		return v, p.fail("unexpected %q", c)
	}
}

// open consumes an opening bracket and reports whether the closing one follows.
func (p *jparser) open(end byte) bool {
	p.pos++
	p.space()
	if p.pos < len(p.b) && p.b[p.pos] == end {
		p.pos++
		return true
	}
	return false
}

func (p *jparser) object(v jval, depth int) (jval, error) {
	v.kind = jObject
	if p.open('}') {
		return v, nil
	}
	var seen map[string]bool
	for {
		p.space()
		if p.pos >= len(p.b) || p.b[p.pos] != '"' {
			return v, p.fail("object key expected")
		}
		k := jval{kind: jString, off: p.pos}
		var err error
		if k.s, err = p.str(); err != nil {
			return v, err
		}
		if len(v.kids) >= 16 && seen == nil {
			seen = make(map[string]bool, len(v.kids))
			for i := 0; i < len(v.kids); i += 2 {
				seen[v.kids[i].s] = true
			}
		}
		dup := seen[k.s]
		if seen == nil {
			for i := 0; i < len(v.kids); i += 2 {
				dup = dup || v.kids[i].s == k.s
			}
		} else {
			seen[k.s] = true
		}
		if dup {
			p.pos = k.off
			return v, p.fail("key %q twice in one object", k.s)
		}
		p.space()
		if p.pos >= len(p.b) || p.b[p.pos] != ':' {
			return v, p.fail("':' expected after an object key")
		}
		p.pos++
		e, err := p.value(depth + 1)
		if err != nil {
			return v, err
		}
		v.kids = append(v.kids, k, e)
		if done, err := p.next('}'); done || err != nil {
			return v, err
		}
	}
}

// next reads the ',' between elements or the closing bracket, and reports whether it was that.
func (p *jparser) next(end byte) (bool, error) {
	p.space()
	if p.pos < len(p.b) {
		switch p.b[p.pos] {
		case ',':
			p.pos++
			return false, nil
		case end:
			p.pos++
			return true, nil
		}
	}
	return false, p.fail("',' or '%c' expected", end)
}

// number reads a number as JSON writes it and returns its text, "" when malformed.
func (p *jparser) number() string {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.b) && p.b[p.pos] >= '0' && p.b[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.b[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.b) && p.b[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return ""
	}
	if p.pos < len(p.b) && p.b[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return ""
		}
	}
	if p.pos < len(p.b) && (p.b[p.pos] == 'e' || p.b[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.b) && (p.b[p.pos] == '+' || p.b[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return ""
		}
	}
	return p.text(start, p.pos)
}

// text returns input bytes as a string without copying them: the input is neither changed nor
// freed while the tree is in use.
func (p *jparser) text(start, end int) string {
	if start == end {
		return ""
	}
	return unsafe.String(&p.b[start], end-start)
}

// str reads a string; the input must be UTF-8 and the escapes valid.
func (p *jparser) str() (string, error) {
	p.pos++ // the opening quote
	start := p.pos
	for p.pos < len(p.b) { // the common case: no escapes
		c := p.b[p.pos]
		if c == '"' {
			s := p.b[start:p.pos]
			if !utf8.Valid(s) {
				return "", p.fail("string is not UTF-8")
			}
			p.pos++
			return p.text(start, p.pos-1), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.pos++
	}
	out := append([]byte(nil), p.b[start:p.pos]...)
	for p.pos < len(p.b) {
		c := p.b[p.pos]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", p.fail("string is not UTF-8")
			}
			p.pos++
			return string(out), nil
		case c < 0x20:
			return "", p.fail("control character %#02x in a string", c)
		case c != '\\':
			out = append(out, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.b) {
			break
		}
		e := p.b[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("malformed \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if p.pos+1 < len(p.b) && p.b[p.pos] == '\\' && p.b[p.pos+1] == 'u' {
					p.pos += 2
					if r2, ok = p.hex4(); !ok {
						return "", p.fail("malformed \\u escape")
					}
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", p.fail("unpaired surrogate in a \\u escape")
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", p.fail("unknown escape \\%c", e)
		}
	}
	return "", p.fail("input ends inside a string")
}

func (p *jparser) hex4() (rune, bool) {
	if p.pos+4 > len(p.b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.b[p.pos:p.pos+4]), 16, 16)
	p.pos += 4
	return rune(v), err == nil
}

// field returns the value of key in an object, or nil.
func (v *jval) field(key string) *jval {
	for i := 0; i+1 < len(v.kids); i += 2 {
		if v.kids[i].s == key {
			return &v.kids[i+1]
		}
	}
	return nil
}

// appendJSONString appends s as a JSON string. s must be UTF-8.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jstep is one step of a JSON path: an object key, or an array index when key is "".
type jstep struct {
	key   string
	index int
}

// importer turns the JSON tree into the parts of a PECS file.
type importer struct {
	path   []jstep
	budget int64  // raw column bytes the input can justify
	b      []byte // msgpack of the value being written
	depth  int
	lz4    bool
	comp   compressor

	types []*fileType            // registry order
	comps map[string]*fileType   // component types by name
	res   map[string]*fileType   // resource types by name
	conc  map[string]*fileType   // concrete types by name
	index map[*fileType]uint16   // registry index
	ids   [][typeIDSize]byte     // type id per registry index
	keys  map[any]map[string]int // field index by JSON key, per struct schema node

	availableAt int   // offset of pool.available
	tableAt     []int // JSON index of each saved table
}

func (im *importer) key(k string) *importer { im.path = append(im.path, jstep{key: k}); return im }
func (im *importer) at(i int) *importer     { im.path = append(im.path, jstep{index: i}); return im }
func (im *importer) pop()                   { im.path = im.path[:len(im.path)-1] }

// where renders the JSON path: tables[2].entities[0]["game.Pos"].X.
func (im *importer) where() string {
	var b strings.Builder
	for _, s := range im.path {
		switch {
		case s.key == "":
			fmt.Fprintf(&b, "[%d]", s.index)
		case isIdent(s.key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			b.WriteString("[" + strconv.Quote(s.key) + "]")
		}
	}
	if b.Len() == 0 {
		return "the top level"
	}
	return b.String()
}

func isIdent(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// fail is the error for value v at the current path.
func (im *importer) fail(v *jval, format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d: %s", ErrBadJSON, im.where(), v.off, fmt.Sprintf(format, args...))
}

// want checks the kind of v.
func (im *importer) want(v *jval, kind jkind) error {
	if v.kind != kind {
		return im.fail(v, "%s expected, found %s", kind, v.kind)
	}
	return nil
}

// fields returns the values of an object's keys, in the order asked; a key ending in "?" may be
// missing (its value is nil). Any other key is an error.
func (im *importer) fields(v *jval, keys ...string) ([]*jval, error) {
	if err := im.want(v, jObject); err != nil {
		return nil, err
	}
	out := make([]*jval, len(keys))
	for i := 0; i+1 < len(v.kids); i += 2 {
		k := v.kids[i].s
		found := false
		for j, want := range keys {
			if strings.TrimSuffix(want, "?") == k {
				out[j], found = &v.kids[i+1], true
			}
		}
		if !found {
			return nil, im.fail(&v.kids[i], "unknown key %q (keys: %s)", k, strings.ReplaceAll(strings.Join(keys, ", "), "?", ""))
		}
	}
	for j, k := range keys {
		if out[j] == nil && !strings.HasSuffix(k, "?") {
			return nil, im.fail(v, "key %q missing", k)
		}
	}
	return out, nil
}

// str reads a string.
func (im *importer) str(v *jval) (string, error) {
	return v.s, im.want(v, jString)
}

// integer reads an integer in [lo, hi]; negative values come back as their two's complement.
func (im *importer) integer(v *jval, lo int64, hi uint64) (uint64, error) {
	if err := im.want(v, jNumber); err != nil {
		return 0, err
	}
	if strings.ContainsAny(v.s, ".eE") {
		return 0, im.fail(v, "%s is not an integer", v.s)
	}
	if strings.HasPrefix(v.s, "-") {
		n, err := strconv.ParseInt(v.s, 10, 64)
		if err != nil || n < lo {
			return 0, im.fail(v, "%s is below the least value %d", v.s, lo)
		}
		return uint64(n), nil
	}
	n, err := strconv.ParseUint(v.s, 10, 64)
	if err != nil || n > hi {
		return 0, im.fail(v, "%s is above the greatest value %d", v.s, hi)
	}
	return n, nil
}

func (im *importer) u32(v *jval) (uint32, error) {
	n, err := im.integer(v, 0, math.MaxUint32)
	return uint32(n), err
}

// pair reads [a, b] of two uint32: an entity or a pool slot.
func (im *importer) pair(v *jval) (slot, error) {
	if err := im.want(v, jArray); err != nil {
		return slot{}, err
	}
	if len(v.kids) != 2 {
		return slot{}, im.fail(v, "[id, generation] expected, found an array of %d", len(v.kids))
	}
	id, err := im.u32(&v.kids[0])
	if err != nil {
		return slot{}, err
	}
	gen, err := im.u32(&v.kids[1])
	return slot{id: id, gen: gen}, err
}

// floatBits reads a float of either width as its bits.
func (im *importer) floatBits(v *jval, single bool) (uint64, error) {
	size := 64
	if single {
		size = 32
	}
	switch v.kind {
	case jNumber:
		f, err := strconv.ParseFloat(v.s, size)
		if err != nil {
			return 0, im.fail(v, "%s does not fit in a float%d", v.s, size)
		}
		if single {
			return uint64(math.Float32bits(float32(f))), nil
		}
		return math.Float64bits(f), nil
	case jString:
		mantissa := 52
		if single {
			mantissa = 23
		}
		sign := uint64(1) << (size - 1)
		exp := sign - 1 - (uint64(1)<<mantissa - 1) // every exponent bit set
		switch v.s {
		case "NaN":
			if single {
				return nan32Bits, nil
			}
			return nan64Bits, nil
		case "+Inf":
			return exp, nil
		case "-Inf":
			return sign | exp, nil
		}
		if hex, ok := strings.CutPrefix(v.s, "NaN:0x"); ok {
			bits, err := strconv.ParseUint(hex, 16, size)
			if err == nil && bits&exp == exp && bits&^(sign|exp) != 0 {
				return bits, nil
			}
		}
		return 0, im.fail(v, "%q is not a float (a number, \"NaN\", \"+Inf\", \"-Inf\" or \"NaN:0x\" and the bits of a NaN)", v.s)
	}
	return 0, im.fail(v, "a number expected, found %s", v.kind)
}

// goString reads a Go string: a JSON string, or {"base64": ...} for bytes that are not UTF-8.
func (im *importer) goString(v *jval) ([]byte, error) {
	if v.kind == jString {
		return []byte(v.s), nil
	}
	if v.kind != jObject {
		return nil, im.fail(v, "a string expected, found %s", v.kind)
	}
	f, err := im.fields(v, "base64")
	if err != nil {
		return nil, err
	}
	return im.base64(f[0])
}

func (im *importer) base64(v *jval) ([]byte, error) {
	if err := im.want(v, jString); err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(v.s)
	if err != nil {
		return nil, im.fail(v, "not base64: %v", err)
	}
	return b, nil
}
