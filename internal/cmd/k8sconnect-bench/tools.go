package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/k8sconnect/k8sconnect"
	"github.com/k8sconnect/k8sconnect/internal/toolchain"
)

// The data value each operation leaves: create and plan apply v1, update v2,
// Pulumi's update without preview v3.
var values = map[string]string{opCreate: "v1", opPlan: "v1", opUpdate: "v2", opUpdateSkip: "v3", opDestroy: "v3"}

// namespace is a tool's namespace for N objects (a DNS label: no underscores).
func namespace(tool string, n int) string {
	return fmt.Sprintf("bench-%s-%d", strings.ReplaceAll(tool, "_", "-"), n)
}

// cleanEnv is this process's environment without what would point the tools
// elsewhere or change their cost: the developer's Pulumi and Terraform
// settings (TF_LOG, a plugin cache...), KUBECONFIG, and the request log and
// profile directory, which the bench sets per step.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PULUMI_") || strings.HasPrefix(k, "TF_") || k == "KUBECONFIG" ||
			k == "K8SCONNECT_REQUEST_LOG" || k == "K8SCONNECT_CPU_PROFILE" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// kubectlTool applies, dry-runs and deletes the same objects from manifest
// files, logging its requests (-v=6) to count them.
type kubectlTool struct {
	path, work, kubeconfig string
	workload               workload
	ops                    []string
}

func (k *kubectlTool) name() string         { return "kubectl" }
func (k *kubectlTool) isKubectl() bool      { return true }
func (k *kubectlTool) stateBytes(int) int64 { return 0 }

func (k *kubectlTool) dir(n int) string { return filepath.Join(k.work, fmt.Sprintf("kubectl-%d", n)) }

func (k *kubectlTool) setup(_ context.Context, n int) error {
	if err := os.MkdirAll(k.dir(n), 0o755); err != nil {
		return err
	}
	if k.workload == bundle {
		return k.setupBundle(n)
	}
	ns := namespace("kubectl", n)
	for _, v := range []string{"v1", "v2"} {
		if err := os.WriteFile(filepath.Join(k.dir(n), "apply-"+v+".yaml"), []byte(configMapsYAML(ns, n, v)), 0o600); err != nil {
			return err
		}
	}
	// Deleted ConfigMaps first, then their namespace, as terraform and pulumi
	// order it: deleting the namespace first would leave kubectl deleting
	// objects that the namespace controller is already removing.
	var docs []string
	for i := 0; i < n; i++ {
		docs = append(docs, configMapDoc(ns, i, "v2"))
	}
	docs = append(docs, namespaceDoc(ns))
	return os.WriteFile(filepath.Join(k.dir(n), "delete.yaml"), []byte(strings.Join(docs, "---\n")), 0o600)
}

func (k *kubectlTool) invocation(op string, n int) (invocation, bool) {
	if k.workload == bundle {
		return k.bundleInvocation(op, n)
	}
	var args []string
	switch op {
	case opCreate:
		args = []string{"apply", "--server-side", "-f", "apply-v1.yaml"}
	case opPlan:
		args = []string{"apply", "--server-side", "--dry-run=server", "-f", "apply-v1.yaml"}
	case opUpdate:
		args = []string{"apply", "--server-side", "-f", "apply-v2.yaml"}
	case opDestroy:
		args = []string{"delete", "--wait", "-f", "delete.yaml"}
	default:
		return invocation{}, false
	}
	return invocation{args: k.command(args...), dir: k.dir(n), env: append(cleanEnv(), "KUBECONFIG="+k.kubeconfig)}, true
}

// command is a kubectl command line that logs its requests, with its own
// discovery cache, so that a developer's ~/.kube/cache neither helps nor
// receives this cluster's.
func (k *kubectlTool) command(args ...string) []string {
	return append([]string{k.path}, append(args, "-v=6", "--cache-dir="+filepath.Join(k.work, "kube-cache"))...)
}

// variant is how a configuration differs from its engine's plain one: what
// -engines names after the engine and an underscore.
type variant string

