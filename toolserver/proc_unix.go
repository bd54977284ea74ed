//go:build unix

package toolserver

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the server in a process group of its own, so
// that stopping it also stops what it started (npx starts node; a shell
// wrapper starts the real server): no grandchild is left behind.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the server's process group.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
	}
}
