// Package docker is a sandbox.Executor that runs each command inside one
// long-lived container per session, through the docker or podman command
// line.
//
// Start runs the container: `sleep infinity` under a minimal init (both as
// nobody, so no command can trace or signal them), the work dir
// bind-mounted read-write at the same absolute path, no network unless asked
// for, every capability dropped, no-new-privileges, pids, memory and CPU
// limits, a read-only root file system and a small tmpfs on /tmp. Commands
// run as the user's uid:gid, so what they write in the work dir is the
// user's, with only an allowlisted environment (plus HOSTNAME, and HOME and
// PATH when it has none, which the runtime adds). The image is never
// pulled: it must already be on the machine (users pass one with --image;
// the tests build a tiny one FROM scratch with a static busybox, see
// scripts/build-test-image). Each Exec is one `docker exec` with a timeout
// and bounded output; Close removes the container. Containers carry the
// labels rein.session, rein.pid, rein.boot, rein.start and rein.host, so
// that GC (`rein sandbox gc`) can remove those whose rein process is gone
// after a crash.
//
// A command's directory must lie in the work dir. The wrapper below changes
// to it inside the container, so the runtime (runc, as root) never follows a
// path the container controls.
//
// How a command is stopped. Killing the docker client does not stop the
// process it started in the container, so every command runs under a small
// POSIX sh wrapper. The wrapper leads its own session and process group in
// the container; before the script starts it reports its pid on stderr and
// leaves a watcher, a subshell reading the exec's stdin, which is a pipe
// from rein used for nothing else. A line "TERM" or "KILL" on that pipe makes
// the watcher signal the whole group; the end of the pipe (rein closed it,
// or the client died with rein) kills the group. When the script's shell
// exits the wrapper reports its status on stderr and kills the rest of the
// group, so no background process outlives the call, as with sandbox.Local.
// The watcher is there before the script can start a fork bomb, so stopping
// a command needs no new process in a container that has run out of pids. If
// the watcher was killed by the script itself, rein falls back to a second
// `docker exec ... kill`.
//
// Why the command line and not the moby Go client:
//   - No new dependency: the moby client brings its own module graph
//     (the API types, containerd errdefs, OpenTelemetry, …) into rein, and
//     rein adds modules only for strong reasons.
//   - Podman for free: podman's command line takes the same flags; the Go
//     client could reach podman only through its docker-compatible socket,
//     a service the user must run.
//   - Old daemons: the current moby client (github.com/moby/moby/client,
//     Docker 29) no longer negotiates API versions below 1.44 (moby PR
//     #51119), while Docker Engine 20.10, as on our own machines, speaks
//     1.41; the CLI downgrades itself to the daemon's version.
//   - The price is one client process per call, a few tens of milliseconds
//     on top of the daemon's own exec (BenchmarkDockerExec measures it).
//
// The client runs with a filtered environment (DOCKER_*, CONTAINER*,
// PODMAN_*, XDG_*, PATH, HOME and a few others), so API keys in rein's
// environment never reach it. The command's environment is passed as --env
// flags: it is allowlisted and must hold no secrets, since other users of
// the host can read a process's arguments. Standard input (Cmd.Stdin) is
// passed through the client's environment instead and is limited to
// MaxStdin bytes without NUL.
//
// Requirements on the image: /bin/sh (POSIX), sleep, and kill and printf
// (builtins of every common sh). It must not need root: commands run as the
// user's uid:gid with no capabilities.
//
// With Options.Stage (rein as root on Linux) each command's writes are
// staged: rein attaches an overlay over the work dir in the container's
// mount namespace from a thread of its own that entered it, and the
// result carries a sandbox.Staged, as the landlock backend's does. With
// Options.Egress rein listens for its egress proxy inside the container's
// network namespace, which keeps --network none.
//
// What the package will not do: pull an image, mount anything but the work
// dir (and, staged, the overlay over it and the masks inside that), mount a work dir that is or holds a home directory, a credential
// directory or a system directory (/etc, /run with the docker socket, …),
// run with --privileged, or share the host's network or pid namespace. It
// does not keep a command's own processes apart from each other inside the
// container (a command may read another's /proc entries, as the same user),
// and a process that leaves the wrapper's session (setsid) lives on until
// Close (staged, until its command ends: rein kills what a staged command
// leaves in the container's cgroup). Podman is driven with the same flags
// but is not tested here.
package docker
