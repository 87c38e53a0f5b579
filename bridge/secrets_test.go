package bridge_test

// A Secret under Pulumi: its values are secret in the stack's
// stored inputs and outputs and in stack outputs, appear in no preview or up
// output (with --diff), and drift on them is warned about without values and
// reverted. The user does not mark yamlBody secret: the provider does. The
// connection is the provider's default (an explicit provider with a
// kubeconfig file), so no credential is stored per resource.
// Run with: go test ./bridge -run TestPulumiSecrets -v

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/k8sconnect/k8sconnect/bridge/internal/testing/pulumitest"
	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/internal/testing/fixtures"
	"github.com/k8sconnect/k8sconnect/internal/testing/localcluster"
)

var (
	secSecrets    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	secConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

func TestPulumiSecrets_valuesStaySecret(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	password, token, apiKey := acctest.NewSecretValue("pw"), acctest.NewSecretValue("tok"), acctest.NewSecretValue("key")
	drifted, driftedKey := acctest.NewSecretValue("drift"), acctest.NewSecretValue("driftkey")
	admin := acctest.SecretValue{Plain: cluster.Token}
	all := []acctest.SecretValue{password, token, apiKey, drifted, driftedKey, admin}

	opts := map[string]any{"provider": "${k8s}"}
	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-secrets", "runtime": "yaml",
		"resources": map[string]any{
			"k8s": map[string]any{"type": "pulumi:providers:k8sconnect",
				"properties": map[string]any{"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath}}},
			"db": map[string]any{"type": "k8sconnect:KubernetesObject", "options": opts, "properties": map[string]any{
				"yamlBody": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: %s}\ntype: Opaque\n"+
					"data: {password: %s}\nstringData: {token: %s}\n", ns, password.Base64(), token.Plain)}},
			"settings": map[string]any{"type": "k8sconnect:KubernetesObject", "options": opts, "properties": map[string]any{
				"yamlBody":        fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {apiKey: %s, mode: fast}\n", ns, apiKey.Plain),
				"sensitiveFields": []string{"data.apiKey"}}},
		},
		"outputs": map[string]any{"body": "${db.yamlBody}", "projection": "${db.managedStateProjection}", "settings": "${settings.yamlBody}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	diff := pulumitest.Flag("--diff")

	acctest.ExpectAbsent(t, "pulumi preview --diff", s.Run(pulumitest.Preview, nil, diff).Log, all...)
	acctest.ExpectAbsent(t, "pulumi up --diff", s.Run(pulumitest.Up, nil, diff).Log, all...)

	exported := s.CLI("stack", "export")
	revealed := s.CLI("stack", "export", "--show-secrets")
	// The search sees the values where they are legitimately: the cluster,
	// and the stack with its secrets decrypted.
	acctest.ExpectPresent(t, "the decrypted stack", revealed, password.Base64())
	acctest.ExpectPresent(t, "the decrypted stack", revealed, apiKey.Plain)
	acctest.ExpectPresent(t, "the stack", exported, "ciphertext")
	acctest.ExpectPresent(t, "the stack", exported, "(sensitive, hmac-sha256:")
	acctest.ExpectAbsent(t, "pulumi stack export", exported, all...)
	acctest.ExpectPresent(t, "the stack's decoded private state", privateStates(t, revealed), "f:password") // in the owned fields
	acctest.ExpectAbsent(t, "the stack's decoded private state", privateStates(t, revealed), all...)

	outputs := s.CLI("stack", "output", "--json")
	acctest.ExpectAbsent(t, "pulumi stack output", outputs, all...)
	var outs map[string]any
	if err := json.Unmarshal([]byte(outputs[strings.Index(outputs, "{"):]), &outs); err != nil {
		t.Fatalf("stack output: %v\n%s", err, outputs)
	}
	for _, k := range []string{"body", "settings"} {
		if outs[k] != "[secret]" {
			t.Errorf("stack output %s is not secret: %v", k, outs[k])
		}
	}

	// kubectl changes both sensitive values; a plain preview warns without
	// values, and up reverts.
	acctest.PatchAs(t, "kubectl-edit", secSecrets, ns, "db", fmt.Sprintf(`{"data":{"password":%q}}`, drifted.Base64()))
	acctest.PatchAs(t, "kubectl-edit", secConfigMaps, ns, "settings", fmt.Sprintf(`{"data":{"apiKey":%q}}`, driftedKey.Plain))
	preview := s.Run(pulumitest.Preview, nil, diff)
	acctest.ExpectAbsent(t, "pulumi preview after drift", preview.Log, all...)
	for _, want := range []string{"data.password: changed (sensitive: values not shown) (changed by kubectl-edit)",
		"data.apiKey: changed (sensitive: values not shown) (changed by kubectl-edit)"} {
		if !strings.Contains(preview.Log, want) {
			t.Errorf("preview lacks %q:\n%s", want, preview.Log)
		}
	}
	up := s.Run(pulumitest.Up, nil, diff)
	acctest.ExpectAbsent(t, "pulumi up reverting drift", up.Log, all...)
	live, _ := json.Marshal(acctest.MustGet(t, secSecrets, ns, "db").Object)
	acctest.ExpectPresent(t, "the reverted Secret", string(live), password.Base64())
	if err := acctest.ConfigMapHas(t, ns, "settings", "apiKey", apiKey.Plain); err != nil {
		t.Errorf("sensitiveFields drift not reverted: %v", err)
	}
	if r := s.Run(pulumitest.Preview, nil); r.Changes["update"] != 0 {
		t.Errorf("preview after the revert plans updates: %v", r.Changes)
	}
	acctest.ExpectAbsent(t, "pulumi stack export after drift", s.CLI("stack", "export"), all...)
}

// A KubernetesObject's resourceRef copies its inline connection. The provider
// marks that copy sensitive as a whole, which a language host would hand the
// program as an empty object; the plugin makes the whole resourceRef secret
// instead, so a Wait given the resourceRef reaches the cluster, the program
// reads the copy's host, and the token stays secret though the program wrote
// it in plain text.
func TestPulumiSecrets_connectionCopyInResourceRef(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	admin := acctest.SecretValue{Plain: cluster.Token}
	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-connection-copy", "runtime": "yaml",
		"resources": map[string]any{
			"settings": map[string]any{"type": "k8sconnect:KubernetesObject", "properties": map[string]any{
				"clusterConnection": map[string]any{
					"host": cluster.Host, "clusterCaCertificate": string(cluster.CAPEM), "token": cluster.Token,
				},
				"yamlBody": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {mode: fast}\n", ns),
			}},
			"mode": map[string]any{"type": "k8sconnect:Wait", "properties": map[string]any{
				"resourceRef": "${settings.resourceRef}", "waitFor": map[string]any{"field": "data.mode", "timeout": "30s"},
			}},
		},
		"outputs": map[string]any{"host": "${settings.resourceRef.clusterConnection.host}", "ref": "${settings.resourceRef}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	up := s.Run(pulumitest.Up, nil, pulumitest.Flag("--diff"))
	expectChanges(t, up, map[string]int{"create": 3})
	acctest.ExpectAbsent(t, "pulumi up --diff", up.Log, admin)
	if up.Outputs["host"] != cluster.Host {
		t.Errorf("output host = %v, want the copy's host %s", up.Outputs["host"], cluster.Host)
	}
	acctest.ExpectAbsent(t, "pulumi stack output", s.CLI("stack", "output", "--json"), admin)
	acctest.ExpectAbsent(t, "pulumi stack export", s.CLI("stack", "export"), admin)
	// The search can find the token where it legitimately is.
	acctest.ExpectPresent(t, "the decrypted stack", s.CLI("stack", "export", "--show-secrets"), admin.Plain)
}

// A token rotated in the kubeconfig file the provider names (an explicit
// provider with kubeconfigFile) changes nothing: the old token is revoked, a
// fresh one written, and preview plans no change while reading through it.
func TestPulumiSecrets_rotatedTokenPreviewsNothing(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	mintToken := acctest.RotatingAccount(t, ns)
	oldToken, freshToken := mintToken("old-binding"), mintToken("fresh-binding")
	old, fresh := oldToken.Token, freshToken.Token
	kc := acctest.NewTokenKubeconfig(t, cluster, old)
	kubeconfig, writeKubeconfig := kc.Path, kc.Write

	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-rotation", "runtime": "yaml",
		"resources": map[string]any{
			"k8s": map[string]any{"type": "pulumi:providers:k8sconnect",
				"properties": map[string]any{"clusterConnection": map[string]any{"kubeconfigFile": kubeconfig}}},
			"cm": map[string]any{"type": "k8sconnect:KubernetesObject", "options": map[string]any{"provider": "${k8s}"},
				"properties": map[string]any{"yamlBody": fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: rotated, namespace: %s}\ndata: {a: b}\n", ns)}},
			"ready": map[string]any{"type": "k8sconnect:Wait", "options": map[string]any{"provider": "${k8s}"},
				"properties": map[string]any{"resourceRef": "${cm.resourceRef}", "waitFor": map[string]any{"field": "data.a", "timeout": "30s"}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	s.Run(pulumitest.Up, nil)
	oldToken.Revoke(t)
	writeKubeconfig(fresh)
	for _, flags := range [][]pulumitest.Flag{nil, {pulumitest.RefreshFirst}} {
		r := s.Run(pulumitest.Preview, nil, flags...)
		for op, n := range r.Changes {
			if op != "same" && n != 0 {
				t.Errorf("preview %v after the rotation plans %s: %v\n%s", flags, op, r.Changes, r.Log)
			}
		}
	}
	exported := s.CLI("stack", "export", "--show-secrets")
	acctest.ExpectPresent(t, "the stack", exported, kubeconfig)
	acctest.ExpectAbsent(t, "the stack, secrets decrypted", exported, acctest.SecretValue{Plain: old}, acctest.SecretValue{Plain: fresh})
}

// A Patch of a Secret: its content is secret in the stack (the user did not
// mark it), managedFields hold hashes, and no output shows the values.
func TestPulumiSecrets_patchOfASecret(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	orig, patched := acctest.NewSecretValue("orig"), acctest.NewSecretValue("patched")
	all := []acctest.SecretValue{orig, patched, {Plain: cluster.Token}}
	acctest.ApplyAs(t, "operator", secSecrets, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: %s}\ndata: {password: %s}\n", ns, orig.Base64()))
	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-secret-patch", "runtime": "yaml",
		"resources": map[string]any{
			"creds": map[string]any{"type": "k8sconnect:Patch", "properties": map[string]any{
				"target":            map[string]any{"apiVersion": "v1", "kind": "Secret", "namespace": ns, "name": "creds"},
				"patch":             fmt.Sprintf("data: {password: %s}", patched.Base64()),
				"takeOwnership":     true,
				"clusterConnection": yamlConnection(cluster.Host, cluster.CAPEM, cluster.Token),
			}},
		},
		"outputs": map[string]any{"managed": "${creds.managedFields}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	diff := pulumitest.Flag("--diff")
	acctest.ExpectAbsent(t, "pulumi preview --diff", s.Run(pulumitest.Preview, nil, diff).Log, all...)
	acctest.ExpectAbsent(t, "pulumi up --diff", s.Run(pulumitest.Up, nil, diff).Log, all...)
	live, _ := json.Marshal(acctest.MustGet(t, secSecrets, ns, "creds").Object)
	acctest.ExpectPresent(t, "the patched Secret", string(live), patched.Base64())
	acctest.ExpectPresent(t, "the decrypted stack", s.CLI("stack", "export", "--show-secrets"), patched.Base64())
	exported := s.CLI("stack", "export")
	acctest.ExpectPresent(t, "the stack", exported, "(sensitive, hmac-sha256:")
	acctest.ExpectAbsent(t, "pulumi stack export", exported, all...)
	acctest.ExpectAbsent(t, "pulumi stack output", s.CLI("stack", "output", "--json"), all...)
}

// Under Pulumi too, values that select list elements under sensitiveFields (a
// set of API keys) appear nowhere: not in preview or up output, not in the
// stack (its private state included), and a dropped key is planned and put
// back.
func TestPulumiSecrets_sensitiveListSelectors(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	group := acctest.Name("g") + ".sec.k8sconnect.test"
	databases := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "databases"}
	keyA, keyB := acctest.NewSecretValue("ka"), acctest.NewSecretValue("kb")
	all := []acctest.SecretValue{keyA, keyB}

	opts := map[string]any{"provider": "${k8s}"}
	crd := fixtures.CRD(group, "Database", "apiKeys: {type: array, x-kubernetes-list-type: set, items: {type: string}}")
	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-secret-selectors", "runtime": "yaml",
		"resources": map[string]any{
			"k8s": map[string]any{"type": "pulumi:providers:k8sconnect",
				"properties": map[string]any{"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath}}},
			"crd": map[string]any{"type": "k8sconnect:KubernetesObject", "options": opts, "properties": map[string]any{"yamlBody": crd}},
			"db": map[string]any{"type": "k8sconnect:KubernetesObject",
				"options": map[string]any{"provider": "${k8s}", "dependsOn": []string{"${crd}"}},
				"properties": map[string]any{
					"yamlBody": fmt.Sprintf("apiVersion: %s/v1\nkind: Database\nmetadata: {name: orders, namespace: %s}\n"+
						"spec: {apiKeys: [%s, %s]}\n", group, ns, keyA.Plain, keyB.Plain),
					"sensitiveFields": []string{"spec.apiKeys"}}},
		},
		"outputs": map[string]any{"projection": "${db.managedStateProjection}", "owners": "${db.fieldOwnership}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	diff := pulumitest.Flag("--diff")
	acctest.ExpectAbsent(t, "pulumi preview --diff", s.Run(pulumitest.Preview, nil, diff).Log, all...)
	acctest.ExpectAbsent(t, "pulumi up --diff", s.Run(pulumitest.Up, nil, diff).Log, all...)
	exported := s.CLI("stack", "export", "--show-secrets")
	acctest.ExpectPresent(t, "the stack", exported, `spec.apiKeys[=\"(sensitive, hmac-sha256:`)
	acctest.ExpectAbsent(t, "pulumi stack export --show-secrets outside yamlBody", withoutYAMLBodies(t, exported), all...)
	private := privateStates(t, exported)
	acctest.ExpectPresent(t, "the stack's decoded private state", private, "owned_fields")
	acctest.ExpectAbsent(t, "the stack's decoded private state", private, all...)
	acctest.ExpectAbsent(t, "pulumi stack output", s.CLI("stack", "output", "--json", "--show-secrets"), all...)

	acctest.PatchAs(t, "kubectl-edit", databases, ns, "orders", fmt.Sprintf(`{"spec":{"apiKeys":[%q]}}`, keyA.Plain))
	preview := s.Run(pulumitest.Preview, nil, diff)
	acctest.ExpectAbsent(t, "pulumi preview after drift", preview.Log, all...)
	if !strings.Contains(preview.Log, `spec.apiKeys[="(sensitive, hmac-sha256:`) {
		t.Errorf("preview does not name the dropped key by its hash:\n%s", preview.Log)
	}
	acctest.ExpectAbsent(t, "pulumi up reverting drift", s.Run(pulumitest.Up, nil, diff).Log, all...)
	live, _ := json.Marshal(acctest.MustGet(t, databases, ns, "orders").Object)
	acctest.ExpectPresent(t, "the reverted keys in the cluster", string(live), keyB.Plain)
	acctest.ExpectAbsent(t, "the stack's decoded private state after the revert",
		privateStates(t, s.CLI("stack", "export", "--show-secrets")), all...)
	if r := s.Run(pulumitest.Preview, nil); r.Changes["update"] != 0 {
		t.Errorf("preview after the revert plans updates: %v", r.Changes)
	}
}

// privateStates is every resource's private state in a stack export, decoded:
// the bridge keeps it base64-encoded in __meta, where a plain search of the
// export cannot see a value.
func privateStates(t *testing.T, export string) string {
	t.Helper()
	var b strings.Builder
	rest := export
	for {
		i := strings.Index(rest, `"__meta": "`)
		if i < 0 {
			return b.String()
		}
		rest = rest[i+len(`"__meta": `):]
		var meta string
		if err := json.NewDecoder(strings.NewReader(rest)).Decode(&meta); err != nil {
			t.Fatalf("__meta in the stack export: %v", err)
		}
		var m struct {
			Private string `json:"private_state"`
		}
		if err := json.Unmarshal([]byte(meta), &m); err == nil && m.Private != "" {
			b.WriteString(acctest.DecodePrivate(t, m.Private) + "\n---\n")
		}
	}
}

// withoutYAMLBodies is a decrypted stack export with every yamlBody input and
// output left out: the one place a user's own values legitimately are.
func withoutYAMLBodies(t *testing.T, export string) string {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(export[strings.Index(export, "{"):]), &doc); err != nil {
		t.Fatalf("stack export: %v", err)
	}
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				if k != "yamlBody" && k != "yaml_body" {
					out[k] = strip(e)
				}
			}
			return out
		case []any:
			for i := range x {
				x[i] = strip(x[i])
			}
		}
		return v
	}
	b, _ := json.Marshal(strip(doc))
	return string(b)
}

// getObject with sensitiveFields. The bridge returns function results in plain
// (pulumi/pulumi#12710), so a field cannot be secret on its own: the value
// someone else stored in a ConfigMap (and kubectl copied into
// last-applied-configuration) is left out of yamlBody, json and object and
// given only in sensitiveValues; a program that uses sensitiveValues passes an
// argument as a secret, and the engine then makes the whole result secret.
// Both ways, the value appears in no preview, up, stack or stack output.
func TestPulumiSecrets_getObjectSensitiveFields(t *testing.T) {
	skipShort(t)
	t.Parallel()
	cluster := localcluster.Shared(t)
	ns := acctest.Namespace(t)
	key := acctest.NewSecretValue("key")
	acctest.ApplyAs(t, "kubectl-client-side-apply", secConfigMaps, fmt.Sprintf(
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s, annotations: "+
			"{kubectl.kubernetes.io/last-applied-configuration: %q}}\ndata: {apiKey: %s, mode: fast}\n",
		ns, fmt.Sprintf(`{"data":{"apiKey":%q}}`, key.Plain), key.Plain))
	invoke := func(fields any) map[string]any {
		return map[string]any{"fn::invoke": map[string]any{
			"function": "k8sconnect:index/getObject:getObject",
			"arguments": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "namespace": ns,
				"sensitiveFields":   fields,
				"clusterConnection": map[string]any{"kubeconfigFile": cluster.KubeconfigPath}},
		}}
	}
	program, err := yaml.Marshal(map[string]any{
		"name": "k8sconnect-getobject-secret", "runtime": "yaml",
		"variables": map[string]any{
			"plain":  invoke([]string{"data.apiKey"}),
			"secret": invoke(map[string]any{"fn::secret": []string{"data.apiKey"}}),
		},
		"outputs": map[string]any{"body": "${plain.yamlBody}", "object": "${plain.object}", "json": "${plain.json}",
			"values": "${secret.sensitiveValues}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := pulumitest.NewYAMLProgram(t, string(program))
	diff := pulumitest.Flag("--diff")
	acctest.ExpectAbsent(t, "pulumi preview --diff", s.Run(pulumitest.Preview, nil, diff).Log, key)
	up := s.Run(pulumitest.Up, nil, diff)
	acctest.ExpectAbsent(t, "pulumi up --diff", up.Log, key)
	acctest.ExpectPresent(t, "pulumi up --diff", up.Log, "(sensitive: see sensitive_values)")
	acctest.ExpectAbsent(t, "pulumi stack export", s.CLI("stack", "export"), key)
	acctest.ExpectAbsent(t, "pulumi stack output", s.CLI("stack", "output", "--json"), key)
	acctest.ExpectPresent(t, "pulumi stack output --show-secrets", s.CLI("stack", "output", "--json", "--show-secrets"), key.Plain)
}
