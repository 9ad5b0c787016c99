package apiclient_test

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/whoami":
			if r.Header.Get("Authorization") != "Bearer tok" {
				w.WriteHeader(http.StatusUnauthorized)
				json.NewEncoder(w).Encode(contract.Errorf(contract.CodeUnauthenticated, "log in"))
				return
			}
			json.NewEncoder(w).Encode(map[string]string{"name": "ada"})
		case "/api/v1/echo":
			var in map[string]string
			if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&in) != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			json.NewEncoder(w).Encode(in)
		default:
			http.Error(w, "no", http.StatusTeapot)
		}
	}))
	defer srv.Close()
	ctx := t.Context()

	var who struct{ Name string }
	if err := (&apiclient.Client{URL: srv.URL + "/", Token: "tok"}).Do(ctx, http.MethodGet, "/api/v1/whoami", nil, &who); err != nil || who.Name != "ada" {
		t.Fatalf("whoami = %+v, %v; want ada", who, err)
	}
	var echo map[string]string
	if err := (&apiclient.Client{URL: srv.URL}).Do(ctx, http.MethodPost, "/api/v1/echo", map[string]string{"a": "b"}, &echo); err != nil || echo["a"] != "b" {
		t.Fatalf("echo = %v, %v", echo, err)
	}

	err := (&apiclient.Client{URL: srv.URL, Token: "bad"}).Do(ctx, http.MethodGet, "/api/v1/whoami", nil, nil)
	re, ok := errors.AsType[*apiclient.ResponseError](err)
	if !ok || re.StatusCode != http.StatusUnauthorized || contract.CodeOf(err) != contract.CodeUnauthenticated || err.Error() != "unauthenticated: log in" {
		t.Fatalf("bad token: %v; want the authority's unauthenticated refusal with status 401", err)
	}

	err = (&apiclient.Client{URL: srv.URL}).Do(ctx, http.MethodGet, "/api/v1/other", nil, nil)
	if re, ok := errors.AsType[*apiclient.ResponseError](err); !ok || re.Err != nil || contract.CodeOf(err) != "" || err.Error() != "GET /api/v1/other: 418 I'm a teapot" {
		t.Fatalf("a refusal without the authority's error: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	err = (&apiclient.Client{URL: down}).Do(ctx, http.MethodGet, "/api/v1/health", nil, nil)
	if _, ok := errors.AsType[*apiclient.UnreachableError](err); !ok {
		t.Fatalf("a closed port: %v; want an UnreachableError", err)
	}
	if _, ok := errors.AsType[net.Error](err); !ok {
		t.Fatalf("a closed port: %v; want it to hold the net.Error", err)
	}
}

func TestProjectPath(t *testing.T) {
	if got := apiclient.ProjectPath("a b", "agents", "x/y"); got != "/api/v1/projects/a%20b/agents/x%2Fy" {
		t.Fatalf("ProjectPath = %s", got)
	}
}

// TestDo_Card: the client sends its Reason in Docket-Reason, and a 202 card answer is a
// CardError holding the card, reading as the card_recorded refusal.
func TestDo_Card(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(contract.ReasonHeader) != "a worker" {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(contract.Errorf(contract.CodeCardReason, "give a reason"))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		json.NewEncoder(w).Encode(contract.CardAnswer{Code: contract.CodeCardRecorded, Teaching: "nothing ran", Card: contract.Card{ID: "crd_1", State: contract.CardOpen}})
	}))
	defer srv.Close()
	var out contract.ConnectionKey
	err := (&apiclient.Client{URL: srv.URL, Reason: "a worker"}).Do(t.Context(), http.MethodPost, "/api/v1/projects/default/connections", map[string]string{"name": "w1"}, &out)
	ce, ok := errors.AsType[*apiclient.CardError](err)
	if !ok || ce.Card.ID != "crd_1" || contract.CodeOf(err) != contract.CodeCardRecorded || err.Error() != "card_recorded: nothing ran" {
		t.Fatalf("a card answer = %v; want a CardError of card crd_1", err)
	}
	err = (&apiclient.Client{URL: srv.URL}).Do(t.Context(), http.MethodPost, "/api/v1/projects/default/connections", map[string]string{"name": "w1"}, &out)
	if contract.CodeOf(err) != contract.CodeCardReason {
		t.Fatalf("without a reason = %v; want reason_required", err)
	}
}
