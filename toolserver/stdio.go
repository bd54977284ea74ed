package toolserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"time"

	"go.uber.org/zap"
)

// proc is a running stdio server (MCP spec 2025-11-25 "Transports",
// stdio): Caddy starts it, talks to it over its stdin and stdout, logs its
// stderr, and stops it (stdin closed, then SIGTERM, then SIGKILL) and reaps
// it.
type proc struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of its stdin
	stdout *os.File // our end of its stdout
	stderr *os.File // our end of its stderr
	done   chan struct{}
	err    error // the wait status, once done is closed
	logged chan struct{}
}

// environ returns a stdio server's environment: the configured variables
// and, unless they set them, PATH and HOME from Caddy's, and nothing else
// of Caddy's environment (secrets reach a server only as configured).
// expand resolves {env.X} placeholders.
func environ(cfg map[string]string, expand func(string) string) []string {
	vars := map[string]string{}
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	for k, v := range cfg {
		vars[k] = expand(v)
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// startProc starts argv with env. Its stderr goes to logger at debug
// level, line by line (see logStderr).
func startProc(argv, env []string, logger *zap.Logger) (*proc, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	setProcessGroup(cmd)
	// Pipes of our own rather than cmd.StdoutPipe: Wait may then reap the
	// process while the session still reads what it wrote last.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	closeAll(inR, outW, errW) // the child has them now
	p := &proc{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, done: make(chan struct{}), logged: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	go p.logStderr(logger)
	return p, nil
}

// Limits of the stderr lines logged: a server that writes a lot to its
// stderr costs a bounded amount of log.
const (
	stderrLineBytes  = 1024 // a longer line is cut
	stderrLinesBurst = 100  // lines logged in a burst,
	stderrLinesPerS  = 20   // then this many a second; the rest are counted
)

// logStderr logs the server's stderr at debug level until it closes.
func (p *proc) logStderr(logger *zap.Logger) {
	defer close(p.logged)
	br := bufio.NewReaderSize(p.stderr, 4096)
	tokens, last, dropped := float64(stderrLinesBurst), time.Now(), 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Log the first part, skip the rest of the line.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if len(line) > 0 {
			now := time.Now()
			tokens = min(float64(stderrLinesBurst), tokens+now.Sub(last).Seconds()*stderrLinesPerS)
			last = now
			if tokens >= 1 {
				tokens--
				if len(line) > stderrLineBytes {
					line = line[:stderrLineBytes]
				}
				fields := []zap.Field{zap.ByteString("line", trimNewline(line))}
				if dropped > 0 {
					fields = append(fields, zap.Int("lines_not_logged", dropped))
					dropped = 0
				}
				logger.Debug("tool server stderr", fields...)
			} else {
				dropped++
			}
		}
		if err != nil {
			if dropped > 0 {
				logger.Debug("tool server stderr", zap.Int("lines_not_logged", dropped))
			}
			return
		}
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// stop stops the server as the MCP spec's stdio shutdown says: its stdin
// is closed; if it has not exited after grace, its process group gets
// SIGTERM; after grace again, SIGKILL. It returns once the process is
// reaped and its pipes are closed. It is safe to call twice.
func (p *proc) stop(grace time.Duration) {
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(grace):
		signalGroup(p.cmd, false)
		select {
		case <-p.done:
		case <-time.After(grace):
			signalGroup(p.cmd, true)
			<-p.done
		}
	}
	// The process is reaped (its group is not signalled after that: the
	// group id may be reused). Closing our ends of the pipes ends the
	// readers even if something it started still holds the other ends.
	_ = p.stdout.Close()
	_ = p.stderr.Close()
	<-p.logged
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// exitStatus describes how the process ended, for the log.
func (p *proc) exitStatus() string {
	select {
	case <-p.done:
	default:
		return "running"
	}
	if p.err == nil {
		return "exit status 0"
	}
	return p.err.Error()
}

var _ io.ReadCloser = (*lineFrames)(nil)
