package console_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/docketrun/docket/internal/console"
	"github.com/docketrun/docket/internal/store"
)

// BenchmarkEventStream_FanOut measures one event reaching 100 open SSE subscribers: each
// iteration appends an event and waits until every subscriber has read it.
func BenchmarkEventStream_FanOut(b *testing.B) {
	const subscribers = 100
	s := newTestServer(b, console.Config{})
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: subscribers}
	client := &http.Client{Transport: tr}
	b.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	head := logHead(b, s)
	seen := make([]chan int64, subscribers) // each written by its subscriber, never closed
	for i := range seen {
		seen[i] = make(chan int64, 16)
		req, err := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/v1/events?project=default&after="+strconv.FormatInt(head, 10), nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.token)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		go func(r *bufio.Reader, out chan<- int64) {
			defer resp.Body.Close()
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if len(line) > 4 && line[:4] == "id: " {
					n, _ := strconv.ParseInt(line[4:len(line)-1], 10, 64)
					out <- n
				}
			}
		}(bufio.NewReader(resp.Body), seen[i])
	}
	for b.Loop() {
		var seq int64
		err := s.st.Update(ctx, func(tx store.Tx) error {
			e, err := tx.Append(ctx, store.NewEvent{Project: "default", Type: "bench.tick", At: time.Now(), Actor: "system", Data: []byte(`{"n":1}`)})
			seq = e.Seq
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, ch := range seen {
			for n := range ch {
				if n >= seq {
					break
				}
			}
		}
	}
	b.ReportMetric(float64(subscribers), "subscribers")
}
