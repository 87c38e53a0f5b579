package sdkgen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	pschema "github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	"github.com/k8sconnect/k8sconnect/bridge"
	"github.com/k8sconnect/k8sconnect/provider"
)

// The Pulumi docs of every resource and function are assembled here, at
// generation, from three sources that already exist for other reasons:
//
//   - the prose: the framework provider's own descriptions, which Terraform's
//     docs (make docs) show too, in Pulumi's terms (see pulumiTerms);
//   - the examples: regions of the Pulumi example programs that the bridge
//     tests run (see Regions);
//   - the import id: the Terraform import example of the resource
//     (examples/resources/<type>/import.sh), which tfplugindocs shows.
//
// The bridge would take a resource's description and examples from registry
// markdown (ProviderInfo.UpstreamRepoPath or DocInfo.Markdown), but that is
// Terraform's markdown: HCL examples that it converts with `pulumi convert`,
// `terraform import` sections, snake_case names. Generation runs with
// XInMemoryDocs, so the bridge reads no markdown and leaves every resource and
// function description (and every function property) empty; describe fills
// them in the schema before the SDKs are generated, so each SDK carries them
// as doc comments and the plugin serves them in its schema.

// entityDoc says what the docs of one resource or function show beyond its
// framework description.
type entityDoc struct {
	tf       string // Terraform type name
	function bool   // a data source, which is a function under Pulumi
	examples []docExample
	// importDoc is the prose of the Import section (resources only); with
	// %[1]s the id format, %[2]s the `pulumi import` command. Without an
	// import.sh the resource is not importable and the text says why.
	importDoc string
}

type docExample struct {
	title  string
	region string // the region name in the example programs
}

var entityDocs = []entityDoc{
	{
		tf: "k8sconnect_object",
		examples: []docExample{
			{"A namespace and a ConfigMap in it", "object-quickstart"},
		},
		importDoc: "An existing object is imported by an id of the form `%[1]s`, e.g. with\n\n" +
			"```sh\n$ %[2]s\n```\n\n" +
			"or with the `import` resource option and the same id. The id carries no credentials: the object is " +
			"read through the provider's `clusterConnection` when it has one and the id names no context, else " +
			"through the kubeconfig files of `$KUBECONFIG` (merged as kubectl merges them) or `~/.kube/config`, " +
			"in the context given, else their current-context. The first `pulumi up` with the resource's own " +
			"`clusterConnection` then takes ownership of the fields in `yamlBody`, in place (same UID). " +
			"A Secret's values are not imported.",
	},
	{
		tf: "k8sconnect_patch",
		examples: []docExample{
			{"Route the EKS aws-node DaemonSet through a proxy", "patch-aws-node"},
			{"Adjust a Deployment that a Helm release installed", "patch-helm"},
			{"A JSON Patch and a merge patch", "patch-json"},
			{"Set an env var on a Deployment and wait for its rollout", "patch-and-wait"},
			{"Split a YAML text, patch another tool's ConfigMap, wait for the value and read it back", "yaml-split-patch-wait"},
		},
		importDoc: "A Patch is not imported: creating it is what takes its fields from their current managers. " +
			"Declare it and run `pulumi up`.",
	},
	{
		tf: "k8sconnect_wait",
		examples: []docExample{
			{"Gate one Deployment on another's rollout", "wait-rollout"},
			{"Create what needs a migration only once its Job is Complete", "wait-retry"},
			{"Wait for a LoadBalancer's hostname and use it", "wait-field"},
			{"Set an env var on a Deployment and wait for its rollout", "patch-and-wait"},
			{"Split a YAML text, patch another tool's ConfigMap, wait for the value and read it back", "yaml-split-patch-wait"},
		},
		importDoc: "A Wait is not imported: it holds no object of its own. Declare it and run `pulumi up`, " +
			"which waits on the object.",
	},
	{
		tf: "k8sconnect_helm_release",
		examples: []docExample{
			{"Install a chart as a Helm release, planned per object", "helm-release"},
		},
		importDoc: "A release made by `helm install` is adopted by an id of the form `%[1]s`, e.g. with\n\n" +
			"```sh\n$ %[2]s\n```\n\n" +
			"or with the resource option `import` set to that id. The first `pulumi up` then takes its objects over " +
			"in place (same UIDs) and writes the next revision of the same history.",
	},
	{
		tf: "k8sconnect_manifest_set",
		examples: []docExample{
			{"A bundle of manifests as one resource, beside a Helm release", "manifest-set"},
		},
		importDoc: "A ManifestSet is not imported yet: its objects are created exclusively, and one that exists " +
			"and is not the set's is refused, naming who holds it. Declare the set and delete such objects first, " +
			"or leave them out of it.",
	},
	{
		tf: "k8sconnect_object", function: true,
		examples: []docExample{
			{"Read the cluster's id: the uid of the kube-system Namespace", "object-read"},
			{"Split a YAML text, patch another tool's ConfigMap, wait for the value and read it back", "yaml-split-patch-wait"},
		},
	},
	{
		tf: "k8sconnect_yaml_scoped", function: true,
		examples: []docExample{
			{"Apply a multi-document file: CRDs, then cluster-scoped objects, then namespaced ones", "yaml-scoped-apply"},
			{"Apply a multi-document text through the provider that the stack configuration sets up", "yaml-scoped-default-provider"},
		},
	},
	{
		tf: "k8sconnect_helm_template", function: true,
		examples: []docExample{
			{"Render a chart against the cluster and apply each of its objects", "helm-template-apply"},
		},
	},
	{
		tf: "k8sconnect_yaml_split", function: true,
		examples: []docExample{
			{"Key the documents of a file by object", "yaml-split-keys"},
			{"Split a YAML text, patch another tool's ConfigMap, wait for the value and read it back", "yaml-split-patch-wait"},
		},
	},
}