const (
	plain variant = ""
	// alone: the same N objects as resources the engine keeps by itself
	// (terraform_data; Pulumi's Stash): what the engine costs with no
	// provider at all.
	alone variant = "data"
	// providerBlock: the connection in the provider's configuration (the
	// provider block; a Pulumi provider resource that every object names),
	// as the secrets guide advises, instead of in every object: less than
	// half the state per object.
	providerBlock variant = "provider_block"
	// skipCheckpoints (Pulumi): PULUMI_SKIP_CHECKPOINTS=true, so that the
	// file backend saves the stack once at the end instead of after every
	// step: what those saves cost. Not a setting to run with: a crash
	// mid-update would leave a state that knows nothing of what it made.
	skipCheckpoints variant = "skip_checkpoints"
	// kubernetesBackend (Terraform, OpenTofu): the state in a Secret in the
	// cluster (the kubernetes backend) instead of a local file, as a team
	// that applies from CI keeps it. A remote backend holds the state in
	// memory during an apply and saves it every 20 s; the local backend
	// rewrites the whole file after every object (Terraform; OpenTofu 1.12
	// saves every 20 s either way).
	kubernetesBackend variant = "kubernetes_backend"
	// httpBackend (Terraform, OpenTofu): the state in the http backend,
	// served by the bench itself (stateServer), as a remote backend with
	// locking and no limit on the state's size: a bundle's state is far
	// larger than the 1 MB Secret of the kubernetes backend.
	httpBackend variant = "http_backend"
)

// remote: the state is kept by a backend, which terraform init sets up.
func (v variant) remote() bool { return v == kubernetesBackend || v == httpBackend }

// configName is the configuration's name in -engines and in the table.
func configName(engine string, v variant) string {
	if v == plain {
		return engine
	}
	return engine + "_" + string(v)
}

// terraformTool runs terraform or tofu on one configuration of N objects
// from a for_each, or of a bundle's three for_each over
// k8sconnect_yaml_scoped, or of either as one k8sconnect_manifest_set (set),
// the provider found through dev_overrides (no init, but for a backend's).
type terraformTool struct {
	engine, path, work, bin, reqLog, kubeconfig string
	variant                                     variant // plain, alone, providerBlock, kubernetesBackend or httpBackend
	set                                         bool    // the workload as one k8sconnect_manifest_set (set.go)
	workload                                    workload
	ops                                         []string
	state                                       *stateServer // httpBackend's
}

func (t *terraformTool) name() string    { return configName(t.engine, t.variant) + setName(t.set) }
func (t *terraformTool) isKubectl() bool { return false }

// stateName is the state's name in the http backend.
func (t *terraformTool) stateName(n int) string { return namespace(t.name(), n) }

// stateBytes is the local state file's size, or the http backend's stored
// state; the kubernetes backend's Secret is not measured.
func (t *terraformTool) stateBytes(n int) int64 {
	switch t.variant {
	case httpBackend:
		return t.state.Size(t.stateName(n))
	case kubernetesBackend:
		return 0
	}
	return fileSize(filepath.Join(t.dir(n), "terraform.tfstate"))
}

func (t *terraformTool) dir(n int) string {
	return filepath.Join(t.work, fmt.Sprintf("%s-%d", t.name(), n))
}

