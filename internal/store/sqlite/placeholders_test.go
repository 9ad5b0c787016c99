package sqlite

import "testing"

func TestPositional(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"in order", `INSERT INTO t (a, b, c) VALUES ($1, $2, $3)`, `INSERT INTO t (a, b, c) VALUES (?, ?, ?)`},
		{"two digits", `VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`, `VALUES (?,?,?,?,?,?,?,?,?,?)`},
		{"no parameters", `BEGIN IMMEDIATE`, `BEGIN IMMEDIATE`},
		{"out of order", `UPDATE d SET r = $3 WHERE id = $1 AND m = $2`, `UPDATE d SET r = $3 WHERE id = $1 AND m = $2`},
		{"repeated", `WHERE ($1 = '' OR p = $1)`, `WHERE ($1 = '' OR p = $1)`},
		{"gap", `VALUES ($1, $3)`, `VALUES ($1, $3)`},
		{"quoted dollar", `SELECT '$2', $1`, `SELECT '$2', ?`},
		{"quoted name", `SELECT "$x" FROM t WHERE a = $1`, `SELECT "$x" FROM t WHERE a = ?`},
		{"doubled quote", `SELECT 'it''s $2', $1`, `SELECT 'it''s $2', ?`},
		{"unterminated quote", `SELECT '$1`, `SELECT '$1`},
		{"bare dollar", `SELECT $ FROM t WHERE a = $1`, `SELECT $ FROM t WHERE a = $1`},
		{"named", `SELECT $a, $1`, `SELECT $a, $1`},
		{"other syntax", `SELECT ?, $1`, `SELECT ?, $1`},
		{"line comment", "SELECT $1 -- it's\n", "SELECT $1 -- it's\n"},
		{"block comment", `SELECT $1 /* $2 */`, `SELECT $1 /* $2 */`},
		{"minus", `SELECT $1 - 1, 4 / $2`, `SELECT ? - 1, 4 / ?`},
		{"literal empty", `VALUES ($1, $2, '', 0)`, `VALUES (?, ?, '', 0)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := positional(tc.in); got != tc.want {
				t.Errorf("positional(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
