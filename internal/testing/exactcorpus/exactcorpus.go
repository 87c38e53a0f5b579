// Package exactcorpus is the differential suite's corpus: documents
// that are hard to carry exactly (integers at and beyond 2^53 and at the int64
// limits, floats, YAML 1.1 scalars, unicode and control characters, odd keys,
// block scalars, deep nesting, quantities, int-or-string, sets, list-maps, an
// embedded resource), and the helpers that apply them with kubectl and compare
// what the API server stored, field by field, with every digit kept.
//
// Each corpus file is one namespaced object whose namespace is written
// __NS__. A line "# payload" splits it: above are apiVersion, kind and metadata
// (the header, which alone is a valid object for the kinds a patch test uses),
// below is what a patch sets. update/ holds a second version of some documents
// (an int-or-string that changes type, a Service targetPort that becomes a name).
package exactcorpus

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"golang.org/x/text/unicode/norm"
)

//go:embed crd.yaml corpus/*.yaml update/*.yaml
var files embed.FS

// Group is the API group of the corpus's custom resource kind, Exact.
const Group = "exact.k8sconnect.test"

// Doc is one corpus document with its namespace filled in.
type Doc struct {
	Key        string // the file name without .yaml: unique in the corpus
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
	Text       string // the whole document
	Header     string // apiVersion, kind, metadata
	Payload    string // the top-level fields a patch sets
}

// Patchable reports whether the header alone is a valid object, so the
// document can be the target of a patch that adds the payload.
func (d Doc) Patchable() bool {
	return d.Kind == "ConfigMap" || d.Kind == "Exact" || d.Kind == "ResourceQuota"
}

var resources = map[string]string{
	"ConfigMap": "configmaps", "ResourceQuota": "resourcequotas", "Service": "services",
	"Deployment": "deployments", "Exact": "exacts",
}

// GVR is the document's resource.
func (d Doc) GVR() schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(d.APIVersion)
	return gv.WithResource(resources[d.Kind])
}

// In returns the document moved to another namespace.
func (d Doc) In(ns string) Doc {
	r := strings.NewReplacer("namespace: "+d.Namespace+"\n", "namespace: "+ns+"\n")
	d.Text, d.Header, d.Namespace = r.Replace(d.Text), r.Replace(d.Header), ns
	return d
}

// Load reads the corpus ("corpus") or the updated documents ("update") into
// namespace ns.
func Load(t testing.TB, dir, ns string) []Doc {
	t.Helper()
	entries, err := files.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var docs []Doc
	for _, e := range entries {
		raw, err := files.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(raw), "__NS__", ns)
		header, payload, ok := strings.Cut(text, "# payload\n")
		if !ok {
			t.Fatalf("%s/%s has no # payload line", dir, e.Name())
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(header), &meta); err != nil {
			t.Fatalf("%s/%s: %v", dir, e.Name(), err)
		}
		docs = append(docs, Doc{Key: strings.TrimSuffix(e.Name(), ".yaml"), APIVersion: meta.APIVersion, Kind: meta.Kind,
			Name: meta.Metadata.Name, Namespace: ns, Text: text, Header: header, Payload: payload})
	}
	return docs
}

// Updated is the corpus after its update: the documents of update/ replace
// those of the same key.
func Updated(t testing.TB, ns string) []Doc {
	t.Helper()
	next := map[string]Doc{}
	for _, d := range Load(t, "update", ns) {
		next[d.Key] = d
	}
	docs := Load(t, "corpus", ns)
	for i, d := range docs {
		if n, ok := next[d.Key]; ok {
			docs[i] = n
		}
	}
	return docs
}

// Patchable is the subset of docs a patch test can target.
func Patchable(docs []Doc) []Doc {
	var out []Doc
	for _, d := range docs {
		if d.Patchable() {
			out = append(out, d)
		}
	}
	return out
}

