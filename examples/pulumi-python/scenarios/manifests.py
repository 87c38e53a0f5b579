"""Applies a multi-document YAML file (config `manifests`) the way Kubernetes
needs it: CRDs first, then cluster-scoped objects (Namespaces, custom
resources of those CRDs), then namespaced objects. get_yaml_scoped splits the
file and keys every document by <group>/<Kind>/[<namespace>/]<name>, so the
resource names, and with them the stack, do not change when the documents are
reordered. It also keys the file with get_yaml_split and reads the kube-system
Namespace with get_object."""

import os

import pulumi
import pulumi_k8sconnect as k8sconnect

# docs:begin yaml-scoped-apply
config = pulumi.Config()
kubeconfig_path = (
    config.get("kubeconfigPath")
    or os.environ.get("KUBECONFIG")
    or os.path.expanduser("~/.kube/config")
)
with open(kubeconfig_path, encoding="utf-8") as f:
    cluster = {
        "kubeconfig": pulumi.Output.secret(f.read()),
        "context": config.get("context"),
    }

with open(config.require("manifests"), encoding="utf-8") as f:
    scoped = k8sconnect.get_yaml_scoped(content=f.read())


def apply(manifests: dict, after: list) -> list:
    return [
        k8sconnect.KubernetesObject(
            key,
            cluster_connection=cluster,
            yaml_body=body,
            opts=pulumi.ResourceOptions(depends_on=after),
        )
        for key, body in manifests.items()
    ]


crds = apply(scoped.crds, [])
cluster_scoped = apply(scoped.cluster_scoped, crds)
namespaced = apply(scoped.namespaced, cluster_scoped)
# docs:end yaml-scoped-apply

pulumi.export("applied", len(crds) + len(cluster_scoped) + len(namespaced))

# docs:begin yaml-split-keys
# get_yaml_split keys the same documents by <group>/<Kind>/[<namespace>/]<name>
# without sorting them by scope: a key names its object wherever the document
# sits in the file.
with open(config.require("manifests"), encoding="utf-8") as f:
    split = k8sconnect.get_yaml_split(content=f.read())
# docs:end yaml-split-keys
pulumi.export("keys", sorted(split.manifests))

# docs:begin object-read
# The uid of the kube-system Namespace is a common stand-in for the cluster's
# id.
kube_system = k8sconnect.get_object_output(
    cluster_connection=cluster,
    api_version="v1",
    kind="Namespace",
    name="kube-system",
)
cluster_id = kube_system.object.apply(lambda obj: obj["metadata"]["uid"])
# docs:end object-read
pulumi.export("clusterId", cluster_id)
