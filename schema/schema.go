// Package schema holds the generated Pulumi package schema and the bridge
// metadata of the k8sconnect provider. Both files are written by
// `cd bridge && go run ./cmd/k8sconnect-sdkgen` (make generate) and never edited by hand.
//
// The resource plugin embeds them so it serves the same schema the SDKs were
// generated from, and the bridge reads the metadata back on the next generation
// so token and alias decisions stay stable.
package schema

import _ "embed"

// PackageSchema is schema.json: the Pulumi package schema.
//
//go:embed schema.json
var PackageSchema []byte

// BridgeMetadata is bridge-metadata.json: pulumi-terraform-bridge's record of
// token mappings and renames.
//
//go:embed bridge-metadata.json
var BridgeMetadata []byte
