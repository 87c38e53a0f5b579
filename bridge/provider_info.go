// Package bridge maps the k8sconnect terraform-plugin-framework provider to a
// Pulumi package with pulumi-terraform-bridge. The framework provider in
// ../provider is authoritative: this file only names the package, computes
// tokens and says how each SDK is laid out.
package bridge

import (
	"encoding/json"

	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"
	sdkbridge "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge/tokens"
	pschema "github.com/pulumi/pulumi/pkg/v3/codegen/schema"

	"github.com/k8sconnect/k8sconnect/provider"
	"github.com/k8sconnect/k8sconnect/schema"
)

// Name is the Pulumi package name: tokens read "k8sconnect:index/object:Object".
const Name = "k8sconnect"

// Version is the provider and SDK version. The SDKs are generated with it
// (package.json, pyproject.toml, the Go SDK's plugin version), so the engine
// asks for the plugin built with the same value. Release builds override it
// in both places with
// -ldflags "-X github.com/k8sconnect/k8sconnect/bridge.Version=X.Y.Z".
var Version = "0.1.0-dev"

// GoModule is the Go SDK's module (sdk/go has its own go.mod) and
// GoImportPath the package the Go codegen writes into sdk/go/k8sconnect.
const (
	GoModule     = "github.com/k8sconnect/k8sconnect/sdk/go"
	GoImportPath = GoModule + "/" + Name
)

// Pinned versions that the generated SDKs declare. The Node SDK is compiled
// with tsc from its committed lockfile; the Python SDK accepts any Pulumi 3.
const (
	pulumiNodeVersion   = "3.256.0"
	typescriptVersion   = "5.9.3"
	nodeTypesVersion    = "20.19.25"
	pythonPulumiRequire = ">=3.0.0,<4.0.0"
)

// Provider returns the bridge's description of the k8sconnect package. Every
// call builds a fresh value: generation mutates the metadata it carries.
func Provider() sdkbridge.ProviderInfo {
	info := sdkbridge.ProviderInfo{
		P:       tfbridge.ShimProvider(provider.New(Version)()),
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

		MetadataInfo:        sdkbridge.NewProviderMetadata(schema.BridgeMetadata),
		SchemaPostProcessor: ownPackageText,

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
	}

	// Every resource the framework provider registers is mapped by rule, with no
	// per-resource table: k8sconnect_<name> -> k8sconnect:index/<name>:<Name>.
	info.MustComputeTokens(tokens.SingleModule(provider.TypeName+"_", "index", makeToken))
	info.MustApplyAutoAliases()
	return info
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
