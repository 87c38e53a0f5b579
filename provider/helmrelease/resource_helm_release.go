// Package helmrelease is the k8sconnect_helm_release resource (ADR 0013): a
// Helm chart installed as a real Helm release, whose every object is planned
// by a server-side dry run, applied by Server-Side Apply under k8sconnect's
// field manager and checked for drift on the fields it owns, as
// k8sconnect_object does for one object, with Helm's lifecycle kept: CRDs
// first, hooks in their phases, readiness, and release records that the helm
// CLI reads.
//
// The files are laid out as Helm's pkg/action, a file per verb: plan.go
// plans (ModifyPlan: render, dry-run every object), apply.go installs or
// upgrades (Create, Update: prepare, perform, record), read.go refreshes,
// delete.go uninstalls, and import.go and move.go adopt a release made
// elsewhere. The verbs call into the files that hold what they share, never
// into one another: render.go turns the configuration into the release's
// objects and hooks, records.go builds, reads and writes the release record,
// hooks.go runs hooks, deleteobjects.go deletes objects in uninstall order,
// handover.go hands fields between field managers (adoption, ignore_fields),
// objects.go names one object, who else holds it and its projection,
// crds.go decides whether a CRD of crds/ that exists already is taken over,
// left to another release or refused, planned.go what a plan hands its
// apply and how the apply finds that it renders otherwise, lint.go checks
// the chart by helm lint's rules, ignore.go leaves ignore_fields out of the
// rendered objects, inputs.go compares the inputs with state, private.go
// holds the private state, recent.go the reads handed from one call to the
// next. What every set of objects does alike (ignore_fields' keys, the
// projections in objects, Helm's kind order, bounded parallel requests) is
// package objectset's.
package helmrelease

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/chartinputs"
	"github.com/k8sconnect/k8sconnect/provider/internal/connection"
	"github.com/k8sconnect/k8sconnect/provider/internal/durations"
	"github.com/k8sconnect/k8sconnect/provider/internal/objectset"
	"github.com/k8sconnect/k8sconnect/provider/internal/optimeout"
	"github.com/k8sconnect/k8sconnect/provider/internal/ownership"
	"github.com/k8sconnect/k8sconnect/provider/internal/providerdata"
)

var (
	_ resource.ResourceWithConfigure  = (*Resource)(nil)
	_ resource.ResourceWithModifyPlan = (*Resource)(nil)
)

// Resource implements k8sconnect_helm_release.
type Resource struct {
	clients   *connection.Cache
	verbosity ownership.Verbosity
}

// New returns the resource; the provider passes it a client cache in Configure.
func New() resource.Resource { return &Resource{} }

type model struct {
	ID                types.String `tfsdk:"id"`
	Name              types.String `tfsdk:"name"`
	Namespace         types.String `tfsdk:"namespace"`
	CreateNamespace   types.Bool   `tfsdk:"create_namespace"`
	Wait              types.Bool   `tfsdk:"wait"`
	WaitForJobs       types.Bool   `tfsdk:"wait_for_jobs"`
	DisableWebhooks   types.Bool   `tfsdk:"disable_webhooks"`
	Lint              types.Bool   `tfsdk:"lint"`
	Description       types.String `tfsdk:"description"`
	UpgradeInstall    types.Bool   `tfsdk:"upgrade_install"`
	Atomic            types.Bool   `tfsdk:"atomic"`
	CleanupOnFail     types.Bool   `tfsdk:"cleanup_on_fail"`
	Timeout           types.String `tfsdk:"timeout"`
	MaxHistory        types.Int64  `tfsdk:"max_history"`
	DeleteProtection  types.Bool   `tfsdk:"delete_protection"`
	ClusterConnection types.Object `tfsdk:"cluster_connection"`
	IgnoreFields      types.Map    `tfsdk:"ignore_fields"`
	SkipCRDs          types.Bool   `tfsdk:"skip_crds"`
	TakeOwnership     types.Bool   `tfsdk:"take_ownership"`
	Replace           types.Bool   `tfsdk:"replace"`
	// SetWO is write-only: null in every plan and state, read from the
	// configuration (withWriteOnly).
	SetWO         []chartinputs.Setting `tfsdk:"set_wo"`
	SetWORevision types.Int64           `tfsdk:"set_wo_revision"`
	chartinputs.Inputs

	Objects      types.Map       `tfsdk:"objects"`
	Revision     types.Int64     `tfsdk:"revision"`
	Status       types.String    `tfsdk:"status"`
	ChartVersion types.String    `tfsdk:"chart_version"`
	ChartDigest  types.String    `tfsdk:"chart_digest"`
	AppVersion   types.String    `tfsdk:"app_version"`
	Notes        types.String    `tfsdk:"notes"`
	ClusterUID   types.String    `tfsdk:"cluster_uid"`
	Timeouts     optimeout.Value `tfsdk:"timeouts"`
}