// JSONPatch is an RFC 6902 patch that adds each top-level payload field, its
// value copied as JSON text from the YAML without being decoded, so it holds
// every digit the document has.
func (d Doc) JSONPatch(t testing.TB) string {
	t.Helper()
	j, err := utilyaml.ToJSON([]byte(d.Payload)) // as kubectl reads it
	if err != nil {
		t.Fatalf("%s: %v", d.Key, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(j, &fields); err != nil {
		t.Fatalf("%s: %v", d.Key, err)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ops := make([]string, len(keys))
	for i, k := range keys {
		ops[i] = fmt.Sprintf(`{"op":"add","path":"/%s","value":%s}`, k, fields[k])
	}
	return "[" + strings.Join(ops, ",") + "]"
}

// Write writes each document's text (or, with part "header" / "payload" /
// "jsonpatch", that part) to dir/<key>.yaml and returns dir.
func Write(t testing.TB, dir, part string, docs []Doc) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		s := d.Text
		switch part {
		case "header":
			s = d.Header
		case "payload":
			s = d.Payload
		case "jsonpatch":
			s = d.JSONPatch(t)
		}
		if err := os.WriteFile(filepath.Join(dir, d.Key+".yaml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Kubectl runs /usr/bin/kubectl (or kubectl on PATH) against kubeconfig and
// returns its output; it fails the test on a non-zero exit.
func Kubectl(t testing.TB, kubeconfig string, args ...string) string {
	t.Helper()
	bin := "/usr/bin/kubectl"
	if _, err := os.Stat(bin); err != nil {
		bin = "kubectl"
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// PatchTypes are k8sconnect_patch's three ways to patch, named as kubectl
// names them: "apply" (patch, Server-Side Apply), "merge" (merge_patch) and
// "json" (json_patch).
var PatchTypes = []string{"apply", "merge", "json"}

// CreateTargets creates, with kubectl, each document's header in ns: the
// objects a patch test patches.
func CreateTargets(t testing.TB, kubeconfig string, docs []Doc, ns string) {
	t.Helper()
	in := make([]Doc, len(docs))
	for i, d := range docs {
		in[i] = d.In(ns)
	}
	Kubectl(t, kubeconfig, "apply", "--server-side", "--field-manager=target-creator", "-f", Write(t, t.TempDir(), "header", in))
}

// KubectlPatch patches the targets in ns as a kubectl user would: typ "apply"
// is `kubectl apply --server-side --force-conflicts` of the whole document,
// "merge" and "json" are `kubectl patch --type merge|json` of the payload and
// of the document's JSON Patch.
func KubectlPatch(t testing.TB, kubeconfig, typ string, docs []Doc, ns string) {
	t.Helper()
	for _, d := range docs {
		d = d.In(ns)
		switch typ {
		case "apply":
			Kubectl(t, kubeconfig, "apply", "--server-side", "--force-conflicts", "--field-manager=patcher",
				"-f", Write(t, t.TempDir(), "", []Doc{d}))
		case "merge", "json":
			part := map[string]string{"merge": "payload", "json": "jsonpatch"}[typ]
			file := filepath.Join(Write(t, t.TempDir(), part, []Doc{d}), d.Key+".yaml")
			resource := d.GVR().Resource
			if g := d.GVR().Group; g != "" {
				resource += "." + g
			}
			Kubectl(t, kubeconfig, "patch", "-n", ns, resource, d.Name, "--type", typ, "--patch-file", file)
		default:
			t.Fatalf("unknown patch type %q", typ)
		}
	}
}

// SplitKey is the key yaml_split and yaml_scoped give the document.
func (d Doc) SplitKey() string {
	group := d.GVR().Group
	if group == "" {
		group = "core"
	}
	return group + "/" + d.Kind + "/" + d.Namespace + "/" + d.Name
}

// EnsureCRD applies the Exact CRD with kubectl and waits until it is served.
func EnsureCRD(t testing.TB, kubeconfig string) {
	t.Helper()
	raw, err := files.ReadFile("crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "crd.yaml")
	if err := os.WriteFile(f, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	Kubectl(t, kubeconfig, "apply", "--server-side", "--field-manager=exactcorpus", "-f", f)
	Kubectl(t, kubeconfig, "wait", "--for=condition=Established", "--timeout=60s", "crd/exacts."+Group)
	// Discovery can lag the condition by a moment.
	deadline := time.Now().Add(30 * time.Second)
	for {
		cmd := exec.Command("kubectl", "--kubeconfig", kubeconfig, "get", "exacts."+Group, "-A")
		if cmd.Run() == nil || time.Now().After(deadline) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Raw reads an object as the server sends it and decodes it with every digit
// kept: numbers are json.Number, never float64.
func Raw(t testing.TB, cfg *rest.Config, gvr schema.GroupVersionResource, ns, name string) map[string]any {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := "/api/" + gvr.Version
	if gvr.Group != "" {
		p = "/apis/" + gvr.Group + "/" + gvr.Version
	}
	p += "/namespaces/" + ns + "/" + gvr.Resource + "/" + name
	body, err := cs.CoreV1().RESTClient().Get().AbsPath(p).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET %s: %v", p, err)
	}
	return Decode(t, body)
}

// Decode decodes JSON keeping numbers as json.Number.
func Decode(t testing.TB, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return obj
}

// ignored are the parts of a stored object that legitimately differ between
// two applies of the same document: identity and bookkeeping metadata, status,
// what the server allocates and what k8sconnect records about itself.
var ignoredMetadata = []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"}

var ignoredAnnotations = []string{"k8sconnect.io/owned-by", "k8sconnect.io/create-pending", "k8sconnect.io/created-by-run",
	"deployment.kubernetes.io/revision"}

func comparableView(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	delete(out, "status")
	if md, ok := out["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for k, v := range md {
			m[k] = v
		}
		for _, k := range ignoredMetadata {
			delete(m, k)
		}
		if a, ok := m["annotations"].(map[string]any); ok {
			a2 := map[string]any{}
			for k, v := range a {
				a2[k] = v
			}
			for _, k := range ignoredAnnotations {
				delete(a2, k)
			}
			if len(a2) == 0 {
				delete(m, "annotations")
			} else {
				m["annotations"] = a2
			}
		}
		out["metadata"] = m
	}
	if out["kind"] == "Service" {
		if spec, ok := out["spec"].(map[string]any); ok {
			s := map[string]any{}
			for k, v := range spec {
				s[k] = v
			}
			delete(s, "clusterIP")
			delete(s, "clusterIPs")
			out["spec"] = s
		}
	}
	return out
}

// Diff compares two stored objects field by field, numbers by their exact
// text, and lists every difference as "path: want ≠ got".
func Diff(want, got map[string]any) []string {
	var out []string
	diff("", comparableView(want), comparableView(got), &out)
	sort.Strings(out)
	return out
}

func diff(at string, want, got any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for k := range keys {
			p := fmt.Sprintf("%s[%q]", at, k)
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !wok:
				*out = append(*out, fmt.Sprintf("%s: absent ≠ %s", p, show(gv)))
			case !gok:
				*out = append(*out, fmt.Sprintf("%s: %s ≠ absent", p, show(wv)))
			default:
				diff(p, wv, gv, out)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		for i := range w {
			diff(fmt.Sprintf("%s[%d]", at, i), w[i], g[i], out)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		*out = append(*out, fmt.Sprintf("%s: %s ≠ %s", at, show(want), show(got)))
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Field reads a value of a decoded object by keys and list indexes.
func Field(obj map[string]any, keys ...any) any {
	var v any = obj
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// NFC returns obj with every string and key in Unicode normalization form C.
// Terraform and OpenTofu hold strings as cty values, which are always NFC: a
// yaml_body with a decomposed "é" (e + U+0301) reaches any provider already
// composed, so under those engines the reference for the document that
// writes such characters literally (unicode-literal) is kubectl's object in NFC.
func NFC(v any) any {
	switch t := v.(type) {
	case string:
		return norm.NFC.String(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[norm.NFC.String(k)] = NFC(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = NFC(e)
		}
		return out
	}
	return v
}

// ApplyAs server-side applies body (JSON, sent as written, so every digit
// arrives) with force under another field manager, as a controller would.
func ApplyAs(t testing.TB, cfg *rest.Config, manager string, gvr schema.GroupVersionResource, ns, name, body string) {
	t.Helper()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	force := true
	_, err = dc.Resource(gvr).Namespace(ns).Patch(context.Background(), name, ktypes.ApplyPatchType, []byte(body),
		metav1.PatchOptions{FieldManager: manager, Force: &force})
	if err != nil {
		t.Fatalf("apply as %s: %v", manager, err)
	}
}

// KubectlFails runs kubectl like Kubectl and returns its output, failing the
// test if kubectl succeeds.
func KubectlFails(t testing.TB, kubeconfig string, args ...string) string {
	t.Helper()
	bin := "/usr/bin/kubectl"
	if _, err := os.Stat(bin); err != nil {
		bin = "kubectl"
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("kubectl %s succeeded; want it to refuse:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}