// pulumiTerms rewrites what the framework descriptions say in Terraform's
// terms. Attribute names (snake_case) become property names by rule (see
// translate); this table holds the phrases a rule cannot rewrite, and the
// advice only Pulumi users need (the framework descriptions are Terraform's
// docs too, which keep to Terraform's words). Should a description change so
// that an entry no longer matches, generation fails twice over: the entry
// matched nothing (describe), and the Terraform words stay (checkPulumiText).
var pulumiTerms = []struct{ tf, pulumi string }{
	// The sentence goes on with yaml_body_wo, which the bridge has made a
	// name span by now.
	{"Kept in state and shown in plans: for a Secret, or anything else that holds a credential, use",
		"Pulumi marks a Secret's yamlBody secret by itself, in the stack's inputs and outputs; to keep it out of " +
			"the outputs as well, use"},
	{"Needs Terraform 1.11 or OpenTofu 1.11 or later.",
		"Pulumi keeps it in the stack's inputs only, encrypted as a secret."},
	// The bridge returns a function's result in plain (pulumi/pulumi#12710);
	// the engine makes a whole result secret when an argument is.
	{"For a Secret: its data (decoded) and stringData, by key. Null for other kinds.",
		"For a Secret: its data (decoded) and stringData, by key. Null for other kinds. " + pulumiResultNote},
	{"A path the object does not hold is left out.", "A path the object does not hold is left out. " + pulumiResultNote},
	// The bridge honours no customTimeouts (see bridge/wait_schema_test.go).
	{"default \"10m\". This is the only timeout.",
		"default \"10m\". This is the only timeout: the customTimeouts resource option does not apply to a Wait."},
	{"`{ \"status.phase\" = \"Bound\" }`", "`{ \"status.phase\": \"Bound\" }`"},
	{"e.g. `\"${path.module}/manifests/*.yaml\"`", "e.g. `manifests/*.yaml`"},
	{"e.g. `file(\"${path.module}/app.yaml\")` or a `templatefile(...)`", "e.g. a file's content that the program reads"},
	// content is sensitive for Terraform's plans only (bridge/secrets.go).
	{"Sensitive, since a bundle may hold Secrets: a plan never prints it, not even when the read is deferred " +
		"to the apply. The documents come out in the plain maps, apart from the Secrets.",
		"A preview does not show it; the documents come out in the plain maps, apart from the Secrets."},
	{"Terraform's working directory", "the directory of the Pulumi project"},
	{"(chain the three `for_each` resources with `depends_on`)",
		"(create each map's objects with `dependsOn` on the previous map's)"},
	{"for `for_each` over `k8sconnect_object`", "one `KubernetesObject` each"},
	{"the next apply waits again", "the next `pulumi up` waits again"},
	{"the provider block's", "the provider's"},
	{"relative to the directory the engine runs in (`${path.module}/...` in Terraform)",
		"relative to the directory of the Pulumi project"},
}

