// Manage Kubernetes objects with Server-Side Apply; every resource carries its own cluster connection.
package k8sconnect
