package console

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/secheaders"
)

// ParseProxies reads docket serve --behind-proxy: addresses (a single IP) and CIDR
// ranges of the reverse proxies whose forwarded headers serve trusts.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, contract.Errorf(contract.CodeListenInsecure, "--behind-proxy %q is not an IP address or a CIDR range; name the proxy's address as serve sees it, such as 127.0.0.1 or 10.0.0.0/24", s)
		}
		if p.Bits() == 0 {
			return nil, contract.Errorf(contract.CodeListenInsecure, "--behind-proxy %q trusts every address, so any client could claim https; name only the proxy's own address or range", s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// CheckListen refuses a listen address beyond loopback unless serve speaks TLS itself
// (tlsOn) or names the proxies in front of it: a worker's Connection key and a person's
// session would otherwise cross the network in the clear. A host name is resolved, and
// every address it has must be loopback.
func CheckListen(ctx context.Context, addr string, tlsOn bool, proxies []netip.Prefix) error {
	if tlsOn || len(proxies) > 0 {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q is not host:port: %w", addr, err)
	}
	loopback := strings.EqualFold(host, "localhost")
	if !loopback && host != "" {
		if a, err := netip.ParseAddr(host); err == nil {
			loopback = a.Unmap().IsLoopback()
		} else if ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host); err == nil && len(ips) > 0 {
			loopback = true
			for _, ip := range ips {
				loopback = loopback && ip.Unmap().IsLoopback()
			}
		}
	}
	if loopback {
		return nil
	}
	return contract.Errorf(contract.CodeListenInsecure,
		"--listen %s is beyond loopback and serve has no TLS, so Connection keys, tokens and passphrases would cross the network in the clear; "+
			"pass --tls-cert FILE --tls-key FILE (docket cert makes both), or --behind-proxy ADDR naming the TLS proxy in front of serve, or listen on 127.0.0.1", addr)
}

// door is the front door's view of where a request came from: over serve's own TLS,
// through a proxy it trusts, or straight.
type door struct {
	tls     bool           // serve's listener speaks TLS itself
	proxies []netip.Prefix // the proxies whose forwarded headers are trusted
}

// peer is the address the connection came from.
func peer(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

func (d door) fromProxy(r *http.Request) bool {
	a, ok := peer(r)
	if !ok {
		return false
	}
	for _, p := range d.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// admit refuses, on a serve behind a proxy without TLS of its own, a request that came
// neither through a named proxy nor from this machine: it crossed the network in the
// clear, and answering would teach its sender that this works.
func (d door) admit(r *http.Request) error {
	if d.tls || len(d.proxies) == 0 || d.fromProxy(r) {
		return nil
	}
	if a, ok := peer(r); ok && a.IsLoopback() {
		return nil
	}
	return contract.Errorf(contract.CodeProxyRequired,
		"this docket serve answers only through its TLS proxy (docket serve --behind-proxy) or on loopback; use the proxy's https:// URL")
}

// secure reports whether the browser reached serve over TLS: serve's own, or a trusted
// proxy's that says so in X-Forwarded-Proto or Forwarded. A header from any other peer is
// ignored.
func (d door) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !d.fromProxy(r) {
		return false
	}
	if p, ok := forwardedProto(r.Header.Values("Forwarded")); ok {
		return strings.EqualFold(p, "https")
	}
	return strings.EqualFold(lastListItem(r.Header.Values("X-Forwarded-Proto")), "https")
}

// mark sets what a secure answer carries: HSTS, so the browser never comes back over
// plain http.
func (d door) mark(w http.ResponseWriter, r *http.Request) {
	if d.secure(r) {
		w.Header().Set("Strict-Transport-Security", secheaders.StrictTransportSecurity)
	}
}

// lastListItem is the last element of a comma-separated header: the one the nearest
// proxy, which serve trusts, wrote.
func lastListItem(values []string) string {
	if len(values) == 0 {
		return ""
	}
	v := values[len(values)-1]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return strings.TrimSpace(v)
}

// forwardedProto is the proto= of the last element of an RFC 7239 Forwarded header: the
// element the nearest proxy added. ok is false when that element names no proto or does
// not parse.
func forwardedProto(values []string) (string, bool) {
	if len(values) == 0 {
		return "", false
	}
	elems := splitQuoted(values[len(values)-1], ',')
	last := elems[len(elems)-1]
	for _, pair := range splitQuoted(last, ';') {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(k, "proto") {
			continue
		}
		if strings.HasPrefix(v, `"`) {
			if len(v) < 2 || !strings.HasSuffix(v, `"`) {
				return "", false
			}
			v = strings.ReplaceAll(v[1:len(v)-1], `\`, "")
		}
		return v, v != ""
	}
	return "", false
}

// splitQuoted splits s at sep outside double-quoted strings (with \ escapes); it always
// returns at least one part.
func splitQuoted(s string, sep byte) []string {
	var parts []string
	quoted, escaped, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case escaped:
			escaped = false
		case c == '\\' && quoted:
			escaped = true
		case c == '"':
			quoted = !quoted
		case c == sep && !quoted:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}
