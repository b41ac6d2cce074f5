package sandbox

import "errors"

// errExecFailed marks a command whose program could not be exec'd in the
// sandbox, every restriction in force and nothing of the program run: a
// direct command (Landlock.Simple) then runs again through the shell,
// which says why as bash does.
var errExecFailed = errors.New("the program could not be executed")

// execFailedError is an exec failure as the sandbox reported it.
type execFailedError string

func (e execFailedError) Error() string      { return string(e) }
func (execFailedError) Is(target error) bool { return target == errExecFailed }

// execFailed is msg as an error marked errExecFailed.
func execFailed[T ~string | ~[]byte](msg T) error { return execFailedError(msg) }
