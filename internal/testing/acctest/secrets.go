package acctest

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SecretValue is a value that must never appear in clear, in the forms it could
// leak in: as written and base64-encoded (a Secret's data).
type SecretValue struct {
	Plain string
}

// NewSecretValue returns a unique value no other text can contain by chance.
func NewSecretValue(prefix string) SecretValue {
	return SecretValue{Plain: Name(prefix) + "-" + Name("v")[2:]}
}

// Base64 is the value as a Secret's data holds it.
func (v SecretValue) Base64() string { return base64.StdEncoding.EncodeToString([]byte(v.Plain)) }

// Forms are the texts a leak of the value would contain.
func (v SecretValue) Forms() []string { return []string{v.Plain, v.Base64()} }

// ExpectAbsent fails the test when text holds any form of any value.
func ExpectAbsent(t testing.TB, where, text string, values ...SecretValue) {
	t.Helper()
	for _, v := range values {
		for _, f := range v.Forms() {
			if i := strings.Index(text, f); i >= 0 {
				lo, hi := max(0, i-200), min(len(text), i+len(f)+200)
				t.Errorf("%s holds the secret value %q:\n...%s...", where, f, text[lo:hi])
			}
		}
	}
}

// ExpectPresent fails the test unless text holds the given form: it proves a
// search can see a value where it legitimately is, so a broken search does
// not pass silently.
func ExpectPresent(t testing.TB, where, text, form string) {
	t.Helper()
	if !strings.Contains(text, form) {
		t.Errorf("%s should hold %q (where it legitimately is) but does not: the leak search would be blind", where, form)
	}
}

// StateParts splits the workdir's state file into what a user reading it sees
// outside the attributes that legitimately hold the values (yaml_body unless
// legit names others, such as a patch's "patch"), those attributes' values,
// and every resource instance's private state decoded (base64 of a JSON map
// whose values are base64 again).
func (w *Workdir) StateParts(legit ...string) (outside, yamlBodies, private string) {
	if len(legit) == 0 {
		legit = []string{"yaml_body"}
	}
	w.t.Helper()
	raw, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
	if err != nil {
		w.t.Fatalf("reading state: %v", err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		w.t.Fatalf("state is not JSON: %v", err)
	}
	var bodies, privates []string
	resources, _ := st["resources"].([]any)
	for _, r := range resources {
		instances, _ := r.(map[string]any)["instances"].([]any)
		for _, i := range instances {
			inst, _ := i.(map[string]any)
			if attrs, ok := inst["attributes"].(map[string]any); ok {
				for _, a := range legit {
					switch v := attrs[a].(type) {
					case nil:
					case string:
						bodies = append(bodies, v)
						attrs[a] = "(checked separately)"
					default: // a map of values, say
						b, _ := json.Marshal(v)
						bodies = append(bodies, string(b))
						attrs[a] = "(checked separately)"
					}
				}
			}
			if p, ok := inst["private"].(string); ok {
				privates = append(privates, DecodePrivate(w.t, p))
			}
		}
	}
	out, _ := json.MarshalIndent(st, "", "  ")
	return string(out), strings.Join(bodies, "\n---\n"), strings.Join(privates, "\n---\n")
}

// ExpectAbsentFromProviderLog reads the TF_LOG file at path and checks that
// none of values is in the lines the provider wrote (the engine prefixes them
// with the plugin's name): those whose content is the provider's to control.
// A log without such lines fails the test, since the search would be blind.
// It returns the whole log, for checks of the engine's own lines.
func ExpectAbsentFromProviderLog(t testing.TB, path string, values ...SecretValue) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.Contains(l, "provider.terraform-provider-k8sconnect") || strings.Contains(l, "@module=k8sconnect") ||
			strings.Contains(l, "tf_provider_addr=") {
			b.WriteString(l + "\n")
		}
	}
	if !strings.Contains(b.String(), "k8sconnect") || !strings.Contains(b.String(), "ApplyResourceChange") {
		t.Fatalf("no provider lines about applies in the log %s: the search for secret values would be blind", path)
	}
	ExpectAbsent(t, "the provider's lines of the log", b.String(), values...)
	return string(raw)
}

