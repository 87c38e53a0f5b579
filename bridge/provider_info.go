// Package bridge maps the k8sconnect terraform-plugin-framework provider to a
// Pulumi package with pulumi-terraform-bridge. The framework provider in
// ../provider is authoritative: this file only names the package, computes
// tokens and says how each SDK is laid out.
package bridge

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"
	sdkbridge "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	bridgelog "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge/log"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge/tokens"
	pschema "github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	"github.com/k8sconnect/k8sconnect"
	"github.com/k8sconnect/k8sconnect/provider"
	"github.com/k8sconnect/k8sconnect/schema"
)

// Name is the Pulumi package name: tokens read "k8sconnect:index/object:Object".
const Name = "k8sconnect"

// Version is the provider and SDK version: the repository's VERSION file. The
// SDKs are generated with it (package.json, pyproject.toml, the Go SDK's plugin
// version), so the engine asks for the plugin built with the same value. The
// plugin's main.version (-ldflags "-X main.version=X.Y.Z") and sdkgen's
// -version flag override it.
var Version = k8sconnect.Version

// PluginDownloadURL is the repository whose GitHub releases carry the plugin.
// The repository is named explicitly: with an organization alone the engine
// would look in github.com/k8sconnect/pulumi-k8sconnect.
const PluginDownloadURL = "github://api.github.com/k8sconnect/k8sconnect"

// GoModule is the Go SDK's module (sdk/go has its own go.mod) and
// GoImportPath the package the Go codegen writes into sdk/go/k8sconnect.
const (
	GoModule     = "github.com/k8sconnect/k8sconnect/sdk/go"
	GoImportPath = GoModule + "/" + Name
)

// The Pulumi SDK versions the generated SDKs accept: from the oldest release
// whose API the generated code uses, up to the next major version. The floors
// are the ones the codegen of pulumi v3.256.0 (which writes the SDKs, see
// sdkgen) declares for the code it writes when a package sets none itself:
// nodejs.MinimumValidSDKVersion and python.MinimumValidSDKVersion (this
// package is not parameterized, which would raise them). A test keeps these in
// step with the codegen. The Node SDK's own build (tsc) uses its committed
// lockfile, with the versions below for its compiler.
const (
	pulumiNodeVersion   = "^3.142.0"
	typescriptVersion   = "5.9.3"
	nodeTypesVersion    = "20.19.25"
	pythonPulumiRequire = ">=3.231.0,<4.0.0"
)

