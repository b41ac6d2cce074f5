//go:build linux

package sandbox

// StopStaging turns l's staging off as an overlay that fails to mount
// does, for tests of what follows: StageErr says why, and commands run
// unstaged, unless they must be staged (Cmd.MustStage).
func StopStaging(l *Landlock, why error) error {
	st, err := l.setup()
	if err != nil {
		return err
	}
	defer l.inflight.Done()
	st.stageFailed(why)
	return nil
}
