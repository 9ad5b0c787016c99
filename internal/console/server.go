package console

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/docketrun/docket/internal/contract"
	"github.com/docketrun/docket/internal/secheaders"
)

// Defaults for [Config].
const (
	DefaultMaxBody       = 1 << 20 // bytes, for ordinary requests
	DefaultMaxUpload     = 8 << 20 // bytes, for a capability package
	DefaultShutdownLimit = 10 * time.Second
	DefaultKeepAlive     = 15 * time.Second
)

// directory is the part of the identity directory the console's own resources need:
// credentials, sessions, members, projects, Agents, delegates, Connections and cards.
// Each handler file declares the methods it calls; *identity.Directory has them all.
type directory interface {
	authenticator
	sessionBackend
	projectBackend
	agentBackend
	delegateBackend
	connectionBackend
	toolApprover
	cardBackend
	nameBackend
}

// backend is the part of the authority the console's own resources need beyond the
// directory: what reads or writes a project's Board, log and other parts. Each handler
// file declares the methods it calls; *authority.Authority has them all.
type backend interface {
	pinger
	toolLocker
	toolBackend
	capabilityBackend
	caseBackend
	eventBackend
	eventFilterBackend
	whyBackend
	factBackend
	workerBackend
	pageBackend
	conversationBackend
	taskBackend
	profileBackend
	blueprintBackend
	materialBackend
	budgetBackend
}

