package toolchain

import (
	"os"
	"path/filepath"
	"runtime"
)

// Registries are the hosts under which Terraform (registry.terraform.io) and
// OpenTofu (registry.opentofu.org) name a provider source such as
// k8sconnect/k8sconnect.
var Registries = []string{"registry.terraform.io", "registry.opentofu.org"}

// MirrorVersion is a provider's version in a mirror MirrorProvider lays out:
// any release but 0.0.0, which the engines take for "no version" and never
// select.
const MirrorVersion = "0.0.1"

// MirrorProvider lays plugin out as an unpacked filesystem mirror of source
// (namespace/type) for both registries:
// <host>/<namespace>/<type>/<version>/<os>_<arch>/<plugin>. A configuration
// with a backend needs `init`, and init installs every provider it requires,
// development overrides or not; nothing may be fetched, so it installs from
// this mirror, while the override still decides what runs.
func MirrorProvider(plugin, mirror, source string) error {
	for _, host := range Registries {
		dir := filepath.Join(mirror, host, filepath.FromSlash(source), MirrorVersion, runtime.GOOS+"_"+runtime.GOARCH)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.Symlink(plugin, filepath.Join(dir, filepath.Base(plugin))); err != nil {
			return err
		}
	}
	return nil
}