func (t *terraformTool) setup(_ context.Context, n int) error {
	if err := os.MkdirAll(t.dir(n), 0o755); err != nil {
		return err
	}
	// The plugin under both registries' names, through dev_overrides.
	var overrides, sources []string
	for _, host := range registries {
		source := host + "/k8sconnect/k8sconnect"
		overrides = append(overrides, fmt.Sprintf("    %q = %q\n", source, t.bin))
		sources = append(sources, strconv.Quote(source))
	}
	install := "  direct {}\n"
	if t.variant.remote() {
		// A backend needs init, and init installs every provider the
		// configuration requires, overridden or not: from a mirror of the
		// same binary, since nothing may be fetched. The override still
		// decides what runs, so every configuration runs the same plugin
		// the same way.
		mirror := filepath.Join(t.dir(n), "mirror")
		if err := toolchain.MirrorProvider(filepath.Join(t.bin, "terraform-provider-k8sconnect"), mirror, "k8sconnect/k8sconnect"); err != nil {
			return err
		}
		list := "[" + strings.Join(sources, ", ") + "]"
		install = fmt.Sprintf("  filesystem_mirror {\n    path    = %q\n    include = %s\n  }\n  direct {\n    exclude = %s\n  }\n",
			mirror, list, list)
	}
	rc := "provider_installation {\n  dev_overrides {\n" + strings.Join(overrides, "") + "  }\n" + install + "}\n"
	if err := os.WriteFile(filepath.Join(t.dir(n), "cli.tfrc"), []byte(rc), 0o600); err != nil {
		return err
	}
	switch {
	case t.set:
		return t.setupSet(n)
	case t.workload == bundle:
		return t.setupBundle(n)
	case t.workload == chart:
		return t.setupChart(n)
	}
	if t.variant == alone {
		floor := fmt.Sprintf(`variable "value" {
  type = string
}
locals {
  %[2]s
}
resource "terraform_data" "ns" {
  input = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %[1]s\n"
}
resource "terraform_data" "cm" {
  for_each   = local.names
  input      = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${each.key}\n  namespace: %[1]s\ndata:\n  key: ${var.value}\n"
  depends_on = [terraform_data.ns]
}
`, namespace(t.name(), n), namesLocal(n))
		return os.WriteFile(filepath.Join(t.dir(n), "main.tf"), []byte(floor), 0o600)
	}
	providerConfig, perResource, backend := t.connection(n)
	// depends_on orders the namespace first without making yaml_body unknown
	// at plan time, as a reference to the namespace's outputs would.
	main := fmt.Sprintf(`terraform {
  required_providers {
    k8sconnect = { source = "k8sconnect/k8sconnect" }
  }
%[6]s}
variable "value" {
  type = string
}
locals {
  cluster = { kubeconfig_file = %[3]q }
  %[1]s
}
%[4]sresource "k8sconnect_object" "ns" {
  yaml_body          = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %[2]s\n"
  %[5]s
}
resource "k8sconnect_object" "cm" {
  for_each           = local.names
  yaml_body          = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${each.key}\n  namespace: %[2]s\ndata:\n  key: ${var.value}\n"
  %[5]s
  depends_on         = [k8sconnect_object.ns]
}
`, namesLocal(n), namespace(t.name(), n), t.kubeconfig, providerConfig, perResource, backend)
	return os.WriteFile(filepath.Join(t.dir(n), "main.tf"), []byte(main), 0o600)
}

// registries are the hosts under which Terraform and OpenTofu name the
// provider.
var registries = toolchain.Registries

// mirrorVersion is the plugin's version in the mirror.
const mirrorVersion = toolchain.MirrorVersion

// namesLocal is the ConfigMaps' names as a local map, which the for_each
// names. Terraform and OpenTofu evaluate a resource's for_each expression
// again for each of its instances, and iterating a set sorts it every time.
// Creating 1,000 terraform_data resources took OpenTofu 32.8 s with
// toset([for ...]) written in the for_each, 12.6 s with that set in a local
// and 2.1 s with a map in a local (Terraform 52.9, 31.2 and 11.4 s). The
// large-configurations guide tells users to write it this way, with these
// figures.
func namesLocal(n int) string {
	return fmt.Sprintf(`names = { for i in range(%d) : format("cm-%%04d", i) => i }`, n)
}

