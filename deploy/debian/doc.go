// Package debian holds the Debian packaging of rackfence (maintainer
// scripts, example config files) that deploy/dist.sh (make dist) builds
// into packages; its test installs and removes those packages for real.
package debian
