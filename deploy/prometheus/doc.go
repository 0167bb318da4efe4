// Package prometheus holds rackfence's Prometheus alert rules, their
// promtool unit tests and a Grafana dashboard (README.md); its Go tests
// run promtool and check that every metric the rules and the dashboard
// name is one the binaries export.
package prometheus