// Config holds what a [Server] needs. Identity and Authority are required.
type Config struct {
	// Identity proves credentials and keeps the principals: sessions, members, projects,
	// Agents, delegates, Connections, their sources and Tool locks, and cards.
	// *identity.Directory satisfies it: the one [authority.Authority.Directory] returns.
	Identity directory

	// Authority answers the rest of the console's own resources: capabilities, cases,
	// events, conversations, tasks, profiles and the other parts over a project's Board
	// and log. *authority.Authority satisfies it.
	Authority backend

	// Requests lists and decides Requests. It must be the *operation.Operations that
	// serves /mcp ([authority.Operations.Operations]), so that a decision wakes the call
	// held there. Without it, the request and decision routes answer not_found like any
	// route the server does not have.
	Requests decider

	// Operations lists a project's Operations. It must be the *authority.Operations that
	// serves /mcp. Without it, the operations route answers not_found like any route the
	// server does not have, and the pages show no Operations.
	Operations operationLister

	// Reconciler settles Operations that need a person. It must be the
	// *operation.Dispatcher that serves /work, so that the settled claim is its own.
	// Without it, the reconcile route answers not_found like any route the server does
	// not have.
	Reconciler reconciler

	// Policies publishes and shows the project's policies; *authority.Authority satisfies
	// it. Without it, the policy routes answer not_found like any route the server does
	// not have.
	Policies policyBook

	// Cards records a delegate's consent calls as cards and confirms them. It
	// must be the *authority.Operations that serves /mcp. Without it, a delegate's consent
	// call is refused consent_required and the confirm route answers not_found.
	Cards carder

	// Recovery retries failed Operations for members. It must be the
	// *operation.Operations that serves /mcp. Without it, the retry route answers
	// not_found like any route the server does not have.
	Recovery recoverer

	// Hooks records coding agents' tool calls reported by their hooks
	// (docs/coding-agents.md). It must be the *operation.Operations that decides
	// Requests. Without it, the hook routes answer not_found like any route the server
	// does not have.
	Hooks hookBackend

	// Artifacts keeps tool results over a runtime's inline bound for ReadArtifact. It
	// must be the *operation.Operations that serves /mcp. Without it, POST
	// /api/v1/artifacts answers not_found like any route the server does not have.
	Artifacts artifactKeeper

	// Schedules keeps members' schedules; *schedule.Keeper satisfies it. Without it,
	// the schedule routes answer not_found like any route the server does not have.
	Schedules scheduleBook
	// Notices keeps members' notice subscriptions (docs/notices.md); *notice.Keeper
	// satisfies it. Without it, the notice routes and page are absent.
	Notices noticeBook

	Logger  *slog.Logger // default: discards
	Version string       // reported by GET /api/v1/health

	// Hosts are the extra Host header values the server answers to, besides the loopback
	// names (localhost, 127.0.0.1, [::1]) at the listener's port. Every other Host is
	// refused, so that a DNS-rebinding page cannot reach the API.
	Hosts []string

	// MaxBody bounds a request body in bytes; default DefaultMaxBody. Capability uploads
	// use MaxUpload, default DefaultMaxUpload.
	MaxBody   int64
	MaxUpload int64

	// KeepAlive is how often an idle event stream sends a comment; default DefaultKeepAlive.
	KeepAlive time.Duration

	// Routes are further handlers served on the same listener, keyed by ServeMux pattern:
	// the MCP gateway at /mcp and the worker hop at /work. They pass the Host check, the
	// cross-origin refusal and the security headers like every route, and authenticate
	// their callers themselves (agent tokens, connection keys).
	Routes map[string]http.Handler

	// Metrics, when set, is served at GET /metrics to a member acting in person (a
	// session), never to an Agent's token or a delegate: its labels name every project. Observe, when set, wraps the whole handler
	// of the listener: serve's request metrics and spans.
	Metrics http.Handler
	Observe func(http.Handler) http.Handler

	// PathKey, when set, is a key every request's path must begin with, as /k/<PathKey>,
	// which is then stripped: docket start's serve answers only its own gate and the
	// children and verbs that read the URL from the data dir or their environment.
	PathKey string

	// Workbench, when set, says serve runs under docket start, whose own pages install
	// the example and choose a model: the Get started page posts its install form to
	// docket start's ExamplePath with ExampleToken, and links to its model form.
	// nil: serve runs alone, and the page says how to do the same with the CLI.
	Workbench *Workbench

	// MaxConns bounds open connections; 0 is DefaultMaxConns. HeaderTimeout, BodyTimeout
	// and IdleTimeout bound reading a request's headers, reading its body, and a
	// kept-alive connection with no request; 0 takes the Default of each. Logins bounds
	// POST /api/v1/sessions and /api/v1/sessions/cookie.
	MaxConns      int
	MaxStreams    int // requests at once on one HTTP/2 connection; 0 is DefaultMaxStreams
	HeaderTimeout time.Duration
	BodyTimeout   time.Duration
	IdleTimeout   time.Duration
	Logins        LoginLimits

	// TLS, when set, is the listener's own TLS (docket serve --tls-cert): Run serves
	// HTTP/1.1 and HTTP/2 over it. Proxies are the reverse proxies whose forwarded headers
	// are trusted (docket serve --behind-proxy); without TLS, a request from any other
	// peer but loopback is refused proxy_required. Over either, answers carry HSTS and
	// session cookies are Secure (docs/deploy.md).
	TLS     *tls.Config
	Proxies []netip.Prefix
}

// Server serves /api/v1 and the console's pages. It is safe for concurrent use.
type Server struct {
	ids           directory
	auth          backend
	dec           decider
	opl           operationLister
	rec           reconciler
	pol           policyBook
	recov         recoverer
	hooks         hookBackend
	arts          artifactKeeper
	sched         scheduleBook
	notices       noticeBook
	cards         carder
	handlers      map[string]handlerFunc // the API's handlers by pattern, which a confirmed card runs through
	log           *slog.Logger
	version       string
	hosts         []string
	maxBody       int64
	maxUpload     int64
	keepAlive     time.Duration
	mux           *http.ServeMux
	xorigin       *http.CrossOriginProtection
	pathKey       string
	workbench     *Workbench
	maxConns      int
	maxStreams    int
	headerTimeout time.Duration
	idleTimeout   time.Duration
	bodyTimeout   time.Duration
	logins        *loginLimiter
	templates     map[string]*template.Template // the pages, by name (pages.go)
	metrics       http.Handler
	observe       func(http.Handler) http.Handler
	tls           *tls.Config
	door          door
}

