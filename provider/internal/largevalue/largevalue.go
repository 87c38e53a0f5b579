// Package largevalue keeps a field value too large to store twice out of
// the projections k8sconnect records in state (managed_state_projection, a
// patch's managed_fields, a Helm release's objects): such a value is recorded
// by its length and SHA-256 digest instead (docs/adr/0015-large-values-by-digest.md).
//
// The value itself is already in state once, in the configuration that set it
// (a CRD's spec.versions is most of its yaml_body), so a second copy only
// doubles what every plan decodes and every apply writes. A digest judges
// drift exactly as the value did: equal values give equal digests, and any
// change to the value changes its digest.
package largevalue

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/k8sconnect/k8sconnect/provider/internal/objectpath"
)

// Threshold is the longest rendered value kept as it is, 64 KiB. Above it are
// the schemas of CRDs (prometheus-operator's spec.versions run from 30 to
// 450 KB as JSON); a Grafana dashboard in a ConfigMap (tens of KB) stays
// readable, and its changes shown field by field.
const Threshold = 64 << 10

// Of is rendered, or, when it is longer than Threshold, its stand-in:
// "(454258 bytes, sha256:<64 hex digits>)". The digest is taken of the
// value in Unicode normalization form C, as Terraform would hold the value
// itself, so a change that only re-normalizes it is not drift either.
func Of(rendered string) string {
	if len(rendered) <= Threshold {
		return rendered
	}
	value := norm.NFC.String(rendered)
	sum := sha256.Sum256([]byte(value))
	return "(" + strconv.Itoa(len(value)) + " bytes, sha256:" + hex.EncodeToString(sum[:]) + ")"
}

var standIn = regexp.MustCompile(`^\(\d+ bytes, sha256:[0-9a-f]{64}\)$`)

// Is reports whether s is a stand-in made by Of.
func Is(s string) bool {
	return len(s) < 128 && standIn.MatchString(s)
}

// Change is one difference inside a large value: the path of the field that
// differs, from the object's root, and its value on each side as a short text
// ("(none)" where the field is absent).
type Change struct {
	Path     objectpath.Path
	Was, Now string
}

// Changes lists where now differs from was, the values of one field at path,
// field by field: what a plan cannot show when the projection holds that
// field by its digest. Lists are compared element by element, in order. At
// most limit changes are returned, with the number there are in all.
func Changes(path objectpath.Path, was, now any, limit int) ([]Change, int) {
	var out []Change
	total := 0
	var walk func(p objectpath.Path, a, b any, hasA, hasB bool)
	walk = func(p objectpath.Path, a, b any, hasA, hasB bool) {
		am, aIsMap := a.(map[string]any)
		bm, bIsMap := b.(map[string]any)
		al, aIsList := a.([]any)
		bl, bIsList := b.([]any)
		switch {
		case hasA && hasB && aIsMap && bIsMap:
			keys := make([]string, 0, len(am)+len(bm))
			for k := range am {
				keys = append(keys, k)
			}
			for k := range bm {
				if _, ok := am[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				av, inA := am[k]
				bv, inB := bm[k]
				walk(append(slices.Clip(p), objectpath.Field(k)), av, bv, inA, inB)
			}
		case hasA && hasB && aIsList && bIsList:
			for i := range max(len(al), len(bl)) {
				var av, bv any
				if i < len(al) {
					av = al[i]
				}
				if i < len(bl) {
					bv = bl[i]
				}
				walk(append(slices.Clip(p), objectpath.Segment{Index: &i}), av, bv, i < len(al), i < len(bl))
			}
		default:
			was, now := shown(a, hasA), shown(b, hasB)
			if was == now {
				return
			}
			total++
			if len(out) < limit {
				out = append(out, Change{Path: slices.Clone(p), Was: was, Now: now})
			}
		}
	}
	walk(path, was, now, true, true)
	return out, total
}

// shown is a value as a change lists it: rendered, cut to 80 characters.
func shown(v any, present bool) string {
	if !present {
		return "(none)"
	}
	s := objectpath.Render(v)
	if _, isString := v.(string); isString {
		s = strconv.Quote(s)
	}
	if len(s) > 80 {
		cut := 77
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // not inside a character
		}
		s = s[:cut] + "..."
	}
	return s
}
