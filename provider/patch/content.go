package patch

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	ktypes "k8s.io/apimachinery/pkg/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/kubejson"
)

// content is a parsed patch, ready to send.
type content struct {
	patchType ktypes.PatchType
	// body is the JSON sent to the server. For an apply patch it still lacks
	// apiVersion, kind and metadata.name/namespace, which come from target.
	body []byte
	// object is the apply patch as a map (apply patches only).
	object map[string]any
	// given is the input the patch came by; a write-only one makes every
	// value in the patch secret, whatever the target's kind.
	given input
}

// input is one of the six ways to give a patch: three patch types, each
// kept in state or write-only.
type input struct {
	attr      string
	patchType ktypes.PatchType
	// writeOnly inputs are never in a plan or a state; twin is the other
	// input of the same patch type (the write-only one of a kept one, and
	// the kept one of a write-only one).
	writeOnly bool
	twin      string
}

var inputs = []input{
	{"patch", ktypes.ApplyPatchType, false, "patch_wo"},
	{"patch_wo", ktypes.ApplyPatchType, true, "patch"},
	{"merge_patch", ktypes.MergePatchType, false, "merge_patch_wo"},
	{"merge_patch_wo", ktypes.MergePatchType, true, "merge_patch"},
	{"json_patch", ktypes.JSONPatchType, false, "json_patch_wo"},
	{"json_patch_wo", ktypes.JSONPatchType, true, "json_patch"},
}

func (in input) path() path.Path { return path.Root(in.attr) }

// text is the field of m that holds the input.
func (m *model) text(in input) *types.String {
	switch in.attr {
	case "patch":
		return &m.Patch
	case "patch_wo":
		return &m.PatchWO
	case "merge_patch":
		return &m.MergePatch
	case "merge_patch_wo":
		return &m.MergePatchWO
	case "json_patch":
		return &m.JSONPatch
	case "json_patch_wo":
		return &m.JSONPatchWO
	}
	panic("patch: no model field for input " + in.attr) // a new input in inputs without its field
}

// given is the one input m sets. ok is false when none is, or more than one
// (the configuration validator reports both).
func (m model) given() (in input, ok bool) {
	n := 0
	for _, each := range inputs {
		if !m.text(each).IsNull() {
			in, n = each, n+1
		}
	}
	return in, n == 1
}

// writeOnlyEngines is a sentence the Pulumi docs replace with their own
// (bridge/sdkgen's pulumiTerms).
const writeOnlyEngines = "Needs Terraform 1.11 or OpenTofu 1.11 or later."

// withWriteOnly is m (read from a plan, where the engine leaves the
// write-only inputs null) with the write-only patch of the configuration. It
// must be nulled again before m is written to a plan or a state
// (withoutWriteOnly): the engine refuses a write-only value there.
func withWriteOnly(ctx context.Context, m model, config tfsdk.Config, diags *diag.Diagnostics) model {
	for _, in := range inputs {
		if in.writeOnly {
			diags.Append(config.GetAttribute(ctx, in.path(), m.text(in))...)
		}
	}
	return m
}

func withoutWriteOnly(m *model) {
	for _, in := range inputs {
		if in.writeOnly {
			*m.text(in) = types.StringNull()
		}
	}
}

// contentPath is the attribute that errors about the patch are bound to.
func contentPath(m model) path.Path {
	if in, ok := m.given(); ok {
		return in.path()
	}
	return path.Root("patch")
}

// contentKnown reports whether the patch text is known at plan time.
func (m model) contentKnown() bool {
	for _, in := range inputs {
		if m.text(in).IsUnknown() {
			return false
		}
	}
	return true
}

// keptEqual reports whether m and prior give the same patch by the inputs
// that are kept in state (the write-only ones are null in both).
func (m model) keptEqual(prior model) bool {
	for _, in := range inputs {
		if !in.writeOnly && !m.text(in).Equal(*prior.text(in)) {
			return false
		}
	}
	return true
}

// serverOwned are metadata fields the API server sets; a patch must not touch them.
var serverOwned = map[string]bool{
	"uid": true, "resourceVersion": true, "generation": true, "creationTimestamp": true,
	"deletionTimestamp": true, "deletionGracePeriodSeconds": true, "managedFields": true, "selfLink": true,
}

func parseContent(m model) (*content, error) {
	in, ok := m.given()
	text := m.text(in)
	if !ok || text.IsUnknown() {
		return nil, nil
	}
	if in.patchType == ktypes.JSONPatchType {
		body, err := parseJSONPatch(text.ValueString(), in)
		return &content{patchType: in.patchType, body: body, given: in}, err
	}
	obj, err := parseObject(text.ValueString(), in)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(obj)
	ct := &content{patchType: in.patchType, body: body, given: in}
	if in.patchType == ktypes.ApplyPatchType {
		ct.object = obj
	}
	return ct, err
}