var (
	pathObjects      = path.Root("objects")
	pathChart        = path.Root("chart")
	pathIgnoreFields = path.Root("ignore_fields")
	pathSetSensitive = path.Root("set_sensitive")
	pathSetWO        = path.Root("set_wo")
	pathLint         = path.Root("lint")
)

// DefaultTimeout is helm's own default for --timeout.
const DefaultTimeout = "5m"

// DefaultMaxHistory is the helm CLI's default for --history-max.
const DefaultMaxHistory = 10

// The descriptions of the resource and of its longer arguments, kept out of
// Schema so that it reads as the list of arguments it is.
const (
	releaseDescription = "A Helm chart installed as a Helm release whose every object is planned, applied and checked " +
		"for drift as k8sconnect_object does it: `objects` holds, per object, the fields k8sconnect owns as a " +
		"server-side dry run predicts them, so a plan shows which objects are added, changed (field by field) " +
		"or removed. Applies keep Helm's lifecycle: CRDs from `crds/` first, pre-install or pre-upgrade hooks " +
		"by weight, every object by Server-Side Apply, objects that left the chart deleted, readiness, then " +
		"post hooks; each successful apply writes a release revision in Helm's own format, so `helm list`, " +
		"`helm history` and `helm get manifest` show it."
	atomicDescription = "When an install or upgrade fails (a hook fails, an object is refused, the readiness " +
		"wait times out), put the cluster back, as `helm --atomic` (Helm 4's `--rollback-on-failure`): " +
		"a failed upgrade is rolled back to the last deployed revision, whose objects are applied again " +
		"as its record holds them, the objects the upgrade created are deleted (except those marked " +
		"`helm.sh/resource-policy: keep`) and a revision `Rollback to N` is written, as `helm rollback` " +
		"writes one; a failed install is uninstalled, its delete hooks run, its objects deleted and its " +
		"records removed, as `helm uninstall`. The run still fails, saying what failed and what was put " +
		"back; nothing is tainted, and the next apply tries again. The CRDs of `crds/` are never " +
		"deleted or rolled back. Implies wait. Defaults to false."
	takeOwnershipDescription = "Make objects of the chart that exist already and are not this release's the " +
		"release's own, as `helm install --take-ownership` (and `helm upgrade --take-ownership`) does: one made " +
		"by kubectl or another tool, and one of another Helm release, whose record still lists it (its uninstall, " +
		"or an upgrade that drops it, would delete it, as after helm). The plan warns once per object, naming who " +
		"holds it; the apply gives it the chart's fields and hands every field the chart sets from its field " +
		"managers to k8sconnect's, as an import does, leaving them the fields only they set. An object a " +
		"k8sconnect resource manages (k8sconnect_object, a manifest set, another k8sconnect_helm_release) is " +
		"still refused: both would write under the same field manager. Without it, an object that exists and " +
		"is not the release's is refused at plan, naming who holds it. Defaults to false."
	replaceDescription = "When the install finds the release's name in use by a release whose latest revision is " +
		"uninstalled (helm uninstall --keep-history) or failed, install over it, as `helm install --replace`: " +
		"the plan warns, and the apply writes the revision after it (an uninstalled one is marked superseded, " +
		"a failed one stays failed), deletes the objects of its record the chart no longer renders and updates " +
		"those that exist in place, handing the fields helm held to k8sconnect. A release whose latest revision " +
		"is deployed is refused as without it. Only the install reads it. Defaults to false."
	dependencyUpdateMore         = "A newer version in range is a change of `chart_digest`, so an upgrade."
	disableOpenAPIValidationMore = "The plan that first leaves a field out of an object warns, naming it; plans " +
		"that leave out the same fields again (the one after the apply, every no-change plan) are quiet. The release " +
		"record holds the objects as applied, without those fields (helm's holds them as rendered)."
	postrenderMore = "The objects it returns are the release's, in `objects`, the release record and the cluster. " +
		"It runs at every plan and apply; when it fails, the plan fails and nothing is applied. A change to it is an upgrade."
	cleanupOnFailDescription = "When an upgrade fails, delete the objects it created (those its previous revision " +
		"lacked and that did not exist before it), each bound to the UID it was created with and " +
		"keeping those marked `helm.sh/resource-policy: keep`, as `helm upgrade --cleanup-on-fail`. " +
		"The revision stays failed and the rest as the upgrade left it; the next apply runs it again. " +
		"A CRD is never deleted. Defaults to false."
)