// Provider returns the bridge's description of the k8sconnect package. Every
// call builds a fresh value: generation mutates the metadata it carries.
func Provider() sdkbridge.ProviderInfo {
	host := provider.PulumiOptions{Status: status, ResourceNames: map[string]string{}}
	info := sdkbridge.ProviderInfo{
		P:       releasing(tfbridge.ShimProvider(provider.NewForPulumi(Version, host)())),
		Name:    Name,
		Version: Version,

		DisplayName: "k8sconnect",
		Publisher:   "k8sconnect",
		Description: "Manage Kubernetes objects with Server-Side Apply; every resource carries its own cluster connection.",
		Keywords:    []string{"kubernetes", "k8sconnect", "server-side-apply", "category/cloud"},
		License:     "Apache-2.0",
		Homepage:    "https://github.com/k8sconnect/k8sconnect",
		Repository:  "https://github.com/k8sconnect/k8sconnect",
		GitHubOrg:   "k8sconnect",
		// Where the engine downloads the plugin from when a program needs it and
		// it is not installed: the release assets of this repository, named as
		// release.PulumiPluginArchiveName says. The SDKs carry it (package.json's
		// pulumi.server, pulumi-plugin.json's server), and a failed download's
		// error tells the user the `pulumi plugin install ... --server` command.
		PluginDownloadURL: PluginDownloadURL,

		MetadataInfo: sdkbridge.NewProviderMetadata(schema.BridgeMetadata),
		SchemaPostProcessor: func(spec *pschema.PackageSpec) {
			ownPackageText(spec)
			shareTypes(spec)
			noNestedSecretInResourceRef(spec)
		},

		JavaScript: &sdkbridge.JavaScriptInfo{
			PackageName:          "@k8sconnect/k8sconnect",
			RespectSchemaVersion: true,
			Dependencies:         map[string]string{"@pulumi/pulumi": pulumiNodeVersion},
			TypeScriptVersion:    typescriptVersion,
			DevDependencies:      map[string]string{"@types/node": nodeTypesVersion},
		},
		Python: &sdkbridge.PythonInfo{
			PackageName:          "pulumi_k8sconnect",
			RespectSchemaVersion: true,
			Requires:             map[string]string{"pulumi": pythonPulumiRequire},
			PyProject:            struct{ Enabled bool }{Enabled: true},
		},
		Golang: &sdkbridge.GolangInfo{
			ImportBasePath:                 GoImportPath,
			ModulePath:                     GoModule,
			RespectSchemaVersion:           true,
			GenerateResourceContainerTypes: true,
		},
		// No build files from the codegen: sdk/java's Maven build is JavaPOM.
		Java: &sdkbridge.JavaInfo{
			BasePackage:  JavaGroupID,
			BuildFiles:   "none",
			Dependencies: map[string]string{"com.pulumi:pulumi": pulumiJavaVersion},
		},
	}

	// Every resource the framework provider registers is mapped by rule, with no
	// per-resource table: k8sconnect_<name> -> k8sconnect:index/<name>:<Name>.
	info.MustComputeTokens(tokens.SingleModule(provider.TypeName+"_", "index", makeToken))
	info.MustApplyAutoAliases()
	// Messages name resources as programs do: k8sconnect_object is a
	// KubernetesObject, k8sconnect_yaml_split the function getYamlSplit.
	for tf, r := range info.DataSources {
		host.ResourceNames[tf] = r.Tok.Name().String()
	}
	for tf, r := range info.Resources {
		host.ResourceNames[tf] = r.Tok.Name().String()
	}
	helmNames(&info)
	hideTimeouts(&info)
	markSecrets(&info)
	keepNullOutputs(&info)
	return info
}

// helmNames keeps the names of Helm's flags for the list attributes set,
// set_sensitive and set_list, which the bridge would pluralize into sets,
// setSensitives and setLists: users know them as --set.
func helmNames(info *sdkbridge.ProviderInfo) {
	keep := func(fields *map[string]*sdkbridge.SchemaInfo) {
		if *fields == nil {
			*fields = map[string]*sdkbridge.SchemaInfo{}
		}
		(*fields)["set"] = &sdkbridge.SchemaInfo{Name: "set"}
		(*fields)["set_sensitive"] = &sdkbridge.SchemaInfo{Name: "setSensitive"}
		(*fields)["set_list"] = &sdkbridge.SchemaInfo{Name: "setList"}
	}
	keep(&info.DataSources[provider.TypeName+"_helm_template"].Fields)
	keep(&info.Resources[provider.TypeName+"_helm_release"].Fields)
}

// hideTimeouts leaves every resource's timeouts block out of the Pulumi
// schema: Pulumi's own resource option customTimeouts sets create, update
// and delete (Operations gives them to the provider), and two ways to set
// one limit would only disagree. Read has no Pulumi counterpart
// (pulumi/pulumi#15636): a refresh under Pulumi is bounded by each request's
// request_timeout alone.
func hideTimeouts(info *sdkbridge.ProviderInfo) {
	for _, r := range info.Resources {
		if r.Fields == nil {
			r.Fields = map[string]*sdkbridge.SchemaInfo{}
		}
		r.Fields["timeouts"] = &sdkbridge.SchemaInfo{Omit: true}
	}
}