// parseObject and parseJSONPatch decode with kubejson, as kubectl does, so
// every integer that fits int64 keeps its digits on the way to the server.
func parseObject(text string, in input) (map[string]any, error) {
	attr := in.attr
	var doc any
	// kubejson decodes as kubectl does (numbers keep every digit kubectl keeps),
	// and a key given twice is an error, not the last one silently winning.
	if err := kubejson.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("%s is not valid YAML or JSON: %s", attr, decodeDetail(err, in))
	}
	obj, ok := doc.(map[string]any)
	if !ok && doc != nil {
		// Valid YAML of the wrong shape: "not valid YAML" would send the user
		// looking for a syntax error that is not there.
		return nil, fmt.Errorf("%s must be an object in the shape of the target, e.g. {metadata: {labels: {team: platform}}}, not a %s%s",
			attr, yamlKind(doc), jsonPatchHint(attr, doc))
	}
	if len(obj) == 0 {
		return nil, fmt.Errorf("%s is empty: give the fields to set, e.g. {metadata: {labels: {team: platform}}}", attr)
	}
	if _, ok := obj["status"]; ok {
		return nil, fmt.Errorf("%s sets status, which the object's controller owns; patch spec or metadata instead", attr)
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		for k := range meta {
			if serverOwned[k] {
				return nil, fmt.Errorf("%s sets metadata.%s, which the API server owns", attr, k)
			}
		}
	}
	return obj, nil
}

// decodeDetail is what a decode error says. A decoder may quote the text it
// stopped at, and every value of a write-only input is secret, so for one of
// those only where it stopped is kept (the line and column).
func decodeDetail(err error, in input) string {
	if !in.writeOnly {
		return err.Error()
	}
	if at := decodePosition.FindString(err.Error()); at != "" {
		return "the decoder stopped at " + at + " (the rest of its message is not shown: it may quote the value)"
	}
	return "the decoder's message is not shown: it may quote the value"
}

var decodePosition = regexp.MustCompile(`line \d+(, column \d+|: column \d+)?`)

func yamlKind(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	default:
		return "number"
	}
}

func jsonPatchHint(attr string, doc any) string {
	if _, list := doc.([]any); list && strings.HasPrefix(attr, "merge_patch") {
		return "; for a list of RFC 6902 operations, use " + strings.Replace(attr, "merge_patch", "json_patch", 1)
	}
	return ""
}

// parseJSONPatch checks every operation has what RFC 6902 requires, so a typo
// fails at plan with the operation's index rather than at the server.
func parseJSONPatch(text string, in input) ([]byte, error) {
	attr := in.attr
	var ops []map[string]any
	if err := kubejson.Unmarshal([]byte(text), &ops); err != nil {
		return nil, fmt.Errorf("%s must be a JSON array of operations: %s", attr, decodeDetail(err, in))
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("%s has no operations", attr)
	}
	for i, op := range ops {
		name, _ := op["op"].(string)
		p, hasPath := op["path"].(string)
		_, hasValue := op["value"]
		from, hasFrom := op["from"].(string)
		switch name {
		case "add", "replace", "test":
			if !hasValue {
				return nil, fmt.Errorf("%s operation %d (%s) needs a value", attr, i, name)
			}
		case "move", "copy":
			if !hasFrom {
				return nil, fmt.Errorf("%s operation %d (%s) needs from", attr, i, name)
			}
			if err := checkPointer(from, attr, i); err != nil {
				return nil, err
			}
		case "remove":
		case "":
			return nil, fmt.Errorf("%s operation %d has no op", attr, i)
		default:
			return nil, fmt.Errorf("%s operation %d: op %q is not one of add, remove, replace, move, copy, test", attr, i, name)
		}
		if !hasPath {
			return nil, fmt.Errorf("%s operation %d (%s) needs a path", attr, i, name)
		}
		if err := checkPointer(p, attr, i); err != nil {
			return nil, err
		}
	}
	return json.Marshal(ops)
}

func checkPointer(p, attr string, i int) error {
	if p != "" && !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%s operation %d: path %q must start with / (a JSON Pointer)", attr, i, p)
	}
	parts := strings.Split(p, "/")
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	for j := range parts {
		parts[j] = unescape.Replace(parts[j])
	}
	if len(parts) > 1 && parts[1] == "status" {
		return fmt.Errorf("%s operation %d changes status, which the object's controller owns", attr, i)
	}
	if len(parts) > 2 && parts[1] == "metadata" && serverOwned[parts[2]] {
		return fmt.Errorf("%s operation %d changes metadata.%s, which the API server owns", attr, i, parts[2])
	}
	return nil
}
