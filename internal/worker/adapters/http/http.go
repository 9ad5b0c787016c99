// Package http provides the http adapter: one request, built from the Tool's method and
// path template, to the origin of an http Source, with JSON rows back.
package http

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/signing"
	"github.com/docketrun/docket/internal/worker"
)

// Defaults, used when a Tool's fence leaves them unset.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultMaxBytes = 4 << 20 // response body cap, bytes
	maxRedirects    = 5
)

var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// Adapter runs http Tools. Its zero value uses a client built on
// http.DefaultTransport; it is safe for concurrent use.
//
// The entry is "METHOD /path/{param}?q={param}". Placeholders are filled with the
// call's arguments, escaped for the path or the query, so an argument cannot change the
// host or climb the path. Arguments not named in the template go in the query for GET,
// HEAD and DELETE, and in a JSON body otherwise. The request goes to the Source's URL
// (its path is a prefix) with the Source's headers. A redirect is followed only to the
// Source's origin (scheme, host and port alike), or to a host listed in the Source's or
// the Tool's fence.hosts; to a listed host it goes without the Source's headers, cookies
// or Authorization, so a secret header never leaves the Source's origin. No redirect
// carries a Referer: it would be the Source's URL, path token and all. Any other
// redirect is refused. Transport errors are logged with the origin only: the Source's
// URL path may hold a secret.
//
// A 2xx answer's JSON body becomes rows (an object is one row, an array one row each; an
// empty body none). A read Tool that fails is refused. A write Tool is refused when the
// request was never fully sent or the server answered 4xx; a 5xx, a timeout or a lost
// connection after the request was sent is an unknown effect.
//
// A Source with "sign": true has each request signed per RFC 9421 with its keyring
// (Ed25519; covered @authority and signature-agent; created, expires, nonce; keyid the
// key's RFC 7638 thumbprint), Signature-Agent naming the key directory that lists its
// key. The signature fields do not follow a redirect to another origin.
type Adapter struct {
	Transport http.RoundTripper // default http.DefaultTransport
	Now       func() time.Time  // the clock of signatures; default time.Now
}

var (
	_ worker.Adapter     = (*Adapter)(nil)
	_ worker.ToolChecker = (*Adapter)(nil)
)

// SignatureLife is how long a signed request's signature is valid after it is created.
const SignatureLife = time.Minute

// sign signs req (RFC 9421, Ed25519) with src's keyring: covered @authority and
// signature-agent, with created, expires, a fresh nonce and the key's RFC 7638 thumbprint
// as keyid. A keyring that does not load refuses the call without quoting the file.
func (a *Adapter) sign(req *http.Request, src *worker.Source) error {
	keys, err := signing.Load(src.SigningKey)
	if err != nil {
		return &contract.Error{Code: contract.CodeVaultInvalid,
			Teaching: fmt.Sprintf("source %s signs its requests, and its signingKey does not load as an Ed25519 keyring of mode 0600; fix it in the vault.", src.Name), Err: err}
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return fmt.Errorf("signature nonce: %w", err)
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	created := now().Unix()
	req.Header.Set("Signature-Agent", `"`+src.SignatureAgent+`"`)
	p := signing.SignatureParams{Components: []string{"@authority", "signature-agent"}, Created: created,
		Expires: created + int64(SignatureLife/time.Second), Nonce: base64.RawURLEncoding.EncodeToString(nonce[:]), Tag: "web-bot-auth"}
	return keys.SignRequest(req, "sig1", p)
}

// route is a parsed entry.
type route struct {
	method string
	path   string // may hold {param}
	query  string // may hold {param}
}

func parseEntry(id contract.ToolID, t worker.Tool) (route, error) {
	method, target, ok := strings.Cut(strings.TrimSpace(t.Entry), " ")
	bad := func(why string) (route, error) {
		return route{}, contract.Errorf(contract.CodeManifestInvalid, "tool %s entry %.80q %s; write it as \"GET /items/{id}\".", id, t.Entry, why)
	}
	if !ok || !slices.Contains(methods, method) {
		return bad("does not start with GET, HEAD, POST, PUT, PATCH or DELETE")
	}
	target = strings.TrimSpace(target)
	if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") || strings.Contains(target, "#") {
		return bad("has no path starting with a single '/'")
	}
	p, q, _ := strings.Cut(target, "?")
	if slices.Contains(strings.Split(p, "/"), "..") {
		return bad("climbs with \"..\"")
	}
	r := route{method: method, path: p, query: q}
	for _, name := range append(placeholders(p), placeholders(q)...) {
		if _, ok := t.Params[name]; !ok {
			return bad(fmt.Sprintf("uses {%s}, which is not a declared parameter", name))
		}
	}
	return r, nil
}

