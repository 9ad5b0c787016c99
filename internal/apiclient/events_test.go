package apiclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/docketrun/docket/internal/apiclient"
	"github.com/docketrun/docket/internal/contract"
)

func TestEvents_Pages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
		if err != nil || r.URL.Path != "/api/v1/projects/p/events" {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		var page contract.Page[contract.Event]
		for seq := after + 1; seq <= min(after+2, 5); seq++ {
			page.Items = append(page.Items, contract.Event{Seq: seq})
		}
		if after+2 < 5 {
			page.Next = "more"
		}
		json.NewEncoder(w).Encode(page)
	}))
	defer srv.Close()
	var got []int64
	err := (&apiclient.Client{URL: srv.URL}).Events(t.Context(), "p", 0, func(ev contract.Event) error {
		got = append(got, ev.Seq)
		return nil
	})
	if err != nil || !slices.Equal(got, []int64{1, 2, 3, 4, 5}) {
		t.Fatalf("Events = %v, %v; want 1…5 over three pages", got, err)
	}
}

func TestFollowEvents(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "text/event-stream" || r.URL.Query().Get("project") != "p" || r.URL.Query().Get("after") != "7" {
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for seq := 8; seq <= 9; seq++ {
			fmt.Fprintf(w, ": keepalive\nevent: event\ndata: {\"seq\":%d}\n\n", seq)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var got []int64
	err := (&apiclient.Client{URL: srv.URL}).FollowEvents(ctx, "p", 7, func(ev contract.Event) error {
		got = append(got, ev.Seq)
		if len(got) == 2 {
			cancel()
		}
		return nil
	})
	if err != nil || !slices.Equal(got, []int64{8, 9}) {
		t.Fatalf("FollowEvents = %v, %v; want 8, 9 and a quiet end when ctx ends", got, err)
	}
}