func (r *Resource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_helm_release"
}

func (r *Resource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Blocks:      map[string]schema.Block{"timeouts": optimeout.Block(ctx)},
		Description: releaseDescription,
		Attributes: chartinputs.ResourceAttributes(map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, Description: "`<namespace>/<name>`.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace,
				Description: "The release name (`.Release.Name`); changing it installs a new release."},
			"namespace": schema.StringAttribute{Optional: true, Computed: true, PlanModifiers: replace,
				Default:     stringdefault.StaticString("default"),
				Description: "The release namespace, where its records are kept and objects whose template sets none are placed. Defaults to `default`, as helm does."},
			"create_namespace": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Create the release namespace if it does not exist, as `helm --create-namespace`. It is " +
					"not part of the release and is left in place at destroy, as helm leaves it. Only the release " +
					"namespace is made: an object the chart puts in another namespace that does not exist is refused at plan."},
			"wait": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				Description: "Wait until every object is ready (by the rules of k8sconnect_wait's `ready`) before " +
					"post hooks run and the revision is marked deployed. A timeout fails the run without tainting " +
					"anything; the next apply waits again. Hooks are always awaited. With atomic, the apply waits " +
					"even when this is false, as helm's `--atomic` implies `--wait`."},
			"wait_for_jobs": schema.BoolAttribute{Optional: true,
				Description: "With wait, also wait until every Job of the release has completed, as `helm " +
					"--wait-for-jobs`; a Job that fails fails the run, naming it. Without it a Job is ready once it has " +
					"started, as Helm 4's `--wait` takes it. Hooks are always awaited until they complete. Defaults to false."},
			"disable_webhooks": schema.BoolAttribute{Optional: true,
				Description: "Run no hook, as `helm --no-hooks`: at install, upgrade and destroy alike. The hooks are " +
					"still kept in the release record, as helm keeps them. hashicorp/helm's name for it, kept so a " +
					"configuration moves unchanged. Defaults to false."},
			"lint": schema.BoolAttribute{Optional: true,
				Description: "Check the chart with `helm lint`'s rules, with the configuration's values and the cluster's " +
					"Kubernetes version, at every plan: an error the linter finds (an invalid Chart.yaml, a template " +
					"that does not render, values its schema refuses) fails the plan, naming the file; a warning is " +
					"shown as one. Defaults to false."},
			"description": schema.StringAttribute{Optional: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
				Description: "The description of every revision an install or upgrade writes, in place of helm's " +
					"`Install complete` or `Upgrade complete`, as `helm --description`: `helm history` shows it. A " +
					"change to it alone is an upgrade. A revision that failed is described by its error, and a repair " +
					"by what it put back."},
			"upgrade_install": schema.BoolAttribute{Optional: true,
				Description: "When the install finds the release in the cluster, made by helm or another tool, take it " +
					"over as an import would, as `helm upgrade --install` upgrades it: the plan warns, and the apply " +
					"takes its objects over in place (they keep their UIDs), deletes those of its latest revision the " +
					"chart no longer renders, and writes its next revision. A release another apply or helm is " +
					"changing right now, or that k8sconnect installed from another configuration, is refused as " +
					"without it. Only the install reads it. Defaults to false."},
			"atomic":          schema.BoolAttribute{Optional: true, Description: atomicDescription},
			"cleanup_on_fail": schema.BoolAttribute{Optional: true, Description: cleanupOnFailDescription},
			"take_ownership":  schema.BoolAttribute{Optional: true, Description: takeOwnershipDescription},
			"replace":         schema.BoolAttribute{Optional: true, Description: replaceDescription},
			"timeout": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(DefaultTimeout),
				Validators:  []validator.String{durations.Validator{}},
				Description: "How long each hook and the readiness wait may take (a Go duration, `5m`, `90s`)."},
			"max_history": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(DefaultMaxHistory),
				Validators: []validator.Int64{int64validator.AtLeast(0)},
				Description: fmt.Sprintf("How many revisions of the release to keep (0: all). Defaults to %d, as the helm "+
					"CLI's --history-max.", DefaultMaxHistory)},
			"delete_protection": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Refuse to destroy the release (and so anything that would uninstall it) until this is " +
					"set to false and applied."},
			"skip_crds": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Leave the CRDs of the chart's `crds/` directories alone, as `helm install --skip-crds`: " +
					"not installed, not upgraded, not in `objects`. CRDs that the chart's templates render are applied " +
					"as before. Without it, a CRD of `crds/` that exists already is taken over as the release's own " +
					"when helm or kubectl made it (or a release since uninstalled), left to another release that " +
					"holds it (as helm leaves it), and refused at plan, naming who holds it, when a " +
					"k8sconnect_object or another field manager does. Set on a release that installed them, it " +
					"leaves them in the cluster as they are, no longer upgraded."},
			"set_wo":             setWOAttribute(),
			"set_wo_revision":    setWORevisionAttribute(),
			"cluster_connection": connection.Attribute(connection.Input, "How to reach the cluster."),
			"ignore_fields": schema.MapAttribute{ElementType: types.ListType{ElemType: types.StringType}, Optional: true,
				Description: "Fields of the release's objects to leave to other managers, such as `spec.replicas` of " +
					"a Deployment an HPA scales. Keys are object keys as `objects` shows them, in which `*` matches " +
					"any one part (`apps/Deployment/*/*` for every Deployment of the release); values list fields in " +
					"k8sconnect_object's ignore_fields path language (`spec.template.spec.containers[name=app].image`). " +
					"They are left out of the apply, the release record's manifest and drift detection; a field newly " +
					"listed is handed over with its current value, not reset. A key that matches no object of the " +
					"chart is warned about at plan."},

			"objects": schema.MapAttribute{ElementType: objectset.ProjectionType, Computed: true,
				Description: "Every object of the release (CRDs included, hooks not), keyed by " +
					"`<group>/<Kind>/<namespace>/<name>` (`<group>/<Kind>/<name>` for a cluster-scoped kind) as " +
					"k8sconnect_yaml_scoped keys them, each the map of the fields k8sconnect owns to their values, as " +
					"k8sconnect_object's managed_state_projection. Secret data and every field that holds a " +
					"set_sensitive value show as a keyed hash, never the value."},
			"revision": schema.Int64Attribute{Computed: true,
				Description: "The release revision the last apply wrote, as `helm history` lists it."},
			"status": schema.StringAttribute{Computed: true,
				Description: "The status of that revision: `deployed`, or `failed` after an apply that did not finish " +
					"(the next apply then runs again)."},
			"chart_version": schema.StringAttribute{Computed: true,
				Description: "The chart's exact version (a constraint in `version` resolved)."},
			"app_version": schema.StringAttribute{Computed: true, Description: "The chart's appVersion."},
			"chart_digest": schema.StringAttribute{Computed: true,
				Description: "A digest of the chart as loaded: Chart.yaml and Chart.lock, values.yaml and its schema, " +
					"every template and file (hooks, NOTES.txt and `crds/` among them) and each dependency. A chart " +
					"changed in place (a local directory edited, an archive republished under its version) shows " +
					"here and is applied as an upgrade; an apply of a saved plan whose chart changed since fails " +
					"before it writes anything. Null for a release last applied by a version that did not record it, " +
					"until its next upgrade."},
			"notes": schema.StringAttribute{Computed: true,
				Description: "The chart's rendered NOTES.txt (its subcharts' too with render_subchart_notes), as the " +
					"latest release record keeps it and `helm get notes` shows it: scrubbed of set_sensitive values. " +
					"Known after apply when the apply writes a revision."},
			"cluster_uid": schema.StringAttribute{Computed: true,
				Description: connection.IdentityDescription("the release was installed in") + " A release " +
					"installed by an earlier version records it at its next refresh."},
		}, map[string]string{"set_sensitive": "Every field a value reaches (as written or base64-encoded) shows in " +
			"`objects` as a keyed hash, as Secret data does; values shorter than 3 characters are not searched for.",
			"dependency_repositories":    "A change to them alone (a rotated password) writes no release revision.",
			"dependency_update":          dependencyUpdateMore,
			"disable_openapi_validation": disableOpenAPIValidationMore,
			"postrender":                 postrenderMore}),
	}
}

func (r *Resource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if data := providerdata.Receive(req.ProviderData, &resp.Diagnostics); data != nil {
		r.clients, r.verbosity = data.Clients, data.OwnershipMessages
	}
}

// releaseID is the id of the release name in namespace.
func releaseID(namespace, name string) string { return namespace + "/" + name }
