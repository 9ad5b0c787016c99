package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/docketrun/docket/internal/authority"
	"github.com/docketrun/docket/internal/console"
)

// serveCmd runs the authority: the store, the Boards and the console API on a loopback
// listener (DESIGN.md §1, §11).
type serveCmd struct {
	Listen   string   `help:"Address to listen on; loopback unless told otherwise." default:"127.0.0.1:7420"`
	DB       string   `name:"db" help:"Store: a SQLite path or postgres://… (default $DOCKET_HOME/docket.db)."`
	Host     []string `help:"Extra Host header values to answer to (name:port), besides the loopback names."`
	LogLevel string   `help:"Log level: debug, info, warn or error." enum:"debug,info,warn,error" default:"info"`
}

func (c *serveCmd) Run(ctx context.Context, e *env) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: level}))
	dir, err := dataDir(e)
	if err != nil {
		return err
	}
	key, err := authority.ReadKeyFile(filepath.Join(dir, keyFile))
	if err != nil {
		return fmt.Errorf("%w (run docket init first)", err)
	}
	st, err := openStore(ctx, dir, c.DB)
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := authority.New(authority.Config{Store: st, Key: key, Logger: log})
	if err != nil {
		return err
	}
	if err := a.Restore(ctx); err != nil {
		return err
	}
	hosts := make([]string, len(c.Host))
	for i, h := range c.Host {
		hosts[i] = strings.ToLower(h)
	}
	srv, err := console.New(console.Config{Authority: a, Logger: log, Version: version, Hosts: hosts})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	url := "http://" + ln.Addr().String()
	urlPath := filepath.Join(dir, urlFile)
	if err := writePrivate(urlPath, []byte(url+"\n")); err != nil {
		ln.Close()
		return err
	}
	defer os.Remove(urlPath)
	log.Info("docket serve listening", "url", url)
	return srv.Run(ctx, ln)
}