// New returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Identity == nil {
		return nil, errors.New("console: config needs the identity directory")
	}
	if cfg.Authority == nil {
		return nil, errors.New("console: config needs an authority")
	}
	s := &Server{
		ids:       cfg.Identity,
		auth:      cfg.Authority,
		dec:       cfg.Requests,
		opl:       cfg.Operations,
		rec:       cfg.Reconciler,
		pol:       cfg.Policies,
		recov:     cfg.Recovery,
		hooks:     cfg.Hooks,
		arts:      cfg.Artifacts,
		sched:     cfg.Schedules,
		notices:   cfg.Notices,
		cards:     cfg.Cards,
		handlers:  map[string]handlerFunc{},
		log:       cfg.Logger,
		version:   cfg.Version,
		hosts:     hostNames(cfg.Hosts),
		maxBody:   cfg.MaxBody,
		maxUpload: cfg.MaxUpload,
		keepAlive: cfg.KeepAlive,
		mux:       http.NewServeMux(),
		xorigin:   http.NewCrossOriginProtection(),
		templates: map[string]*template.Template{},
		pathKey:   cfg.PathKey,
		workbench: cfg.Workbench,
		maxConns:  cfg.MaxConns,
		logins:    newLoginLimiter(cfg.Logins),
		metrics:   cfg.Metrics,
		observe:   cfg.Observe,
		tls:       cfg.TLS,
		door:      door{tls: cfg.TLS != nil, proxies: cfg.Proxies},
	}
	s.headerTimeout = cmp.Or(cfg.HeaderTimeout, DefaultHeaderTimeout)
	s.bodyTimeout = cmp.Or(cfg.BodyTimeout, DefaultBodyTimeout)
	s.idleTimeout = cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout)
	s.maxStreams = cmp.Or(max(cfg.MaxStreams, 0), DefaultMaxStreams)
	if s.maxConns <= 0 {
		s.maxConns = DefaultMaxConns
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With(logComponent, "console")
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	if s.maxUpload <= 0 {
		s.maxUpload = DefaultMaxUpload
	}
	if s.keepAlive <= 0 {
		s.keepAlive = DefaultKeepAlive
	}
	s.routes()
	if err := s.pageRoutes(); err != nil {
		return nil, err
	}
	for pattern, h := range cfg.Routes {
		s.mux.Handle(pattern, h)
	}
	return s, nil
}

