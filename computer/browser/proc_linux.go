package browser

import (
	"os/exec"
	"syscall"
)

// killWithParent makes the kernel kill Chromium when rein dies, as
// chromedp's own default does (chromedp starts it from a locked thread).
func killWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = new(syscall.SysProcAttr)
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