// status shows a provider's progress line (a wait's "2/3 replicas ready") in
// the engine's status display of the resource being worked on.
func status(ctx context.Context, msg string) {
	// TryGetLogger: a context without the engine's logger (a unit test) has
	// nowhere to show it.
	if logger := bridgelog.TryGetLogger(ctx); logger != nil {
		logger.Status().Info(msg)
	}
}

// makeToken is the standard token rule, except that a resource may not be
// called Object: TypeScript refuses a class named Object in a CommonJS module
// (TS2725, its emitted `Object.defineProperty(exports, ...)` would hit the
// class), so the Node SDK would not compile. k8sconnect_object therefore maps to
// k8sconnect:index/kubernetesObject:KubernetesObject in every language.
func makeToken(module, name string) (string, error) {
	if name == "Object" {
		name = "KubernetesObject"
	}
	return tokens.MakeStandard(Name)(module, name)
}

// readme is the README of the Node and Python packages.
const readme = "> The Pulumi SDK of k8sconnect, generated from the same provider that Terraform and OpenTofu load.\n" +
	"> Report bugs and read the documentation at https://github.com/k8sconnect/k8sconnect."

// ownPackageText replaces the bridge's default attribution and README, which
// describe a Pulumi package wrapping someone else's Terraform provider. Here the
// provider and the bridge live in one repository.
func ownPackageText(spec *pschema.PackageSpec) {
	spec.Attribution = ""
	for _, lang := range []string{"nodejs", "python"} {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(spec.Language[lang], &fields); err != nil {
			panic(err)
		}
		fields["readme"], _ = json.Marshal(readme)
		raw, err := json.Marshal(fields)
		if err != nil {
			panic(err)
		}
		spec.Language[lang] = pschema.RawMessage(raw)
	}
}

// shareTypes gives the blocks the resources and functions have in common one
// Pulumi type each. The bridge names a nested block after its owner
// (PatchClusterConnection, WaitResourceRef, ...) and ignores TypeName
// overrides for Plugin Framework providers, so this merges them in the
// schema: every cluster_connection is a ClusterConnection, and a
// KubernetesObject's resourceRef output is the very ResourceRef type a Wait
// takes, so a Go program passes one to the other as TypeScript and Python
// programs already could. The engine matches values by property name, not by
// type token, so nothing changes at run time.
func shareTypes(spec *pschema.PackageSpec) {
	renames := map[string]string{}
	merged := map[string]pschema.ComplexTypeSpec{}
	for _, tok := range sortedKeys(spec.Types) {
		shared := sharedName(tok)
		if shared == "" {
			continue
		}
		newTok := Name + ":index/" + shared + ":" + shared
		renames[tok] = newTok
		t := spec.Types[tok]
		if shared != "ResourceRef" {
			// The copy nested in a resourceRef output lists every field as a
			// required output; a configured connection sets only some.
			t.Language = nil
		}
		if prev, ok := merged[newTok]; ok {
			// Inputs need the required list (a Wait's resourceRef has one); the
			// outputs' requiredOutputs stay from whichever type had them.
			if len(prev.Required) > 0 {
				t.Required = prev.Required
			}
			if t.Language == nil {
				t.Language = prev.Language
			}
		}
		merged[newTok] = t
		delete(spec.Types, tok)
	}
	for tok, t := range merged {
		spec.Types[tok] = t
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		panic(err)
	}
	text := string(raw)
	for _, old := range sortedKeys(renames) {
		text = strings.ReplaceAll(text, `"#/types/`+old+`"`, `"#/types/`+renames[old]+`"`)
	}
	var out pschema.PackageSpec
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		panic(err)
	}
	*spec = out
}

// sharedName is the one name of a type shared by several owners, or "".
func sharedName(tok string) string {
	name := tok[strings.LastIndex(tok, ":")+1:]
	for _, shared := range []string{"ClusterConnectionExec", "ClusterConnection", "ResourceRef"} {
		if strings.HasSuffix(name, shared) {
			return shared
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
