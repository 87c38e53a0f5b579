// Package scenarios holds Go programs beyond the quickstart: each shows one
// feature, and the bridge tests run them through the Automation API driver,
// which finds them by name in Programs.
package scenarios

import "github.com/pulumi/pulumi/sdk/v3/go/pulumi"

// Programs are the scenarios by name.
var Programs = map[string]pulumi.RunFunc{
	"helm-release":         HelmRelease,
	"helm-template":        HelmTemplate,
	"json-and-merge-patch": JSONAndMergePatch,
	"manifests":            Manifests,
	"wait-field":           WaitField,
}
