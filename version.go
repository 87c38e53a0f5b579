// Package k8sconnect holds the release version of everything this repository
// builds: the Terraform/OpenTofu provider, the Pulumi plugin and the SDKs.
package k8sconnect

import (
	_ "embed"
	"strings"
)

// The VERSION file is the one place the version is written. The Makefile reads
// it, and Go code gets it from here, so a plain `go build` or `go run` of the
// SDK generator agrees with `make` without flags. A release may still set
// another version at build time (-ldflags "-X main.version=..."), which is
// what `make release VERSION=...` does for both binaries.
//
// Its form is semver (no leading v), chosen to be valid as it stands for
// Terraform, npm, Maven and (with the v of a tag) Go; the Python codegen turns
// a prerelease "dev.N" into PEP 440's ".devN" and the Python SDK turns it back,
// so one string serves every registry. A prerelease such as "rc.1" or
// "alpha.1" works the same way; other prerelease words would become a PEP 440
// local version, which PyPI refuses (sdkgen's tests check this).
//
//go:embed VERSION
var versionFile string

// Version is the content of the VERSION file without surrounding space.
var Version = strings.TrimSpace(versionFile)
