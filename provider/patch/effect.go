package patch

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
)

// patchRefused reports the server's answer to a patch that cannot apply to the
// object as it is (422), as opposed to an answer that says nothing about the
// patch: refused credentials, a server error, a timeout.
func patchRefused(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == http.StatusUnprocessableEntity
}

// effectInPlace reports whether obj already shows the effect of a JSON Patch
// (RFC 6902) applied to it before. It replays the operations on obj, in order,
// with the library the API server uses, treating a remove whose path is gone
// and a move whose source is gone and target present as done, and skipping
// tests (guards, which a test-and-set fails once it has set). If the replay
// leaves obj exactly as it is, every operation's effect is there. An append
// ("-") or a removal of a list element that is still present changes the
// object, so it is never taken for done.
func effectInPlace(obj *unstructured.Unstructured, body []byte) bool {
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return false
	}
	var ops []map[string]json.RawMessage
	if json.Unmarshal(body, &ops) != nil || len(ops) == 0 {
		return false
	}
	cur := doc
	for _, raw := range ops {
		var op, path, from string
		_ = json.Unmarshal(raw["op"], &op)
		_ = json.Unmarshal(raw["path"], &path)
		_ = json.Unmarshal(raw["from"], &from)
		switch {
		case op == "test":
			continue
		case op == "remove" && !present(cur, path):
			continue
		case op == "move" && !present(cur, from) && present(cur, path):
			continue
		}
		one, err := json.Marshal([]map[string]json.RawMessage{raw})
		if err != nil {
			return false
		}
		p, err := jsonpatch.DecodePatch(one)
		if err != nil {
			return false
		}
		if cur, err = p.Apply(cur); err != nil {
			return false
		}
	}
	// Compared with every digit: a one-unit change beyond 2^53 is a change.
	var before, after any
	return kubejson.Unmarshal(doc, &before) == nil && kubejson.Unmarshal(cur, &after) == nil && reflect.DeepEqual(before, after)
}

// present reports whether an RFC 6901 JSON pointer resolves in doc.
func present(doc []byte, pointer string) bool {
	var cur any
	if json.Unmarshal(doc, &cur) != nil {
		return false
	}
	if pointer == "" {
		return true
	}
	if !strings.HasPrefix(pointer, "/") {
		return false
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return false
			}
			cur = v[i]
		default:
			return false
		}
	}
	return true
}