// pulumiTypeNames are the Pulumi names of the Terraform types, which any
// description may name, after pulumiTerms (whose phrases may hold them).
var pulumiTypeNames = strings.NewReplacer(
	"k8sconnect_yaml_scoped", "getYamlScoped",
	"k8sconnect_yaml_split", "getYamlSplit",
	"k8sconnect_helm_template", "getHelmTemplate",
	"k8sconnect_helm_release", "HelmRelease",
	"k8sconnect_manifest_set", "ManifestSet",
	"k8sconnect_object", "KubernetesObject",
	"k8sconnect_patch", "Patch",
	"k8sconnect_wait", "Wait",
)

// pulumiResultNote says how Pulumi programs keep a function's secret values
// secret.
const pulumiResultNote = "In Pulumi programs a function's result is not secret field by field: pass any argument " +
	"as a secret (pulumi.secret(...), fn::secret) and the whole result is secret."

// terraformOnly matches what Pulumi text must not contain: HCL, Terraform's
// commands and meta-arguments, and attribute names in snake_case (checked on
// prose only, see checkPulumiText: Python code spells names that way).
var terraformOnly = regexp.MustCompile(`(?i)\bterraform\b|\bHCL\b|\bresource\s+"|\bdata\s+"|\bfor_each\b|\bdepends_on\b|\bsensitive\(|provider block|\bk8sconnect_[a-z_]+\b|\b[a-z]+(?:_[a-z0-9]+)+\b`)

// hclExpression matches HCL's references and object literals (`{ "k" = v }`;
// Pulumi's languages write `{ "k": v }`), which may hide in inline code.
var hclExpression = regexp.MustCompile(`\$\{(?:path|var|local|each|data|module)\.|\btemplatefile\(|\{\s*"[^"]*"\s*=[^=]`)