// placeholders returns the {name}s of s.
func placeholders(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, s[i+1:i+j])
		s = s[i+j+1:]
	}
}

// CheckTool checks the entry's method, path and placeholders.
func (a *Adapter) CheckTool(id contract.ToolID, t worker.Tool) error {
	_, err := parseEntry(id, t)
	return err
}

// Execute sends the request once.
func (a *Adapter) Execute(ctx context.Context, c worker.Call) (worker.Outcome, error) {
	rt, err := parseEntry(c.Tool, c.Def)
	if err != nil {
		return worker.Refuse(err)
	}
	if c.Source == nil || c.Source.Type != "http" {
		return worker.Refuse(contract.Errorf(contract.CodeSourceTypeMatch, "tool %s runs against an http Source; name one.", c.Tool))
	}
	base, err := url.Parse(c.Source.URL.Reveal())
	if err != nil {
		return worker.Refuse(contract.Errorf(contract.CodeVaultInvalid, "source %s has a malformed url; fix it in the vault.", c.Source.Name))
	}
	origin := worker.Origin(base)
	allowed := slices.Clone(c.Source.Hosts)
	timeout, maxBytes := DefaultTimeout, int64(DefaultMaxBytes)
	if f := c.Def.Fence; f != nil {
		allowed = append(allowed, f.Hosts...)
		if f.TimeoutMs > 0 {
			timeout = time.Duration(f.TimeoutMs) * time.Millisecond
		}
		if f.MaxBytes > 0 {
			maxBytes = f.MaxBytes
		}
	}
	req, err := build(ctx, rt, base, c.Args)
	if err != nil {
		return worker.Refuse(err)
	}
	for k, v := range c.Source.Headers {
		req.Header.Set(k, v.Reveal())
	}
	if worker.Origin(req.URL) != origin {
		return worker.Refuse(contract.Errorf(contract.CodeHTTPHost, "tool %s would reach host %.80s, which is not the Source's origin; fix the Source's url.", c.Tool, req.URL.Hostname()))
	}
	if c.Source.Sign {
		if err := a.sign(req, c.Source); err != nil {
			return worker.Refuse(err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var sent atomic.Bool // the whole request reached the wire: from here its effect may have happened
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				sent.Store(true)
			}
		},
	}))
	failed := func(err error) (worker.Outcome, error) {
		if c.Def.Kind == contract.ToolKindRead || !sent.Load() {
			return worker.Refuse(err)
		}
		return worker.Unknown(err)
	}
	client := &http.Client{Transport: a.Transport, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return contract.Errorf(contract.CodeHTTPHost, "tool %s was redirected more than %d times.", c.Tool, maxRedirects)
		}
		// Go sets Referer to the URL redirected from: the Source's URL, whose path may
		// hold a token. No redirect carries it, to the origin or elsewhere.
		r.Header.Del("Referer")
		if worker.Origin(r.URL) == origin {
			return nil
		}
		if !slices.Contains(allowed, r.URL.Hostname()) {
			return contract.Errorf(contract.CodeHTTPHost, "tool %s was redirected off the Source's origin (to host %.80s); a redirect must keep the scheme, host and port, or go to a host listed in fence.hosts.", c.Tool, r.URL.Hostname())
		}
		// A listed host is another origin: nothing secret goes with it. Go copies the
		// first request's headers onto a redirect before this check runs.
		for k := range c.Source.Headers {
			r.Header.Del(k)
		}
		for _, k := range []string{"Authorization", "Cookie", "Proxy-Authorization", "Www-Authenticate", "Signature", "Signature-Input", "Signature-Agent"} {
			r.Header.Del(k)
		}
		return nil
	}}
	resp, err := client.Do(req)
	if err != nil {
		if ce, ok := errors.AsType[*contract.Error](err); ok {
			return failed(ce)
		}
		if ctx.Err() != nil {
			return failed(&contract.Error{Code: contract.CodeToolTimeout, Teaching: fmt.Sprintf("tool %s got no answer within %s; raise fence.timeoutMs or check the service.", c.Tool, timeout), Err: worker.RedactURL(err)})
		}
		return failed(fmt.Errorf("http %s: %w", c.Tool, worker.RedactURL(err)))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return failed(fmt.Errorf("http %s: read body: %w", c.Tool, worker.RedactURL(err)))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := contract.Errorf(contract.CodeHTTPStatus, "tool %s got HTTP %d from the service.", c.Tool, resp.StatusCode)
		if resp.StatusCode < 500 {
			return worker.Refuse(err) // the service refused the request as sent
		}
		return failed(err)
	}
	if int64(len(body)) > maxBytes {
		return failed(contract.Errorf(contract.CodeOutputTooBig, "tool %s got a response over %d bytes; ask for less or raise fence.maxBytes.", c.Tool, maxBytes))
	}
	if len(bytes.TrimSpace(body)) == 0 || req.Method == http.MethodHead {
		return worker.OK()
	}
	rows, err := worker.Rows(body, false)
	if err != nil {
		return failed(&contract.Error{Code: contract.CodeRunOutput, Teaching: fmt.Sprintf("tool %s got a 2xx answer whose body is not a JSON object or an array of objects.", c.Tool), Err: err})
	}
	return worker.OK(rows...)
}