// connection is where the configuration's connection and state live: the
// provider block (providerBlock) or each resource, and the backend block.
func (t *terraformTool) connection(n int) (providerConfig, perResource, backend string) {
	providerConfig, perResource = "", "cluster_connection = local.cluster"
	switch t.variant {
	case providerBlock:
		providerConfig, perResource = "provider \"k8sconnect\" {\n  cluster_connection = local.cluster\n}\n", ""
	case kubernetesBackend:
		backend = fmt.Sprintf("  backend \"kubernetes\" {\n    secret_suffix = %q\n    namespace     = \"default\"\n    config_path   = %q\n  }\n",
			// The backend refuses a suffix that ends in -<number>.
			namespace(t.name(), n)+"-state", t.kubeconfig)
	case httpBackend:
		url := t.state.URL(t.stateName(n))
		backend = fmt.Sprintf("  backend \"http\" {\n    address        = %q\n    lock_address   = %q\n    unlock_address = %q\n  }\n",
			url, url, url)
	}
	return providerConfig, perResource, backend
}

func (t *terraformTool) invocation(op string, n int) (invocation, bool) {
	var args []string
	switch op {
	case opCreate, opUpdate, opUpdateCRD:
		args = []string{"apply", "-auto-approve"}
	case opPlan:
		// -detailed-exitcode: a plan with changes exits 2, failing the bench.
		args = []string{"plan", "-detailed-exitcode"}
	case opDestroy:
		args = []string{"destroy", "-auto-approve"}
	default:
		return invocation{}, false
	}
	args = append([]string{t.path}, append(args, "-input=false", "-no-color")...)
	var prepare func() error
	if t.set || t.workload == bundle {
		// The bundle's file (a set's manifests) as it stands at this step,
		// where the configuration reads it, as a user edits theirs.
		prepare = func() error { return copyFile(t.bundleFile(n, op), filepath.Join(t.dir(n), bundleFileName)) }
	} else {
		args = append(args, "-var", "value="+values[op])
	}
	var before [][]string
	if op == opCreate && t.variant.remote() {
		// A backend is initialised before its first use (untimed).
		before = [][]string{{t.path, "init", "-input=false", "-no-color"}}
	}
	env := append(cleanEnv(), "TF_CLI_CONFIG_FILE="+filepath.Join(t.dir(n), "cli.tfrc"), "CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1", "K8SCONNECT_REQUEST_LOG="+t.reqLog)
	return invocation{args: args, dir: t.dir(n), env: env, prepare: prepare, before: before}, true
}

// pulumiTool runs the pulumi CLI on a Pulumi YAML program of N objects (or
// of one ManifestSet of them, set), with the plugin installed in PULUMI_HOME
// as a user installs it (installPlugin), a file:// backend and PULUMI_HOME in
// the work directory and nothing fetched from the network.
type pulumiTool struct {
	path, work, plugin, reqLog, kubeconfig string
	variant                                variant
	set                                    bool // the workload as one ManifestSet (set.go)
	workload                               workload
	ops                                    []string
}

func (p *pulumiTool) name() string    { return configName("pulumi", p.variant) + setName(p.set) }
func (p *pulumiTool) isKubectl() bool { return false }

// stack is the stack's name: one backend holds every configuration's stack
// at every N, so each needs a name of its own.
func (p *pulumiTool) stack(n int) string {
	return fmt.Sprintf("bench-%s-%d", strings.ReplaceAll(p.name(), "_", "-"), n)
}

// stateBytes is the size of the stack's checkpoint file in the file://
// backend (.pulumi/stacks/<project>/<stack>.json).
func (p *pulumiTool) stateBytes(n int) int64 {
	files, _ := filepath.Glob(filepath.Join(p.pulumiState(), ".pulumi", "stacks", "*", p.stack(n)+".json"))
	if len(files) == 0 {
		files, _ = filepath.Glob(filepath.Join(p.pulumiState(), ".pulumi", "stacks", p.stack(n)+".json"))
	}
	if len(files) != 1 {
		return 0
	}
	return fileSize(files[0])
}

func (p *pulumiTool) dir(n int) string {
	return filepath.Join(p.work, fmt.Sprintf("%s-%d", p.name(), n))
}

