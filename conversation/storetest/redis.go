package storetest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartRedis starts a redis-server of its own for the test, on a free
// loopback port with its files in a temporary directory and no
// persistence, and returns its URL. The server is stopped when the test
// ends. Without a redis-server binary (Debian: apt-get install
// redis-server; Valkey's valkey-server works the same) the test is
// skipped with a message saying so.
func StartRedis(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if bin, err = exec.LookPath("valkey-server"); err != nil {
			t.Skip("redis-server is not installed (apt-get install redis-server): skipping the Redis store test")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--loglevel", "warning", "--logfile", dir+"/redis.log")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for !ping(addr) {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(dir + "/redis.log")
			t.Fatalf("%s did not answer on %s: %s", bin, addr, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "redis://" + addr + "/0"
}

// ping reports whether a Redis server answers PING at addr.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}
