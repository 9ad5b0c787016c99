package contract

// Nearest returns the candidate a misspelt name most likely meant, for the "did you mean"
// of a refusal that teaches: the candidate fewest single-character edits away (insert,
// delete, replace, or swap two neighbours), when that is at most 2 edits and less than half
// of name. ok is false when no candidate is that near, or when name is itself a candidate.
// Ties go to the earlier candidate, so the answer is the same on every run.
func Nearest(name string, candidates []string) (nearest string, ok bool) {
	best := -1
	for _, c := range candidates {
		if c == name {
			return "", false
		}
		d := editDistance(name, c)
		if d <= 2 && 2*d < len([]rune(name)) && (best < 0 || d < best) {
			nearest, best = c, d
		}
	}
	return nearest, best >= 0
}

// editDistance is the optimal string alignment distance between a and b, in runes.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// rows[i][j] is the distance between x[:i] and y[:j]; three rows are kept.
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