// pulumiHome and pulumiState are the PULUMI_HOME and the file:// backend
// that every Pulumi configuration shares; setup makes them.
func (p *pulumiTool) pulumiHome() string  { return filepath.Join(p.work, "pulumi-home") }
func (p *pulumiTool) pulumiState() string { return filepath.Join(p.work, "pulumi-state") }

func (p *pulumiTool) env() []string {
	env := append(cleanEnv(),
		// The CLI's directory first: its YAML host is found beside it, and
		// no warning about a host "from $PATH" is printed.
		"PATH="+filepath.Dir(p.path)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PULUMI_HOME="+p.pulumiHome(),
		"PULUMI_BACKEND_URL=file://"+filepath.ToSlash(p.pulumiState()),
		"PULUMI_CONFIG_PASSPHRASE=bench",
		"PULUMI_SKIP_UPDATE_CHECK=true",
		"PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true",
		"K8SCONNECT_REQUEST_LOG="+p.reqLog,
	)
	if p.variant == skipCheckpoints {
		env = append(env, "PULUMI_SKIP_CHECKPOINTS=true")
	}
	return env
}

// yamlProgram is the Pulumi YAML program of n objects in namespace ns:
// KubernetesObjects, each with the connection or (providerBlock) naming a
// provider resource that holds it, or (alone) Stash resources holding the
// same YAML bodies.
func yamlProgram(n int, ns, kubeconfig string, v variant) string {
	var b strings.Builder
	b.WriteString("name: k8sconnect-bench\nruntime: yaml\n")
	b.WriteString("config:\n  value:\n    type: string\n")
	if v != alone {
		fmt.Fprintf(&b, "variables:\n  cluster:\n    kubeconfigFile: %q\n", kubeconfig)
	}
	b.WriteString("resources:\n")
	typ, body, connection, options := "k8sconnect:index/kubernetesObject:KubernetesObject", "yamlBody",
		"      clusterConnection: ${cluster}\n", ""
	switch v {
	case providerBlock:
		b.WriteString("  k8sconnect:\n    type: pulumi:providers:k8sconnect\n    properties:\n      clusterConnection: ${cluster}\n")
		connection, options = "", "      provider: ${k8sconnect}\n"
	case alone:
		typ, body, connection = "pulumi:index:Stash", "input", ""
	}
	fmt.Fprintf(&b, "  ns:\n    type: %s\n    properties:\n%s      %s: \"apiVersion: v1\\nkind: Namespace\\nmetadata:\\n  name: %s\\n\"\n",
		typ, connection, body, ns)
	if options != "" {
		b.WriteString("    options:\n" + options)
	}
	for i := 0; i < n; i++ {
		// dependsOn, as in the Terraform configuration: the namespace first,
		// the body known at preview.
		fmt.Fprintf(&b, `  cm-%04d:
    type: %s
    properties:
%s      %s: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%04d\n  namespace: %s\ndata:\n  key: ${value}\n"
    options:
%s      dependsOn:
        - ${ns}
`, i, typ, connection, body, i, ns, options)
	}
	return b.String()
}

