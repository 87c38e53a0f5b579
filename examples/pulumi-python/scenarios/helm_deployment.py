"""Adjusts a Deployment that a Helm release installed, without forking the
chart: adds an ownership annotation and raises the memory limit of one
container. The patch owns just those two fields; Helm keeps the rest,
including the other container and the first container's CPU limit."""

import os

import pulumi
import pulumi_k8sconnect as k8sconnect

# docs:begin patch-helm
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

web = k8sconnect.Patch(
    "web",
    cluster_connection=cluster,
    target={
        "api_version": "apps/v1",
        "kind": "Deployment",
        "name": config.get("name") or "web",
        "namespace": config.require("namespace"),
    },
    # Containers merge by name, so only the "web" container's memory limit
    # changes; leaving out the sidecar does not remove it.
    patch=f"""
metadata:
  annotations:
    example.com/owner: platform
spec:
  template:
    spec:
      containers:
        - name: web
          resources:
            limits:
              memory: {config.get("memory") or "1Gi"}
""",
    # Helm owns these fields; the patch takes them by force, and the next
    # `helm upgrade` may take them back, which shows as drift here.
    take_ownership=True,
)
# docs:end patch-helm

pulumi.export("managedFields", web.managed_fields)
pulumi.export("previousOwners", web.previous_owners)