// build fills the route's placeholders and places the other arguments.
func build(ctx context.Context, rt route, base *url.URL, args contract.Args) (*http.Request, error) {
	used := map[string]bool{}
	fill := func(s string, escape func(string) string) string {
		for _, name := range placeholders(s) {
			used[name] = true
			s = strings.ReplaceAll(s, "{"+name+"}", escape(text(args[name])))
		}
		return s
	}
	for _, name := range placeholders(rt.path) {
		if v := text(args[name]); v == "" || v == "." || v == ".." {
			return nil, contract.Errorf(contract.CodeToolArgs, "argument %s fills a path segment and may not be empty, \".\" or \"..\".", name)
		}
	}
	p := fill(rt.path, url.PathEscape)
	q := fill(rt.query, url.QueryEscape)
	u := *base
	u.RawPath = ""
	u.Path = strings.TrimSuffix(base.Path, "/")
	rawPath := strings.TrimSuffix(base.EscapedPath(), "/") + p
	if err := setRawPath(&u, rawPath); err != nil {
		return nil, err
	}
	query, err := url.ParseQuery(q)
	if err != nil {
		return nil, contract.Errorf(contract.CodeToolArgs, "the request's query string is malformed.")
	}
	rest := contract.Args{}
	for k, v := range args {
		if !used[k] {
			rest[k] = v
		}
	}
	var body io.Reader
	switch rt.method {
	case http.MethodGet, http.MethodHead, http.MethodDelete:
		for k, v := range rest {
			query.Set(k, text(v))
		}
	default:
		b, err := json.Marshal(rest)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, rt.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

func setRawPath(u *url.URL, raw string) error {
	p, err := url.PathUnescape(raw)
	if err != nil {
		return contract.Errorf(contract.CodeToolArgs, "the request path is malformed.")
	}
	u.Path, u.RawPath = p, raw
	return nil
}

// text writes a value for a URL: strings as they are, other scalars as JSON.
func text(v contract.Value) string {
	if v.Kind() == contract.ValueString {
		return v.Str()
	}
	b, _ := v.MarshalJSON()
	return string(b)
}
