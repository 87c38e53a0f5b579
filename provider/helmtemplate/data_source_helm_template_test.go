package helmtemplate_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"helm.sh/helm/v4/pkg/chart/common"

	"github.com/k8sconnect/k8sconnect/internal/testing/acctest"
	"github.com/k8sconnect/k8sconnect/provider/helmtemplate"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
)

func TestMain(m *testing.M) { acctest.Main(m) }

func chartPath(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "charts", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readOffline reads the data source with no cluster anywhere: no
// cluster_connection and no provider default.
func readOffline(t *testing.T, attrs map[string]tftypes.Value) (*datasource.ReadResponse, map[string]tftypes.Value) {
	t.Helper()
	ds := helmtemplate.New()
	ds.(datasource.DataSourceWithConfigure).Configure(context.Background(),
		datasource.ConfigureRequest{ProviderData: &providerdata.Data{Clients: connection.NewCache()}}, &datasource.ConfigureResponse{})
	return acctest.ReadDataSource(t, ds, attrs)
}

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func stringMap(t *testing.T, v tftypes.Value) map[string]string {
	t.Helper()
	var raw map[string]tftypes.Value
	if err := v.As(&raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, e := range raw {
		var s string
		if err := e.As(&s); err != nil {
			t.Fatal(err)
		}
		out[k] = s
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var settingType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{
	"name": tftypes.String, "value": tftypes.String, "type": tftypes.String}}

func settings(pairs ...string) tftypes.Value {
	var elems []tftypes.Value
	for i := 0; i < len(pairs); i += 2 {
		elems = append(elems, tftypes.NewValue(settingType, map[string]tftypes.Value{
			"name": str(pairs[i]), "value": str(pairs[i+1]), "type": tftypes.NewValue(tftypes.String, nil)}))
	}
	return tftypes.NewValue(tftypes.List{ElementType: settingType}, elems)
}

// Without a cluster the chart renders as `helm template` renders it, and the
// output is sorted as yaml_scoped sorts it, hooks and secrets apart.
func TestRendersWithoutACluster(t *testing.T) {
	resp, out := readOffline(t, map[string]tftypes.Value{
		"name":  str("web"),
		"chart": str(chartPath(t, "shop")),
		"set":   settings("greeting", "hi there"),
	})
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	var namespace string
	_ = out["namespace"].As(&namespace)
	if namespace != "default" {
		t.Errorf("namespace = %q, want default", namespace)
	}
	want := map[string][]string{
		"crds":           {"apiextensions.k8s.io/CustomResourceDefinition/shelves.helmtemplate.k8sconnect.test"},
		"cluster_scoped": {"rbac.authorization.k8s.io/ClusterRole/web-shop-default-reader"},
		"namespaced": {"apps/Deployment/default/web-shop", "core/ConfigMap/default/web-shop",
			"helmtemplate.k8sconnect.test/Shelf/default/web-shop"},
		"hooks":     {"batch/Job/default/web-shop-migrate"},
		"sensitive": {"core/Secret/default/web-shop-auth"},
	}
	for attr, wantKeys := range want {
		if got := keys(stringMap(t, out[attr])); !slices.Equal(got, wantKeys) {
			t.Errorf("%s = %v, want %v", attr, got, wantKeys)
		}
	}
	var sensitiveKeys []tftypes.Value
	_ = out["sensitive_keys"].As(&sensitiveKeys)
	if len(sensitiveKeys) != 1 || !sensitiveKeys[0].Equal(str("core/Secret/default/web-shop-auth")) {
		t.Errorf("sensitive_keys = %v", sensitiveKeys)
	}

	var cm struct {
		Metadata struct{ Namespace string }
		Data     map[string]string
	}
	if err := json.Unmarshal([]byte(stringMap(t, out["namespaced"])["core/ConfigMap/default/web-shop"]), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Metadata.Namespace != "default" || cm.Data["greeting"] != "hi there" || cm.Data["install"] != "true" || cm.Data["kube"] != common.DefaultCapabilities.KubeVersion.Version {
		t.Errorf("configmap = %+v: want the release namespace, the set value, an install, Helm's default Kubernetes version", cm)
	}
	var chartVersion, appVersion, notes string
	_ = out["chart_version"].As(&chartVersion)
	_ = out["app_version"].As(&appVersion)
	_ = out["notes"].As(&notes)
	if chartVersion != "1.2.3" || appVersion != "4.5" || !strings.Contains(notes, "web-shop is installed in default") {
		t.Errorf("chart_version %q, app_version %q, notes %q", chartVersion, appVersion, notes)
	}
	warned := false
	for _, d := range resp.Diagnostics.Warnings() {
		warned = warned || strings.Contains(d.Detail(), "`lookup`")
	}
	if !warned {
		t.Errorf("no warning that lookup finds nothing without a cluster: %v", resp.Diagnostics)
	}
}

// A subchart switched on by a value renders; its objects land in the release
// namespace too.
func TestSubchartFollowsItsCondition(t *testing.T) {
	resp, out := readOffline(t, map[string]tftypes.Value{
		"name":      str("web"),
		"namespace": str("shop"),
		"chart":     str(chartPath(t, "shop")),
		"values":    tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{str("audit: {enabled: true}\n"), str("audit: {level: debug}\n")}),
	})
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	body, ok := stringMap(t, out["namespaced"])["core/ConfigMap/shop/web-audit"]
	if !ok || !strings.Contains(body, `"level":"debug"`) {
		t.Errorf("the audit subchart's ConfigMap = %q (present %v); want it in shop with the second values document's level", body, ok)
	}
}

// set_list sets a list as --set name={a,b}, each value one element; with
// render_subchart_notes the notes of the subcharts that render follow the
// chart's own, and without it they are left out, as helm leaves them.
func TestSetListAndSubchartNotes(t *testing.T) {
	texts := tftypes.List{ElementType: tftypes.String}
	listType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String, "value": texts}}
	setList := tftypes.NewValue(tftypes.List{ElementType: listType}, []tftypes.Value{tftypes.NewValue(listType, map[string]tftypes.Value{
		"name": str("audit.sinks"), "value": tftypes.NewValue(texts, []tftypes.Value{str("stdout"), str("file,rotated")})})})
	read := func(subchartNotes bool) (string, map[string]tftypes.Value) {
		resp, out := readOffline(t, map[string]tftypes.Value{
			"name":                  str("web"),
			"chart":                 str(chartPath(t, "shop")),
			"values":                tftypes.NewValue(texts, []tftypes.Value{str("audit: {enabled: true}\n")}),
			"set_list":              setList,
			"render_subchart_notes": tftypes.NewValue(tftypes.Bool, subchartNotes),
		})
		if resp.Diagnostics.HasError() {
			t.Fatal(resp.Diagnostics)
		}
		var notes string
		_ = out["notes"].As(&notes)
		return notes, out
	}
	notes, out := read(true)
	if want := "web-shop is installed in default.\n\nAudit of web logs at info.\n"; notes != want {
		t.Errorf("notes with render_subchart_notes = %q, want %q", notes, want)
	}
	var cm struct{ Data map[string]string }
	if err := json.Unmarshal([]byte(stringMap(t, out["namespaced"])["core/ConfigMap/default/web-audit"]), &cm); err != nil {
		t.Fatal(err)
	}
	if want := `["stdout","file,rotated"]`; cm.Data["sinks"] != want {
		t.Errorf("the audit ConfigMap's sinks = %q, want %q", cm.Data["sinks"], want)
	}
	if notes, _ := read(false); notes != "web-shop is installed in default.\n" {
		t.Errorf("notes without render_subchart_notes = %q, want the chart's own alone", notes)
	}
}

// A set_sensitive value takes every object that holds it out of the plain
// maps, and out of errors.
func TestSetSensitiveKeepsObjectsApart(t *testing.T) {
	secret := acctest.NewSecretValue("greeting")
	_, out := readOffline(t, map[string]tftypes.Value{
		"name":          str("web"),
		"chart":         str(chartPath(t, "shop")),
		"set_sensitive": settings("greeting", secret.Plain),
	})
	for _, attr := range []string{"crds", "cluster_scoped", "namespaced", "hooks", "notes"} {
		acctest.ExpectAbsent(t, attr, out[attr].String(), secret)
	}
	if _, ok := stringMap(t, out["sensitive"])["core/ConfigMap/default/web-shop"]; !ok {
		t.Errorf("the ConfigMap that holds the value is not in sensitive: %v", keys(stringMap(t, out["sensitive"])))
	}
	acctest.ExpectPresent(t, "sensitive", out["sensitive"].String(), secret.Plain)
	want := tftypes.NewValue(tftypes.Map{ElementType: tftypes.List{ElementType: tftypes.String}}, map[string]tftypes.Value{
		"core/ConfigMap/default/web-shop": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{str("data.greeting")}),
	})
	if !out["sensitive_fields"].Equal(want) {
		t.Errorf("sensitive_fields = %v, want only the ConfigMap's data.greeting", out["sensitive_fields"])
	}

	// The schema rejects a string for replicas; Helm's message quotes the
	// values it checked, which must not show the secret.
	resp, _ := readOffline(t, map[string]tftypes.Value{
		"name":          str("web"),
		"chart":         str(chartPath(t, "shop")),
		"set":           settings("replicas", "many"),
		"set_sensitive": settings("greeting", secret.Plain),
	})
	if !resp.Diagnostics.HasError() {
		t.Fatal("replicas=many passed values.schema.json")
	}
	for _, d := range resp.Diagnostics {
		acctest.ExpectAbsent(t, "error", d.Summary()+d.Detail(), secret)
	}
	if msg := resp.Diagnostics.Errors()[0].Detail(); !strings.Contains(msg, "replicas") {
		t.Errorf("schema error %q does not name replicas", msg)
	}
}

