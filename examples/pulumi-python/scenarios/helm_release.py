"""Installs a Helm chart (config `chart`: a chart directory, e.g. the greeter
chart of examples/data-sources/k8sconnect_helm_template/chart) as a Helm
release. Every object of the release is planned by a server-side dry run, so a
preview shows, object by object and field by field, what `pulumi up` will
change; each up writes a revision that `helm history` lists. The TypeScript,
Go, YAML and Java examples have the same scenario."""

import json
import os

import pulumi
import pulumi_k8sconnect as k8sconnect

# docs:begin helm-release
config = pulumi.Config()
kubeconfig_path = (
    config.get("kubeconfigPath")
    or os.environ.get("KUBECONFIG")
    or os.path.expanduser("~/.kube/config")
)
# By path: the kubeconfig's credentials stay out of the stack.
cluster = {"kubeconfig_file": kubeconfig_path, "context": config.get("context")}

greeter = k8sconnect.HelmRelease(
    "greeter",
    cluster_connection=cluster,
    name="greeter",
    namespace=config.get("namespace") or "greeter",
    create_namespace=True,
    # A chart directory; a repository or an oci:// registry works the same way.
    chart=config.require("chart"),
    # YAML documents (JSON is YAML), merged in order as `helm -f` merges files.
    values=[json.dumps({"replicas": 2})],
    set=[{"name": "greeting", "value": config.get("greeting") or "hello from a release"}],
    timeout="2m",
)
# docs:end helm-release

# docs:begin manifest-set
# A bundle of manifests as one resource, each object planned by a dry run;
# an object taken out of yaml_body is deleted by the next up. Its namespace
# is the release's, so the set is planned once the release has made it.
k8sconnect.ManifestSet(
    "bundle",
    cluster_connection=cluster,
    namespace=greeter.namespace,
    yaml_body="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeter-extra}\ndata: {note: from a manifest set}\n",
)
# docs:end manifest-set

# The release revision the last up wrote, as `helm history` lists it.
pulumi.export("revision", greeter.revision)
# Per object, the fields k8sconnect owns, as the cluster holds them.
pulumi.export("objects", greeter.objects)