// describe fills the description of every resource and function, and of
// every function property, in spec.
func describe(ctx context.Context, spec *pschema.PackageSpec, root string) error {
	fw := frameworkDocs(ctx)
	regions, err := Regions(root)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	tr := newTranslator(spec)
	for _, e := range entityDocs {
		kind := "resource"
		if e.function {
			kind = "datasource"
		}
		d, ok := fw[kind+":"+e.tf]
		if !ok {
			return fmt.Errorf("the provider has no %s %s", kind, e.tf)
		}
		tok, err := token(spec, e)
		if err != nil {
			return err
		}
		var b strings.Builder
		b.WriteString(tr.translate(d.description))
		b.WriteString("\n")
		if len(e.examples) > 0 {
			b.WriteString("\n{{% examples %}}\n## Example Usage\n")
			for _, ex := range e.examples {
				langs := regions[ex.region]
				if len(langs) == 0 {
					return fmt.Errorf("%s: no example program marks region %q", e.tf, ex.region)
				}
				used[ex.region] = true
				fmt.Fprintf(&b, "\n{{%% example %%}}\n### %s\n", ex.title)
				for _, l := range exampleLanguages {
					if r, ok := langs[l.fence]; ok {
						fmt.Fprintf(&b, "\n```%s\n%s\n```\n", l.fence, r.Code)
					}
				}
				b.WriteString("{{% /example %}}\n")
			}
			b.WriteString("{{% /examples %}}\n")
		}
		if !e.function {
			text, err := importSection(root, e, tok)
			if err != nil {
				return err
			}
			b.WriteString("\n## Import\n\n" + text + "\n")
		}
		if e.function {
			fn := spec.Functions[tok]
			fn.Description = b.String()
			for _, obj := range functionObjects(fn) {
				for name, p := range obj.Properties {
					if p.Description == "" {
						// In Terraform's words: tr.all translates it below.
						p.Description = d.attributes[snake(name)]
						obj.Properties[name] = p
					}
				}
			}
			spec.Functions[tok] = fn
		} else {
			r := spec.Resources[tok]
			r.Description = b.String()
			spec.Resources[tok] = r
		}
	}
	for _, name := range regionNames(regions) {
		if !used[name] {
			return fmt.Errorf("region %q of the example programs is in no resource's docs", name)
		}
	}
	tr.all(spec)
	if unused := tr.unused(); len(unused) > 0 {
		return fmt.Errorf("pulumiTerms entries that match no description (reword them as the descriptions now read):\n  %s",
			strings.Join(unused, "\n  "))
	}
	return checkPulumiText(spec)
}

// token is the Pulumi token of a resource or function.
func token(spec *pschema.PackageSpec, e entityDoc) (string, error) {
	info := bridge.Provider()
	if e.function {
		if ds, ok := info.DataSources[e.tf]; ok {
			if _, ok := spec.Functions[string(ds.Tok)]; ok {
				return string(ds.Tok), nil
			}
		}
	} else if r, ok := info.Resources[e.tf]; ok {
		if _, ok := spec.Resources[string(r.Tok)]; ok {
			return string(r.Tok), nil
		}
	}
	return "", fmt.Errorf("no Pulumi token for %s", e.tf)
}

// importSection is the Import text of a resource: with the id format and an
// example id from its Terraform import example, if it has one.
func importSection(root string, e entityDoc, tok string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "examples", "resources", e.tf, "import.sh"))
	if os.IsNotExist(err) {
		return e.importDoc, nil
	}
	if err != nil {
		return "", err
	}
	// # <id format>, <how it is read>...
	// terraform import <type>.<name> <id>
	var format, name, id string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "# "); ok && format == "" {
			format, _, _ = strings.Cut(rest, ",")
		}
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "terraform" && f[1] == "import" && strings.HasPrefix(f[2], e.tf+".") {
			name, id = strings.TrimPrefix(f[2], e.tf+"."), f[3]
		}
	}
	if format == "" || id == "" {
		return "", fmt.Errorf("examples/resources/%s/import.sh: want a comment line with the id format and a terraform import line", e.tf)
	}
	return fmt.Sprintf(e.importDoc, format, "pulumi import "+tok+" "+name+" "+id), nil
}

// fwDoc is what the framework schema says of one resource or data source.
type fwDoc struct {
	description string
	attributes  map[string]string // top-level attributes by Terraform name
}

// frameworkDocs reads the descriptions of the framework provider's resources
// and data sources, keyed by "resource:<type>" and "datasource:<type>".
func frameworkDocs(ctx context.Context) map[string]fwDoc {
	p := provider.New(bridge.Version)()
	var meta fwprovider.MetadataResponse
	p.Metadata(ctx, fwprovider.MetadataRequest{}, &meta)
	out := map[string]fwDoc{}
	for _, newR := range p.Resources(ctx) {
		r := newR()
		var m resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: meta.TypeName}, &m)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		s := sr.Schema
		out["resource:"+m.TypeName] = newFwDoc(s.MarkdownDescription, s.Description, s.Attributes)
	}
	for _, newD := range p.DataSources(ctx) {
		d := newD()
		var m datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: meta.TypeName}, &m)
		var sr datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &sr)
		s := sr.Schema
		out["datasource:"+m.TypeName] = newFwDoc(s.MarkdownDescription, s.Description, s.Attributes)
	}
	return out
}

