package chartinputs

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/k8sconnect/k8sconnect/provider/internal/helmchart"
)

// alsoRequires makes a field of a dependency_repositories entry need
// another of the same entry (a password its username), so that an entry
// that could only fail at the server fails the plan's validation instead.
func alsoRequires(sibling string) validator.String {
	return stringvalidator.AlsoRequires(path.MatchRelative().AtParent().AtName(sibling))
}

// repositoryURL refuses a dependency_repositories url that could not cover
// a dependency's repository (helmchart.ParseRepositoryURL says which).
type repositoryURL struct{}

var _ validator.String = repositoryURL{}

func (repositoryURL) Description(context.Context) string {
	return "an http://, https:// or oci:// URL with a host, and no credentials, query or fragment"
}

func (v repositoryURL) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (repositoryURL) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := helmchart.ParseRepositoryURL(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid dependency repository URL", err.Error())
	}
}

// uniqueRepositoryURLs refuses two entries that cover the same URLs: which
// one's credentials a dependency gets would be up to their order.
var uniqueRepositoryURLs = []validator.List{uniqueURLs{}}

type uniqueURLs struct{}

func (uniqueURLs) Description(context.Context) string {
	return "no two entries with the same url"
}

func (v uniqueURLs) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (uniqueURLs) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	// plain_http decides the port an oci:// url without one stands for
	// (helmchart.RepositoryURLKey). While it is unknown, two entries are
	// refused only if they are the same either way; the chart's loading
	// refuses the others once it is known.
	var plainHTTP types.Bool
	modes := []bool{false, true}
	if !req.Config.GetAttribute(ctx, path.Root("plain_http"), &plainHTTP).HasError() && !plainHTTP.IsUnknown() {
		modes = []bool{plainHTTP.ValueBool()}
	}
	seen := make([]map[string]int, len(modes))
	for m := range seen {
		seen[m] = map[string]int{}
	}
	for i, e := range req.ConfigValue.Elements() {
		raw, known := entryString(e, "url")
		if !known {
			continue
		}
		u, err := helmchart.ParseRepositoryURL(raw)
		if err != nil {
			continue // the url's own validator says why
		}
		first, duplicate := -1, true
		for m, plain := range modes {
			key := helmchart.RepositoryURLKey(u, plain)
			f, ok := seen[m][key]
			if !ok {
				duplicate = false
				seen[m][key] = i
			} else if first < 0 {
				first = f
			}
		}
		if duplicate {
			resp.Diagnostics.AddAttributeError(req.Path.AtListIndex(i).AtName("url"), "Duplicate dependency repository",
				fmt.Sprintf("%q is the url of %s already (written the same or otherwise): give each repository one entry",
					raw, req.Path.AtListIndex(first)))
		}
	}
}

// entryString is one string field of a dependency_repositories entry ("" if
// null), and whether it is known.
func entryString(entry attr.Value, name string) (string, bool) {
	obj, ok := entry.(types.Object)
	switch {
	case !ok || obj.IsUnknown():
		return "", false
	case obj.IsNull():
		return "", true
	}
	s, ok := obj.Attributes()[name].(types.String)
	if !ok || s.IsUnknown() {
		return "", false
	}
	return s.ValueString(), true
}

// repositoryFields are the fields of a dependency_repositories entry.
var repositoryFields = func() []string {
	names := make([]string, len(repositoryAttributes))
	for i, r := range repositoryAttributes {
		names[i] = r.name
	}
	return names
}()

// repositoriesKnown reports whether dependency_repositories and every field
// of every entry are known.
func repositoriesKnown(list types.List) bool {
	if list.IsUnknown() {
		return false
	}
	for _, e := range list.Elements() {
		for _, name := range repositoryFields {
			if _, known := entryString(e, name); !known {
				return false
			}
		}
	}
	return true
}

// dependencyRepositories are the entries as the chart loader takes them.
func dependencyRepositories(list types.List) []helmchart.DependencyRepository {
	var out []helmchart.DependencyRepository
	for _, e := range list.Elements() {
		field := func(name string) string {
			s, _ := entryString(e, name)
			return s
		}
		out = append(out, helmchart.DependencyRepository{
			URL: field("url"), Username: field("username"), Password: field("password"),
			CAFile: field("ca_file"), CertFile: field("cert_file"), KeyFile: field("key_file"),
		})
	}
	return out
}
