// Package cfargs reads the arguments of Caddyfile options the way every
// llmstream directive does: one value per option, sizes such as 8MB,
// non-negative integers and durations, with errors that name the option.
package cfargs

import (
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// One reads the option's single argument into dst.
func One(d *caddyfile.Dispenser, dst *string) error {
	name := d.Val()
	if !d.NextArg() {
		return d.Errf("%s: missing value", name)
	}
	*dst = d.Val()
	if d.NextArg() {
		return d.Errf("%s: too many values (quote a value that has spaces)", name)
	}
	return nil
}

// Size reads a byte size such as 8MB, 512KiB or 1048576.
func Size(d *caddyfile.Dispenser, dst *int64) error {
	name := d.Val()
	var s string
	if err := One(d, &s); err != nil {
		return err
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 || n > 1<<62 {
		return d.Errf("%s: invalid size %q (want e.g. 8MB or 65536)", name, s)
	}
	*dst = int64(n)
	return nil
}

// SizeInt is Size for an int.
func SizeInt(d *caddyfile.Dispenser, dst *int) error {
	name := d.Val()
	var n int64
	if err := Size(d, &n); err != nil {
		return err
	}
	if n > 1<<31-1 {
		return d.Errf("%s: size too large", name)
	}
	*dst = int(n)
	return nil
}

// Int reads a non-negative integer.
func Int(d *caddyfile.Dispenser, dst *int) error {
	name := d.Val()
	var s string
	if err := One(d, &s); err != nil {
		return err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return d.Errf("%s: invalid number %q (want a non-negative integer)", name, s)
	}
	*dst = n
	return nil
}

// Duration reads a duration such as 15s or 2m; 0 is allowed (it disables
// what it times).
func Duration(d *caddyfile.Dispenser) (time.Duration, error) {
	name := d.Val()
	var s string
	if err := One(d, &s); err != nil {
		return 0, err
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil || dur < 0 {
		return 0, d.Errf("%s: invalid duration %q (want e.g. 15s or 2m)", name, s)
	}
	return dur, nil
}