// described is what a resource's and a data source's attributes have in common.
type described interface {
	GetDescription() string
	GetMarkdownDescription() string
}

func newFwDoc[A described](markdown, plain string, attrs map[string]A) fwDoc {
	d := fwDoc{description: first(markdown, plain), attributes: map[string]string{}}
	for name, a := range attrs {
		d.attributes[name] = first(a.GetMarkdownDescription(), a.GetDescription())
	}
	return d
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// translator rewrites framework prose into Pulumi's terms: every snake_case
// name of a property of the package into its camelCase property name, the
// phrases of pulumiTerms and the type names of pulumiTypeNames.
type translator struct {
	names map[string]string // snake_case -> camelCase
	used  map[int]bool      // the entries of pulumiTerms that matched
}

func newTranslator(spec *pschema.PackageSpec) *translator {
	t := &translator{names: map[string]string{}, used: map[int]bool{}}
	add := func(props map[string]pschema.PropertySpec) {
		for name := range props {
			if s := snake(name); s != name {
				t.names[s] = name
			}
		}
	}
	for _, r := range spec.Resources {
		add(r.InputProperties)
		add(r.Properties)
	}
	for _, typ := range spec.Types {
		add(typ.Properties)
	}
	add(spec.Config.Variables)
	if spec.Provider != nil {
		add(spec.Provider.InputProperties)
	}
	for _, f := range spec.Functions {
		for _, obj := range functionObjects(f) {
			add(obj.Properties)
		}
	}
	return t
}

// functionObjects are a function's inputs and outputs (which a schema read
// back from JSON holds in ReturnType).
func functionObjects(f pschema.FunctionSpec) []*pschema.ObjectTypeSpec {
	var objs []*pschema.ObjectTypeSpec
	for _, o := range []*pschema.ObjectTypeSpec{f.Inputs, f.Outputs} {
		if o != nil {
			objs = append(objs, o)
		}
	}
	if f.ReturnType != nil && f.ReturnType.ObjectTypeSpec != nil {
		objs = append(objs, f.ReturnType.ObjectTypeSpec)
	}
	return objs
}

// span is the bridge's markup of a name in each language's spelling; its
// attributes hold snake_case (Python's, and the Terraform one) on purpose.
var span = regexp.MustCompile(`<span [^>]*>[^<]*</span>`)

var snakeWord = regexp.MustCompile(`\b[a-z]+(?:_[a-z0-9]+)+\b`)

// translate rewrites one piece of prose: property names first, so that
// pulumiTerms spells them in camelCase, then its phrases, then type names.
// Spans are kept as they are.
func (t *translator) translate(s string) string {
	var b strings.Builder
	last := 0
	for _, loc := range append(span.FindAllStringIndex(s, -1), []int{len(s), len(s)}) {
		b.WriteString(snakeWord.ReplaceAllStringFunc(s[last:loc[0]], func(w string) string {
			if camel, ok := t.names[w]; ok {
				return camel
			}
			return w
		}))
		b.WriteString(s[loc[0]:loc[1]])
		last = loc[1]
	}
	s = b.String()
	for i, p := range pulumiTerms {
		if strings.Contains(s, p.tf) {
			t.used[i] = true
			s = strings.ReplaceAll(s, p.tf, p.pulumi)
		}
	}
	return pulumiTypeNames.Replace(s)
}

// unused lists the entries of pulumiTerms that no text translated so far
// matched: an entry that adds Pulumi's advice would otherwise drop it
// silently once the description it hangs on is reworded.
func (t *translator) unused() []string {
	var out []string
	for i, p := range pulumiTerms {
		if !t.used[i] {
			out = append(out, fmt.Sprintf("%q", p.tf))
		}
	}
	return out
}

// all translates every text of spec (see walkTexts) but the resources' and
// functions' own descriptions, which describe wrote, examples included, and
// the bridge's fixed ones: the bridge took the rest from the framework schema
// as it is.
func (t *translator) all(spec *pschema.PackageSpec) {
	walkTexts(spec, func(st schemaText, s string) string {
		if st.code || st.fixed != "" {
			return s
		}
		return t.translate(s)
	})
}

// snake is the Terraform name of a camelCase property name.
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fence matches a fenced code block.
var fence = regexp.MustCompile("(?s)```[a-z]*\n.*?\n```")

// prose is a description without its code blocks and the bridge's name
// spans: the text a reader reads, inline code included.
func prose(s string) string {
	return span.ReplaceAllString(fence.ReplaceAllString(s, ""), "")
}

// schemaText is one text of the schema that the SDKs or the pages show.
type schemaText struct {
	where string
	due   bool // it must not be empty
	// code: it is the whole description of a resource or function, which
	// describe wrote in Pulumi's terms itself and which may hold example code.
	code bool
	// fixed: the bridge's own text, let through as bridgeMethodDocs holds it.
	fixed string
}

// walkTexts calls f with every description of spec, and every deprecation
// message (which the SDKs show beside it), and stores what f returns in its
// place. It is the one list of where a schema holds text, so translator.all
// rewrites and PulumiTextProblems checks the same texts: the package's own;
// each resource's, its input properties, its output properties, its state
// inputs (the get() arguments and the *State classes) and list inputs; each
// function's, its inputs and outputs; each type's, its properties and enum
// values; the config variables; and the provider's own, with its input and
// output properties.
//
// A description is due everywhere but on the objects the codegen words by
// itself when they have none (a type, a function's argument and result bags,
// a resource's state and list inputs) and on enum values.
func walkTexts(spec *pschema.PackageSpec, f func(schemaText, string) string) {
	deprecation := func(where string, msg *string) {
		if *msg != "" {
			*msg = f(schemaText{where: where + " (deprecation)"}, *msg)
		}
	}
	props := func(where string, ps map[string]pschema.PropertySpec) {
		for _, name := range sortedPropNames(ps) {
			p := ps[name]
			p.Description = f(schemaText{where: where + "." + name, due: true}, p.Description)
			deprecation(where+"."+name, &p.DeprecationMessage)
			ps[name] = p
		}
	}
	// object is a bag of properties with a description of its own.
	object := func(where string, o *pschema.ObjectTypeSpec) {
		if o != nil {
			o.Description = f(schemaText{where: where}, o.Description)
			props(where, o.Properties)
		}
	}
	resource := func(where string, r *pschema.ResourceSpec) {
		r.Description = f(schemaText{where: where, due: true, code: true}, r.Description)
		deprecation(where, &r.DeprecationMessage)
		props(where+" input", r.InputProperties)
		props(where, r.Properties)
		object(where+" state", r.StateInputs)
		object(where+" list", r.ListInputs)
	}

	spec.Description = f(schemaText{where: "package", due: true}, spec.Description)
	for _, tok := range sortedSpecKeys(spec.Resources) {
		r := spec.Resources[tok]
		resource(tok, &r)
		spec.Resources[tok] = r
	}
	for _, tok := range sortedSpecKeys(spec.Functions) {
		fn := spec.Functions[tok]
		if doc, ok := bridgeMethodDocs[tok]; ok {
			fn.Description = f(schemaText{where: tok, fixed: doc}, fn.Description)
		} else {
			fn.Description = f(schemaText{where: tok, due: true, code: true}, fn.Description)
			deprecation(tok, &fn.DeprecationMessage)
			object(tok+" input", fn.Inputs)
			object(tok+" output", fn.Outputs)
			if fn.ReturnType != nil {
				object(tok+" output", fn.ReturnType.ObjectTypeSpec)
			}
		}
		spec.Functions[tok] = fn
	}
	for _, tok := range sortedSpecKeys(spec.Types) {
		t := spec.Types[tok]
		object(tok, &t.ObjectTypeSpec)
		for i := range t.Enum {
			v := &t.Enum[i]
			where := fmt.Sprintf("%s enum %v", tok, v.Value)
			if v.Name != "" {
				where = tok + " enum " + v.Name
			}
			v.Description = f(schemaText{where: where}, v.Description)
			deprecation(where, &v.DeprecationMessage)
		}
		spec.Types[tok] = t
	}
	props("config", spec.Config.Variables)
	if spec.Provider != nil {
		resource("provider", spec.Provider)
	}
}

// bridgeMethodDocs are the descriptions of the methods the bridge adds to the
// provider, by token. terraformConfig hands the provider's configuration to
// Pulumi's Terraform Module provider: Terraform is its subject, not a slip,
// and its receiver and result carry no descriptions. PulumiTextProblems lets
// exactly this text through and nothing else of the method; should the bridge
// word it otherwise, generation fails until someone has read the new text and
// brought the entry in step.
var bridgeMethodDocs = map[string]string{
	"pulumi:providers:" + bridge.Name + "/terraformConfig": "This function returns a Terraform config object " +
		"with terraform-namecased keys,to be used with the Terraform Module Provider.",
}

// PulumiTextProblems lists every text of spec (see walkTexts) that is empty
// where a description is due or speaks Terraform (HCL, Terraform's commands
// and meta-arguments, snake_case names in the prose), and every code block
// that is not in a language Pulumi programs are written in, or not in a
// resource's or function's own description.
func PulumiTextProblems(spec *pschema.PackageSpec) []string {
	var problems []string
	walkTexts(spec, func(t schemaText, desc string) string {
		switch {
		case t.fixed != "":
			if desc != t.fixed {
				problems = append(problems, fmt.Sprintf("%s: the bridge's method now reads %q, not the text "+
					"bridgeMethodDocs lets through: check it is right for Pulumi users, then update the entry", t.where, desc))
			}
			return desc
		case strings.TrimSpace(desc) == "":
			if t.due {
				problems = append(problems, t.where+": empty description")
			}
			return desc
		}
		if m := terraformOnly.FindString(prose(desc)); m != "" {
			problems = append(problems, fmt.Sprintf("%s: Terraform wording %q in %q", t.where, m, desc))
		} else if m := hclExpression.FindString(prose(desc)); m != "" {
			problems = append(problems, fmt.Sprintf("%s: Terraform wording %q in %q", t.where, m, desc))
		}
		for _, block := range fence.FindAllString(desc, -1) {
			lang := strings.TrimPrefix(strings.SplitN(block, "\n", 2)[0], "```")
			if !t.code || !pulumiFence[lang] {
				problems = append(problems, fmt.Sprintf("%s: a code block in %q", t.where, lang))
			}
		}
		return desc
	})
	return problems
}

// pulumiFence are the code fences a Pulumi description may hold.
var pulumiFence = map[string]bool{"typescript": true, "python": true, "go": true, "yaml": true, "java": true, "sh": true}

// checkPulumiText fails generation on any of PulumiTextProblems.
func checkPulumiText(spec *pschema.PackageSpec) error {
	if p := PulumiTextProblems(spec); len(p) > 0 {
		return fmt.Errorf("the Pulumi docs need attention (see bridge/sdkgen/docs.go):\n  %s", strings.Join(p, "\n  "))
	}
	return nil
}

func sortedSpecKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedPropNames(m map[string]pschema.PropertySpec) []string { return sortedSpecKeys(m) }