// DecodePrivate turns a resource instance's private state (as a Terraform state
// file or a Pulumi stack's __meta holds it) into searchable text.
func DecodePrivate(t testing.TB, p string) string {
	t.Helper()
	outer, err := base64.StdEncoding.DecodeString(p)
	if err != nil {
		t.Fatalf("private state is not base64: %v", err)
	}
	var keys map[string]string
	if err := json.Unmarshal(outer, &keys); err != nil {
		return string(outer) // not the framework's layout: search it as it is
	}
	var b strings.Builder
	for k, v := range keys {
		inner, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			inner = []byte(v)
		}
		b.WriteString(k + " = " + string(inner) + "\n")
	}
	return b.String()
}

// ExpectSensitiveEntries checks, in `show -json`, that the engine marks
// field of every entry of the list attribute (dependency_repositories'
// password, say) as sensitive, in each resource and data source of the root
// module that has the attribute, and that there are want entries in all: an
// engine that did not know the field was sensitive would show it in plans.
func (w *Workdir) ExpectSensitiveEntries(attribute, field string, want int) {
	w.t.Helper()
	r := w.Run("show", "-json")
	if r.Err != nil {
		w.t.Fatalf("show -json: %v\n%s", r.Err, r.Output)
	}
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address   string                     `json:"address"`
					Sensitive map[string]json.RawMessage `json:"sensitive_values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(r.Output[max(0, strings.Index(r.Output, "{")):]), &doc); err != nil {
		w.t.Fatalf("show -json: %v", err)
	}
	found := 0
	for _, res := range doc.Values.RootModule.Resources {
		raw, ok := res.Sensitive[attribute]
		if !ok {
			continue
		}
		var entries []map[string]any
		if err := json.Unmarshal(raw, &entries); err != nil {
			w.t.Errorf("%s: sensitive_values.%s is not a list of objects: %s", res.Address, attribute, raw)
			continue
		}
		for i, e := range entries {
			found++
			if e[field] != true {
				w.t.Errorf("%s: %s[%d].%s is not marked sensitive (%v)", res.Address, attribute, i, field, e)
			}
		}
	}
	if found != want {
		w.t.Errorf("sensitive_values holds %d %s entries, want %d:\n%s", found, attribute, want, r.Output)
	}
}

// ExpectWriteOnlyNowhere saves a plan (saved.tfplan) and checks that no form
// of values is anywhere a user or a tool reads a configuration whose
// write-only attribute attr of address holds them: the plan's output, the
// saved plan and the state as show -json renders them, the state file's
// bytes and its decoded private state; attr itself stays null in state. The
// saved plan must hold attr's _revision and the state a keyed hash, which
// proves that the search sees what is there. when names the moment in
// failures.
func (w *Workdir) ExpectWriteOnlyNowhere(when, address, attr string, values ...SecretValue) {
	w.t.Helper()
	t := w.t
	r := w.Human("plan", "-out=saved.tfplan")
	ExpectAbsent(t, "plan -out "+when+" output", r.Output, values...)
	show := func(args ...string) string {
		t.Helper()
		r := w.Run(append([]string{"show", "-json"}, args...)...)
		if r.Err != nil {
			t.Fatalf("show -json %v: %v\n%s", args, r.Err, r.Output)
		}
		return r.Output
	}
	saved := show("saved.tfplan")
	ExpectPresent(t, "show -json of the saved plan "+when, saved, attr+"_revision")
	ExpectAbsent(t, "show -json of the saved plan "+when, saved, values...)
	shown := show()
	ExpectAbsent(t, "show -json of the state "+when, shown, values...)
	ExpectPresent(t, "show -json of the state "+when, shown, "(sensitive, hmac-sha256:")
	raw, err := os.ReadFile(filepath.Join(w.Dir(), "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	ExpectAbsent(t, "the state file "+when, string(raw), values...)
	_, _, private := w.StateParts()
	ExpectAbsent(t, "decoded private state "+when, private, values...)
	if v := w.StateAttribute(address, attr); v != "" && v != "null" {
		t.Errorf("%s is in state %s: %s", attr, when, v)
	}
}
