package helmrelease

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/managedfields"
	"github.com/k8sconnect/k8sconnect/provider/internal/manifest"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/ssa"
)

// Handing fields between field managers in place: from Helm's to
// k8sconnect's when a release made elsewhere is adopted, and from
// k8sconnect's to whoever takes them when ignore_fields lists them.

// adoptionWarning tells, at plan time, what the first apply after an import
// does, or an install under upgrade_install that finds the release.
func adoptionWarning(id string, upgradeInstall bool) string {
	why := "was imported or moved in"
	if upgradeInstall {
		why = "exists already, made elsewhere, and upgrade_install is set"
	}
	return fmt.Sprintf("Release %s %s. This apply takes its objects over in place: they are updated, "+
		"not replaced, and keep their UIDs. The fields the tool that installed them set (helm, or a tool that links "+
		"Helm's library) that this chart sets too are handed to k8sconnect, so each has one owner; fields only that "+
		"tool set are left as they are. The release keeps its "+
		"history, and this apply writes its next revision.", id, why)
}

// helmManager tells the field managers Helm writes under: "helm" for the
// helm CLI (Helm 3 and 4, either apply method), and, where the program sets
// no name, the base name of the binary that links Helm's library, which for
// hashicorp/helm is terraform-provider-helm_v<version>_x5.
func helmManager(name string) bool {
	return name == "helm" || strings.HasPrefix(name, "terraform-provider-helm")
}

// releaseMarks are the fields every tool that installs a Helm release writes
// on its objects: whoever owns them installed the object.
var releaseMarks = []fieldpath.Path{
	fieldpath.MakePathOrDie("metadata", "annotations", annotationReleaseName),
	fieldpath.MakePathOrDie("metadata", "annotations", annotationReleaseNS),
	fieldpath.MakePathOrDie("metadata", "labels", labelManagedBy),
}

// installers are the field managers that wrote obj as an object of a Helm
// release, whatever tool they are: the owners of its release marks (the
// helm CLI, and the programs that link Helm's library under a name of their
// own: Flux's helm-controller, Zarf, pulumi-kubernetes' helm.v3.Release,
// hashicorp/helm), and Helm's own names. k8sconnect is none of them.
func installers(obj *unstructured.Unstructured) []string {
	fields, _ := managedfields.Of(obj)
	var out []string
	for _, e := range obj.GetManagedFields() {
		m := e.Manager
		if m == ssa.FieldManager || slices.Contains(out, m) {
			continue
		}
		owned := fields.Manager(m)
		if helmManager(m) || slices.ContainsFunc(releaseMarks, owned.Has) {
			out = append(out, m)
		}
	}
	return out
}

// takeOverAll hands the fields the installers of each applied object held
// over to k8sconnect, so each field the chart sets has one owner and one it
// later drops goes with it (ssa.TakeOver, which retries while someone
// writes in between).
func takeOverAll(ctx context.Context, c *connection.Client, applied map[string]*unstructured.Unstructured) error {
	for key, obj := range applied {
		managers := installers(obj)
		if len(managers) == 0 {
			continue
		}
		out, err := ssa.TakeOver(ctx, c, obj, managers)
		if err != nil {
			return fmt.Errorf("%s: handing the installer's fields over: %w", key, err)
		}
		applied[key] = out
	}
	return nil
}

// noteAdoptees finds, under take_ownership, the objects of the chart that
// exist and are not the release's, and who holds each (adoptable), before
// anything is applied; an object that cannot be handed over is refused.
func (a *applyRun) noteAdoptees(ctx context.Context) error {
	if !a.plan.TakeOwnership.ValueBool() {
		return nil
	}
	a.adoptees = map[string][]string{}
	for _, p := range a.rd.objects {
		if _, ours := a.prior[p.key]; ours {
			continue
		}
		holder, managers, err := adoptable(ctx, a.c, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p.key, err)
		}
		if holder != "" {
			a.adoptees[p.key] = managers
		}
	}
	return nil
}

// takeOwnership hands the fields the chart sets on each object
// take_ownership took (adoptees) from the field managers that held it to
// k8sconnect, once it is applied, as takeOverAll does after an import.
func takeOwnership(ctx context.Context, c *connection.Client, adoptees map[string][]string,
	applied map[string]*unstructured.Unstructured) error {
	for key, managers := range adoptees {
		obj := applied[key]
		if obj == nil || len(managers) == 0 {
			continue
		}
		out, err := ssa.TakeOver(ctx, c, obj, managers)
		if err != nil {
			return fmt.Errorf("%s: handing the fields of %v over: %w", key, managers, err)
		}
		applied[key] = out
	}
	return nil
}

// handOverIgnored releases k8sconnect's ownership of the fields an upgrade
// newly leaves out, before the apply that leaves them out, so they keep
// their values for the manager that takes them (ssa.HandOver).
func handOverIgnored(ctx context.Context, c *connection.Client, rd *rendered, before, after objectset.IgnoreRules) error {
	for _, p := range rd.all() {
		fields := objectset.NewlyIgnored(before, after, p.key)
		if len(fields) == 0 {
			continue
		}
		if _, err := ssa.HandOver(ctx, c, manifest.IdentityOf(p.obj), "", fields); err != nil {
			return fmt.Errorf("%s: handing over the fields ignore_fields now lists: %w", p.key, err)
		}
	}
	return nil
}