// routes lists every route of the API in one place.
func (s *Server) routes() {
	s.handle("GET /api/v1/health", s.handleHealth, public)
	s.handle("POST /api/v1/sessions", s.handleLogin, public)
	s.handle("POST /api/v1/sessions/cookie", s.handleLoginCookie, public)
	s.handle("DELETE /api/v1/sessions/current", s.handleLogout, authed)
	s.handle("GET /api/v1/whoami", s.handleWhoami, authed)

	s.handle("POST /api/v1/members", s.handleCreateMember, authed)
	s.handle("GET /api/v1/projects", s.handleProjects, authed)
	s.handle("POST /api/v1/projects", s.handleCreateProject, authed)

	s.handle("POST /api/v1/projects/{project}/delegates", s.handleCreateDelegate, authed)
	s.handle("GET /api/v1/delegates", s.handleDelegates, authed)
	s.handle("DELETE /api/v1/delegates/{delegate}", s.handleRevokeDelegate, authed)
	s.handle("GET /api/v1/projects/{project}/cards", s.handleCards, authed)
	s.handle("GET /api/v1/cards/{card}", s.handleCard, authed)
	s.handle("POST /api/v1/cards/{card}/confirm", s.handleConfirmCard, authed)
	s.handle("POST /api/v1/cards/{card}/decline", s.handleDeclineCard, authed)

	s.handle("GET /api/v1/projects/{project}/agents", s.handleAgents, authed)
	s.handle("POST /api/v1/projects/{project}/agents", s.handleCreateAgent, authed)
	s.handle("POST /api/v1/projects/{project}/agents/{agent}/token", s.handleAgentToken, authed)
	s.handle("DELETE /api/v1/projects/{project}/agents/{agent}", s.handleRevokeAgent, authed)

	s.handle("GET /api/v1/projects/{project}/connections", s.handleConnections, authed)
	s.handle("POST /api/v1/projects/{project}/connections", s.handleCreateConnection, authed)
	s.handle("DELETE /api/v1/projects/{project}/connections/{connection}", s.handleRevokeConnection, authed)
	s.handle("GET /api/v1/projects/{project}/connections/{connection}/sources", s.handleSources, authed)
	s.handle("PUT /api/v1/projects/{project}/connections/{connection}/sources/{source}", s.handleBindSource, authed)
	s.handle("GET /api/v1/projects/{project}/connections/{connection}/tools", s.handleToolLocks, authed)
	s.handle("GET /api/v1/projects/{project}/workers", s.handleWorkers, authed)
	s.handle("PUT /api/v1/projects/{project}/connections/{connection}/worker", s.handleReportWorker, authed)
	s.handle("PUT /api/v1/projects/{project}/connections/{connection}/tools/{tool}", s.handleLockTool, authed)
	s.handle("DELETE /api/v1/projects/{project}/connections/{connection}/tools/{tool}", s.handleUnlockTool, authed)
	s.handle("PUT /api/v1/projects/{project}/connections/{connection}/tools/{tool}/approval", s.handleToolApproval, authed)
	s.handle("GET /api/v1/projects/{project}/connections/{connection}/inventory", s.handleToolInventory, authed)

	s.handle("GET /api/v1/projects/{project}/capabilities", s.handleInstalls, authed)
	s.handle("POST /api/v1/projects/{project}/capabilities", s.handleInstallCapability, authed)

	if s.dec != nil {
		s.handle("GET /api/v1/projects/{project}/requests", s.handleRequests, authed)
		s.handle("POST /api/v1/projects/{project}/requests/{id}/decision", s.handleDecide, authed)
	}
	if s.opl != nil {
		s.handle("GET /api/v1/projects/{project}/operations", s.handleOperations, authed)
	}
	if s.rec != nil {
		s.handle("POST /api/v1/projects/{project}/operations/{op}/reconcile", s.handleReconcile, authed)
	}
	s.policyRoutes()
	s.recoveryRoutes()
	s.profileRoutes()
	s.blueprintRoutes()
	s.materialRoutes()
	s.hookRoutes()
	s.artifactRoutes()
	s.compactionRoutes()
	s.scheduleRoutes()
	s.noticeRoutes()

	s.handle("GET /api/v1/projects/{project}/cases", s.handleCases, authed)
	s.handle("GET /api/v1/projects/{project}/cases/{case}", s.handleCase, authed)
	s.handle("POST /api/v1/projects/{project}/cases/{case}/pause", s.handlePauseCase, authed)
	s.handle("POST /api/v1/projects/{project}/cases/{case}/resume", s.handleResumeCase, authed)
	s.handle("GET /api/v1/projects/{project}/nodes/{node}/why", s.handleWhy, authed)
	s.handle("GET /api/v1/projects/{project}/facts", s.handleFacts, authed)

	s.handle("GET /api/v1/projects/{project}/events", s.handleEvents, authed)
	s.handle("GET /api/v1/projects/{project}/events/verify", s.handleVerifyEvents, authed)
	s.handle("POST /api/v1/projects/{project}/checkpoints", s.handleCheckpoint, authed)
	s.handle("GET /api/v1/events", s.handleEventStream, authed)

	s.handle("POST /api/v1/conversations/{conversation}/saves", s.handleSaveConversation, authed)
	s.handle("POST /api/v1/conversations/{conversation}/budget-exhausted", s.handleConversationBudget, authed)
	s.handle("GET /api/v1/conversations/{conversation}", s.handleOwnConversation, authed)
	s.handle("GET /api/v1/projects/{project}/conversations", s.handleConversations, authed)
	s.handle("GET /api/v1/projects/{project}/agents/{agent}/conversations/{conversation}", s.handleConversation, authed)

	s.handle("POST /api/v1/projects/{project}/agents/{agent}/tasks", s.handlePostTask, authed)
	s.handle("POST /api/v1/projects/{project}/agents/{agent}/conversations/{conversation}/messages", s.handlePostMessage, authed)
	s.handle("GET /api/v1/projects/{project}/tasks", s.handleTasks, authed)
	s.handle("GET /api/v1/projects/{project}/tasks/{task}", s.handleTask, authed)
	s.handle("POST /api/v1/projects/{project}/tasks/{task}/cancel", s.handleCancelTask, authed)
	s.handle("GET /api/v1/projects/{project}/tasks/{task}/tree", s.handleTaskTree, authed)
	s.handle("POST /api/v1/tasks", s.handlePostOwnTask, authed)
	s.handle("GET /api/v1/tasks/{task}", s.handleOwnTask, authed)
	s.handle("POST /api/v1/tasks/claim", s.handleClaimTask, authed)
	s.handle("POST /api/v1/tasks/{task}/renew", s.handleRenewTask, authed)
	s.handle("POST /api/v1/tasks/{task}/report", s.handleReportTask, authed)
	s.handle("POST /api/v1/operations/wait", s.handleWaitOperations, authed)
	s.handle("GET /api/v1/projects/{project}/budgets", s.handleBudgets, authed)
	s.handle("GET /api/v1/projects/{project}/budgets/{budget}", s.handleBudget, authed)
	s.handle("PUT /api/v1/projects/{project}/budgets/{budget}", s.handleSetBudget, authed)
	s.handle("DELETE /api/v1/projects/{project}/budgets/{budget}", s.handleRemoveBudget, authed)
	s.handle("POST /api/v1/budgets/reserve", s.handleReserveBudget, authed)
	s.handle("POST /api/v1/budgets/charge", s.handleChargeBudget, authed)

	if s.metrics != nil {
		s.handle("GET /metrics", s.handleMetrics, authed)
	}

	s.handle("/api/", s.handleNoRoute, public)
}

