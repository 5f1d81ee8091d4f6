// Package check holds the test that checks what users deploy — deploy/Dockerfile, the Helm chart
// deploy/helm/taskloom and deploy/compose.yaml — against taskloom's code: the variables the
// production configuration requires, the routes the probes call, the ports the configuration
// defaults to, the starter commands the containers run, and that no secret is written in them.
// It is a module of its own because Helm's packages, which render the chart here as `helm
// template` would, bring a dependency tree taskloom's own go.mod should not carry. Run it with
// `make deploy-check`.
package check
