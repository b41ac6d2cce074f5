// Package deps holds no code: its test holds the import rules of rein's
// packages, so that dependencies keep pointing down (docs/ARCHITECTURE.md).
// The rules are the table in deps_test.go; the test reads the real import
// graph with `go list -deps` and fails on any package that breaks one.
package deps