// ServeHTTP checks the Host, refuses cross-origin writes, sets the security headers and
// routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secheaders.Set(w.Header())
	s.door.mark(w, r)
	s.boundBody(w, r)
	if s.pathKey != "" && !s.stripPathKey(r) {
		s.writeError(w, r, contract.Errorf(contract.CodeRunKeyRequired,
			"this docket serve was started by docket start and answers only at the URL in its data dir's url file; use that URL, or docket start's own."))
		return
	}
	if err := s.checkHost(r); err != nil {
		s.refuse(w, r, err)
		return
	}
	if err := s.door.admit(r); err != nil {
		s.refuse(w, r, err)
		return
	}
	if err := s.xorigin.Check(r); err != nil {
		s.refuse(w, r, errCrossOrigin(err))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Run serves on ln until ctx ends, then shuts down: open event streams end at once and
// other requests get up to DefaultShutdownLimit to finish.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	ln = newLimitListener(ln, s.maxConns)
	var h http.Handler = s
	if s.observe != nil {
		h = s.observe(s)
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.headerTimeout,
		IdleTimeout:       s.idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		Protocols:         listenerProtocols(s.tls != nil),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: s.maxStreams},
		// The TLS handshake is bounded by ReadHeaderTimeout, as net/http bounds it by
		// the shortest read timeout set.
		TLSConfig: s.tls,
	}
	errc := make(chan error, 1) // written once by the serving goroutine, never closed
	go func() {
		if s.tls != nil {
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	// Streams never go idle, so end them first; Shutdown then waits for the rest.
	cancel(errors.New("console: shutting down"))
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), DefaultShutdownLimit)
	defer stop()
	err := hs.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("shut down %s: %w", ln.Addr(), err)
	}
	return nil
}
