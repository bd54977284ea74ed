//go:build !unix

package toolserver

import "os/exec"

// setProcessGroup does nothing where there are no process groups.
func setProcessGroup(*exec.Cmd) {}

// signalGroup stops the server's process: without process groups, a kill
// is the only signal.
func signalGroup(cmd *exec.Cmd, kill bool) {
	if kill && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
