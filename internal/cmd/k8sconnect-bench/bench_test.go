package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestParseStat(t *testing.T) {
	// comm may hold spaces and parentheses; the fields after it are counted
	// from the last ')'. Fields as in proc(5): utime 14 = 250, stime 15 = 40,
	// starttime 22 = 987654.
	line := "4242 (terraform-provi) x) S 4200 4242 4200 0 -1 4194560 1234 0 0 0 250 40 0 0 20 0 12 0 987654 1000000 2000 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{pid: 4242, ppid: 4200, comm: "terraform-provi) x", cpuTicks: 290, startTime: 987654}
	if got != want {
		t.Fatalf("parseStat = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "12 no-comm S 1", "12 (short) S 1 2 3"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

func TestStatusKiB(t *testing.T) {
	status := "Name:\tterraform-provi\nVmPeak:\t 1300000 kB\nVmHWM:\t   81234 kB\nVmRSS:\t   70000 kB\n" +
		"RssAnon:\t   20480 kB\nRssFile:\t   49520 kB\n"
	if got := statusKiB([]byte(status), "VmHWM"); got != 81234 {
		t.Fatalf("VmHWM = %d, want 81234", got)
	}
	if got := statusKiB([]byte(status), "RssAnon"); got != 20480 {
		t.Fatalf("RssAnon = %d, want 20480", got)
	}
	if got := statusKiB([]byte("Name:\tx\n"), "VmHWM"); got != 0 {
		t.Fatalf("VmHWM absent = %d, want 0", got)
	}
}

func TestDescends(t *testing.T) {
	stats := map[int]procStat{
		10: {pid: 10, ppid: 1},  // the bench
		20: {pid: 20, ppid: 10}, // terraform
		30: {pid: 30, ppid: 20}, // its plugin
		40: {pid: 40, ppid: 1},  // someone else's terraform
		50: {pid: 50, ppid: 40}, // and its plugin
		60: {pid: 60, ppid: 61}, // a cycle in a racy snapshot
		61: {pid: 61, ppid: 60},
	}
	for pid, want := range map[int]bool{20: true, 30: true, 50: false, 60: false, 99: false} {
		if got := descends(stats, pid, 20); got != want {
			t.Errorf("descends(%d, root 20) = %v, want %v", pid, got, want)
		}
	}
	if !isPlugin("terraform-provi") || !isPlugin("pulumi-resource") || isPlugin("terraform") || isPlugin("pulumi") {
		t.Error("isPlugin does not tell the plugins' comm from the engines'")
	}
}

// kubectl v1.32's -v=6 output, from a real run.
const kubectlLog = `I1124 04:46:23.610444   12904 loader.go:402] Config loaded from file:  /root/.cache/k8sconnect/cluster/kubeconfig
I1124 04:46:23.614392   12904 round_trippers.go:560] GET https://127.0.0.1:43003/openapi/v3?timeout=32s 200 OK in 2 milliseconds
I1124 04:46:23.629007   12904 round_trippers.go:560] GET https://127.0.0.1:43003/openapi/v3/api/v1?hash=B6B6&timeout=32s 200 OK in 13 milliseconds
I1124 04:46:23.788185   12904 round_trippers.go:560] GET https://127.0.0.1:43003/api?timeout=32s 200 OK in 2 milliseconds
I1124 04:46:23.791129   12904 round_trippers.go:560] GET https://127.0.0.1:43003/apis?timeout=32s 200 OK in 1 milliseconds
I1124 04:46:23.916006   12904 round_trippers.go:560] PATCH https://127.0.0.1:43003/api/v1/namespaces/vtest?fieldManager=kubectl&fieldValidation=Strict&force=false 201 Created in 10 milliseconds
namespace/vtest serverside-applied
I1124 04:46:24.074840   12914 reflector.go:313] Starting reflector *unstructured.Unstructured (0s) from k8s.io/client-go/tools/watch/informerwatcher.go:146
I1124 04:46:24.078950   12914 round_trippers.go:560] GET https://127.0.0.1:43003/api/v1/namespaces?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dvtest&watch=true 200 OK in 1 milliseconds
I1124 04:46:29.320443   12914 round_trippers.go:560] DELETE https://127.0.0.1:43003/api/v1/namespaces/vtest/configmaps/a 404 Not Found in 2 milliseconds
I1124 04:46:23.932731   12904 apply.go:548] Running apply post-processor function
`

func TestKubectlRequests(t *testing.T) {
	got := kubectlRequests([]byte(kubectlLog))
	want := []string{
		"GET /openapi/v3?timeout=32s",
		"GET /openapi/v3/api/v1?hash=B6B6&timeout=32s",
		"GET /api?timeout=32s",
		"GET /apis?timeout=32s",
		"PATCH /api/v1/namespaces/vtest?fieldManager=kubectl&fieldValidation=Strict&force=false",
		"GET /api/v1/namespaces?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dvtest&watch=true",
		"DELETE /api/v1/namespaces/vtest/configmaps/a",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("kubectlRequests =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestClassify(t *testing.T) {
	got := classify([]string{
		"GET /api?timeout=32s",
		"GET /apis",
		"GET /api/v1",
		"GET /apis/apps/v1",
		"GET /apis/apps",
		"GET /api/v1/namespaces/kube-system", // an object, not discovery
		"GET /apis/apps/v1/namespaces/a/deployments/b",       // an object
		"PATCH /api/v1/namespaces/a/configmaps/b?dryRun=All", // a write
		"GET /openapi/v2",
		"GET /openapi/v3",
		"GET /openapi/v3/apis/apps/v1?hash=x",
	})
	want := requestStats{total: 11, discovery: 5, openAPIv2: 1, openAPIv3: 2}
	if got != want {
		t.Fatalf("classify = %+v, want %+v", got, want)
	}
	if got := logLines([]byte("GET /api\nGET /apis\n")); len(got) != 2 {
		t.Fatalf("logLines = %q, want two lines", got)
	}
}

func TestFormat(t *testing.T) {
	header := []string{"tool", "N", "operation", "seconds"}
	rows := [][]string{{"kubectl", "200", "create", "9.1"}, {"terraform", "200", "create", "15.0"}}
	wantText := "" +
		"tool       N    operation  seconds\n" +
		"---------  ---  ---------  -------\n" +
		"kubectl    200  create         9.1\n" +
		"terraform  200  create        15.0\n"
	if got := formatText(header, rows); got != wantText {
		t.Errorf("formatText =\n%s\nwant\n%s", got, wantText)
	}
	wantMD := "" +
		"| tool | N | operation | seconds |\n" +
		"|---|---|---|---:|\n" +
		"| kubectl | 200 | create | 9.1 |\n" +
		"| terraform | 200 | create | 15.0 |\n"
	if got := formatMarkdown(header, rows); got != wantMD {
		t.Errorf("formatMarkdown =\n%s\nwant\n%s", got, wantMD)
	}
}

func TestTableRows(t *testing.T) {
	ms := []measurement{
		{tool: "kubectl", n: 200, op: opUpdate, duration: 10 * time.Second, objects: 201, requests: requestStats{total: 402},
			cpu: 2010 * time.Millisecond, peakKiB: 70 * 1024},
		{tool: "terraform", n: 200, op: opUpdate, duration: 15 * time.Second, objects: 201, requests: requestStats{total: 804},
			peakKiB: 75 * 1024, anonKiB: 30 * 1024, stateBytes: 3 << 19, engineCPU: 2500 * time.Millisecond, apiServerCPU: 4 * time.Second},
		// No kubectl counterpart of its own: compared with kubectl's update.
		{tool: "pulumi", n: 200, op: opUpdateSkip, duration: 12 * time.Second, objects: 201},
		// No kubectl measurement at this N: no ratio.
		{tool: "terraform", n: 1000, op: opCreate, duration: 50 * time.Second, objects: 1001},
	}
	got := tableRows(ms, "kubectl")
	want := [][]string{
		{"kubectl", "200", "update", "10.0", "", "2.00", "10.0", "70", "", "", "", ""},
		{"terraform", "200", "update", "15.0", "1.50", "4.00", "0.0", "75", "30", "1.50", "2.5", "4.0"},
		{"pulumi", "200", "update --skip-preview", "12.0", "1.20", "0.00", "0.0", "", "", "", "", ""},
		{"terraform", "1000", "create", "50.0", "", "0.00", "0.0", "", "", "", "", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tableRows =\n%q\nwant\n%q", got, want)
	}
}

func TestSummaryLines(t *testing.T) {
	ms := []measurement{
		{tool: "terraform", n: 200, op: opCreate, duration: 20 * time.Second, objects: 201},
		{tool: "pulumi", n: 200, op: opCreate, duration: 30 * time.Second, objects: 201},
		{tool: "terraform", n: 200, op: opPlan, duration: 10 * time.Second, objects: 201},
		{tool: "pulumi", n: 200, op: opPlan, duration: 5 * time.Second, objects: 201},
		// Per object twice as slow at N=1000.
		{tool: "terraform", n: 1000, op: opCreate, duration: 200 * time.Second, objects: 1001, requests: requestStats{openAPIv2: 1}},
	}
	got := strings.Join(summaryLines(ms, []int{200, 1000}, "N"), "\n")
	for _, want := range []string{
		"pulumi vs terraform at N=200: up (create, preview included) 1.50x apply; preview (no changes) 0.50x plan.",
		"(1.00 is linear): terraform 2.01.", // 200/1001 over 20/201
		"WARNING: terraform downloaded /openapi/v2 at N=1000",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}

func TestParseFlags(t *testing.T) {
	if ops, err := parseOps("plan, create", configMaps); err != nil || !reflect.DeepEqual(ops, []string{opCreate, opPlan}) {
		t.Errorf("parseOps = %v, %v; want create then plan", ops, err)
	}
	if ops, err := parseOps("destroy,skip-preview,update-crd,update,plan,create", bundle); err != nil || !reflect.DeepEqual(ops, operations) {
		t.Errorf("parseOps = %v, %v; want every operation in life order", ops, err)
	}
	for _, bad := range []string{"plan,update", "create,apply", "", "create,update-crd"} {
		if _, err := parseOps(bad, configMaps); err == nil {
			t.Errorf("parseOps(%q) succeeded", bad)
		}
	}
	// Each workload's default operations are valid for it; the ConfigMaps'
	// are what make bench has always measured.
	for _, w := range []workload{configMaps, bundle} {
		if _, err := parseOps(w.defaultOps(), w); err != nil {
			t.Errorf("%s: default ops: %v", w, err)
		}
	}
	if configMaps.defaultOps() != "create,plan,update,skip-preview,destroy" {
		t.Errorf("the ConfigMaps' default ops changed: %s", configMaps.defaultOps())
	}
	if _, err := parseWorkload("helm"); err == nil {
		t.Error("parseWorkload accepted helm")
	}
	if err := bundle.checkEngines([]string{"terraform", "tofu_data"}); err == nil {
		t.Error("a bundle accepted tofu_data, which has no provider to split it")
	}
	if err := configMaps.checkEngines([]string{"tofu_data"}); err != nil {
		t.Error(err)
	}
	if ns, err := parseNs("1000, 200,200"); err != nil || !reflect.DeepEqual(ns, []int{200, 1000}) {
		t.Errorf("parseNs = %v, %v; want [200 1000]", ns, err)
	}
	for _, bad := range []string{"", "0", "200,x"} {
		if _, err := parseNs(bad); err == nil {
			t.Errorf("parseNs(%q) succeeded", bad)
		}
	}
	if e, err := parseEngines("terraform,tofu,pulumi,tofu"); err != nil || !reflect.DeepEqual(e, []string{"terraform", "tofu", "pulumi"}) {
		t.Errorf("parseEngines = %v, %v", e, err)
	}
	if _, err := parseEngines("terraform,helm"); err == nil {
		t.Error("parseEngines accepted helm")
	}
	for _, bad := range []string{"tofu_skip_checkpoints", "pulumi_provider", "pulumi_"} {
		if _, err := parseEngines(bad); err == nil {
			t.Errorf("parseEngines accepted %s", bad)
		}
	}
	// Each engine alone, with the connection in the provider's
	// configuration, Pulumi saving its stack only at the end, and Terraform
	// with its state in the cluster, has a row of its own in the table,
	// named as -engines names it.
	all := "tofu_data,tofu_provider_block,pulumi_data,pulumi_provider_block,pulumi_skip_checkpoints,terraform_kubernetes_backend," +
		"tofu_http_backend"
	if e, err := parseEngines(all); err != nil || strings.Join(e, ",") != all {
		t.Errorf("parseEngines = %v, %v", e, err)
	}
	for _, tool := range []tool{
		&terraformTool{engine: "tofu", variant: alone}, &terraformTool{engine: "terraform", variant: alone},
		&terraformTool{engine: "tofu", variant: providerBlock}, &pulumiTool{}, &pulumiTool{variant: alone},
		&pulumiTool{variant: providerBlock}, &pulumiTool{variant: skipCheckpoints},
		&terraformTool{engine: "terraform", variant: kubernetesBackend}, &terraformTool{engine: "tofu", variant: kubernetesBackend},
		&terraformTool{engine: "terraform", variant: httpBackend}, &terraformTool{engine: "tofu", variant: httpBackend},
	} {
		if !slices.Contains(engineNames, tool.name()) {
			t.Errorf("tool name %q is none of -engines' %v", tool.name(), engineNames)
		}
	}
	// makeTools reads a name as engine, underscore, variant; the tool it
	// makes must carry the same name into the table.
	for _, name := range engineNames {
		engine, rest, _ := strings.Cut(name, "_")
		if got := configName(engine, variant(rest)); got != name {
			t.Errorf("configName(%q, %q) = %q", engine, rest, got)
		}
	}
	if got := (&pulumiTool{variant: skipCheckpoints}).env(); !slices.Contains(got, "PULUMI_SKIP_CHECKPOINTS=true") {
		t.Errorf("pulumi_skip_checkpoints runs without PULUMI_SKIP_CHECKPOINTS=true: %v", got)
	}
	if got := (&pulumiTool{}).env(); slices.ContainsFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "PULUMI_SKIP_CHECKPOINTS=") }) {
		t.Errorf("pulumi runs with PULUMI_SKIP_CHECKPOINTS: %v", got)
	}
}

// pulumiProgram is what TestYAMLProgram reads of a generated program.
type pulumiProgram struct {
	Plugins struct {
		Providers []struct{ Name, Path string }
	}
	Variables struct {
		Cluster struct {
			KubeconfigFile string `yaml:"kubeconfigFile"`
		}
	}
	Resources map[string]struct {
		Type       string
		Properties struct {
			ClusterConnection any    `yaml:"clusterConnection"`
			YAMLBody          string `yaml:"yamlBody"`
			Input             string
		}
		Options struct {
			DependsOn []string `yaml:"dependsOn"`
			Provider  string
		}
	}
}

// TestYAMLProgram parses the generated Pulumi programs: N+1 resources of the
// provider's type, each ConfigMap's body a YAML document with the config
// value interpolated, ordered after the namespace; the connection in each
// object or in one provider resource they all name; or Stash resources
// holding the same bodies and no plugin.
func TestYAMLProgram(t *testing.T) {
	const object = "k8sconnect:index/kubernetesObject:KubernetesObject"
	wantBody := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-0002\n  namespace: bench-pulumi-3\ndata:\n  key: ${value}\n"
	parse := func(v variant) pulumiProgram {
		t.Helper()
		var program pulumiProgram
		src := yamlProgram(3, "bench-pulumi-3", "/tmp/kube config", v)
		if err := yaml.Unmarshal([]byte(src), &program); err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		return program
	}

	program := parse(plain)
	// The engine runs the installed plugin (installPlugin), as a user's.
	if p := program.Plugins.Providers; len(p) != 0 {
		t.Errorf("plugins.providers = %+v, want none: a plugin by path is never cached", p)
	}
	if program.Variables.Cluster.KubeconfigFile != "/tmp/kube config" {
		t.Errorf("variables.cluster = %+v", program.Variables.Cluster)
	}
	if len(program.Resources) != 4 {
		t.Fatalf("%d resources, want 4", len(program.Resources))
	}
	cm := program.Resources["cm-0002"]
	if cm.Type != object || cm.Properties.YAMLBody != wantBody || cm.Properties.ClusterConnection != "${cluster}" ||
		!reflect.DeepEqual(cm.Options.DependsOn, []string{"${ns}"}) || cm.Options.Provider != "" {
		t.Errorf("cm-0002 = %+v", cm)
	}

	program = parse(providerBlock)
	if len(program.Resources) != 5 {
		t.Fatalf("%d resources, want 4 and the provider", len(program.Resources))
	}
	if p := program.Resources["k8sconnect"]; p.Type != "pulumi:providers:k8sconnect" || p.Properties.ClusterConnection != "${cluster}" {
		t.Errorf("provider resource = %+v", p)
	}
	for _, name := range []string{"ns", "cm-0002"} {
		r := program.Resources[name]
		if r.Type != object || r.Properties.ClusterConnection != nil || r.Options.Provider != "${k8sconnect}" {
			t.Errorf("%s = %+v; want the provider's connection, none of its own", name, r)
		}
	}
	if cm := program.Resources["cm-0002"]; cm.Properties.YAMLBody != wantBody || !reflect.DeepEqual(cm.Options.DependsOn, []string{"${ns}"}) {
		t.Errorf("cm-0002 = %+v", cm)
	}

	program = parse(alone)
	if len(program.Plugins.Providers) != 0 || program.Variables.Cluster.KubeconfigFile != "" || len(program.Resources) != 4 {
		t.Errorf("the Stash program has a plugin path, a connection or other than 4 resources: %+v", program)
	}
	cm = program.Resources["cm-0002"]
	if cm.Type != "pulumi:index:Stash" || cm.Properties.Input != wantBody || cm.Properties.YAMLBody != "" ||
		!reflect.DeepEqual(cm.Options.DependsOn, []string{"${ns}"}) {
		t.Errorf("cm-0002 = %+v", cm)
	}
}

// TestSampler runs a stand-in plugin (a copy of sh named like the Terraform
// plugin, so its comm is "terraform-provi") below a shell, as terraform runs
// the provider, and checks that the sampler finds it and its CPU time, and
// not the shell.
func TestSampler(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(t.TempDir(), "terraform-provider-standin")
	if err := os.WriteFile(plugin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// The outer shell waits for the plugin (no exec), so the plugin is a
	// grandchild, as under terraform.
	cmd := exec.Command(sh, "-c", `"$0" -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'; true`, plugin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := startSampler(cmd.Process.Pid, 20*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	cpu, processes, peak, anon := s.Stop()
	if processes != 1 || cpu <= 0 || peak <= 0 || anon <= 0 || anon > peak {
		t.Fatalf("sampler: cpu %v, %d processes, peak %d KiB, anon %d KiB; want the one plugin process, with CPU time, "+
			"an RSS and an anonymous part of it", cpu, processes, peak, anon)
	}
	if stats, ok := treeStats(os.Getpid()); ok {
		if _, found := stats[os.Getpid()]; !found {
			t.Fatalf("treeStats(self) lacks this process: %v", stats)
		}
	}
}

// TestTerraformConfigs checks that every Terraform configuration names its
// ConfigMaps through a local map, evaluated once, not with an expression in
// the for_each that the engines evaluate again for every instance.
func TestTerraformConfigs(t *testing.T) {
	state, err := startStateServer()
	if err != nil {
		t.Fatal(err)
	}
	defer state.Close()
	for _, v := range []variant{plain, alone, providerBlock, kubernetesBackend, httpBackend} {
		tool := &terraformTool{engine: "tofu", variant: v, work: t.TempDir(), bin: "/tmp/bin", kubeconfig: "/tmp/kubeconfig", state: state}
		if err := tool.setup(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(tool.dir(3), "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if n := strings.Count(src, `names = { for i in range(3) : format("cm-%04d", i) => i }`); n != 1 {
			t.Errorf("%s: the names local appears %d times, want once:\n%s", tool.name(), n, src)
		}
		for _, line := range strings.Split(src, "\n") {
			if f, ok := strings.CutPrefix(strings.TrimSpace(line), "for_each"); ok && strings.TrimSpace(strings.TrimLeft(f, " =")) != "local.names" {
				t.Errorf("%s: %q: want for_each = local.names", tool.name(), line)
			}
		}
		if !strings.Contains(src, "for_each") {
			t.Errorf("%s: no for_each:\n%s", tool.name(), src)
		}
		// Only the backend variant keeps its state in the cluster, and only
		// it is initialised, once, before its create.
		inv, _ := tool.invocation(opCreate, 3)
		inits := 0
		for _, op := range operations {
			if inv, ok := tool.invocation(op, 3); ok {
				inits += len(inv.before)
			}
		}
		rc, err := os.ReadFile(filepath.Join(tool.dir(3), "cli.tfrc"))
		if err != nil {
			t.Fatal(err)
		}
		if !v.remote() {
			if strings.Contains(src, "backend") || inits != 0 || strings.Contains(string(rc), "mirror") {
				t.Errorf("%s: a backend, an init or a mirror (%d inits):\n%s\n%s", tool.name(), inits, src, rc)
			}
			continue
		}
		want := []string{`backend "kubernetes" {`, `secret_suffix = "bench-tofu-kubernetes-backend-3-state"`,
			`config_path   = "/tmp/kubeconfig"`, "cluster_connection = local.cluster"}
		if v == httpBackend {
			url := state.URL("bench-tofu-http-backend-3")
			want = []string{`backend "http" {`, `address        = "` + url + `"`, `lock_address   = "` + url + `"`,
				`unlock_address = "` + url + `"`, "cluster_connection = local.cluster"}
		}
		for _, want := range want {
			if !strings.Contains(src, want) {
				t.Errorf("%s: no %q:\n%s", tool.name(), want, src)
			}
		}
		if inits != 1 || len(inv.before) != 1 || !slices.Equal(inv.before[0][1:], []string{"init", "-input=false", "-no-color"}) {
			t.Errorf("%s: want one init, before the create: %d, %v", tool.name(), inits, inv.before)
		}
		// The override runs the plugin, as everywhere; init installs it from
		// the mirror, which holds it for both registries.
		for _, want := range []string{"dev_overrides", "filesystem_mirror", `exclude = ["registry.terraform.io/k8sconnect/k8sconnect", "registry.opentofu.org/k8sconnect/k8sconnect"]`} {
			if !strings.Contains(string(rc), want) {
				t.Errorf("%s: cli.tfrc has no %q:\n%s", tool.name(), want, rc)
			}
		}
		for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
			link := filepath.Join(tool.dir(3), "mirror", host, "k8sconnect", "k8sconnect", mirrorVersion, runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-k8sconnect")
			if target, err := os.Readlink(link); err != nil || target != "/tmp/bin/terraform-provider-k8sconnect" {
				t.Errorf("%s: mirror %s: %q, %v", tool.name(), host, target, err)
			}
		}
	}
}
