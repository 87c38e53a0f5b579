package yamldocs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
)

// jsonBody is a manifest as the data sources hand it out: compact JSON, read
// from the YAML exactly as kubectl reads it (kubejson, whose duplicate-key
// check Parse has made), every character beyond ASCII written as an escape.
//
// JSON, because Terraform and OpenTofu render a change to a string holding
// JSON field by field, and a change to multi-line text as a diff of its
// lines. That line diff grows with the square of the lines: for one field
// changed in an 850 KB CRD it took Terraform 50 s and 4.4 GB of memory and
// printed 15,746 lines, against 1.3 s, 99 MB and the one field for the same
// CRD as JSON (docs/adr/0011-bodies-as-json.md). JSON is also YAML, so
// yaml_body takes it as it is, and compact JSON is half the size of the YAML
// in state.
//
// Escapes, because Terraform normalizes every string to Unicode NFC: a
// character such as "e" with a combining accent, written as it is, would
// reach the cluster as a different string than kubectl sends. An escape is
// ASCII, which normalization leaves alone, and decodes to the characters the
// YAML holds.
func jsonBody(text string) (string, error) {
	raw, err := kubejson.CheckedToJSON([]byte(text))
	if err != nil {
		return "", err
	}
	var compact bytes.Buffer
	compact.Grow(len(raw))
	// JSON written by the user passes through ToJSON as written.
	if err := json.Compact(&compact, raw); err != nil {
		return "", fmt.Errorf("not valid JSON: %w", err)
	}
	return escapeNonASCII(compact.Bytes()), nil
}

// escapeNonASCII writes every rune beyond ASCII in JSON text as \uXXXX (two
// escapes, a surrogate pair, beyond the Basic Multilingual Plane). Outside
// strings JSON is ASCII, so escaping the whole text escapes only string
// content.
func escapeNonASCII(b []byte) string {
	i := bytes.IndexFunc(b, func(r rune) bool { return r >= utf8.RuneSelf })
	if i < 0 {
		return string(b)
	}
	var out bytes.Buffer
	out.Grow(len(b) + 16)
	out.Write(b[:i])
	for _, r := range string(b[i:]) {
		switch {
		case r < utf8.RuneSelf:
			out.WriteByte(byte(r))
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&out, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.String()
}

// withNamespace is body, a JSON body from jsonBody, with metadata.namespace
// set. The fields come out in sorted order; the object is the same.
func withNamespace(body, namespace string) (string, error) {
	return EditBody(body, func(obj map[string]any) error {
		meta, ok := obj["metadata"].(map[string]any)
		if !ok {
			return fmt.Errorf("metadata is not a map")
		}
		meta["namespace"] = namespace
		return nil
	})
}

// EditBody is body, a JSON body as Split writes it, changed by edit and
// written as Split writes bodies: compact, every character beyond ASCII
// escaped, 64-bit integers exact. The fields come out in sorted order.
func EditBody(body string, edit func(obj map[string]any) error) (string, error) {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber() // keep 64-bit integers exact
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return "", err
	}
	if err := edit(obj); err != nil {
		return "", err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // as json.Compact left it: "<" stays "<"
	if err := enc.Encode(obj); err != nil {
		return "", err
	}
	return escapeNonASCII(bytes.TrimSuffix(out.Bytes(), []byte("\n"))), nil
}

// InBody is s as a body written by jsonBody holds it inside a JSON string:
// quotes, backslashes and control characters escaped, everything beyond ASCII
// as \uXXXX. A caller that must find a value in a body (a secret, to keep
// the body out of plain output) searches for this.
func InBody(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	quoted := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return escapeNonASCII(quoted[1 : len(quoted)-1])
}
