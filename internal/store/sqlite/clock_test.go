package sqlite_test

import "time"

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