// A short set_sensitive value found in the chart's own names by chance is no
// error (the user could not rename the chart's objects); a password-long
// one in a name was templated there, and keys are never hidden: refused.
func TestSetSensitiveInANameIsRefusedOnlyWhenItIsOne(t *testing.T) {
	resp, out := readOffline(t, map[string]tftypes.Value{
		"name":          str("web"),
		"chart":         str(chartPath(t, "shop")),
		"set_sensitive": settings("greeting", "shop"),
	})
	if resp.Diagnostics.HasError() {
		t.Fatalf("a 4-character value that chart names hold by chance was refused: %v", resp.Diagnostics)
	}
	if _, ok := stringMap(t, out["sensitive"])["core/ConfigMap/default/web-shop"]; !ok {
		t.Errorf("the ConfigMap that holds the value is not in sensitive")
	}

	secret := acctest.NewSecretValue("name")
	resp, _ = readOffline(t, map[string]tftypes.Value{
		"name":          str("web"),
		"chart":         str(chartPath(t, "shop")),
		"set_sensitive": settings("extraName", secret.Plain),
	})
	if !resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), "holds a set_sensitive value") {
		t.Fatalf("an object named by a set_sensitive value was not refused: %v", resp.Diagnostics)
	}
	for _, d := range resp.Diagnostics {
		acctest.ExpectAbsent(t, "the refusal", d.Summary()+d.Detail(), secret)
	}
}
