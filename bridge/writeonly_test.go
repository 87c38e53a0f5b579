package bridge_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

// A Secret given by yamlBodyWo, which the program does not mark secret (its
// values come from secret stack configuration, as a real program's would):
// the engine keeps the write-only input encrypted in the stack and nowhere in
// clear (outputs, the export, previews, the engine's and the plugin's logs at
// their most verbose), while the cluster gets each new value, an edit in the
// cluster is shown as drift without values and reverted, and every up keeps
// every field owned.
func TestPulumiSecrets_writeOnlyBody(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	pw1, pw2, tok := acctest.NewSecretValue("wopw"), acctest.NewSecretValue("wopw"), acctest.NewSecretValue("wotok")
	drifted := acctest.NewSecretValue("wodrift")
	all := []acctest.SecretValue{pw1, pw2, tok, drifted, {Plain: cluster.Token}}

	program := func(revision int) string {
		t.Helper()
		p, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-writeonly", "runtime": "yaml",
			"config": map[string]any{
				"password": map[string]any{"type": "string", "secret": true},
				"token":    map[string]any{"type": "string", "secret": true},
			},
			"resources": map[string]any{
				"k8s": map[string]any{"type": "pulumi:providers:k8sconnect",
					"properties": map[string]any{"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath}}},
				"db": map[string]any{"type": "k8sconnect:KubernetesObject", "options": map[string]any{"provider": "${k8s}"},
					"properties": map[string]any{
						"yamlBodyWo": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: %s, labels: {team: payments}}\n"+
							"type: Opaque\nstringData: {password: ${password}, token: ${token}}\n", ns),
						"yamlBodyWoRevision": revision,
					}},
			},
			"outputs": map[string]any{"body": "${db.yamlBodyWo}", "projection": "${db.managedStateProjection}"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	secrets := func(pw acctest.SecretValue) pulumitest.Config {
		return pulumitest.Config{"password": pulumitest.Secret(pw.Plain), "token": pulumitest.Secret(tok.Plain)}
	}
	s := pulumitest.NewYAMLProgram(t, program(1))
	// The engine's log at its most verbose, on stderr, with the plugin's
	// (TF_LOG) in it.
	s.SetEnv("TF_LOG", "TRACE")
	verbose := []pulumitest.Flag{"--diff", "--logtostderr", "--logflow", "-v=9"}
	owned := func(when string) {
		t.Helper()
		obj := acctest.MustGet(t, secSecrets, ns, "db")
		var fields string
		for _, e := range obj.GetManagedFields() {
			if e.Manager == "k8sconnect" && e.FieldsV1 != nil {
				fields += e.FieldsV1.GetRawString()
			}
		}
		for _, f := range []string{`"f:password"`, `"f:token"`, `"f:team"`} {
			if !strings.Contains(fields, f) {
				t.Errorf("%s: k8sconnect no longer owns %s: %s", when, f, fields)
			}
		}
	}
	clusterHas := func(pw acctest.SecretValue) {
		t.Helper()
		live, _ := json.Marshal(acctest.MustGet(t, secSecrets, ns, "db").Object)
		acctest.ExpectPresent(t, "the Secret in the cluster", string(live), pw.Base64())
		acctest.ExpectPresent(t, "the Secret in the cluster", string(live), tok.Base64())
	}
	stack := func(when string, current acctest.SecretValue) {
		t.Helper()
		exported := s.CLI("stack", "export")
		acctest.ExpectPresent(t, "the stack "+when, exported, "ciphertext")
		acctest.ExpectPresent(t, "the stack "+when, exported, "(sensitive, hmac-sha256:")
		acctest.ExpectAbsent(t, "pulumi stack export "+when, exported, all...)
		// The write-only input is in the stack, encrypted: decrypted, the
		// search finds it, so it is not blind.
		revealed := s.CLI("stack", "export", "--show-secrets")
		acctest.ExpectPresent(t, "the decrypted stack "+when, revealed, current.Plain)
		acctest.ExpectAbsent(t, "the stack's decoded private state "+when, privateStates(t, revealed), all...)
		outputs := s.CLI("stack", "output", "--json")
		acctest.ExpectAbsent(t, "pulumi stack output "+when, outputs, all...)
		// The output of a write-only property is empty: nothing but the
		// inputs ever held the body.
		var export struct {
			Deployment struct {
				Resources []struct {
					Type    string         `json:"type"`
					Outputs map[string]any `json:"outputs"`
				} `json:"resources"`
			} `json:"deployment"`
		}
		if err := json.Unmarshal([]byte(revealed[strings.Index(revealed, "{"):]), &export); err != nil {
			t.Fatalf("stack export: %v", err)
		}
		for _, r := range export.Deployment.Resources {
			if r.Type == "k8sconnect:index/kubernetesObject:KubernetesObject" {
				if b, _ := json.Marshal(r.Outputs); strings.Contains(string(b), current.Plain) {
					t.Errorf("%s: the resource's outputs hold the write-only body: %s", when, b)
				}
			}
		}
	}

	// At -v=9 the engine traces every property it passes between program,
	// engine and plugin, values included, secret or not: Pulumi documents
	// that verbose logs may show them, and the provider cannot stop the
	// engine printing what it sends. Every other line, the plugin's own
	// (the framework's TF_LOG trace of each call among them) and the
	// engine's, must be clean.
	beyondRPCTrace := func(log string) string {
		t.Helper()
		var b strings.Builder
		traced := 0
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "arshaling property for RPC[") {
				traced++
				continue
			}
			b.WriteString(l + "\n")
		}
		rest := b.String()
		if traced == 0 || !strings.Contains(rest, "ApplyResourceChange") || !strings.Contains(rest, "yamlBodyWo") {
			t.Fatalf("the verbose log lacks the engine's RPC trace (%d lines), or the plugin's trace of its calls, "+
				"or any mention of yamlBodyWo: the search would be blind\n%s", traced, log)
		}
		return rest
	}
	up := s.Run(pulumitest.Up, secrets(pw1), verbose...)
	acctest.ExpectAbsent(t, "pulumi up output and its verbose log", beyondRPCTrace(up.Log), all...)
	clusterHas(pw1)
	owned("after the create")
	stack("after the create", pw1)
	s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)

	// A new value under a new revision.
	s.WriteYAML(program(2))
	up = s.Run(pulumitest.Up, secrets(pw2), verbose...)
	if up.Changes["update"] != 1 {
		t.Errorf("a new value and revision should update 1 resource: %v", up.Changes)
	}
	acctest.ExpectAbsent(t, "pulumi up of the rotation and its verbose log", beyondRPCTrace(up.Log), all...)
	clusterHas(pw2)
	owned("after the rotation")
	stack("after the rotation", pw2)
	s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)

	// An edit in the cluster: drift, named without values, and reverted.
	acctest.PatchAs(t, "kubectl-edit", secSecrets, ns, "db", fmt.Sprintf(`{"data":{"password":%q}}`, drifted.Base64()))
	preview := s.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst, "--diff")
	if !strings.Contains(preview.Log, "stringData.password: changed (sensitive: values not shown) (changed by kubectl-edit)") {
		t.Errorf("the preview should name the drift on stringData.password:\n%s", preview.Log)
	}
	acctest.ExpectAbsent(t, "pulumi preview after drift", preview.Log, all...)
	up = s.Run(pulumitest.Up, nil, pulumitest.RefreshFirst, "--diff")
	acctest.ExpectAbsent(t, "pulumi up reverting drift", up.Log, all...)
	clusterHas(pw2)
	owned("after reverting drift")
	stack("after reverting drift", pw2)
}

