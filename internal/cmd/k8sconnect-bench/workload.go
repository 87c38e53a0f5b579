package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/k8sconnect/k8sconnect/internal/testing/bundles"
)

// workload is what each tool applies: N ConfigMaps and their namespace, a
// vendor's bundle (package bundles), or a chart of N objects installed as a
// Helm release (chart.go).
type workload string

const (
	configMaps workload = "configmaps"
	bundle     workload = "bundle"
	chart      workload = "chart"
)

func parseWorkload(s string) (workload, error) {
	switch w := workload(strings.TrimSpace(s)); w {
	case configMaps, bundle, chart:
		return w, nil
	}
	return "", fmt.Errorf("-workload %q: want configmaps, bundle or chart", s)
}

// baseline is the tool the engines are compared with: helm for a chart,
// kubectl otherwise.
func (w workload) baseline() string {
	if w == chart {
		return "helm"
	}
	return "kubectl"
}

// defaultOps are the operations measured when -ops is not given: a bundle
// adds the update of one field deep in its largest CRD.
func (w workload) defaultOps() string {
	if w == bundle {
		return "create,plan,update,update-crd,skip-preview,destroy"
	}
	return "create,plan,update,skip-preview,destroy"
}

// defaultNs is -n when it is not given: a chart's objects are measured at
// 200, ConfigMaps at 200 and 1,000.
func (w workload) defaultNs() string {
	if w == chart {
		return "200"
	}
	return "200,1000"
}

// sizes are the sizes the workload is measured at: each N of ConfigMaps, or
// the bundle's one number of objects.
func (w workload) sizes(ns []int) []int {
	if w == bundle {
		return []int{bundles.New("size").Len()}
	}
	return ns
}

// objects is how many objects a tool makes at size n: the ConfigMaps and
// their namespace, or the bundle's, or the chart's (its namespace, which
// every tool creates alike, not counted).
func (w workload) objects(n int) int {
	if w == bundle || w == chart {
		return n
	}
	return n + 1
}

// sizeColumn names the size in the table and the notes under it.
func (w workload) sizeColumn() string {
	if w == bundle {
		return "objects"
	}
	return "N"
}

// checkEngines refuses the configurations a bundle or a chart cannot be
// measured in: the engine alone (_data) has no provider, so nothing to split
// the bundle's file with or to install a chart; and a chart is one resource
// already, the release, so it has no set (_set) to be made into.
func (w workload) checkEngines(engines []string) error {
	if w == configMaps {
		return nil
	}
	for _, e := range engines {
		if w == chart && strings.HasSuffix(e, setSuffix) {
			return fmt.Errorf("-engines %s: a chart is one k8sconnect_helm_release already; %s holds ConfigMaps or the bundle as one set", e, setSuffix)
		}
		if strings.HasSuffix(e, "_"+string(alone)) {
			return fmt.Errorf("-engines %s: the _data configurations measure ConfigMaps only: without the provider "+
				"there is nothing to split a bundle's file with or to install a chart", e)
		}
	}
	return nil
}

// The bundle's log level at each step of its life, one value per update
// that changes it, so that each update changes something.
const (
	logLevelCreate     = "info"
	logLevelUpdate     = "debug"
	logLevelUpdateSkip = "warn"
)

// bundleAt is the bundle as it stands after op, every measured update
// before it applied: the update changes the operator's log level (the change
// users make most often), update-crd widens one int32 deep in the largest
// CRD, and Pulumi's update without preview changes the log level again.
// Destroy keeps the last. A tool that has no such step (kubectl and
// Terraform have no skip-preview) simply never applies that version.
func bundleAt(base *bundles.Bundle, ops []string, op string) *bundles.Bundle {
	b := base
	for _, o := range operations {
		if !slices.Contains(ops, o) {
			continue
		}
		switch o {
		case opUpdate:
			b = b.WithLogLevel(logLevelUpdate)
		case opUpdateCRD:
			b = b.WithWidenedCRD()
		case opUpdateSkip:
			b = b.WithLogLevel(logLevelUpdateSkip)
		}
		if o == op {
			break
		}
	}
	return b
}
