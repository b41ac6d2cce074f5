// Package shell judges shell command lines before rein runs them.
//
// Analyze parses a command line with mvdan.cc/sh (bash dialect) and walks
// the syntax tree, never the raw text: every simple command in every
// position (pipelines, lists, subshells, blocks, substitutions, process
// substitutions, function bodies, loops, here-documents fed to shells) is
// found, quotes, escapes and brace expansions are resolved before a name is
// looked at, and wrappers that run other commands (bash -c, eval, env, sudo,
// xargs, find -exec, timeout, git -c core.sshCommand=... and many more) are
// looked inside. Literal "cd" targets are followed so that relative paths
// are judged where they will be. The result is the list of commands found
// and a list of findings, each a Deny or an Ask with a stable rule id.
//
// Gate wraps Analyze as a gate.Gate for tool arguments with the command
// role; it is safe for concurrent use.
//
// What it will not do: it does not run anything, read the file system or
// expand variables other than HOME and PWD; paths are judged lexically
// (symbolic links already on disk are not followed); a program that is not
// a wrapper is judged by its name and arguments, not by what the program
// itself does (a script in the work dir may do anything its author wrote).
// It assumes the shell that runs the line starts without CDPATH, BASH_ENV,
// ENV or aliases of its own. A command line it cannot parse, or that is too
// large or too deeply nested to judge, is refused.
//
// Writes are judged wherever the analyzer sees them (redirects, cp, mv,
// install, ln, tee, sed -i, archives, patches, interpreter code, git
// checkout, ...): outside the work dir they are refused, and into a
// protected path (package protect: git hooks and config, shell rc files,
// editor and agent settings) they ask, as do git config keys whose value
// git runs as a command, however they are set. Deletes are judged by what
// they delete (find -exec rm, xargs rm, tar --remove-files, git rm -r).
// An unknown program's arguments that hold a command line are judged as a
// command too. Every rule is registered in one table (rules.go) with the
// hint the model is given and examples a test runs.
package shell