// A Patch of an operator's Secret by each write-only input (patchWo,
// mergePatchWo, jsonPatchWo): the value reaches the cluster and a new one
// with a new revision too, the patch keeps the field, and the value is in no
// preview, up, stack export or stack output; decrypted, the stack holds it
// among the Patch's inputs only.
func TestPulumiSecrets_writeOnlyPatch(t *testing.T) {
	skipShort(t)
	t.Parallel()
	for _, in := range []struct {
		property string
		text     func(b64 string) string
	}{
		{"patchWo", func(b64 string) string { return fmt.Sprintf("data: {password: %s}", b64) }},
		{"mergePatchWo", func(b64 string) string { return fmt.Sprintf(`{"data": {"password": %q}}`, b64) }},
		{"jsonPatchWo", func(b64 string) string {
			return fmt.Sprintf(`[{"op": "add", "path": "/data/password", "value": %q}]`, b64)
		}},
	} {
		t.Run(in.property, func(t *testing.T) {
			t.Parallel()
			writeOnlyPatch(t, in.property, in.text)
		})
	}
}

func writeOnlyPatch(t *testing.T, property string, text func(b64 string) string) {
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	orig, first, second := acctest.NewSecretValue("orig"), acctest.NewSecretValue("wofirst"), acctest.NewSecretValue("wosecond")
	all := []acctest.SecretValue{orig, first, second, {Plain: cluster.Token}}
	acctest.ApplyAs(t, "operator", secSecrets, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: %s}\ndata: {password: %s}\n", ns, orig.Base64()))
	program := func(v acctest.SecretValue, revision int) string {
		t.Helper()
		p, err := yaml.Marshal(map[string]any{
			"name": "k8sconnect-writeonly-patch", "runtime": "yaml",
			"resources": map[string]any{
				"k8s": map[string]any{"type": "pulumi:providers:k8sconnect",
					"properties": map[string]any{"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath}}},
				"creds": map[string]any{"type": "k8sconnect:Patch", "options": map[string]any{"provider": "${k8s}"},
					"properties": map[string]any{
						"target":              map[string]any{"apiVersion": "v1", "kind": "Secret", "namespace": ns, "name": "creds"},
						property:              text(v.Base64()),
						property + "Revision": revision,
						"takeOwnership":       true,
					}},
			},
			"outputs": map[string]any{"managed": "${creds.managedFields}", "content": "${creds." + property + "}"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	s := pulumitest.NewYAMLProgram(t, program(first, 1))
	diff := pulumitest.Flag("--diff")
	check := func(v acctest.SecretValue, when string) {
		t.Helper()
		obj := acctest.MustGet(t, secSecrets, ns, "creds")
		live, _ := json.Marshal(obj.Object)
		acctest.ExpectPresent(t, "the patched Secret "+when, string(live), v.Base64())
		owned := false
		for _, e := range obj.GetManagedFields() {
			if strings.HasPrefix(e.Manager, "k8sconnect-patch-") && e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), `"f:password"`) {
				owned = true
			}
		}
		if !owned {
			t.Errorf("%s: the patch does not own data.password", when)
		}
		acctest.ExpectPresent(t, "the decrypted stack "+when, s.CLI("stack", "export", "--show-secrets"), v.Base64())
		exported := s.CLI("stack", "export")
		acctest.ExpectPresent(t, "the stack "+when, exported, "(sensitive, hmac-sha256:")
		acctest.ExpectAbsent(t, "pulumi stack export "+when, exported, all...)
		acctest.ExpectAbsent(t, "pulumi stack output "+when, s.CLI("stack", "output", "--json"), all...)
	}
	acctest.ExpectAbsent(t, "pulumi preview --diff", s.Run(pulumitest.Preview, nil, diff).Log, all...)
	acctest.ExpectAbsent(t, "pulumi up --diff", s.Run(pulumitest.Up, nil, diff).Log, all...)
	check(first, "after the create")
	s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)

	s.WriteYAML(program(second, 2))
	up := s.Run(pulumitest.Up, nil, diff)
	if up.Changes["update"] != 1 {
		t.Errorf("a new value and revision should update the patch: %v", up.Changes)
	}
	acctest.ExpectAbsent(t, "pulumi up of the new value", up.Log, all...)
	check(second, "after the new value")
	s.Run(pulumitest.Preview, nil, pulumitest.ExpectNoChanges)

	// An edit in the cluster: drift, named without values, and reverted.
	drifted := acctest.NewSecretValue("wodrift")
	all = append(all, drifted)
	acctest.PatchAs(t, "kubectl-edit", secSecrets, ns, "creds", fmt.Sprintf(`{"data":{"password":%q}}`, drifted.Base64()))
	preview := s.Run(pulumitest.Preview, nil, pulumitest.RefreshFirst, diff)
	if !strings.Contains(preview.Log, "data.password: changed (sensitive: values not shown) (changed by kubectl-edit)") {
		t.Errorf("the preview should name the drift on data.password:\n%s", preview.Log)
	}
	acctest.ExpectAbsent(t, "pulumi preview after drift", preview.Log, all...)
	acctest.ExpectAbsent(t, "pulumi up reverting drift", s.Run(pulumitest.Up, nil, pulumitest.RefreshFirst, diff).Log, all...)
	check(second, "after reverting drift")
}