func (p *pulumiTool) setup(ctx context.Context, n int) error {
	dir := p.dir(n)
	for _, d := range []string{dir, p.pulumiHome(), p.pulumiState()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := p.installPlugin(ctx); err != nil {
		return err
	}
	commands := [][]string{{"stack", "init", p.stack(n), "--non-interactive"}}
	switch {
	case p.set:
		// The values are in the manifests' file: no config.
		if err := p.setupSet(n); err != nil {
			return err
		}
	case p.workload == bundle:
		if err := p.setupBundle(n); err != nil {
			return err
		}
	case p.workload == chart:
		if err := p.setupChart(n); err != nil {
			return err
		}
		commands = append(commands, []string{"config", "set", "value", values[opCreate]})
	default:
		program := yamlProgram(n, namespace(p.name(), n), p.kubeconfig, p.variant)
		if err := os.WriteFile(filepath.Join(dir, "Pulumi.yaml"), []byte(program), 0o600); err != nil {
			return err
		}
		commands = append(commands, []string{"config", "set", "value", values[opCreate]})
	}
	for _, args := range commands {
		cmd := exec.CommandContext(ctx, p.path, args...)
		cmd.Dir, cmd.Env = dir, p.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("pulumi %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// installPlugin installs the plugin into PULUMI_HOME as a user does (`pulumi
// plugin install resource k8sconnect <version> --file`, the way
// docs/pulumi/installation-configuration.md gives), once for every
// configuration that shares the home, and runs one preview of a program
// that names the provider, as a user's first program after the install
// does. Pulumi caches the schema of an installed, versioned plugin at that
// first load (PULUMI_HOME/schemas), and every later program's language host
// reads it from there instead of starting the plugin to ask for it. A plugin
// named by path in Pulumi.yaml is never cached: each `pulumi up` then starts
// it six times instead of three, about 0.5 s more on this chart's create,
// which no installed plugin costs its user.
func (p *pulumiTool) installPlugin(ctx context.Context) error {
	version := k8sconnect.Version
	installed := filepath.Join(p.pulumiHome(), "plugins", "resource-k8sconnect-v"+version, "pulumi-resource-k8sconnect")
	if _, err := os.Stat(installed); err == nil {
		return nil
	}
	warm := filepath.Join(p.work, "pulumi-first-program")
	if err := os.MkdirAll(warm, 0o755); err != nil {
		return err
	}
	program := "name: k8sconnect-first-program\nruntime: yaml\nresources:\n  k8sconnect:\n    type: pulumi:providers:k8sconnect\n"
	if err := os.WriteFile(filepath.Join(warm, "Pulumi.yaml"), []byte(program), 0o600); err != nil {
		return err
	}
	for _, step := range []struct {
		dir  string
		args []string
	}{
		{p.work, []string{"plugin", "install", "resource", "k8sconnect", version, "--file", filepath.Join(p.plugin, "pulumi-resource-k8sconnect")}},
		{warm, []string{"stack", "init", "first-program", "--non-interactive"}},
		{warm, []string{"preview", "--non-interactive"}},
	} {
		cmd := exec.CommandContext(ctx, p.path, step.args...)
		cmd.Dir, cmd.Env = step.dir, p.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("pulumi %s: %w\n%s", strings.Join(step.args, " "), err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(p.pulumiHome(), "schemas")); err != nil {
		return fmt.Errorf("pulumi cached no schema of the installed plugin: %w", err)
	}
	// As goBuild does for the built plugin: the installed copy runs as one
	// installed earlier does, read from disk.
	return dropFromPageCache(installed)
}

func (p *pulumiTool) invocation(op string, n int) (invocation, bool) {
	var args []string
	var before [][]string
	switch op {
	case opCreate:
		args = []string{"up", "--yes"}
	case opPlan:
		args = []string{"preview", "--expect-no-changes"}
	case opUpdate, opUpdateCRD:
		args = []string{"up", "--yes"}
	case opUpdateSkip:
		args = []string{"up", "--yes", "--skip-preview"}
	case opDestroy:
		args = []string{"destroy", "--yes"}
	default:
		return invocation{}, false
	}
	var prepare func() error
	switch {
	case p.set:
		// The set's manifests as they stand at this step, where the
		// program's path names them.
		prepare = func() error { return copyFile(p.manifestsFile(n, op), filepath.Join(p.dir(n), manifestsFileName)) }
	case p.workload == bundle:
		// The program as it stands at this step, as a user edits theirs.
		prepare = func() error { return copyFile(p.programFile(n, op), filepath.Join(p.dir(n), "Pulumi.yaml")) }
	case op == opUpdate || op == opUpdateSkip:
		before = [][]string{{p.path, "config", "set", "value", values[op]}}
	}
	args = append([]string{p.path}, append(args, "--non-interactive", "--color=never")...)
	return invocation{args: args, dir: p.dir(n), env: p.env(), prepare: prepare, before: before}, true
}
